package gitroot

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The nearest .git wins, a directory or a file (a linked worktree's), and
// a folder in no repository has none.
func TestFind(t *testing.T) {
	top := t.TempDir()
	deep := filepath.Join(top, "a", "b", "c")
	if err := os.MkdirAll(filepath.Join(deep, "d"), 0o755); err != nil {
		t.Fatal(err)
	}
	if got := Find(deep); got != "" && !isAbove(got, top) {
		t.Errorf("outside any repository: %q", got)
	}
	if err := os.Mkdir(filepath.Join(top, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	if got := Find(deep); got != top {
		t.Errorf("Find(%s) = %q, want %q", deep, got, top)
	}
	worktree := filepath.Join(top, "a", "b")
	if err := os.WriteFile(filepath.Join(worktree, ".git"), []byte("gitdir: "+top+"/.git/worktrees/b\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got := Find(filepath.Join(deep, "d")); got != worktree {
		t.Errorf("below a linked worktree: %q, want %q", got, worktree)
	}
	if got := Find(top); got != top {
		t.Errorf("at the top: %q", got)
	}
}

// isAbove reports whether dir is a strict parent of p: a repository the
// test machine's temporary folder itself lies in.
func isAbove(dir, p string) bool {
	rel, err := filepath.Rel(dir, p)
	return err == nil && rel != "." && !filepath.IsAbs(rel) && !strings.HasPrefix(rel, "..")
}

// A work tree's repository is its .git folder, or the folder its .git file
// names (relative to the work tree), whose commondir names the shared one
// (relative to itself).
func TestRepository(t *testing.T) {
	top := t.TempDir()
	main := filepath.Join(top, "main")
	wt := filepath.Join(top, "wt")
	own := filepath.Join(main, ".git", "worktrees", "wt")
	for _, d := range []string{own, wt} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if got, err := Repository(main); err != nil || got != (Dirs{Git: filepath.Join(main, ".git"), Common: filepath.Join(main, ".git")}) {
		t.Errorf("a .git folder: %+v, %v", got, err)
	}
	if err := os.WriteFile(filepath.Join(wt, ".git"), []byte("gitdir: ../main/.git/worktrees/wt\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(own, "commondir"), []byte("../..\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got, err := Repository(wt); err != nil || got != (Dirs{Git: own, Common: filepath.Join(main, ".git")}) {
		t.Errorf("a linked worktree: %+v, %v", got, err)
	}
	if err := os.WriteFile(filepath.Join(wt, ".git"), []byte("not a pointer\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Repository(wt); err == nil || !strings.Contains(err.Error(), "not a gitdir file") {
		t.Errorf("a .git file that names no folder: %v", err)
	}
	if _, err := Repository(top); err == nil {
		t.Error("no .git at all: no error")
	}
}
