package permission

import (
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/tackcode/tack/internal/shellcmd"
)

// within reports whether p is dir or under it (both clean and absolute).
func within(p, dir string) bool {
	if dir == "/" {
		return strings.HasPrefix(p, "/")
	}
	return p == dir || strings.HasPrefix(p, dir) && p[len(dir)] == '/'
}

// absPath makes p absolute against dir and cleans it; "~" and "~/…" are
// under home.
func absPath(p, dir, home string) string {
	switch {
	case p == "~":
		return filepath.Clean(home)
	case strings.HasPrefix(p, "~/"):
		return filepath.Join(home, p[2:])
	case filepath.IsAbs(p):
		return filepath.Clean(p)
	}
	return filepath.Join(dir, p)
}

// rawAbs makes p absolute against dir without cleaning it: a ".." after a
// symbolic link must be resolved from the link's target, as the kernel does
// (see physical). "~" and "~/…" are under home.
func rawAbs(p, dir, home string) string {
	switch {
	case p == "~":
		return home
	case strings.HasPrefix(p, "~/"):
		return home + p[1:]
	case strings.HasPrefix(p, "/"):
		return p
	}
	return dir + "/" + p
}

// maxLinks bounds the symbolic links followed while resolving one path,
// as the kernel's ELOOP limit does.
const maxLinks = 40

// physical returns the path the kernel opens for the absolute path p:
// each element is taken in order, a symbolic link is replaced by its
// target and ".." goes to the parent of the directory reached so far — so
// `lnk/../x` is beside lnk's target, not beside lnk. Once an element does
// not exist, the rest is kept as written (cleaned).
func physical(p string) string {
	cur := "/"
	rest := strings.Split(p, "/")
	links := 0
	for len(rest) > 0 {
		el := rest[0]
		rest = rest[1:]
		switch el {
		case "", ".":
			continue
		case "..":
			cur = filepath.Dir(cur)
			continue
		}
		next := filepath.Join(cur, el)
		fi, err := os.Lstat(next)
		if err != nil {
			return filepath.Join(append([]string{next}, rest...)...)
		}
		if fi.Mode()&os.ModeSymlink == 0 {
			cur = next
			continue
		}
		target, err := os.Readlink(next)
		if err != nil || links >= maxLinks {
			return filepath.Join(append([]string{next}, rest...)...)
		}
		links++
		if strings.HasPrefix(target, "/") {
			cur = "/"
		}
		rest = append(strings.Split(target, "/"), rest...)
	}
	return cur
}

// protectedPath reports whether writing p could change how the project's
// tools or tack itself behave (git hooks and config, agent settings, MCP
// servers): such writes are not accepted by acceptEdits or by a Bash allow
// rule alone, only by an Edit allow rule or bypassPermissions.
func protectedPath(p string) bool {
	for _, el := range strings.Split(p, "/") {
		if strings.EqualFold(el, ".git") {
			return true
		}
	}
	base := filepath.Base(p)
	if base == ".mcp.json" {
		return true
	}
	dir := filepath.Base(filepath.Dir(p))
	return dir == ".claude" && strings.HasPrefix(base, "settings") && strings.HasSuffix(base, ".json")
}

// workDir is a working directory, as given and with symlinks resolved.
type workDir struct {
	lex, real string
}

func newWorkDir(dir string, follow bool) workDir {
	d := workDir{lex: filepath.Clean(dir), real: filepath.Clean(dir)}
	if follow {
		d.real = physical(d.lex)
	}
	return d
}

// pathView is a path as written (absolute) and with its symlinks resolved.
type pathView struct {
	lex, real string
}

// forms returns the distinct forms of the path.
func (v pathView) forms() []string {
	if v.real == "" || v.real == v.lex {
		return []string{v.lex}
	}
	return []string{v.lex, v.real}
}

// insideAny reports whether the path is in one of dirs, both as written
// and once symlinks are resolved: a link inside that points outside does
// not count as inside.
func (v pathView) insideAny(dirs []workDir) bool {
	lexIn, realIn := false, v.real == ""
	for _, d := range dirs {
		if within(v.lex, d.lex) || within(v.lex, d.real) {
			lexIn = true
		}
		if v.real != "" && (within(v.real, d.real) || within(v.real, d.lex)) {
			realIn = true
		}
	}
	return lexIn && realIn
}

// isRoot reports whether the path is one of the working directories
// itself.
func (v pathView) isRoot(dirs []workDir) bool {
	for _, d := range dirs {
		if v.lex == d.lex || v.lex == d.real || v.real != "" && (v.real == d.real || v.real == d.lex) {
			return true
		}
	}
	return false
}

// view builds the pathView of an absolute path as written (see rawAbs): the
// lexical form cleans it, the real one resolves it as the kernel would.
func view(p string, follow bool) pathView {
	v := pathView{lex: filepath.Clean(p)}
	if follow {
		v.real = physical(p)
	}
	return v
}

// viewNoFollow is view for a path whose last element, if a symbolic link,
// is looked at itself rather than followed (lstat).
func viewNoFollow(p string, follow bool) pathView {
	v := pathView{lex: filepath.Clean(p)}
	if follow {
		dir, base := filepath.Split(v.lex)
		v.real = filepath.Join(physical(rawAbs(dir, "/", "")), base)
		if base == "" || base == "." || base == ".." {
			v.real = physical(p)
		}
	}
	return v
}

// userHome returns the home directory, or "" when it is unknown.
func userHome() string {
	h, err := os.UserHomeDir()
	if err != nil {
		return ""
	}
	return h
}

// wordPaths returns the absolute paths a path argument may name when the
// command runs in any of dirs (see shellcmd.Command.Dirs). ok is false when the
// path is only known at run time.
func wordPaths(w shellcmd.Word, cwd, home string, dirs []string, dirsUnknown bool) (paths []string, ok bool) {
	if w.ProcSubst {
		return nil, true // a /dev/fd pipe
	}
	if w.Dynamic || w.Equals {
		return nil, false
	}
	text := w.Text
	if w.Glob {
		// A glob names files under the directory before its first
		// wildcard; one whose last part starts with '.' may match "..".
		parts := strings.Split(text, "/")
		k := 0
		for k < len(parts) && !strings.Contains(parts[k], shellcmd.RunTime) {
			k++
		}
		for _, after := range parts[k:] {
			if after == ".." {
				return nil, false
			}
		}
		dir := strings.Join(parts[:k], "/")
		if dir == "" {
			dir = "."
			if strings.HasPrefix(text, "/") {
				dir = "/"
			}
		}
		text = dir
		if k < len(parts) && strings.HasPrefix(parts[k], ".") {
			text = dir + "/.."
		}
	}
	if w.Tilde {
		if home == "" {
			return nil, false
		}
		return []string{rawAbs(text, cwd, home)}, true
	}
	if strings.HasPrefix(text, "/") {
		return []string{text}, true
	}
	if dirsUnknown {
		return nil, false
	}
	for _, d := range dirs {
		base := cwd
		if d != "" {
			if (d == "~" || strings.HasPrefix(d, "~/")) && home == "" {
				return nil, false
			}
			base = rawAbs(d, cwd, home)
		}
		p := base + "/" + text
		if !slices.Contains(paths, p) {
			paths = append(paths, p)
		}
	}
	return paths, true
}

// pathRef is one path an argument names, absolute as written. under: the
// argument is a glob that could not be expanded, standing for anything
// under the path.
type pathRef struct {
	raw   string
	under bool
}

// paths returns the paths an argument names at the simple command sc,
// expanding globs against the file system when the checker may; ok is
// false when they are only known at run time.
func (st *state) paths(w shellcmd.Word, sc *shellcmd.Command) ([]pathRef, bool) {
	if w.Values != nil {
		var out []pathRef
		for _, v := range w.Values {
			refs, ok := st.paths(v, sc)
			if !ok {
				return nil, false
			}
			out = append(out, refs...)
		}
		return out, true
	}
	if w.Expandable() && !sc.DirsUnknown {
		var out []pathRef
		expanded := true
		for _, d := range sc.Dirs {
			base := st.cwd
			if d != "" {
				base = rawAbs(d, st.cwd, st.home)
			}
			ps, ok := st.expandGlob(w, base)
			if !ok {
				expanded = false
				break
			}
			for _, p := range ps {
				out = append(out, pathRef{raw: p})
			}
		}
		if expanded {
			return out, true
		}
	}
	raws, ok := wordPaths(w, st.cwd, st.home, sc.Dirs, sc.DirsUnknown)
	refs := make([]pathRef, len(raws))
	for i, r := range raws {
		refs[i] = pathRef{raw: r, under: w.Glob}
	}
	return refs, ok
}

// wordRefs returns the paths an argument names that are known.
func (st *state) wordRefs(w shellcmd.Word, sc *shellcmd.Command) []pathRef {
	refs, _ := st.paths(w, sc)
	return refs
}

// walkRoots returns the directories a walk starts from.
func (st *state) walkRoots(w shellcmd.Word, sc *shellcmd.Command) ([]pathView, bool) {
	refs, ok := st.paths(w, sc)
	if !ok {
		return nil, false
	}
	views := make([]pathView, len(refs))
	for i, r := range refs {
		views[i] = view(r.raw, st.follow)
	}
	return views, true
}
