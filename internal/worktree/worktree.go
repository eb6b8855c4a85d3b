// Package worktree runs a subagent declared with `isolation: worktree` in a
// git worktree of its own: a separate checkout of the repository, on a new
// branch, that shares the repository's objects and refs, so that the
// subagent's edits stay out of the main working tree until someone merges
// them.
//
// Create makes the worktree on a new branch tack/<name>-<random> that starts
// at HEAD of the working tree the subagent was started in. The main tree's
// uncommitted changes (modified and untracked files) are not in it: the
// worktree is a checkout of HEAD. Options.CopyChanges carries them over as
// a snapshot commit on top of HEAD, which then becomes the worktree's Base.
//
// Worktrees live outside the repository, under DefaultRoot (the user's
// cache directory) unless Options.Root says otherwise:
//   - not inside the working tree, where git status would list them as
//     untracked folders and tools that walk the tree would search them twice;
//   - not inside .git/ either, where every file of the worktree would be a
//     path under .git, which tack's permission rules protect from edits;
//   - not in the system temporary directory, which is often emptied at boot,
//     since a worktree that Close keeps may hold uncommitted work the user
//     has yet to look at.
//
// Close removes the worktree and its branch when the subagent changed
// nothing, and otherwise keeps both, so that the caller can tell the user
// where the work is: a worktree is never removed while it differs from its
// Base. Prune forgets worktrees whose directory has gone (a crash, a manual
// rm -rf); their branches stay.
//
// Several Create and Close calls may run at once on the same repository,
// from one process or several: names are random, and a git command that
// fails because another git process is at work in the repository (holding a
// lock, or half-way through making a worktree) is retried.
package worktree

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
)

// ErrNotRepository is returned by Create when the directory is not in the
// working tree of a git repository.
var ErrNotRepository = errors.New("not in a git working tree")

// ErrNoCommits is returned by Create when the repository has no commit yet,
// so there is nothing to check out.
var ErrNoCommits = errors.New("repository has no commits yet")

// BranchPrefix starts the name of every branch Create makes.
const BranchPrefix = "tack/"

// Options adjust Create.
type Options struct {
	// Root is the directory that holds the worktree directories; it is
	// created when missing. Empty means DefaultRoot(). It must not be inside
	// the repository's working tree.
	Root string
	// CopyChanges carries the main tree's uncommitted changes into the
	// worktree: modified, added and deleted tracked files and untracked files
	// that are not ignored, as a commit on top of HEAD that becomes Base (so
	// that they do not count as the subagent's changes). The main tree, its
	// index included, is left as it was. Ignored files are not carried.
	CopyChanges bool
	// BeforeRemove, when set, is called by Close just before it removes
	// the worktree (never when it keeps it), with the worktree's Path, which
	// is still there: the session's WorktreeRemove hooks run here.
	BeforeRemove func(ctx context.Context, path string)
}

// Worktree is a git worktree made by Create.
type Worktree struct {
	// Path is the root of the worktree.
	Path string
	// Dir is the directory of the worktree that corresponds to the directory
	// given to Create: Path itself, or a folder below it when Create was
	// given a subfolder of the repository.
	Dir string
	// Branch is the worktree's branch, without refs/heads/.
	Branch string
	// Base is the commit the branch started at: the main tree's HEAD, or the
	// snapshot of its uncommitted changes when Carried.
	Base string
	// Head is the main tree's HEAD commit when the worktree was created.
	Head string
	// Carried reports whether Base is a snapshot of uncommitted changes of
	// the main tree (Options.CopyChanges and there were some).
	Carried bool
	// Repo is the root of the working tree Create was started in.
	Repo string

	beforeRemove func(ctx context.Context, path string)

	mu      sync.Mutex
	removed bool
}

// DefaultRoot is the directory that holds worktrees when Options.Root is
// empty: tack/worktrees in the user's cache directory ($XDG_CACHE_HOME or
// ~/.cache), or in the temporary directory when there is none.
func DefaultRoot() string {
	dir, err := os.UserCacheDir()
	if err != nil {
		dir = os.TempDir()
	}
	return filepath.Join(dir, "tack", "worktrees")
}

// Create makes a worktree for the subagent name of the repository that holds
// repoDir, on a new branch that starts at that tree's HEAD. See CreateWith.
func Create(ctx context.Context, repoDir, name string) (*Worktree, error) {
	return CreateWith(ctx, repoDir, name, Options{})
}

// CreateWith makes a worktree for the subagent name of the repository that
// holds repoDir: a new branch tack/<name>-<random> at the HEAD of repoDir's
// working tree (or at a snapshot of its uncommitted changes, see
// Options.CopyChanges), checked out in a new directory
// <root>/<repository>-<name>-<random>. It fails with ErrNotRepository when
// repoDir is not in a git working tree and with ErrNoCommits when the
// repository has no commit.
func CreateWith(ctx context.Context, repoDir, name string, opts Options) (*Worktree, error) {
	if fi, err := os.Stat(repoDir); err != nil {
		return nil, fmt.Errorf("worktree: %w", err)
	} else if !fi.IsDir() {
		return nil, fmt.Errorf("worktree: %s is not a directory", repoDir)
	}
	out, err := git(ctx, repoDir, nil, "rev-parse", "--show-toplevel", "--show-prefix")
	if err != nil {
		if exitCode(err) > 0 {
			return nil, fmt.Errorf("worktree: %s: %w (%w)", repoDir, ErrNotRepository, err)
		}
		return nil, fmt.Errorf("worktree: finding the repository of %s: %w", repoDir, err)
	}
	// The prefix is the path from the top to repoDir as git sees it, symlinks
	// resolved, which is what Dir must follow inside the worktree.
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if len(lines) != 2 || lines[0] == "" {
		return nil, fmt.Errorf("worktree: unexpected output of git rev-parse in %s: %q", repoDir, out)
	}
	top, prefix := lines[0], lines[1]

	out, err = git(ctx, top, nil, "rev-parse", "--verify", "--quiet", "HEAD^{commit}")
	if err != nil {
		// --verify --quiet exits with 1 and says nothing when HEAD names
		// no commit: an unborn branch.
		if ge := (*gitError)(nil); errors.As(err, &ge) && ge.exitCode() == 1 && ge.stderr == "" {
			return nil, fmt.Errorf("worktree: %s: %w", top, ErrNoCommits)
		}
		return nil, fmt.Errorf("worktree: reading HEAD of %s: %w", top, err)
	}
	head := strings.TrimSpace(out)

	base, carried := head, false
	if opts.CopyChanges {
		snap, err := snapshot(ctx, top, head)
		if err != nil {
			return nil, fmt.Errorf("worktree: copying the uncommitted changes of %s: %w", top, err)
		}
		base, carried = snap, snap != head
	}

	root := opts.Root
	if root == "" {
		root = DefaultRoot()
	}
	if root, err = filepath.Abs(root); err != nil {
		return nil, fmt.Errorf("worktree: %w", err)
	}
	// Checked before making the root, and again once links are resolved.
	if within(top, root) {
		return nil, fmt.Errorf("worktree: root %s is inside the working tree %s", root, top)
	}
	if err := os.MkdirAll(root, 0o700); err != nil {
		return nil, fmt.Errorf("worktree: %w", err)
	}
	// Resolved, so that Path is the path git reports for the worktree.
	if root, err = filepath.EvalSymlinks(root); err != nil {
		return nil, fmt.Errorf("worktree: %w", err)
	}
	if within(top, root) {
		return nil, fmt.Errorf("worktree: root %s is inside the working tree %s", root, top)
	}

	slug := slugify(name)
	var path, branch string
	for attempt := 0; ; attempt++ {
		suffix, err := randomSuffix()
		if err != nil {
			return nil, fmt.Errorf("worktree: %w", err)
		}
		path = filepath.Join(root, slugify(filepath.Base(top))+"-"+slug+"-"+suffix)
		branch = BranchPrefix + slug + "-" + suffix
		// Taking the directory first makes the name ours alone: another
		// Create that draws the same suffix fails here and draws again.
		err = os.Mkdir(path, 0o755)
		if err == nil {
			break
		}
		if !errors.Is(err, fs.ErrExist) || attempt == 10 {
			return nil, fmt.Errorf("worktree: %w", err)
		}
	}

	if err := addWorktree(ctx, top, path, branch, base); err != nil {
		return nil, fmt.Errorf("worktree: creating %s for %s: %w", path, top, err)
	}

	dir := filepath.Join(path, filepath.FromSlash(strings.TrimSuffix(prefix, "/")))
	// repoDir may hold nothing tracked (an empty, untracked or ignored
	// folder) and then has no counterpart in the checkout; an empty folder
	// is no change to git.
	if err := os.MkdirAll(dir, 0o755); err != nil {
		discard(ctx, top, path, branch, base)
		return nil, fmt.Errorf("worktree: %w", err)
	}
	return &Worktree{Path: path, Dir: dir, Branch: branch, Base: base, Head: head, Carried: carried, Repo: top,
		beforeRemove: opts.BeforeRemove}, nil
}

// within reports whether path is dir or below it.
func within(dir, path string) bool {
	rel, err := filepath.Rel(dir, path)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}

// addWorktree creates branch at base and checks it out in path, an empty
// directory made for it. On failure it takes back what it made.
func addWorktree(ctx context.Context, top, path, branch, base string) error {
	ref := "refs/heads/" + branch
	// Create-only (the empty old value): a branch of the same name is not
	// ours to move.
	if _, err := gitRetry(ctx, top, nil, "update-ref", "-m", "tack: worktree branch", ref, base, ""); err != nil {
		os.Remove(path)
		return err
	}
	_, err := gitRetry(ctx, top, nil, "worktree", "add", "--quiet", path, branch)
	if err != nil {
		discard(ctx, top, path, branch, base)
	}
	return err
}

// discard takes back a worktree that Create made but cannot hand over: the
// worktree at path, its directory and its branch, which hold nothing but
// base yet. It does so even when ctx has ended, and as far as it can.
func discard(ctx context.Context, top, path, branch, base string) {
	ctx = context.WithoutCancel(ctx)
	// git deletes a half-made worktree itself, but not one stopped during
	// its post-checkout hook, which may still be locked as "initializing"
	// (hence --force twice); then empty the directory, which is ours: made
	// just now under a fresh random name.
	git(ctx, top, nil, "worktree", "remove", "--force", "--force", path)
	os.RemoveAll(path)
	git(ctx, top, nil, "update-ref", "-d", "refs/heads/"+branch, base)
}

// slugify makes name fit in a branch and a directory name: letters, digits,
// '-' and '_', at most 40 of them; "agent" when nothing is left.
func slugify(name string) string {
	var b strings.Builder
	dash := false
	for _, r := range name {
		ok := r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_'
		switch {
		case ok:
			b.WriteRune(r)
			dash = false
		case !dash && b.Len() > 0:
			b.WriteByte('-')
			dash = true
		}
		if b.Len() >= 40 {
			break
		}
	}
	s := strings.TrimRight(b.String(), "-")
	if s == "" {
		return "agent"
	}
	return s
}

// randomSuffix is 8 random hexadecimal digits.
func randomSuffix() (string, error) {
	var b [4]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", err
	}
	return hex.EncodeToString(b[:]), nil
}

// Changed reports whether the worktree differs from Base: uncommitted
// changes (staged or not, untracked files that are not ignored, deletions),
// a HEAD that is no longer Base, or new commits on Branch. Files that the
// repository ignores (build output, caches) are not changes.
func (w *Worktree) Changed(ctx context.Context) (bool, error) {
	if _, err := os.Stat(w.Path); err != nil {
		return false, fmt.Errorf("worktree: %w", err)
	}
	// --no-optional-locks: reading must not take the index lock, and fail
	// or make others fail, only to refresh stat data.
	out, err := git(ctx, w.Path, nil, "--no-optional-locks", "status", "--porcelain", "-z", "--untracked-files=normal", "--ignore-submodules=none")
	if err != nil {
		return false, fmt.Errorf("worktree: status of %s: %w", w.Path, err)
	}
	if out != "" {
		return true, nil
	}
	head, ok, err := resolve(ctx, w.Path, "HEAD^{commit}")
	if err != nil {
		return false, fmt.Errorf("worktree: HEAD of %s: %w", w.Path, err)
	}
	if !ok || head != w.Base {
		// HEAD moved: new commits, or another branch checked out.
		return true, nil
	}
	// The branch may hold commits while HEAD is back at Base (detached).
	tip, ok, err := resolve(ctx, w.Path, "refs/heads/"+w.Branch)
	if err != nil {
		return false, fmt.Errorf("worktree: branch %s: %w", w.Branch, err)
	}
	return ok && tip != w.Base, nil
}

// resolve returns the object name of rev in dir, with ok false when rev
// names nothing.
func resolve(ctx context.Context, dir, rev string) (name string, ok bool, err error) {
	out, err := git(ctx, dir, nil, "rev-parse", "--verify", "--quiet", rev)
	if err != nil {
		if ge := (*gitError)(nil); errors.As(err, &ge) && ge.exitCode() == 1 && ge.stderr == "" {
			return "", false, nil
		}
		return "", false, err
	}
	return strings.TrimSpace(out), true, nil
}

// Close ends the subagent's use of the worktree. When Changed reports no
// change, it removes the worktree directory (Options.BeforeRemove is
// called first) and deletes Branch, and kept is false. Otherwise, and whenever it cannot tell (err is then set), it leaves
// both in place and kept is true: the work is at Path on Branch. Call it once
// the subagent has stopped; a second call after a removal does nothing.
func (w *Worktree) Close(ctx context.Context) (kept bool, err error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.removed {
		return false, nil
	}
	changed, err := w.Changed(ctx)
	if err != nil {
		return true, fmt.Errorf("worktree: keeping %s (branch %s): %w", w.Path, w.Branch, err)
	}
	if changed {
		return true, nil
	}
	if w.beforeRemove != nil {
		w.beforeRemove(ctx, w.Path)
	}
	// --force: Changed found nothing but ignored files, which are disposable
	// and which a plain remove refuses to delete.
	if _, err := gitRetry(ctx, w.Repo, nil, "worktree", "remove", "--force", w.Path); err != nil {
		if _, statErr := os.Stat(w.Path); statErr == nil {
			return true, fmt.Errorf("worktree: removing %s: %w", w.Path, err)
		}
		return false, fmt.Errorf("worktree: removing %s: %w", w.Path, err)
	}
	w.removed = true
	// Deleted only if still at Base (update-ref compares and deletes at
	// once), so commits that reached the branch meanwhile are not dropped.
	ref := "refs/heads/" + w.Branch
	if _, ok, err := resolve(ctx, w.Repo, ref); err != nil {
		return false, fmt.Errorf("worktree: removed %s but not branch %s: %w", w.Path, w.Branch, err)
	} else if !ok {
		return false, nil
	}
	if _, err := gitRetry(ctx, w.Repo, nil, "update-ref", "-d", ref, w.Base); err != nil {
		return false, fmt.Errorf("worktree: removed %s but not branch %s: %w", w.Path, w.Branch, err)
	}
	return false, nil
}

// Prune forgets the worktrees of the repository holding repoDir whose
// directory no longer exists, as left by a session that crashed or a
// directory deleted by hand (git worktree prune). Their branches, and the
// commits on them, stay.
func Prune(ctx context.Context, repoDir string) error {
	if _, err := gitRetry(ctx, repoDir, nil, "worktree", "prune"); err != nil {
		return fmt.Errorf("worktree: pruning the worktrees of %s: %w", repoDir, err)
	}
	return nil
}
