package permission

import (
	"crypto/sha256"
	"errors"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"

	"github.com/tackcode/tack/internal/shellcmd"
)

// What the checker learns from the file system, when Config.LexicalPaths
// does not forbid it: what a glob expands to, what a tree holds, which
// files are hard links of each other, what a script runs, which
// repository git would use. Each query is bounded; past a bound the
// answer is "cannot tell", which the callers treat as a possible match of
// a deny rule.

const (
	// maxGlobMatches bounds the paths one glob expands to.
	maxGlobMatches = 4096
	// walkBudget bounds the directory entries read for one call.
	walkBudget = 20000
	// maxScript bounds the size of a script file the checker reads.
	maxScript = 256 << 10
)

// expandGlob expands a glob word as bash would in dir (pathname expansion
// with its default options: no dotglob, no globstar, no nullglob). It
// returns absolute paths; ok is false when it cannot be told.
func (st *state) expandGlob(w shellcmd.Word, dir string) (paths []string, ok bool) {
	if !st.follow || !w.Expandable() {
		return nil, false
	}
	count := 0
	fields, err := w.ExpandGlob(dir, st.home, func(d string) ([]fs.DirEntry, error) {
		entries, err := os.ReadDir(d)
		count += len(entries)
		if count > walkBudget {
			return nil, errTooMany
		}
		return entries, err
	})
	if err != nil || count > walkBudget || len(fields) > maxGlobMatches {
		return nil, false
	}
	for _, f := range fields {
		paths = append(paths, rawAbs(f, dir, st.home))
	}
	return paths, true
}

// errTooMany stops a glob that went past its bound.
var errTooMany = errors.New("too many directory entries")

// treeFinding is what a walk of a tree found.
type treeFinding struct {
	// denied is a path under the tree a deny rule covers, with the rule.
	denied     string
	deniedRule *compiledRule
	// outside is a symbolic link under the tree leading out of the working
	// directories (for walks that follow links).
	outside string
	// incomplete: the bound was reached before the whole tree was seen.
	incomplete bool
}

// walkTree looks at the tree under root as w reads it: for content walks,
// whether a Read deny rule covers a file in it; for walks that follow
// links, whether a link leads out of the working directories. budget is
// shared by the walks of one call.
func (st *state) walkTree(root pathView, w shellcmd.Walk, budget *int) treeFinding {
	var out treeFinding
	if !st.follow {
		out.incomplete = true
		return out
	}
	seen := map[string]bool{}
	var visit func(lex, real string) bool
	visit = func(lex, real string) bool {
		if seen[real] {
			return true
		}
		seen[real] = true
		entries, err := os.ReadDir(real)
		if err != nil {
			return true
		}
		*budget -= len(entries)
		if *budget < 0 {
			out.incomplete = true
			return false
		}
		for _, e := range entries {
			name := e.Name()
			if !w.Hidden && strings.HasPrefix(name, ".") {
				continue
			}
			lp, rp := lex+"/"+name, real+"/"+name
			isDir := e.IsDir()
			if e.Type()&fs.ModeSymlink != 0 {
				if !w.Follow {
					continue
				}
				rp = physical(rp)
				v := pathView{lex: lp, real: rp}
				if !v.insideAny(st.dirs) && out.outside == "" {
					out.outside = lp
				}
				fi, err := os.Stat(rp)
				if err != nil {
					continue
				}
				isDir = fi.IsDir()
			}
			if w.Content && out.denied == "" {
				v := pathView{lex: lp, real: rp}
				if r := st.matchPath(st.deny, "Read", v); r != nil {
					out.denied, out.deniedRule = lp, r
				} else if !isDir {
					if r, other, complete := st.hardLinkDenied(v, "Read", budget); r != nil {
						out.denied, out.deniedRule = lp+" (another name of "+other+")", r
					} else if !complete {
						out.incomplete = true
						return false
					}
				}
			}
			if out.denied != "" && (out.outside != "" || !w.Follow) {
				return false
			}
			if isDir && !visit(lp, rp) {
				return false
			}
		}
		return true
	}
	real := root.real
	if real == "" {
		real = root.lex
	}
	if fi, err := os.Stat(real); err != nil || !fi.IsDir() {
		return out
	}
	visit(root.lex, real)
	return out
}

// fileID identifies a file: its device and inode.
type fileID struct{ dev, ino uint64 }

// statID returns the identity of the file at p (following links) and how
// many names it has.
func statID(p string) (id fileID, nlink uint64, fi os.FileInfo, ok bool) {
	fi, err := os.Stat(p)
	if err != nil {
		return id, 0, nil, false
	}
	sys, isUnix := fi.Sys().(*syscall.Stat_t)
	if !isUnix {
		return id, 0, fi, false
	}
	return fileID{uint64(sys.Dev), uint64(sys.Ino)}, uint64(sys.Nlink), fi, true
}

// hardLinkDenied reports whether the file at v is another name of a file a
// deny rule of tool covers: a hard link of .env read as "x" is still .env.
// Only regular files with several names are looked into, against the
// files the deny rules cover (found once per call, see deniedFiles).
// complete is false when those could not all be found.
func (st *state) hardLinkDenied(v pathView, tool string, budget *int) (r *compiledRule, other string, complete bool) {
	if !st.follow {
		return nil, "", true
	}
	id, nlink, fi, ok := statID(v.real)
	if !ok || nlink < 2 || !fi.Mode().IsRegular() {
		return nil, "", true
	}
	denied := st.deniedFiles(tool, budget)
	if d, ok := denied.ids[id]; ok && d.path != v.real {
		return d.rule, d.path, true
	}
	return nil, "", denied.complete
}

// deniedSet is the files some deny rules cover, by identity.
type deniedSet struct {
	ids      map[fileID]deniedFile
	complete bool
}

type deniedFile struct {
	path string
	rule *compiledRule
}

// deniedFiles finds the existing regular files the deny rules of tool
// cover, once per call. Each rule's pattern is searched from its literal
// directory, without descending where it cannot match; a "**" pattern
// does not look into .git and node_modules directories, where secrets are
// not kept and which would use up the bound.
func (st *state) deniedFiles(tool string, budget *int) deniedSet {
	if set, ok := st.denied[tool]; ok {
		return set
	}
	set := deniedSet{ids: map[fileID]deniedFile{}, complete: true}
	for _, rule := range st.deny {
		if !rule.coversTool(tool) || rule.path == nil {
			continue
		}
		pp := rule.path
		add := func(p string) {
			if id, _, fi, ok := statID(p); ok && fi.Mode().IsRegular() {
				if _, seen := set.ids[id]; !seen {
					set.ids[id] = deniedFile{path: p, rule: rule}
				}
			}
		}
		root := pp.lit
		if root != pp.abs { // a pattern: search from its literal directory
			if i := strings.LastIndexByte(root, '/'); i > 0 {
				root = root[:i]
			} else {
				root = "/"
			}
		}
		deep := strings.Contains(pp.abs, "**")
		_ = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return nil
			}
			*budget--
			if *budget < 0 {
				set.complete = false
				return filepath.SkipAll
			}
			if d.IsDir() {
				if p != root && (!pp.matchesUnder(p) || deep && (d.Name() == ".git" || d.Name() == "node_modules")) {
					return filepath.SkipDir
				}
				return nil
			}
			if d.Type().IsRegular() && pp.match(p) {
				add(p)
			}
			return nil
		})
	}
	if st.denied == nil {
		st.denied = map[string]deniedSet{}
	}
	st.denied[tool] = set
	return set
}

// protectedLink reports a protected file of the working directories (see
// protectedPath) that the file at v is another name of.
func (st *state) protectedLink(v pathView) string {
	if !st.follow {
		return ""
	}
	id, nlink, fi, ok := statID(v.real)
	if !ok || nlink < 2 || !fi.Mode().IsRegular() {
		return ""
	}
	for _, d := range st.dirs {
		for _, p := range protectedFiles(d.real) {
			if other, _, _, ok := statID(p); ok && other == id {
				return p
			}
		}
	}
	return ""
}

// protectedFiles lists the existing files under dir that protectedPath
// covers at its top level: git's configuration and hooks, agent settings,
// MCP servers.
func protectedFiles(dir string) []string {
	out := []string{dir + "/.git/config", dir + "/.mcp.json", dir + "/.claude/settings.json", dir + "/.claude/settings.local.json"}
	if hooks, err := os.ReadDir(dir + "/.git/hooks"); err == nil {
		for _, h := range hooks {
			out = append(out, dir+"/.git/hooks/"+h.Name())
		}
	}
	return out
}

// program is an executable a Bash deny rule names.
type program struct {
	name string // as the rule writes it ("rm")
	path string // resolved
	id   fileID
	size int64

	once sync.Once
	sum  [32]byte
	ok   bool
}

func (p *program) digest() ([32]byte, bool) {
	p.once.Do(func() { p.sum, p.ok = fileDigest(p.path) })
	return p.sum, p.ok
}

func fileDigest(path string) ([32]byte, bool) {
	var sum [32]byte
	f, err := os.Open(path)
	if err != nil {
		return sum, false
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return sum, false
	}
	copy(sum[:], h.Sum(nil))
	return sum, true
}

// deniedPrograms returns the executables that the Bash deny and ask rules
// of the snapshot name by their first word, found on PATH.
func (st *state) deniedPrograms() []*program {
	c := st.Checker
	c.progMu.Lock()
	defer c.progMu.Unlock()
	if c.programs != nil && c.progGen == st.gen {
		return c.programs
	}
	progs := []*program{}
	seen := map[string]bool{}
	for _, rs := range [][]*compiledRule{st.deny, st.ask} {
		for _, r := range rs {
			if r.cmd == nil {
				continue
			}
			name, _, _ := strings.Cut(r.cmd.firstLiteral(), " ")
			if name == "" || seen[name] || strings.ContainsAny(name, "/'\"\\") {
				continue
			}
			seen[name] = true
			path, err := exec.LookPath(name)
			if err != nil {
				continue
			}
			real := physical(absPath(path, "/", st.home))
			id, _, fi, ok := statID(real)
			if !ok || !fi.Mode().IsRegular() {
				continue
			}
			progs = append(progs, &program{name: name, path: real, id: id, size: fi.Size()})
		}
	}
	c.programs, c.progGen = progs, st.gen
	return progs
}

// programAt returns the denied program that the executable file at p is,
// by identity (a hard or symbolic link) or by content (a copy).
func (st *state) programAt(p string) *program {
	progs := st.deniedPrograms()
	if len(progs) == 0 {
		return nil
	}
	id, _, fi, ok := statID(p)
	if !ok || !fi.Mode().IsRegular() {
		return nil
	}
	for _, prog := range progs {
		if prog.id == id {
			return prog
		}
	}
	for _, prog := range progs {
		if prog.size != fi.Size() {
			continue
		}
		want, ok1 := prog.digest()
		got, ok2 := fileDigest(p)
		if ok1 && ok2 && want == got {
			return prog
		}
	}
	return nil
}

// Alias returns the denied program a command name runs at the command at
// when it is not already known by that name: a copy or link of /bin/rm
// called ./x, or a name found on PATH that is one.
func (st *state) Alias(name string, at *shellcmd.Command) string {
	if !st.follow || len(st.deniedPrograms()) == 0 {
		return ""
	}
	var candidates []string
	if strings.Contains(name, "/") {
		for _, d := range at.Dirs {
			base := st.cwd
			if d != "" {
				base = rawAbs(d, st.cwd, st.home)
			}
			candidates = append(candidates, physical(rawAbs(name, base, st.home)))
		}
	} else if p, err := exec.LookPath(name); err == nil {
		candidates = append(candidates, physical(absPath(p, st.cwd, st.home)))
	}
	for _, c := range candidates {
		if prog := st.programAt(c); prog != nil && prog.name != shellcmd.BaseName(name) {
			return prog.name
		}
	}
	return ""
}

// Script returns the text of the shell script file a command runs (by
// `source f`, `bash f`, or `./f` with a shell #! line when shebang is
// set), for its commands to be checked like the line's own. ran is false
// when no such file runs (it does not exist, or is not a shell script);
// opaque says why what runs cannot be told.
func (st *state) Script(w shellcmd.Word, at *shellcmd.Command, shebang bool) (src string, ran bool, opaque string) {
	if !w.Static() {
		return "", true, "runs a script whose name is only known at run time"
	}
	if w.ProcSubst {
		return "", true, "runs a script produced at run time"
	}
	if !st.follow {
		return "", false, ""
	}
	if at.DirsUnknown {
		return "", true, "runs a script in a directory only known at run time"
	}
	var texts []string
	for _, d := range at.Dirs {
		base := st.cwd
		if d != "" {
			base = rawAbs(d, st.cwd, st.home)
		}
		p := physical(rawAbs(w.Text, base, st.home))
		fi, err := os.Stat(p)
		if err != nil {
			continue
		}
		if !fi.Mode().IsRegular() || fi.Size() > maxScript {
			return "", true, "runs a script the checker cannot read: " + p
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return "", true, "runs a script the checker cannot read: " + p
		}
		if shebang && !shellcmd.IsShellScript(b) {
			continue
		}
		texts = append(texts, string(b))
	}
	if len(texts) == 0 {
		return "", false, ""
	}
	return strings.Join(texts, "\n"), true, ""
}
