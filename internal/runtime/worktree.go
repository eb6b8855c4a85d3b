package runtime

import (
	"cmp"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/tackcode/tack/internal/hook"
	"github.com/tackcode/tack/internal/worktree"
)

// A subagent with isolation "worktree" works in a worktree of its own.
// Without WorktreeCreate hooks, tack makes it with git (internal/worktree)
// and removes it when the agent ends having changed nothing. When
// WorktreeCreate hooks are configured they make it in git's place, as in
// Claude Code: that is how a repository of another version control system
// isolates its agents, or how a project sets its worktrees up its own way.
// tack then runs no git for it (the directory need not be a git
// repository) and never removes it: when the agent ends, the WorktreeRemove
// hooks are told its path and clean up. WorktreeRemove also fires just
// before tack removes a worktree git made.

// isolation is the worktree an isolated subagent works in.
type isolation struct {
	// git is the worktree git made; nil when a WorktreeCreate hook made it.
	git *worktree.Worktree
	// path is the worktree's root; dir is where the agent starts: for
	// git's, the folder of the worktree that mirrors the one the agent was
	// started from.
	path, dir string
}

// makeWorktree makes the worktree of an isolated subagent, started from
// t.cwd: the WorktreeCreate hooks' when there are, else git's.
func (t *thread) makeWorktree(ctx context.Context) (*isolation, error) {
	hooks := t.parent.hooks
	if hooks.Has(hook.WorktreeCreate) {
		path, err := t.s.worktreeByHook(ctx, hooks, t.parent.hookBase(), worktreeName(t.spec.agentID))
		if err != nil {
			return nil, err
		}
		return &isolation{path: path, dir: path}, nil
	}
	root := worktree.DefaultRoot()
	if x := t.s.getenv("XDG_CACHE_HOME"); x != "" {
		root = filepath.Join(x, "tack", "worktrees")
	}
	wt, err := worktree.CreateWith(ctx, t.cwd, t.spec.agentType, worktree.Options{Root: root,
		BeforeRemove: func(ctx context.Context, path string) { t.worktreeRemoved(ctx, path) }})
	if err != nil {
		return nil, err
	}
	return &isolation{git: wt, path: wt.Path, dir: wt.Dir}, nil
}

// worktreeName is the name WorktreeCreate hooks get for a subagent's
// worktree, as Claude Code names it: "agent-" and the start of the agent's
// id, which is unique in the session.
func worktreeName(agentID string) string {
	id := strings.TrimPrefix(agentID, "agent_")
	return "agent-" + id[:min(8, len(id))]
}

// worktreeByHook runs the WorktreeCreate hooks, which make the worktree
// name and give its path: a command hook on stdout, an http or callback
// hook as hookSpecificOutput.worktreePath. A hook that fails (any failure,
// not only exit code 2), or a path that is missing, relative or not a
// directory, fails the creation with an error naming the hook.
func (s *Session) worktreeByHook(ctx context.Context, hooks *hook.Runner, base hook.Base, name string) (string, error) {
	out := hooks.Run(ctx, &hook.WorktreeCreateInput{Base: base, Name: name})
	for _, m := range append(out.SystemMessages, out.Errors...) {
		s.notify(m)
	}
	var failed []string
	for _, res := range out.Results {
		if res.Status != hook.StatusSuccess {
			failed = append(failed, handlerLabel(res.Handler)+" "+failure(res))
		}
	}
	if len(failed) > 0 {
		return "", fmt.Errorf("WorktreeCreate hook failed, so there is no worktree %s: %s", name, strings.Join(failed, "; "))
	}
	path := out.WorktreePath
	if path == "" {
		var ran []string
		for _, res := range out.Results {
			ran = append(ran, handlerLabel(res.Handler))
		}
		return "", fmt.Errorf("WorktreeCreate hooks (%s) gave no worktree path for %s: a command hook prints the path it made on stdout, "+
			"an http or callback hook answers hookSpecificOutput.worktreePath (async hooks cannot)", strings.Join(ran, ", "), name)
	}
	who := "the WorktreeCreate hook " + handlerLabel(givenBy(out, path).Handler)
	if !filepath.IsAbs(path) {
		return "", fmt.Errorf("%s gave the worktree path %q, which is not absolute", who, path)
	}
	fi, err := os.Stat(path)
	if err != nil {
		return "", fmt.Errorf("%s gave the worktree path %s: %w", who, path, err)
	}
	if !fi.IsDir() {
		return "", fmt.Errorf("%s gave the worktree path %s, which is not a directory", who, path)
	}
	return filepath.Clean(path), nil
}

// givenBy is the result of the hook that gave path as the worktree path.
func givenBy(out hook.Outcome, path string) hook.Result {
	for _, res := range out.Results {
		j := res.JSON
		if strings.TrimSpace(res.Text) == path || j != nil && j.HookSpecificOutput != nil && j.HookSpecificOutput.WorktreePath == path {
			return res
		}
	}
	return hook.Result{}
}

// handlerLabel names a hook in a message: its type, what it runs, where
// it is configured.
func handlerLabel(h hook.Handler) string {
	run := handlerRun(h)
	if r := []rune(run); len(r) > 80 {
		run = string(r[:79]) + "…"
	}
	label := fmt.Sprintf("%s %q", cmp.Or(h.Type, "hook"), run)
	if where := cmp.Or(h.Origin, h.Source); where != "" {
		label += " (" + where + ")"
	}
	return label
}

// failure says how a hook failed.
func failure(res hook.Result) string {
	if c := res.ExitCode; c != nil && *c != 0 && !res.TimedOut {
		return fmt.Sprintf("exited with status %d: %s", *c, cmp.Or(strings.TrimSpace(res.Stderr), "no stderr output"))
	}
	return cmp.Or(res.Message, string(res.Status))
}

// worktreeRemoved runs the WorktreeRemove hooks for the worktree at path,
// which is being removed; it reports whether any ran and none failed.
// They cannot keep it: what they say is shown, their failures too.
func (t *thread) worktreeRemoved(ctx context.Context, path string) (cleaned bool) {
	hooks := t.parent.hooks
	if !hooks.Has(hook.WorktreeRemove) {
		return false
	}
	out := hooks.Run(ctx, &hook.WorktreeRemoveInput{Base: t.parent.hookBase(), WorktreePath: path})
	for _, m := range append(out.SystemMessages, out.Errors...) {
		t.s.notify(m)
	}
	return len(out.Errors) == 0
}

// releaseWorktree ends the subagent's use of its worktree, once it has
// stopped. A worktree git made is removed when the agent changed nothing
// (Worktree.Close), and kept otherwise. One a hook made is the WorktreeRemove
// hooks' to remove: kept is true when there are none, and err says when
// they failed.
func (t *thread) releaseWorktree(ctx context.Context) (kept bool, err error) {
	w := t.worktree
	// Not ctx alone: a cancelled run must still clean up (or keep) its worktree.
	ctx = context.WithoutCancel(ctx)
	if w.git != nil {
		return w.git.Close(ctx)
	}
	if !t.parent.hooks.Has(hook.WorktreeRemove) {
		return true, nil
	}
	if !t.worktreeRemoved(ctx, w.path) {
		return true, fmt.Errorf("a WorktreeRemove hook failed for %s, which a WorktreeCreate hook made", w.path)
	}
	return false, nil
}
