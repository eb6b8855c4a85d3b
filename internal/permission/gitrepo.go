package permission

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/format/index"

	"github.com/tackcode/tack/internal/shellcmd"
)

// Which repository git would use, and whether its configuration is one a
// file of the project may have written: git runs what that configuration
// says (core.fsmonitor, diff.external…), so no rule vouches for git there.

// gitProblem says why git, as sc runs it, might use a repository the
// project ships (see gitRepoProblem): the directories it may run in (the
// call's, those cd moved to, its -C operands) are each looked at. Without
// the file system, any other directory than the call's is a problem.
func (st *state) gitProblem(sc *shellcmd.Command, eff shellcmd.Effect) string {
	if eff.GitNamed != "" {
		return "uses the repository " + eff.GitNamed + " names, whose configuration can run programs"
	}
	if sc.DirsUnknown {
		return "runs in a directory only known at run time"
	}
	for _, d := range sc.Dirs {
		dir := st.cwd
		if d != "" {
			if !st.follow {
				return "runs in another directory (after cd), whose repository the checker cannot look at"
			}
			dir = rawAbs(d, st.cwd, st.home)
		}
		for _, c := range eff.GitCd {
			s, ok := c.Lit()
			if !ok {
				return "runs in a directory only known at run time"
			}
			if !st.follow {
				return "runs in another directory (git -C), whose repository the checker cannot look at"
			}
			dir = rawAbs(s, dir, st.home)
		}
		if why := st.gitRepoProblem(dir); why != "" {
			return "would use a repository whose configuration can run programs: " + why
		}
	}
	return ""
}

// gitRepoProblem says why git, run in dir, would use a repository whose
// configuration (core.fsmonitor, diff.external… run programs) a file of
// the project may set, or "" when it would use the repository of a working
// directory (whose .git the checker and the sandbox protect), a worktree or
// submodule of it, or none. Another repository found there — a bare one
// or a directory the project ships, or one an earlier command made below a
// working directory — is a problem: git refuses to check out a path named
// .git, but nothing stops a command from making one.
func (st *state) gitRepoProblem(dir string) string {
	if !st.follow {
		return ""
	}
	repo := discoverRepo(physical(dir))
	switch {
	case repo.bare != "":
		return repo.bare + " is a bare git repository, whose configuration can run programs"
	case repo.top == "":
		return ""
	}
	for _, d := range st.dirs {
		own := discoverRepo(d.real)
		if own.top == "" {
			continue
		}
		if repo.top == own.top {
			return st.gitlinkProblem(repo)
		}
		if repo.file && own.gitDir != "" && within(repo.gitDir, own.gitDir) {
			return ""
		}
	}
	return repo.top + " holds a git repository other than the working directories' own, whose configuration can run programs"
}

// gitlinkProblem says why git in the working directories' own repository
// would still run what another repository's configuration says: git status
// and diff look into every submodule of the index, and one whose .git is a
// directory of its own (not inside .git/modules) has a config any earlier
// command may have written. The index is read again only when it changes.
func (st *state) gitlinkProblem(repo gitRepo) string {
	path := repo.gitDir + "/index"
	fi, err := os.Stat(path)
	if err != nil {
		return ""
	}
	key := indexKey{path: path, size: fi.Size(), mtime: fi.ModTime().UnixNano()}
	c := st.Checker
	c.progMu.Lock()
	links, ok := c.gitlinks[key]
	c.progMu.Unlock()
	if !ok {
		links = readGitlinks(path)
		c.progMu.Lock()
		if c.gitlinks == nil || len(c.gitlinks) > 16 {
			c.gitlinks = map[indexKey][]string{}
		}
		c.gitlinks[key] = links
		c.progMu.Unlock()
	}
	for _, name := range links {
		sub := discoverRepo(repo.top + "/" + name)
		if sub.top != repo.top+"/"+name {
			continue // not checked out: nothing there to run
		}
		if sub.bare != "" || !sub.file || !within(sub.gitDir, repo.gitDir) {
			return fmt.Sprintf("its submodule %s has a repository of its own there, whose configuration can run programs", name)
		}
	}
	return ""
}

// indexKey identifies one version of a git index file.
type indexKey struct {
	path        string
	size, mtime int64
}

// readGitlinks returns the paths of the submodules a git index records.
// An index that cannot be read lists none: git would fail on it too.
func readGitlinks(path string) []string {
	f, err := os.Open(path)
	if err != nil {
		return nil
	}
	defer f.Close()
	var idx index.Index
	if err := index.NewDecoder(bufio.NewReader(f)).Decode(&idx); err != nil {
		return nil
	}
	var out []string
	for _, e := range idx.Entries {
		if e.Mode == filemode.Submodule {
			out = append(out, e.Name)
		}
	}
	return out
}

// gitRepo is what git's discovery finds from a directory.
type gitRepo struct {
	// top is the directory holding .git; gitDir the repository directory
	// (.git, or the target of a .git file); file: .git is a file.
	top, gitDir string
	file        bool
	// bare is a directory that is itself a repository, not inside a .git
	// directory (a bare repository git would use).
	bare string
}

// discoverRepo walks up from dir as git does: at each level a .git entry,
// else the directory itself as a git directory.
func discoverRepo(dir string) gitRepo {
	for d := dir; ; d = filepath.Dir(d) {
		dotgit := d + "/.git"
		if fi, err := os.Stat(dotgit); err == nil {
			if fi.IsDir() {
				return gitRepo{top: d, gitDir: physical(dotgit)}
			}
			target := gitFileTarget(dotgit)
			if target == "" {
				return gitRepo{top: d, file: true, gitDir: dotgit}
			}
			return gitRepo{top: d, file: true, gitDir: physical(target)}
		}
		if isGitDir(d) && !hasElement(d, ".git") {
			return gitRepo{bare: d}
		}
		if d == "/" {
			return gitRepo{}
		}
	}
}

// gitFileTarget reads the "gitdir: X" line of a .git file, X made absolute.
func gitFileTarget(path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	line, _, _ := bytes.Cut(b, []byte("\n"))
	target, ok := strings.CutPrefix(strings.TrimSpace(string(line)), "gitdir:")
	if !ok {
		return ""
	}
	return absPath(strings.TrimSpace(target), filepath.Dir(path), "")
}

// isGitDir reports whether dir looks like a git directory to git: a HEAD
// file and objects and refs directories.
func isGitDir(dir string) bool {
	if fi, err := os.Stat(dir + "/HEAD"); err != nil || !fi.Mode().IsRegular() {
		return false
	}
	for _, sub := range []string{"/objects", "/refs"} {
		if fi, err := os.Stat(dir + sub); err != nil || !fi.IsDir() {
			return false
		}
	}
	return true
}

// hasElement reports whether the path has an element named el.
func hasElement(p, el string) bool {
	for _, e := range strings.Split(p, "/") {
		if e == el {
			return true
		}
	}
	return false
}
