// Package watch tells a session which files changed on disk while it ran:
// the files it read or wrote, the paths its hooks asked for, its settings
// files. It is built on fsnotify, for that job:
//
//   - It watches directories and picks the names it was asked for, since
//     editors save by renaming a new file over the old one (a watch on the
//     file itself would stay with the old one) and a file that does not
//     exist yet can only be waited for in its directory. A directory asked
//     for is watched as a tree: its files, in every subdirectory, new ones
//     too.
//   - It debounces. The raw events of a burst (an editor's write, rename
//     and chmod; a tool writing in chunks) make one Event per file, once
//     the file has been quiet for a moment, whose Kind compares the file
//     before the burst with the file after it: add, change or unlink.
//   - It leaves out the session's own writes: a file that is as Writes
//     recorded it is not reported.
//
// Nothing starts until New is called: a session without a hook that wants
// to know creates no watcher.
package watch

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/fsnotify/fsnotify"
)

// Kind is what became of a file: the values of Claude Code's FileChanged
// "event" field.
type Kind string

const (
	// Add: the file did not exist before the burst, and does after.
	Add Kind = "add"
	// Change: it existed before and after (written, or replaced).
	Change Kind = "change"
	// Unlink: it existed before, and no longer does.
	Unlink Kind = "unlink"
)

// Event is one change of one file.
type Event struct {
	// Path is the file's absolute path, as it was asked for (or found in
	// a watched tree).
	Path string
	Kind Kind
	// Owners are those who watch the file (its own path, or a tree it is
	// in), sorted.
	Owners []string
}

// DefaultQuiet is how long a file must stay still before its change is
// reported, when Options.Quiet is zero.
const DefaultQuiet = 100 * time.Millisecond

// maxWait bounds, in Quiet periods, how long a file that keeps changing
// (a log being written) waits for its event.
const maxWait = 10

// Options configure a Watcher.
type Options struct {
	// Quiet is how long a file must stay still before its change is
	// reported; zero means DefaultQuiet.
	Quiet time.Duration
	// Writes are the session's own writes, which are not reported; nil:
	// every change is.
	Writes *Writes
	// OnEvent is told of each change. It is called from the watcher's
	// goroutine, one event at a time in the order the files first moved;
	// while it runs, later changes wait (they are not lost).
	OnEvent func(Event)
	// OnError is told of what goes wrong underneath (the kernel's event
	// queue overflowed…); nil drops it.
	OnError func(error)

	// observed, when set, is told of every raw event the loop reads: tests
	// use it to know that a burst has been seen whole.
	observed func(fsnotify.Event)
}

// Watcher watches files for a session until Close. It is safe for
// concurrent use.
type Watcher struct {
	o   Options
	fsw *fsnotify.Watcher

	mu sync.Mutex
	// owners are the paths each caller asked for; a path is watched while
	// some owner has it.
	owners map[string]map[string]bool
	// targets are the watched paths: true for a directory tree.
	targets map[string]bool
	// trees are the directories of each tree, as found so far.
	trees map[string]map[string]bool
	// dirs are the directories fsnotify watches.
	dirs map[string]bool
	// known are the watched files that existed when last looked at.
	known map[string]bool
	// pending are the files that moved and wait to be quiet, by path, in
	// the order they first moved.
	pending map[string]*burst
	order   []string

	flushNow chan chan struct{}
	stop     chan struct{}
	done     chan struct{}
	closed   sync.Once
}

// burst is the raw events of one file not reported yet.
type burst struct{ first, last time.Time }

// New starts a watcher with nothing watched yet.
func New(o Options) (*Watcher, error) {
	if o.Quiet <= 0 {
		o.Quiet = DefaultQuiet
	}
	fsw, err := fsnotify.NewWatcher()
	if err != nil {
		return nil, fmt.Errorf("file watcher: %w", err)
	}
	w := &Watcher{
		o: o, fsw: fsw,
		owners: map[string]map[string]bool{}, targets: map[string]bool{}, trees: map[string]map[string]bool{},
		dirs: map[string]bool{}, known: map[string]bool{}, pending: map[string]*burst{},
		flushNow: make(chan chan struct{}), stop: make(chan struct{}), done: make(chan struct{}),
	}
	go w.loop()
	return w, nil
}

// Add watches paths for owner, besides those it watches already. Each is
// absolute: a file, which need not exist yet (its directory must), or a
// directory, watched as a tree. A path that cannot be watched is named in
// the error; the others are watched.
func (w *Watcher) Add(owner string, paths ...string) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.add(owner, paths)
}

// add is Add. Callers hold w.mu.
func (w *Watcher) add(owner string, paths []string) error {
	var errs []error
	for _, p := range paths {
		if err := w.watch(p); err != nil {
			errs = append(errs, err)
			continue
		}
		if w.owners[owner] == nil {
			w.owners[owner] = map[string]bool{}
		}
		w.owners[owner][filepath.Clean(p)] = true
	}
	return errors.Join(errs...)
}

// Set makes paths all that owner watches: the paths it had and no longer
// has stop being watched, unless another owner has them.
func (w *Watcher) Set(owner string, paths ...string) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	old := w.owners[owner]
	delete(w.owners, owner)
	err := w.add(owner, paths)
	for p := range old {
		if !w.owned(p) {
			w.unwatch(p)
		}
	}
	w.dropDirs()
	return err
}

// Close stops the watcher: its goroutines end, and what was pending is
// not reported. It waits for an OnEvent call under way.
func (w *Watcher) Close() error {
	var err error
	w.closed.Do(func() {
		close(w.stop)
		<-w.done
		err = w.fsw.Close()
	})
	return err
}

// flush reports every pending change now, quiet or not (for tests).
func (w *Watcher) flush() {
	reply := make(chan struct{})
	select {
	case w.flushNow <- reply:
		<-reply
	case <-w.done:
	}
}

// watch makes p a target. Callers hold w.mu.
func (w *Watcher) watch(p string) error {
	if !filepath.IsAbs(p) {
		return fmt.Errorf("watch %s: not an absolute path", p)
	}
	p = filepath.Clean(p)
	if _, ok := w.targets[p]; ok {
		return nil
	}
	if info, err := os.Stat(p); err == nil && info.IsDir() {
		w.targets[p] = true
		w.trees[p] = map[string]bool{}
		if err := w.addTree(p, p, false); err != nil {
			w.unwatch(p)
			return err
		}
		return nil
	}
	if err := w.watchDir(filepath.Dir(p)); err != nil {
		return fmt.Errorf("watch %s: %w", p, err)
	}
	w.targets[p] = false
	if isFile(p) {
		w.known[p] = true
	}
	return nil
}

// addTree watches dir, found in the tree of root, and every directory below
// it. Its files are known; those of a directory that just appeared are
// new, and wait to be reported. Callers hold w.mu.
func (w *Watcher) addTree(root, dir string, appeared bool) error {
	return filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		switch {
		case err != nil && p == dir:
			return fmt.Errorf("watch %s: %w", p, err)
		case err != nil:
			return nil // a subdirectory that went, or cannot be read
		case d.IsDir():
			if err := w.watchDir(p); err != nil {
				return fmt.Errorf("watch %s: %w", p, err)
			}
			w.trees[root][p] = true
		case appeared:
			w.mark(p, time.Now())
		case d.Type().IsRegular() || d.Type()&fs.ModeSymlink != 0:
			if isFile(p) {
				w.known[p] = true
			}
		}
		return nil
	})
}

// watchDir has fsnotify watch dir. Callers hold w.mu.
func (w *Watcher) watchDir(dir string) error {
	if w.dirs[dir] {
		return nil
	}
	if err := w.fsw.Add(dir); err != nil {
		return err
	}
	w.dirs[dir] = true
	return nil
}

// owned reports whether some owner watches p. Callers hold w.mu.
func (w *Watcher) owned(p string) bool {
	for _, paths := range w.owners {
		if paths[p] {
			return true
		}
	}
	return false
}

// unwatch forgets the target p. Callers hold w.mu, and call dropDirs after.
func (w *Watcher) unwatch(p string) {
	tree := w.targets[p]
	delete(w.targets, p)
	if tree {
		delete(w.trees, p)
		for f := range w.known {
			if under(f, p) && !w.covers(f) {
				delete(w.known, f)
			}
		}
	} else if !w.covers(p) {
		delete(w.known, p)
	}
}

// dropDirs stops watching the directories no target needs. Callers hold
// w.mu.
func (w *Watcher) dropDirs() {
	need := map[string]bool{}
	for p, tree := range w.targets {
		if !tree {
			need[filepath.Dir(p)] = true
		}
	}
	for _, dirs := range w.trees {
		for d := range dirs {
			need[d] = true
		}
	}
	for d := range w.dirs {
		if !need[d] {
			delete(w.dirs, d)
			_ = w.fsw.Remove(d) // gone already when the directory was removed
		}
	}
}

// treeOf returns the watched tree p is in. Callers hold w.mu.
func (w *Watcher) treeOf(p string) (string, bool) {
	for d := filepath.Dir(p); ; d = filepath.Dir(d) {
		if w.targets[d] {
			return d, true
		}
		if d == filepath.Dir(d) {
			return "", false
		}
	}
}

// covers reports whether a change of p is to be reported. Callers hold
// w.mu.
func (w *Watcher) covers(p string) bool {
	if tree, ok := w.targets[p]; ok && !tree {
		return true
	}
	_, ok := w.treeOf(p)
	return ok
}

// loop reads fsnotify's events until Close, and reports each file once it
// is quiet.
func (w *Watcher) loop() {
	defer close(w.done)
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	defer timer.Stop()
	for {
		select {
		case <-w.stop:
			return
		case ev, ok := <-w.fsw.Events:
			if !ok {
				return
			}
			if w.o.observed != nil {
				w.o.observed(ev)
			}
			w.note(ev)
		case err, ok := <-w.fsw.Errors:
			if !ok {
				return
			}
			if w.o.OnError != nil {
				w.o.OnError(fmt.Errorf("file watcher: %w", err))
			}
		case <-timer.C:
			w.deliver(w.due(time.Now()))
		case reply := <-w.flushNow:
			w.deliver(w.due(time.Time{}))
			close(reply)
		}
		if next, ok := w.next(); ok {
			timer.Reset(time.Until(next))
		} else {
			timer.Stop()
		}
	}
}

// note takes in one raw event.
func (w *Watcher) note(ev fsnotify.Event) {
	if ev.Op == fsnotify.Chmod {
		return // a touch, or the first sign of a removal: not a change
	}
	p := filepath.Clean(ev.Name)
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.dirs[p] && (ev.Has(fsnotify.Remove) || ev.Has(fsnotify.Rename)) {
		// A watched directory went: its watch went with it, so that it is
		// watched anew if it comes back.
		delete(w.dirs, p)
		_ = w.fsw.Remove(p)
		for _, dirs := range w.trees {
			delete(dirs, p)
		}
	}
	if root, ok := w.treeOf(p); ok && ev.Has(fsnotify.Create) {
		if info, err := os.Lstat(p); err == nil && info.IsDir() {
			if err := w.addTree(root, p, true); err != nil && w.o.OnError != nil {
				w.o.OnError(err)
			}
			return
		}
	}
	if w.covers(p) {
		w.mark(p, time.Now())
	}
}

// mark notes that p moved at t. Callers hold w.mu.
func (w *Watcher) mark(p string, t time.Time) {
	if b, ok := w.pending[p]; ok {
		b.last = t
		return
	}
	w.pending[p] = &burst{first: t, last: t}
	w.order = append(w.order, p)
}

// next is when the first pending file is due.
func (w *Watcher) next() (time.Time, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	var next time.Time
	for _, b := range w.pending {
		if d := w.dueAt(b); next.IsZero() || d.Before(next) {
			next = d
		}
	}
	return next, !next.IsZero()
}

// dueAt is when a burst is reported: once quiet, or at the latest maxWait
// quiet periods after it began.
func (w *Watcher) dueAt(b *burst) time.Time {
	quiet, latest := b.last.Add(w.o.Quiet), b.first.Add(maxWait*w.o.Quiet)
	if latest.Before(quiet) {
		return latest
	}
	return quiet
}

// due takes the pending files due at now (all of them for the zero time)
// and returns their events, in the order they first moved.
func (w *Watcher) due(now time.Time) []Event {
	w.mu.Lock()
	defer w.mu.Unlock()
	var out []Event
	w.order = slices.DeleteFunc(w.order, func(p string) bool {
		if !now.IsZero() && now.Before(w.dueAt(w.pending[p])) {
			return false
		}
		delete(w.pending, p)
		if !w.covers(p) {
			return true // no longer watched
		}
		was, is := w.known[p], isFile(p)
		if is {
			w.known[p] = true
		} else {
			delete(w.known, p)
		}
		ev := Event{Path: p, Owners: w.ownersOf(p)}
		switch {
		case !was && is:
			ev.Kind = Add
		case was && is:
			ev.Kind = Change
		case was && !is:
			ev.Kind = Unlink
		default:
			return true
		}
		out = append(out, ev)
		return true
	})
	return out
}

// ownersOf are the owners who watch p. Callers hold w.mu.
func (w *Watcher) ownersOf(p string) []string {
	var out []string
	for owner, paths := range w.owners {
		for q := range paths {
			if q == p || (w.targets[q] && under(p, q)) {
				out = append(out, owner)
				break
			}
		}
	}
	slices.Sort(out)
	return out
}

// deliver reports the events that are not the session's own writes.
func (w *Watcher) deliver(events []Event) {
	for _, ev := range events {
		if ev.Kind != Unlink && w.o.Writes.Own(ev.Path) {
			continue
		}
		if w.o.OnEvent != nil {
			w.o.OnEvent(ev)
		}
	}
}

// isFile reports whether p is a file (a symbolic link to one counts).
func isFile(p string) bool {
	info, err := os.Stat(p)
	return err == nil && !info.IsDir()
}

// under reports whether p is inside dir.
func under(p, dir string) bool {
	return strings.HasPrefix(p, dir+string(filepath.Separator))
}
