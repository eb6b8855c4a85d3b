package memory

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"unicode/utf8"

	"github.com/bmatcuk/doublestar/v4"
)

const (
	// maxImportHops is how many @import hops are followed from a file found
	// by discovery (hop 1 is a file it imports directly).
	maxImportHops = 5
	// maxFileBytes caps one memory file; the rest is cut with a note.
	maxFileBytes = 1 << 20
	// maxRulesDepth bounds the recursion into .claude/rules subfolders, which
	// may be symbolic links to anywhere.
	maxRulesDepth = 16
)

// cutNote is appended to a memory file longer than maxFileBytes.
const cutNote = "\n\n(This file is longer than 1 MiB; only its beginning was loaded.)"

// sysCalls is the file system the loader uses; tests swap it to simulate
// failures that root (which runs CI) cannot get from permissions.
type sysCalls struct {
	stat    func(string) (fs.FileInfo, error)
	open    func(string) (io.ReadCloser, error)
	readDir func(string) ([]fs.DirEntry, error)
}

var osSys = sysCalls{
	stat:    os.Stat,
	open:    func(p string) (io.ReadCloser, error) { return os.Open(p) },
	readDir: os.ReadDir,
}

// loader holds what one Set has loaded so far; after Load the Tracker owns it
// and guards it with its mutex.
type loader struct {
	opts     Options
	sys      sysCalls
	excludes []string

	seenPath map[string]bool
	seenInfo []fs.FileInfo // identities, so a file reached through a link counts once

	pending []pendingRule   // path-scoped rules not yet matched by a read
	scanned map[string]bool // directories whose memory has been looked for

	// reason is why the files loaded now are loaded (Included and
	// GlobMatch aside), and trigger the file whose reading loads them.
	reason  Reason
	trigger string

	problems, notes []string
}

// pendingRule is a path-scoped rule waiting for a matching read.
type pendingRule struct {
	e    *entry
	kind Kind
	base string // its globs are relative to this directory
}

// entry is a memory file read from disk and not yet sent.
type entry struct {
	path    string
	info    fs.FileInfo
	content string
	globs   []string
}

func newLoader(opts Options, sys sysCalls) *loader {
	l := &loader{
		opts:     opts,
		sys:      sys,
		seenPath: map[string]bool{},
		scanned:  map[string]bool{},
	}
	for _, p := range opts.Excludes {
		if strings.HasPrefix(p, "~/") && opts.Home != "" {
			p = filepath.ToSlash(filepath.Join(opts.Home, p[2:]))
		}
		if !doublestar.ValidatePattern(p) {
			l.problem("claudeMdExcludes: invalid pattern %q", p)
			continue
		}
		l.excludes = append(l.excludes, p)
	}
	return l
}

func (l *loader) problem(format string, args ...any) {
	l.problems = append(l.problems, fmt.Sprintf(format, args...))
}

func (l *loader) note(format string, args ...any) {
	l.notes = append(l.notes, fmt.Sprintf(format, args...))
}

func (l *loader) takeProblems() []string {
	p := l.problems
	l.problems = nil
	return p
}

func (l *loader) takeNotes() []string {
	n := l.notes
	l.notes = nil
	return n
}

// start loads the memory of a session start: managed, user, then every
// directory from the root down to the cwd.
func (l *loader) start() []File {
	var out []File
	if p := l.opts.ManagedPath; p != "" {
		out = append(out, l.take(p, Managed, "", 0)...)
		out = append(out, l.rules(filepath.Join(filepath.Dir(p), ".claude", "rules"), Managed, l.opts.Cwd, "")...)
	}
	if d := l.opts.ConfigDir; d != "" && !l.opts.NoUser {
		out = append(out, l.take(filepath.Join(d, "CLAUDE.md"), User, "", 0)...)
		out = append(out, l.rules(filepath.Join(d, "rules"), User, l.opts.Cwd, "")...)
	}
	dirs := fromRoot(l.opts.Cwd)
	if l.opts.NoProject {
		dirs = nil
	}
	for _, d := range dirs {
		l.scanned[d] = true
		out = append(out, l.dir(d, "")...)
	}
	return out
}

// fromRoot lists dir and its ancestors, the file system root first.
func fromRoot(dir string) []string {
	var dirs []string
	for {
		dirs = append(dirs, dir)
		parent := filepath.Dir(dir)
		if parent == dir {
			break
		}
		dir = parent
	}
	for i, j := 0, len(dirs)-1; i < j; i, j = i+1, j-1 {
		dirs[i], dirs[j] = dirs[j], dirs[i]
	}
	return dirs
}

// dir loads the memory of one directory: CLAUDE.md, .claude/CLAUDE.md,
// AGENTS.md when neither exists, .claude/rules, CLAUDE.local.md. read, when
// set, is the file whose reading brought this directory in: path-scoped rules
// matching it load at once instead of waiting.
func (l *loader) dir(d, read string) []File {
	var out []File
	hasMain := false
	if f, ok := l.probe(filepath.Join(d, "CLAUDE.md")); ok {
		hasMain = true
		out = append(out, l.takeInfo(filepath.Join(d, "CLAUDE.md"), f, Project, "", 0)...)
	}
	dot := filepath.Join(d, ".claude")
	hasDot := false
	if fi, err := l.sys.stat(dot); err == nil && fi.IsDir() {
		hasDot = true
		p := filepath.Join(dot, "CLAUDE.md")
		if f, ok := l.probe(p); ok {
			hasMain = true
			out = append(out, l.takeInfo(p, f, Project, "", 0)...)
		}
	} else if err != nil && !absent(err) {
		l.problem("memory: %v", err)
	}
	if !hasMain {
		out = append(out, l.take(filepath.Join(d, "AGENTS.md"), Project, "", 0)...)
	}
	if hasDot {
		out = append(out, l.rules(filepath.Join(dot, "rules"), Project, d, read)...)
	}
	out = append(out, l.take(filepath.Join(d, "CLAUDE.local.md"), Local, "", 0)...)
	return out
}

// rules loads the .md files under rdir, sorted by their slash-separated path
// relative to rdir. Rules with paths: globs (relative to base) wait in
// l.pending unless read matches them.
func (l *loader) rules(rdir string, kind Kind, base, read string) []File {
	var paths []string
	l.listRules(rdir, "", 0, nil, &paths)
	if len(paths) == 0 {
		return nil
	}
	sort.Strings(paths)
	var out []File
	for _, rel := range paths {
		p := filepath.Join(rdir, filepath.FromSlash(rel))
		e, ok := l.open(p, true, kind)
		if !ok {
			continue
		}
		if len(e.globs) > 0 && (read == "" || !matchGlobs(e.globs, base, read)) {
			l.pending = append(l.pending, pendingRule{e: e, kind: kind, base: base})
			continue
		}
		out = append(out, l.emit(e, kind, "", 0)...)
	}
	return out
}

// listRules collects the .md files below dir (as slash paths relative to
// the rules root), following symbolic links to directories. visited holds
// the directories on the current branch, so a link loop ends.
func (l *loader) listRules(dir, rel string, depth int, visited []fs.FileInfo, out *[]string) {
	ents, err := l.sys.readDir(dir)
	if err != nil {
		if !absent(err) {
			l.problem("memory: rules: %v", err)
		}
		return
	}
	if fi, err := l.sys.stat(dir); err == nil {
		for _, v := range visited {
			if os.SameFile(v, fi) {
				return
			}
		}
		visited = append(visited, fi)
	}
	for _, de := range ents {
		name := de.Name()
		p := filepath.Join(dir, name)
		r := name
		if rel != "" {
			r = rel + "/" + name
		}
		isDir := de.IsDir()
		if de.Type()&fs.ModeSymlink != 0 {
			fi, err := l.sys.stat(p)
			if err != nil {
				continue // a dangling link is no rule
			}
			isDir = fi.IsDir()
		}
		switch {
		case isDir:
			if depth < maxRulesDepth {
				l.listRules(p, r, depth+1, visited, out)
			}
		case strings.HasSuffix(name, ".md"):
			*out = append(*out, r)
		}
	}
}

// take loads the memory file at p, if there is one, with what it imports.
func (l *loader) take(p string, kind Kind, importer string, depth int) []File {
	fi, ok := l.probe(p)
	if !ok {
		if importer != "" {
			l.note("memory: %s imports %s, which does not exist or is not a file", importer, p)
		}
		return nil
	}
	return l.takeInfo(p, fi, kind, importer, depth)
}

func (l *loader) takeInfo(p string, fi fs.FileInfo, kind Kind, importer string, depth int) []File {
	e, ok := l.read(p, fi, false, kind)
	if !ok {
		return nil
	}
	return l.emit(e, kind, importer, depth)
}

// open probes and reads p (excluded and already loaded files give false).
func (l *loader) open(p string, rule bool, kind Kind) (*entry, bool) {
	fi, ok := l.probe(p)
	if !ok {
		return nil, false
	}
	return l.read(p, fi, rule, kind)
}

// probe stats p: true for a regular file (links followed). A missing file
// is silent, a directory (even one named CLAUDE.md) is not memory, anything
// else odd is a problem.
func (l *loader) probe(p string) (fs.FileInfo, bool) {
	fi, err := l.sys.stat(p)
	if err != nil {
		if !absent(err) {
			l.problem("memory: %v", err)
		}
		return nil, false
	}
	if fi.IsDir() {
		return nil, false
	}
	if !fi.Mode().IsRegular() {
		// A FIFO or a device would block or never end.
		l.problem("memory: %s is not a regular file", p)
		return nil, false
	}
	return fi, true
}

// absent reports errors meaning there is nothing at the path.
func absent(err error) bool {
	return errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR)
}

// excluded reports whether claudeMdExcludes skips p, with a note when it
// does. Managed memory cannot be excluded.
func (l *loader) excluded(p string, kind Kind) bool {
	if kind == Managed || len(l.excludes) == 0 {
		return false
	}
	s := filepath.ToSlash(p)
	for _, pat := range l.excludes {
		if ok, _ := doublestar.Match(pat, s); ok {
			l.note("memory: %s skipped by claudeMdExcludes %q", p, pat)
			return true
		}
	}
	return false
}

func (l *loader) seen(p string, fi fs.FileInfo) bool {
	if l.seenPath[p] {
		return true
	}
	for _, s := range l.seenInfo {
		if os.SameFile(s, fi) {
			return true
		}
	}
	return false
}

// read reads a memory file that probe found, unless it is excluded or
// already loaded. Rules have their frontmatter parsed and removed.
func (l *loader) read(p string, fi fs.FileInfo, rule bool, kind Kind) (*entry, bool) {
	if l.excluded(p, kind) || l.seen(p, fi) {
		return nil, false
	}
	content, cut, err := l.readText(p)
	if err != nil {
		l.problem("memory: %v", err)
		return nil, false
	}
	e := &entry{path: p, info: fi}
	if rule {
		if fm, body, ok := splitFrontmatter(content); ok {
			e.globs = parsePaths(fm)
			content = body
		}
	}
	e.content = tidy(stripBlockComments(content))
	if cut {
		e.content += cutNote
	}
	return e, true
}

// readText reads at most maxFileBytes of p, cut at a line boundary (cut
// is true) when the file is longer. Binary files are refused.
func (l *loader) readText(p string) (text string, cut bool, err error) {
	f, err := l.sys.open(p)
	if err != nil {
		return "", false, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxFileBytes+1))
	if err != nil {
		return "", false, fmt.Errorf("read %s: %w", p, err)
	}
	if bytes.IndexByte(data[:min(len(data), 8192)], 0) >= 0 {
		return "", false, fmt.Errorf("%s: not a text file", p)
	}
	if len(data) <= maxFileBytes {
		return string(data), false, nil
	}
	return string(cutAt(data, maxFileBytes)), true, nil
}

// cutAt returns the longest prefix of data no longer than n bytes that ends
// at a line boundary; when the first n bytes hold no newline, it cuts at a
// character boundary instead.
func cutAt(data []byte, n int) []byte {
	if len(data) <= n {
		return data
	}
	if i := bytes.LastIndexByte(data[:n], '\n'); i >= 0 {
		return data[:i+1]
	}
	for n > 0 && !utf8.RuneStart(data[n]) {
		n--
	}
	return data[:n]
}

// tidy is the last step before content is sent: valid UTF-8, no leading
// blank lines, no trailing white space.
func tidy(s string) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	s = strings.TrimLeft(s, "\r\n")
	return strings.TrimRight(s, " \t\r\n")
}

// emit sends e and then, depth first, what it imports. A file is sent once
// per Set, whatever path reaches it.
func (l *loader) emit(e *entry, kind Kind, importer string, depth int) []File {
	if l.seen(e.path, e.info) {
		return nil
	}
	l.seenPath[e.path] = true
	l.seenInfo = append(l.seenInfo, e.info)
	if strings.TrimSpace(e.content) == "" {
		return nil
	}
	reason := l.reason
	switch {
	case reason == Reloaded:
	case importer != "":
		reason = Included
	case len(e.globs) > 0:
		reason = GlobMatch
	}
	out := []File{{Path: e.path, Kind: kind, Content: e.content, ImportedBy: importer, Globs: e.globs, Reason: reason, Trigger: l.trigger}}
	for _, ref := range importRefs(e.content) {
		target, ok := resolveImport(ref, filepath.Dir(e.path), l.opts.Home)
		if !ok {
			l.note("memory: %s imports @%s, but no home directory is known", e.path, ref)
			continue
		}
		if depth+1 > maxImportHops {
			l.note("memory: %s imports %s, more than %d imports deep: not loaded", e.path, target, maxImportHops)
			continue
		}
		out = append(out, l.take(target, kind, e.path, depth+1)...)
	}
	return out
}

// activate loads the pending path-scoped rules that match read, in the
// order they were found.
func (l *loader) activate(read string) []File {
	var out []File
	kept := l.pending[:0]
	for _, r := range l.pending {
		if !matchGlobs(r.e.globs, r.base, read) {
			kept = append(kept, r)
			continue
		}
		out = append(out, l.emit(r.e, r.kind, "", 0)...)
	}
	clear(l.pending[len(kept):])
	l.pending = kept
	return out
}

// matchGlobs reports whether the file read, an absolute path, matches one
// of globs. Relative globs are relative to base; a file outside base
// matches none of them.
func matchGlobs(globs []string, base, read string) bool {
	rel, err := filepath.Rel(base, read)
	inside := err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
	rel = filepath.ToSlash(rel)
	abs := filepath.ToSlash(read)
	for _, g := range globs {
		if strings.HasPrefix(g, "/") {
			if ok, _ := doublestar.Match(g, abs); ok {
				return true
			}
			continue
		}
		if inside {
			if ok, _ := doublestar.Match(g, rel); ok {
				return true
			}
		}
	}
	return false
}
