package search

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"sync/atomic"
)

// walkOptions say which files under a directory tree to visit.
type walkOptions struct {
	// root is the absolute, clean directory to walk.
	root string
	// rules are the gitignore rules in force in root, before root's own
	// .gitignore (see rootRules).
	rules *ignoreRules
	// maxDepth is the deepest level whose files are visited (root's files
	// are level 1); 0 means no limit.
	maxDepth int
	// keepDir, if set, prunes the directories it refuses. rel is the path
	// relative to root with forward slashes, name its last element.
	keepDir func(rel, name string) bool
	// keepFile, if set, drops the files it refuses.
	keepFile func(rel, name string) bool
	// workers is the number of goroutines; 0 picks a default.
	workers int
}

// visitFunc handles the file at the absolute path on worker w (0 ≤ w <
// workers), so callers can keep per-worker buffers and results without
// locking.
type visitFunc func(w int, path string)

// defaultWorkers is the walk's parallelism: reading files is mostly
// system-call time, so a few more goroutines than cores keep them busy.
func defaultWorkers() int {
	return min(max(4, 2*runtime.GOMAXPROCS(0)), 32)
}

// walk visits the regular files below o.root in parallel: directories are
// read by the same worker pool that handles files, so the walk and the
// searching overlap. It skips version-control directories, symbolic links
// and whatever the gitignore rules ignore, pruning ignored directories
// before reading them. Unreadable entries are skipped. It returns ctx's
// error if ctx ended first, after every worker has stopped.
func walk(ctx context.Context, o walkOptions, visit visitFunc) error {
	workers := o.workers
	if workers <= 0 {
		workers = defaultWorkers()
	}
	q := &workQueue{}
	q.cond.L = &q.mu
	stopWatch := context.AfterFunc(ctx, q.stop)
	defer stopWatch()

	prefix := len(o.root) + 1
	if os.IsPathSeparator(o.root[len(o.root)-1]) { // the filesystem root
		prefix = len(o.root)
	}
	q.push([]walkItem{{path: o.root, rules: o.rules, depth: 1}})

	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			var batch []walkItem
			var scratch dirScratch
			for {
				it, ok := q.pop()
				if !ok {
					return
				}
				if ctx.Err() != nil { // AfterFunc's stop may not have run yet
					q.stop()
					return
				}
				if it.rules == nil {
					visit(w, it.path)
				} else {
					batch = o.readDir(it, prefix, &scratch, batch[:0])
					q.push(batch)
				}
				q.finish()
			}
		})
	}
	wg.Wait()
	return ctx.Err()
}

// readDir lists the directory of it and appends its subdirectories and
// files that pass the filters to batch.
func (o *walkOptions) readDir(it walkItem, prefix int, d *dirScratch, batch []walkItem) []walkItem {
	d.names, d.ents = d.names[:0], d.ents[:0]
	if err := listDir(it.path, d); err != nil && len(d.ents) == 0 {
		return batch
	}
	rules := it.rules
	for _, e := range d.ents {
		if e.kind == kindFile && string(d.names[e.start:e.end]) == ".gitignore" {
			own := readIgnoreFile(joinPath(it.path, ".gitignore"), rules.comps)
			rules = rules.with(rules.comps, own)
			break
		}
	}
	for _, e := range d.ents {
		path := joinPath(it.path, string(d.names[e.start:e.end]))
		name := path[len(path)-(e.end-e.start):]
		if e.kind == kindDir {
			if vcsDirs[name] || (o.maxDepth > 0 && it.depth >= o.maxDepth) || rules.ignored(name, true) {
				continue
			}
			if o.keepDir != nil && !o.keepDir(filepath.ToSlash(path[prefix:]), name) {
				continue
			}
			batch = append(batch, walkItem{path: path, rules: rules.with(rules.entry(name), nil), depth: it.depth + 1})
			continue
		}
		if rules.ignored(name, false) {
			continue
		}
		if o.keepFile != nil && !o.keepFile(filepath.ToSlash(path[prefix:]), name) {
			continue
		}
		batch = append(batch, walkItem{path: path})
	}
	return batch
}

// entryKind is what a directory entry is, as far as the walk cares.
type entryKind uint8

const (
	kindOther entryKind = iota // symbolic links, devices…: skipped
	kindFile
	kindDir
)

// dirScratch is one worker's directory listing, reused from directory to
// directory: the entries' names back to back, and where each one is.
type dirScratch struct {
	buf   []byte
	names []byte
	ents  []dirEntry
}

type dirEntry struct {
	start, end int
	kind       entryKind
}

func (d *dirScratch) add(name []byte, kind entryKind) {
	if kind == kindOther {
		return
	}
	start := len(d.names)
	d.names = append(d.names, name...)
	d.ents = append(d.ents, dirEntry{start: start, end: len(d.names), kind: kind})
}

// walkItem is a directory to read (rules set) or a file to visit.
type walkItem struct {
	path  string
	rules *ignoreRules
	depth int
}

// workQueue is the walk's shared stack of pending items. Taking the newest
// item first keeps the walk depth-first, which keeps the stack short.
type workQueue struct {
	mu      sync.Mutex
	cond    sync.Cond
	items   []walkItem
	active  int // items taken and not yet finished
	stopped atomic.Bool
}

func (q *workQueue) push(items []walkItem) {
	if len(items) == 0 {
		return
	}
	q.mu.Lock()
	q.items = append(q.items, items...)
	q.mu.Unlock()
	if len(items) == 1 {
		q.cond.Signal()
	} else {
		q.cond.Broadcast()
	}
}

// pop takes the next item, waiting while other workers may still add some.
// It reports false once the work is done or stopped.
func (q *workQueue) pop() (walkItem, bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	for len(q.items) == 0 && q.active > 0 && !q.stopped.Load() {
		q.cond.Wait()
	}
	if len(q.items) == 0 || q.stopped.Load() {
		q.cond.Broadcast()
		return walkItem{}, false
	}
	it := q.items[len(q.items)-1]
	q.items[len(q.items)-1] = walkItem{}
	q.items = q.items[:len(q.items)-1]
	q.active++
	return it, true
}

// finish records that a taken item has been handled.
func (q *workQueue) finish() {
	q.mu.Lock()
	q.active--
	idle := q.active == 0 && len(q.items) == 0
	q.mu.Unlock()
	if idle {
		q.cond.Broadcast()
	}
}

// stop makes every worker return after its current item.
func (q *workQueue) stop() {
	q.mu.Lock()
	q.stopped.Store(true)
	q.mu.Unlock()
	q.cond.Broadcast()
}

// joinPath joins a clean directory path and an entry name, cheaper than
// filepath.Join, which cleans again.
func joinPath(dir, name string) string {
	if os.IsPathSeparator(dir[len(dir)-1]) {
		return dir + name
	}
	return dir + string(filepath.Separator) + name
}
