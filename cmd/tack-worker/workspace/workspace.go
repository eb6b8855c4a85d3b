// Package workspace is a run's git checkout: cloned from the task's
// repository, snapshotted into the store's bare repository after each tool
// call that may change it, restored from the latest snapshot by the worker
// that takes a run over, and published as a branch at the end.
package workspace

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// Workspace is a checkout at Dir whose run started from Base.
type Workspace struct {
	Dir  string
	Base string
}

// identity is who the snapshot and result commits are by.
var identity = []string{"GIT_AUTHOR_NAME=tack-worker", "GIT_AUTHOR_EMAIL=tack-worker@localhost",
	"GIT_COMMITTER_NAME=tack-worker", "GIT_COMMITTER_EMAIL=tack-worker@localhost"}

func git(ctx context.Context, dir string, env []string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, "git", args...)
	cmd.Dir = dir
	cmd.Env = append(append(os.Environ(), identity...), env...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("git %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(errb.String()))
	}
	return strings.TrimSpace(out.String()), nil
}

// Clone checks out url at ref ("" for its default branch) into dir, which
// must not exist. base, when set, is the commit the run started from: the
// checkout is put there (a run taken over starts where the first attempt
// did, even if ref has moved since).
func Clone(ctx context.Context, url, ref, base, dir string) (*Workspace, error) {
	if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
		return nil, fmt.Errorf("clone %s: %w", url, err)
	}
	if _, err := git(ctx, "", nil, "clone", "-q", "--no-checkout", url, dir); err != nil {
		return nil, err
	}
	target := base
	if target == "" {
		target = "HEAD"
		if ref != "" {
			target = ref
			if _, err := git(ctx, dir, nil, "rev-parse", "-q", "--verify", "origin/"+ref+"^{commit}"); err == nil {
				target = "origin/" + ref
			}
		}
	}
	commit, err := git(ctx, dir, nil, "rev-parse", "--verify", target+"^{commit}")
	if err != nil {
		return nil, fmt.Errorf("clone %s: ref %q: %w", url, ref, err)
	}
	if _, err := git(ctx, dir, nil, "checkout", "-q", "--detach", commit); err != nil {
		return nil, err
	}
	return &Workspace{Dir: dir, Base: commit}, nil
}

// tree writes the workspace's files (tracked and untracked, less the ignored
// ones) as a tree, through an index of its own so the checkout's is left as
// the agent made it.
func (w *Workspace) tree(ctx context.Context) (string, error) {
	idx := filepath.Join(w.Dir, ".git", "tack-snapshot-index")
	env := []string{"GIT_INDEX_FILE=" + idx}
	if _, err := git(ctx, w.Dir, env, "read-tree", w.Base); err != nil {
		return "", err
	}
	if _, err := git(ctx, w.Dir, env, "add", "-A", "."); err != nil {
		return "", err
	}
	return git(ctx, w.Dir, env, "write-tree")
}

// Snapshot commits the workspace's files on top of Base and pushes the
// commit to ref in the bare repository repo (created if missing). It
// returns the commit, or prev when the files are those of prev already.
func (w *Workspace) Snapshot(ctx context.Context, repo, ref, prev, message string) (string, error) {
	tree, err := w.tree(ctx)
	if err != nil {
		return "", fmt.Errorf("snapshot: %w", err)
	}
	if prev != "" {
		if t, err := git(ctx, w.Dir, nil, "rev-parse", prev+"^{tree}"); err == nil && t == tree {
			return prev, nil
		}
	}
	commit, err := git(ctx, w.Dir, nil, "commit-tree", tree, "-p", w.Base, "-m", message)
	if err != nil {
		return "", fmt.Errorf("snapshot: %w", err)
	}
	if err := ensureBare(ctx, repo); err != nil {
		return "", err
	}
	if _, err := git(ctx, w.Dir, nil, "push", "-q", "--force", repo, commit+":"+ref); err != nil {
		return "", fmt.Errorf("snapshot: %w", err)
	}
	return commit, nil
}

func ensureBare(ctx context.Context, repo string) error {
	if _, err := os.Stat(filepath.Join(repo, "HEAD")); err == nil {
		return nil
	}
	if _, err := git(ctx, "", nil, "init", "-q", "--bare", repo); err != nil {
		// Another worker may have made it meanwhile.
		if _, serr := os.Stat(filepath.Join(repo, "HEAD")); serr == nil {
			return nil
		}
		return fmt.Errorf("snapshot store: %w", err)
	}
	return nil
}

// Restore puts the files of the snapshot commit (in repo, at ref) into the
// workspace, which is at Base: files it added or changed come back,
// files it deleted go. The checkout's index stays at Base, as after the
// agent's own edits.
func (w *Workspace) Restore(ctx context.Context, repo, ref, commit string) error {
	if _, err := git(ctx, w.Dir, nil, "fetch", "-q", repo, ref); err != nil {
		return fmt.Errorf("restore snapshot: %w", err)
	}
	if _, err := git(ctx, w.Dir, nil, "read-tree", "-u", "--reset", commit); err != nil {
		return fmt.Errorf("restore snapshot: %w", err)
	}
	if _, err := git(ctx, w.Dir, nil, "reset", "-q"); err != nil {
		return fmt.Errorf("restore snapshot: %w", err)
	}
	return nil
}

// Publish commits the workspace's files on top of Base with message and
// pushes the commit to branch of remote (a URL or path). It returns the
// commit, "" when the run changed nothing (nothing is pushed then).
func (w *Workspace) Publish(ctx context.Context, remote, branch, message string) (string, error) {
	tree, err := w.tree(ctx)
	if err != nil {
		return "", fmt.Errorf("publish: %w", err)
	}
	baseTree, err := git(ctx, w.Dir, nil, "rev-parse", w.Base+"^{tree}")
	if err != nil {
		return "", fmt.Errorf("publish: %w", err)
	}
	if tree == baseTree {
		return "", nil
	}
	commit, err := git(ctx, w.Dir, nil, "commit-tree", tree, "-p", w.Base, "-m", message)
	if err != nil {
		return "", fmt.Errorf("publish: %w", err)
	}
	if _, err := git(ctx, w.Dir, nil, "push", "-q", "--force", remote, commit+":refs/heads/"+branch); err != nil {
		return "", fmt.Errorf("publish: %w", err)
	}
	return commit, nil
}

// Patch is the workspace's change against Base, as a patch git apply takes.
func (w *Workspace) Patch(ctx context.Context) (string, error) {
	tree, err := w.tree(ctx)
	if err != nil {
		return "", fmt.Errorf("patch: %w", err)
	}
	p, err := git(ctx, w.Dir, nil, "diff", "--binary", w.Base, tree)
	if err != nil || p == "" {
		return p, err
	}
	return p + "\n", nil
}
