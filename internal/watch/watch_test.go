package watch

import (
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fsnotify/fsnotify"
)

// hang bounds every wait: it only catches a watcher that never answers.
const hang = 10 * time.Second

// harness runs a watcher whose quiet period never ends by itself: the test
// decides when a burst is over (settle), so what makes one event is not a
// matter of timing.
type harness struct {
	t   *testing.T
	w   *Watcher
	dir string

	mu     sync.Mutex
	seen   map[string]bool
	events []Event
	n      int
	// owners keeps the events' Owners (the tests that are not about them
	// leave them out).
	owners bool
}

func newHarness(t *testing.T, writes *Writes) *harness {
	t.Helper()
	h := &harness{t: t, dir: t.TempDir(), seen: map[string]bool{}}
	w, err := New(Options{
		Quiet:   time.Hour,
		Writes:  writes,
		OnEvent: func(ev Event) { h.mu.Lock(); h.events = append(h.events, ev); h.mu.Unlock() },
		OnError: func(err error) { t.Errorf("watcher error: %v", err) },
		observed: func(ev fsnotify.Event) {
			h.mu.Lock()
			h.seen[ev.Name] = true
			h.mu.Unlock()
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	h.w = w
	t.Cleanup(func() { _ = w.Close() })
	return h
}

func (h *harness) path(name string) string { return filepath.Join(h.dir, name) }

// settle ends the burst: a marker file written after everything the test
// did is seen by the watcher after all of it (inotify keeps the order of a
// watcher's events), then the pending changes are reported. It returns
// them, the marker's left out.
func (h *harness) settle() []Event {
	h.t.Helper()
	h.n++
	marker := h.path(".marker" + strconv.Itoa(h.n))
	if err := h.w.Add("marker", marker); err != nil {
		h.t.Fatal(err)
	}
	write(h.t, marker, "x")
	for deadline := time.Now().Add(hang); ; {
		h.mu.Lock()
		ok := h.seen[marker]
		h.mu.Unlock()
		if ok {
			break
		}
		if time.Now().After(deadline) {
			h.t.Fatalf("the watcher never saw %s", marker)
		}
		time.Sleep(time.Millisecond)
	}
	h.w.flush()
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []Event
	for _, ev := range h.events {
		if !strings.HasPrefix(filepath.Base(ev.Path), ".marker") {
			if !h.owners {
				ev.Owners = nil
			}
			out = append(out, ev)
		}
	}
	h.events = nil
	return out
}

func write(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func appendTo(t *testing.T, path, content string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString(content); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

func check(t *testing.T, got, want []Event) {
	t.Helper()
	if !reflect.DeepEqual(got, want) {
		t.Errorf("events = %v, want %v", got, want)
	}
}

func TestBurstIsOneEvent(t *testing.T) {
	h := newHarness(t, nil)
	f := h.path("a.txt")
	write(t, f, "one\n")
	if err := h.w.Add("files", f); err != nil {
		t.Fatal(err)
	}
	for i := range 5 {
		appendTo(t, f, strconv.Itoa(i)+"\n")
	}
	check(t, h.settle(), []Event{{Path: f, Kind: Change}})
	// Nothing more happened: nothing more is reported.
	check(t, h.settle(), nil)
}

func TestRenameOverIsAChange(t *testing.T) {
	h := newHarness(t, nil)
	f := h.path("config.yaml")
	write(t, f, "old\n")
	if err := h.w.Add("files", f); err != nil {
		t.Fatal(err)
	}
	// As an editor saves: a new file beside the old one, renamed over it.
	// The temporary file is not asked for, so it is not reported.
	tmp := h.path(".config.yaml.swp")
	write(t, tmp, "new\n")
	if err := os.Rename(tmp, f); err != nil {
		t.Fatal(err)
	}
	check(t, h.settle(), []Event{{Path: f, Kind: Change}})
	// The watch follows the name, not the file it replaced.
	appendTo(t, f, "more\n")
	check(t, h.settle(), []Event{{Path: f, Kind: Change}})
}

func TestAddAndUnlink(t *testing.T) {
	h := newHarness(t, nil)
	f := h.path(".env")
	if err := h.w.Add("names", f); err != nil {
		t.Fatal(err)
	}
	write(t, f, "A=1\n")
	check(t, h.settle(), []Event{{Path: f, Kind: Add}})
	if err := os.Remove(f); err != nil {
		t.Fatal(err)
	}
	check(t, h.settle(), []Event{{Path: f, Kind: Unlink}})
	// Made and removed within one burst: nothing to report.
	write(t, f, "A=2\n")
	if err := os.Remove(f); err != nil {
		t.Fatal(err)
	}
	check(t, h.settle(), nil)
}

func TestOwnWritesAreNotReported(t *testing.T) {
	writes := &Writes{}
	h := newHarness(t, writes)
	f, g := h.path("mine.go"), h.path("theirs.go")
	write(t, f, "package a\n")
	write(t, g, "package a\n")
	if err := h.w.Add("files", f, g); err != nil {
		t.Fatal(err)
	}
	own := func(path, content string) {
		t.Helper()
		if err := writes.Do(path, func() error { return os.WriteFile(path, []byte(content), 0o644) }); err != nil {
			t.Fatal(err)
		}
	}
	own(f, "package a // by the session\n")
	write(t, g, "package a // by someone else\n")
	check(t, h.settle(), []Event{{Path: g, Kind: Change}})

	// Someone else writes after the session, within the same burst: the
	// file is no longer what the session left.
	own(f, "package a // the session again\n")
	appendTo(t, f, "// and someone else\n")
	check(t, h.settle(), []Event{{Path: f, Kind: Change}})

	// A file the session creates is its own too.
	n := h.path("new.go")
	if err := h.w.Add("files", n); err != nil {
		t.Fatal(err)
	}
	own(n, "package a\n")
	check(t, h.settle(), nil)
}

func TestTreesWatchNewDirectories(t *testing.T) {
	h := newHarness(t, nil)
	root := h.path("skills")
	if err := os.MkdirAll(filepath.Join(root, "old"), 0o755); err != nil {
		t.Fatal(err)
	}
	old := filepath.Join(root, "old", "SKILL.md")
	write(t, old, "old\n")
	if err := h.w.Add("skills", root); err != nil {
		t.Fatal(err)
	}
	appendTo(t, old, "edited\n")
	check(t, h.settle(), []Event{{Path: old, Kind: Change}})

	// A directory made after the watch began is watched too, and the files
	// in it are new.
	sub := filepath.Join(root, "new")
	if err := os.Mkdir(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	skill := filepath.Join(sub, "SKILL.md")
	write(t, skill, "new\n")
	got := h.settle()
	check(t, got, []Event{{Path: skill, Kind: Add}})
	appendTo(t, skill, "more\n")
	check(t, h.settle(), []Event{{Path: skill, Kind: Change}})
	// Directories themselves are not reported.
	if err := os.RemoveAll(filepath.Join(root, "old")); err != nil {
		t.Fatal(err)
	}
	check(t, h.settle(), []Event{{Path: old, Kind: Unlink}})
}

func TestSetReplacesAnOwnersPaths(t *testing.T) {
	h := newHarness(t, nil)
	a, b := h.path("a"), h.path("b")
	write(t, a, "a")
	write(t, b, "b")
	if err := h.w.Set("names", a); err != nil {
		t.Fatal(err)
	}
	if err := h.w.Add("files", b); err != nil {
		t.Fatal(err)
	}
	if err := h.w.Set("names", b); err != nil {
		t.Fatal(err)
	}
	appendTo(t, a, "!")
	appendTo(t, b, "!")
	check(t, h.settle(), []Event{{Path: b, Kind: Change}})
	// b stays watched while one owner still has it.
	if err := h.w.Set("names"); err != nil {
		t.Fatal(err)
	}
	appendTo(t, b, "!")
	check(t, h.settle(), []Event{{Path: b, Kind: Change}})
}

func TestEventsNameTheirOwners(t *testing.T) {
	h := newHarness(t, nil)
	h.owners = true
	dir := h.path("d")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	f := filepath.Join(dir, "f")
	write(t, f, "1")
	if err := h.w.Add("files", f); err != nil {
		t.Fatal(err)
	}
	if err := h.w.Add("hooks", dir); err != nil {
		t.Fatal(err)
	}
	g := filepath.Join(dir, "g")
	appendTo(t, f, "2")
	write(t, g, "1")
	check(t, h.settle(), []Event{{Path: f, Kind: Change, Owners: []string{"files", "hooks"}}, {Path: g, Kind: Add, Owners: []string{"hooks"}}})
}

func TestAddNeedsADirectory(t *testing.T) {
	h := newHarness(t, nil)
	missing := h.path("no/such/dir/file")
	err := h.w.Add("hooks", missing, "relative/path")
	if err == nil || !strings.Contains(err.Error(), missing) || !strings.Contains(err.Error(), "relative/path") {
		t.Fatalf("Add = %v, want an error naming both paths", err)
	}
}

// The real quiet period: one write, reported once the file is still.
func TestQuietPeriod(t *testing.T) {
	got := make(chan Event, 10)
	w, err := New(Options{Quiet: 10 * time.Millisecond, OnEvent: func(ev Event) { got <- ev }})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	f := filepath.Join(t.TempDir(), "f")
	write(t, f, "1")
	if err := w.Add("files", f); err != nil {
		t.Fatal(err)
	}
	appendTo(t, f, "2")
	select {
	case ev := <-got:
		check(t, []Event{ev}, []Event{{Path: f, Kind: Change, Owners: []string{"files"}}})
	case <-time.After(hang):
		t.Fatal("no event")
	}
}

func TestCloseEndsEveryGoroutine(t *testing.T) {
	w, err := New(Options{})
	if err != nil {
		t.Fatal(err)
	}
	f := filepath.Join(t.TempDir(), "f")
	if err := w.Add("files", f); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(stacks(), "fsnotify") {
		t.Fatal("no fsnotify goroutine while the watcher runs: the check below would prove nothing")
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	// A goroutine that has finished its work may take a moment to be gone.
	for deadline := time.Now().Add(hang); ; time.Sleep(time.Millisecond) {
		s := stacks()
		if !strings.Contains(s, "fsnotify") && !strings.Contains(s, "internal/watch.(*Watcher)") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("goroutines left after Close:\n%s", s)
		}
	}
}

// stacks are the stacks of every goroutine but the caller's.
func stacks() string {
	buf := make([]byte, 1<<20)
	buf = buf[:runtime.Stack(buf, true)]
	_, others, _ := strings.Cut(string(buf), "\n\n")
	return others
}

func TestWritesStamp(t *testing.T) {
	f := filepath.Join(t.TempDir(), "f")
	var w Writes
	if w.Own(f) {
		t.Fatal("a file never written is own")
	}
	if err := w.Do(f, func() error { return os.WriteFile(f, []byte("abc"), 0o644) }); err != nil {
		t.Fatal(err)
	}
	if !w.Own(f) {
		t.Fatal("the session's write is not own")
	}
	info, err := os.Stat(f)
	if err != nil {
		t.Fatal(err)
	}
	// Same size, same modification time, other content: not own.
	write(t, f, "xyz")
	if err := os.Chtimes(f, info.ModTime(), info.ModTime()); err != nil {
		t.Fatal(err)
	}
	if w.Own(f) {
		t.Error("a rewrite of the same size and time is own")
	}
	// Same content, touched: not own either.
	write(t, f, "abc")
	later := info.ModTime().Add(time.Second)
	if err := os.Chtimes(f, later, later); err != nil {
		t.Fatal(err)
	}
	if w.Own(f) {
		t.Error("a touched file is own")
	}
	// A failed write records nothing.
	g := filepath.Join(t.TempDir(), "g")
	if err := w.Do(g, func() error { write(t, g, "half"); return os.ErrPermission }); err == nil {
		t.Fatal("Do hid the write's error")
	}
	if w.Own(g) {
		t.Error("a failed write is recorded")
	}
	var none *Writes
	if err := none.Do(g, func() error { return nil }); err != nil || none.Own(g) {
		t.Error("a nil Writes does not just run the write")
	}
}
