package runtime

import (
	"context"
	"fmt"
)

// chooseWorkdir is the thread's working directory: the session's for the
// main thread; for a subagent, where the session's shell is now, or a
// worktree of its own (worktree.go).
func (t *thread) chooseWorkdir(ctx context.Context) error {
	if t.parent == nil {
		t.cwd = t.s.cwd
		t.gitStatus = t.s.prefetchGitStatus(ctx, t.cwd)
		return nil
	}
	t.cwd = t.parent.env.Cwd()
	if !t.spec.worktree {
		return nil
	}
	w, err := t.makeWorktree(ctx)
	if err != nil {
		return fmt.Errorf("worktree for agent %s: %w", t.spec.agentType, err)
	}
	t.worktree, t.cwd = w, w.dir
	return nil
}
