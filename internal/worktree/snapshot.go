package worktree

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"strings"
)

// Identity of snapshot commits when the user has none configured.
const (
	fallbackName  = "tack"
	fallbackEmail = "tack@localhost"
)

// snapshot records the uncommitted state of the working tree at top (tracked
// files as they are on disk, untracked files that are not ignored) as a
// commit whose parent is head, and returns it; it returns head itself when
// there is nothing uncommitted. Neither the tree nor its index changes: the
// files are staged in a copy of the index.
func snapshot(ctx context.Context, top, head string) (string, error) {
	out, err := git(ctx, top, nil, "rev-parse", "--path-format=absolute", "--git-path", "index")
	if err != nil {
		return "", err
	}
	index := strings.TrimSpace(out)
	suffix, err := randomSuffix()
	if err != nil {
		return "", err
	}
	// Beside the real index, so that a split index still finds its shared
	// part; a name git itself never uses.
	tmp := index + ".tack-" + suffix
	defer os.Remove(tmp)
	env := []string{"GIT_INDEX_FILE=" + tmp}

	// Starting from the real index spares git hashing every file again: its
	// stat data tells which files are unchanged.
	data, err := os.ReadFile(index)
	switch {
	case err == nil:
		if err := os.WriteFile(tmp, data, 0o600); err != nil {
			return "", err
		}
	case errors.Is(err, fs.ErrNotExist):
		if _, err := git(ctx, top, env, "read-tree", head); err != nil {
			return "", err
		}
	default:
		return "", err
	}
	if _, err := git(ctx, top, env, "add", "--all", "--", "."); err != nil {
		return "", err
	}
	out, err = git(ctx, top, env, "write-tree")
	if err != nil {
		return "", err
	}
	tree := strings.TrimSpace(out)
	headTree, _, err := resolve(ctx, top, head+"^{tree}")
	if err != nil {
		return "", err
	}
	if tree == headTree {
		return head, nil
	}

	var ident []string
	if !hasIdentity(ctx, top) {
		ident = []string{
			"GIT_AUTHOR_NAME=" + fallbackName, "GIT_AUTHOR_EMAIL=" + fallbackEmail,
			"GIT_COMMITTER_NAME=" + fallbackName, "GIT_COMMITTER_EMAIL=" + fallbackEmail,
		}
	}
	// Unsigned: a signing prompt has no place in starting a subagent, and
	// the snapshot is no one's authored commit.
	msg := "tack: uncommitted changes of " + top
	out, err = git(ctx, top, ident, "commit-tree", "--no-gpg-sign", "-p", head, "-m", msg, tree)
	if err != nil {
		return "", err
	}
	return strings.TrimSpace(out), nil
}

// hasIdentity reports whether git knows who commits in top (user.name and
// user.email, or the GIT_AUTHOR_* and GIT_COMMITTER_* variables).
func hasIdentity(ctx context.Context, top string) bool {
	_, errA := git(ctx, top, nil, "var", "GIT_AUTHOR_IDENT")
	_, errC := git(ctx, top, nil, "var", "GIT_COMMITTER_IDENT")
	return errA == nil && errC == nil
}
