package runtime

import (
	"context"
	"fmt"
	"path/filepath"

	"github.com/tackcode/tack/internal/worktree"
)

// chooseWorkdir is the thread's working directory: the session's for the
// main thread; for a subagent, where the session's shell is now, or a git
// worktree of its own.
func (t *thread) chooseWorkdir(ctx context.Context) error {
	if t.parent == nil {
		t.cwd = t.s.cwd
		return nil
	}
	t.cwd = t.parent.env.Cwd()
	if !t.spec.worktree {
		return nil
	}
	root := worktree.DefaultRoot()
	if x := t.s.getenv("XDG_CACHE_HOME"); x != "" {
		root = filepath.Join(x, "tack", "worktrees")
	}
	wt, err := worktree.CreateWith(ctx, t.cwd, t.spec.agentType, worktree.Options{Root: root})
	if err != nil {
		return fmt.Errorf("worktree for agent %s: %w", t.spec.agentType, err)
	}
	t.worktree, t.cwd = wt, wt.Dir
	return nil
}
