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
