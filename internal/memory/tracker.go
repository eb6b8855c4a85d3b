package memory

import (
	"path/filepath"
	"strings"
	"sync"
)

// Tracker hands out the memory that loads on demand, as files are read:
// CLAUDE.md (and the rest of a directory's memory) in directories below the
// cwd, and rules whose paths: globs match the file. It is safe for
// concurrent use (parallel tool calls).
type Tracker struct {
	mu sync.Mutex
	l  *loader
}

// OnRead returns the memory newly relevant because path (a file; relative
// paths are relative to the cwd) is being read: first the waiting
// path-scoped rules it matches, in the order they were found, then the
// memory of each directory from just below the cwd down to path's
// directory that had not been looked at yet, shallowest first. A memory file
// is returned once per Set, whatever the reads; nil when nothing is new
// (and for a nil Tracker).
func (t *Tracker) OnRead(path string) []File {
	if t == nil || path == "" {
		return nil
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	cwd := t.l.opts.Cwd
	if !filepath.IsAbs(path) {
		path = filepath.Join(cwd, path)
	}
	path = filepath.Clean(path)
	t.l.reason, t.l.trigger = Nested, path

	out := t.l.activate(path)
	rel, err := filepath.Rel(cwd, filepath.Dir(path))
	if err != nil || t.l.opts.NoProject || rel == "." || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return out
	}
	d := cwd
	for _, part := range strings.Split(rel, string(filepath.Separator)) {
		d = filepath.Join(d, part)
		if t.l.scanned[d] {
			continue
		}
		t.l.scanned[d] = true
		out = append(out, t.l.dir(d, path)...)
	}
	return out
}

// Problems returns, and forgets, the problems met by OnRead so far (files
// that could not be read).
func (t *Tracker) Problems() []string {
	if t == nil {
		return nil
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.l.takeProblems()
}

// Notes returns, and forgets, the diagnostic notes of OnRead so far
// (missing or too deep imports, excluded files).
func (t *Tracker) Notes() []string {
	if t == nil {
		return nil
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.l.takeNotes()
}
