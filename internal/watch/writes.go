package watch

import (
	"crypto/sha256"
	"io"
	"os"
	"sync"
	"time"
)

// Writes records the files a session wrote itself, so that its watcher
// can tell those changes from everyone else's. A write is recorded as the
// file it left on disk: modification time, size and a hash of the content.
// A file that still looks like that when the watcher gets to it is the
// session's own; one that a process touched, rewrote or replaced after
// (even with the same size, within the file system's clock tick) is not.
//
// Do holds a lock across the write and its recording, and Own takes the
// same lock, so a watcher that notices a write while it is under way waits
// for it to be recorded rather than mistaking it for someone else's. The
// zero value is ready to use; a nil *Writes records nothing.
type Writes struct {
	mu sync.Mutex
	m  map[string]stamp
}

// stamp is what a file looked like.
type stamp struct {
	mod  time.Time
	size int64
	sum  [sha256.Size]byte
}

// Do runs write, which changes the file at path, and records the file it
// leaves as the session's own. A failed write records nothing.
func (w *Writes) Do(path string, write func() error) error {
	if w == nil {
		return write()
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if err := write(); err != nil {
		return err
	}
	if w.m == nil {
		w.m = map[string]stamp{}
	}
	if st, ok := stampOf(path); ok {
		w.m[path] = st
	} else {
		delete(w.m, path)
	}
	return nil
}

// Own reports whether the file at path is as the session last wrote it.
func (w *Writes) Own(path string) bool {
	if w == nil {
		return false
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	want, ok := w.m[path]
	if !ok {
		return false
	}
	got, ok := stampOf(path)
	return ok && got.same(want)
}

func (s stamp) same(o stamp) bool {
	return s.mod.Equal(o.mod) && s.size == o.size && s.sum == o.sum
}

// stampOf reads what the file at path looks like; false when it cannot be
// read.
func stampOf(path string) (stamp, bool) {
	f, err := os.Open(path)
	if err != nil {
		return stamp{}, false
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil || !info.Mode().IsRegular() {
		return stamp{}, false
	}
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return stamp{}, false
	}
	st := stamp{mod: info.ModTime(), size: info.Size()}
	h.Sum(st.sum[:0])
	return st, true
}
