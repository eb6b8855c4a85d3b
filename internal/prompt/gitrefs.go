package prompt

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"

	"github.com/tackcode/tack/internal/gitroot"
)

// mainRefs are the refs the main branch is chosen from (mainBranch): what
// origin/HEAD points to, main, master. for-each-ref lists them by name.
var mainRefs = []string{"refs/heads/main", "refs/heads/master", "refs/remotes/origin/HEAD"}

// readMainRefs answers, from the repository's files, what
// `git for-each-ref --format=%(refname)%09%(symref)` prints for mainRefs:
// a line per ref that exists, with the ref a symbolic one points to. It
// saves a git process per session. ok is false when only git can say: the
// repository is chosen by the environment (GIT_DIR, GIT_COMMON_DIR), keeps
// its refs in another format than files (reftable), or a ref is not one
// this reader knows (a symbolic ref to a symbolic ref).
func readMainRefs(dir string, getenv func(string) string) (out string, ok bool) {
	if getenv("GIT_DIR") != "" || getenv("GIT_COMMON_DIR") != "" {
		return "", false
	}
	root := gitroot.Find(dir)
	if root == "" {
		return "", false
	}
	d, err := gitroot.Repository(root)
	if err != nil {
		return "", false
	}
	if !filesBackend(d.Common) {
		return "", false
	}
	packed, err := readPackedRefs(filepath.Join(d.Common, "packed-refs"))
	if err != nil {
		return "", false
	}
	var b strings.Builder
	for _, name := range mainRefs {
		r, err := readRef(d.Common, name, packed)
		if err != nil {
			return "", false
		}
		if !r.exists {
			continue
		}
		if r.symref != "" {
			// A symbolic ref is listed when what it points to exists.
			if !strings.HasPrefix(r.symref, "refs/") {
				return "", false
			}
			target, err := readRef(d.Common, r.symref, packed)
			if err != nil || target.symref != "" {
				return "", false
			}
			if !target.exists {
				continue
			}
		}
		b.WriteString(name + "\t" + r.symref + "\n")
	}
	return b.String(), true
}

// filesBackend reports whether the repository at common keeps its refs as
// files: it names no other ref format in its config and has no reftable
// folder.
func filesBackend(common string) bool {
	cfg, err := os.ReadFile(filepath.Join(common, "config"))
	if err != nil || bytes.Contains(bytes.ToLower(cfg), []byte("refstorage")) {
		return false
	}
	_, err = os.Lstat(filepath.Join(common, "reftable"))
	return errors.Is(err, fs.ErrNotExist)
}

// ref is what a ref name holds.
type ref struct {
	exists bool
	symref string // the ref it points to, for a symbolic ref
}

// readRef reads the ref name: its loose file, else its line in packed
// (a loose ref replaces a packed one of the same name). A loose file that
// holds neither an object name nor "ref: NAME" is broken, and git lists
// no broken ref.
func readRef(common, name string, packed []string) (ref, error) {
	b, err := os.ReadFile(filepath.Join(common, filepath.FromSlash(name)))
	switch {
	case err == nil:
		s := strings.TrimRight(string(b), "\n")
		if target, ok := strings.CutPrefix(s, "ref: "); ok {
			return ref{exists: true, symref: target}, nil
		}
		return ref{exists: isObjectName(s)}, nil
	case errors.Is(err, fs.ErrNotExist), errors.Is(err, syscall.EISDIR):
		// A folder is no ref: the name is the prefix of others'
		// (refs/heads/main/x).
		_, found := slices.BinarySearch(packed, name)
		return ref{exists: found}, nil
	default:
		return ref{}, err
	}
}

// isObjectName reports whether s is a full object name (SHA-1 or
// SHA-256), in hexadecimal.
func isObjectName(s string) bool {
	if len(s) != 40 && len(s) != 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}

// maxPackedRefs is the largest packed-refs file read here: git finds refs
// in a larger one faster than reading it whole would.
const maxPackedRefs = 1 << 20

// readPackedRefs returns the names of the refs packed-refs holds, sorted;
// none when the file does not exist. Its lines are "OBJECT NAME", a
// peeled object ("^OBJECT") after a tag's, and a "#" header.
func readPackedRefs(path string) ([]string, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if len(b) > maxPackedRefs {
		return nil, errors.New("packed-refs too large to read")
	}
	var names []string
	for line := range strings.Lines(string(b)) {
		if obj, name, ok := strings.Cut(strings.TrimRight(line, "\n"), " "); ok && isObjectName(obj) {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	return names, nil
}
