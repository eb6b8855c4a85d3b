package worktree

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestMain makes git independent of the machine's configuration and keeps
// DefaultRoot inside a temporary directory.
func TestMain(m *testing.M) {
	tmp, err := os.MkdirTemp("", "worktree-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	for k, v := range map[string]string{
		"GIT_CONFIG_NOSYSTEM": "1",
		"GIT_CONFIG_GLOBAL":   os.DevNull,
		"GIT_AUTHOR_NAME":     "Test",
		"GIT_AUTHOR_EMAIL":    "test@example.com",
		"GIT_COMMITTER_NAME":  "Test",
		"GIT_COMMITTER_EMAIL": "test@example.com",
		"XDG_CACHE_HOME":      filepath.Join(tmp, "cache"),
	} {
		os.Setenv(k, v)
	}
	code := m.Run()
	os.RemoveAll(tmp)
	os.Exit(code)
}

// tempDir is t.TempDir with symlinks resolved, as git reports paths.
func tempDir(t *testing.T) string {
	t.Helper()
	d, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// run runs git in dir and returns its trimmed output, failing the test on
// error.
func run(t *testing.T, dir string, args ...string) string {
	t.Helper()
	out, err := runErr(dir, args...)
	if err != nil {
		t.Fatalf("git %s: %v", strings.Join(args, " "), err)
	}
	return out
}

func runErr(dir string, args ...string) (string, error) {
	cmd := exec.Command("git", append([]string{"-c", "user.name=Test", "-c", "user.email=test@example.com", "-c", "init.defaultBranch=main"}, args...)...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("%v: %s", err, out)
	}
	return strings.TrimSpace(string(out)), nil
}

func write(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func read(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func exists(path string) bool {
	_, err := os.Lstat(path)
	return err == nil
}

// newRepo makes a repository with one commit: a.txt, sub/deeper/b.txt and a
// .gitignore that ignores *.log.
func newRepo(t *testing.T) string {
	t.Helper()
	repo := filepath.Join(tempDir(t), "repo")
	if err := os.Mkdir(repo, 0o755); err != nil {
		t.Fatal(err)
	}
	run(t, repo, "init", "-q")
	write(t, filepath.Join(repo, "a.txt"), "a\n")
	write(t, filepath.Join(repo, "sub", "deeper", "b.txt"), "b\n")
	write(t, filepath.Join(repo, ".gitignore"), "*.log\n")
	run(t, repo, "add", ".")
	run(t, repo, "commit", "-q", "-m", "initial")
	return repo
}

// status is the main tree's full git status.
func status(t *testing.T, dir string) string {
	t.Helper()
	return run(t, dir, "status", "--porcelain", "--untracked-files=all", "--ignored")
}

func branchExists(t *testing.T, repo, branch string) bool {
	t.Helper()
	_, err := runErr(repo, "rev-parse", "--verify", "--quiet", "refs/heads/"+branch)
	return err == nil
}

func create(t *testing.T, dir, name string) *Worktree {
	t.Helper()
	w, err := CreateWith(t.Context(), dir, name, Options{Root: tempDir(t)})
	if err != nil {
		t.Fatal(err)
	}
	return w
}

func changed(t *testing.T, w *Worktree) bool {
	t.Helper()
	c, err := w.Changed(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func closeWorktree(t *testing.T, w *Worktree) bool {
	t.Helper()
	kept, err := w.Close(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	return kept
}

func TestEditedWorktreeIsKept(t *testing.T) {
	t.Parallel()
	repo := newRepo(t)
	before := status(t, repo)
	w := create(t, repo, "explorer")

	if w.Path != w.Dir {
		t.Errorf("Dir = %s, want Path %s", w.Dir, w.Path)
	}
	if w.Repo != repo {
		t.Errorf("Repo = %s, want %s", w.Repo, repo)
	}
	if !strings.HasPrefix(w.Branch, "tack/explorer-") {
		t.Errorf("Branch = %s, want tack/explorer-*", w.Branch)
	}
	if head := run(t, repo, "rev-parse", "HEAD"); w.Base != head || w.Head != head || w.Carried {
		t.Errorf("Base, Head, Carried = %s, %s, %v; want %s, %s, false", w.Base, w.Head, w.Carried, head, head)
	}
	if got := run(t, w.Path, "rev-parse", "--show-toplevel"); got != w.Path {
		t.Errorf("worktree top = %s, want %s", got, w.Path)
	}
	if got := run(t, w.Path, "branch", "--show-current"); got != w.Branch {
		t.Errorf("worktree branch = %s, want %s", got, w.Branch)
	}
	if changed(t, w) {
		t.Error("fresh worktree reported changed")
	}

	write(t, filepath.Join(w.Path, "a.txt"), "edited\n")
	if !changed(t, w) {
		t.Fatal("edited worktree reported unchanged")
	}
	if !closeWorktree(t, w) {
		t.Fatal("Close removed an edited worktree")
	}
	if got := read(t, filepath.Join(w.Path, "a.txt")); got != "edited\n" {
		t.Errorf("kept worktree a.txt = %q", got)
	}
	if !branchExists(t, repo, w.Branch) {
		t.Error("kept worktree's branch is gone")
	}
	if got := read(t, filepath.Join(repo, "a.txt")); got != "a\n" {
		t.Errorf("main tree a.txt = %q, want it untouched", got)
	}
	if after := status(t, repo); after != before {
		t.Errorf("main tree status changed from %q to %q", before, after)
	}
}

func TestSubfolder(t *testing.T) {
	t.Parallel()
	repo := newRepo(t)
	w := create(t, filepath.Join(repo, "sub", "deeper"), "sub")

	if want := filepath.Join(w.Path, "sub", "deeper"); w.Dir != want {
		t.Fatalf("Dir = %s, want %s", w.Dir, want)
	}
	if w.Repo != repo {
		t.Errorf("Repo = %s, want %s", w.Repo, repo)
	}
	if got := read(t, filepath.Join(w.Dir, "b.txt")); got != "b\n" {
		t.Errorf("b.txt in Dir = %q", got)
	}
	write(t, filepath.Join(w.Dir, "new.txt"), "new\n")
	if !changed(t, w) {
		t.Fatal("untracked file not reported as a change")
	}
	if !closeWorktree(t, w) || !exists(filepath.Join(w.Dir, "new.txt")) {
		t.Fatal("worktree with an untracked file not kept")
	}
	if exists(filepath.Join(repo, "sub", "deeper", "new.txt")) {
		t.Error("new file appeared in the main tree")
	}
}

// A folder with nothing tracked has no counterpart in a checkout; Dir is
// made, and does not count as a change.
func TestUntrackedSubfolder(t *testing.T) {
	t.Parallel()
	repo := newRepo(t)
	write(t, filepath.Join(repo, "logs", "x.log"), "ignored\n")
	w := create(t, filepath.Join(repo, "logs"), "logs")
	if fi, err := os.Stat(w.Dir); err != nil || !fi.IsDir() || w.Dir != filepath.Join(w.Path, "logs") {
		t.Fatalf("Dir %s: %v", w.Dir, err)
	}
	if closeWorktree(t, w) {
		t.Error("worktree kept for an empty folder")
	}
}

func TestUnchangedWorktreeIsRemoved(t *testing.T) {
	t.Parallel()
	repo := newRepo(t)
	w := create(t, repo, "idle")
	// Ignored files are not work: build output, caches.
	write(t, filepath.Join(w.Path, "build.log"), "noise\n")

	if changed(t, w) {
		t.Fatal("worktree with only an ignored file reported changed")
	}
	if closeWorktree(t, w) {
		t.Fatal("Close kept an unchanged worktree")
	}
	if exists(w.Path) {
		t.Error("worktree directory still exists")
	}
	if branchExists(t, repo, w.Branch) {
		t.Error("branch still exists")
	}
	if list := run(t, repo, "worktree", "list", "--porcelain"); strings.Contains(list, w.Path) {
		t.Errorf("git still lists the worktree:\n%s", list)
	}
	if kept, err := w.Close(t.Context()); kept || err != nil {
		t.Errorf("second Close = %v, %v; want false, nil", kept, err)
	}
}

func TestBeforeRemove(t *testing.T) {
	t.Parallel()
	repo := newRepo(t)
	var called []string
	opts := Options{Root: tempDir(t), BeforeRemove: func(_ context.Context, path string) {
		// Called while the worktree is still there.
		called = append(called, fmt.Sprintf("%s %v", path, exists(filepath.Join(path, "a.txt"))))
	}}
	kept, err := CreateWith(t.Context(), repo, "kept", opts)
	if err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(kept.Path, "a.txt"), "edited\n")
	if !closeWorktree(t, kept) {
		t.Fatal("Close removed an edited worktree")
	}
	if len(called) != 0 {
		t.Errorf("BeforeRemove called for a kept worktree: %q", called)
	}
	gone, err := CreateWith(t.Context(), repo, "gone", opts)
	if err != nil {
		t.Fatal(err)
	}
	if closeWorktree(t, gone) {
		t.Fatal("Close kept an unchanged worktree")
	}
	closeWorktree(t, gone)
	if want := []string{gone.Path + " true"}; !slices.Equal(called, want) {
		t.Errorf("BeforeRemove calls %q, want %q", called, want)
	}
}

func TestCommitIsChange(t *testing.T) {
	t.Parallel()
	repo := newRepo(t)
	w := create(t, repo, "committer")
	write(t, filepath.Join(w.Path, "c.txt"), "c\n")
	run(t, w.Path, "add", "c.txt")
	run(t, w.Path, "commit", "-q", "-m", "work")

	if got := run(t, w.Path, "status", "--porcelain"); got != "" {
		t.Fatalf("worktree not clean after commit: %q", got)
	}
	if !changed(t, w) {
		t.Fatal("commit on the branch not reported as a change")
	}
	// With HEAD back at Base, the commit is still on the branch.
	run(t, w.Path, "checkout", "-q", "--detach", w.Base)
	if !changed(t, w) {
		t.Fatal("commit on the branch with HEAD detached at Base not reported as a change")
	}
	if !closeWorktree(t, w) {
		t.Fatal("Close removed a worktree with a commit")
	}
	tip := run(t, repo, "rev-parse", "refs/heads/"+w.Branch)
	if msg := run(t, repo, "log", "-1", "--format=%s", tip); msg != "work" {
		t.Errorf("branch tip is %q, want the commit", msg)
	}
	if exists(filepath.Join(repo, "c.txt")) {
		t.Error("committed file appeared in the main tree")
	}
}

func TestNotARepository(t *testing.T) {
	t.Parallel()
	dir := tempDir(t)
	root := tempDir(t)
	_, err := CreateWith(t.Context(), dir, "x", Options{Root: root})
	if !errors.Is(err, ErrNotRepository) {
		t.Fatalf("err = %v, want ErrNotRepository", err)
	}
	if !strings.Contains(err.Error(), "not a git repository") {
		t.Errorf("error lacks git's explanation: %v", err)
	}
	if _, err := CreateWith(t.Context(), filepath.Join(dir, "missing"), "x", Options{Root: root}); err == nil {
		t.Error("no error for a missing directory")
	}
	if entries, _ := os.ReadDir(root); len(entries) != 0 {
		t.Errorf("root not empty: %v", entries)
	}
}

func TestEmptyRepository(t *testing.T) {
	t.Parallel()
	repo := tempDir(t)
	run(t, repo, "init", "-q")
	root := tempDir(t)
	_, err := CreateWith(t.Context(), repo, "x", Options{Root: root})
	if !errors.Is(err, ErrNoCommits) {
		t.Fatalf("err = %v, want ErrNoCommits", err)
	}
	if entries, _ := os.ReadDir(root); len(entries) != 0 {
		t.Errorf("root not empty: %v", entries)
	}
}

func TestParallel(t *testing.T) {
	t.Parallel()
	repo := newRepo(t)
	root := tempDir(t)
	const n = 5
	ws := make([]*Worktree, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			ws[i], errs[i] = CreateWith(t.Context(), repo, "agent", Options{Root: root})
		})
	}
	wg.Wait()
	paths, branches := map[string]bool{}, map[string]bool{}
	for i, err := range errs {
		if err != nil {
			t.Fatalf("Create %d: %v", i, err)
		}
		paths[ws[i].Path], branches[ws[i].Branch] = true, true
	}
	if len(paths) != n || len(branches) != n {
		t.Fatalf("%d paths and %d branches for %d worktrees", len(paths), len(branches), n)
	}
	if list := run(t, repo, "worktree", "list"); strings.Count(list, "\n")+1 != n+1 {
		t.Fatalf("git worktree list:\n%s", list)
	}

	// Half edited, all closed at once.
	for i := range n {
		if i%2 == 0 {
			write(t, filepath.Join(ws[i].Path, "a.txt"), "edited\n")
		}
	}
	kept := make([]bool, n)
	for i := range n {
		wg.Go(func() { kept[i], errs[i] = ws[i].Close(t.Context()) })
	}
	wg.Wait()
	for i := range n {
		if errs[i] != nil {
			t.Errorf("Close %d: %v", i, errs[i])
		}
		if want := i%2 == 0; kept[i] != want || exists(ws[i].Path) != want || branchExists(t, repo, ws[i].Branch) != want {
			t.Errorf("worktree %d: kept %v, directory %v, branch %v; want all %v", i, kept[i], exists(ws[i].Path), branchExists(t, repo, ws[i].Branch), want)
		}
	}
}

// The default root is outside the repository: the main tree's status does
// not list the worktree.
func TestNotInMainStatus(t *testing.T) {
	t.Parallel()
	repo := newRepo(t)
	w, err := Create(t.Context(), repo, "status")
	if err != nil {
		t.Fatal(err)
	}
	root, _ := filepath.EvalSymlinks(DefaultRoot())
	if filepath.Dir(w.Path) != root {
		t.Errorf("Path = %s, want it in %s", w.Path, root)
	}
	write(t, filepath.Join(w.Path, "new.txt"), "new\n")
	if got := status(t, repo); got != "" {
		t.Errorf("main tree status = %q, want clean", got)
	}
	if !closeWorktree(t, w) {
		t.Fatal("edited worktree not kept")
	}
	os.RemoveAll(w.Path)
	if err := Prune(t.Context(), repo); err != nil {
		t.Fatal(err)
	}
}

func TestUncommittedChangesNotCarried(t *testing.T) {
	t.Parallel()
	repo := newRepo(t)
	write(t, filepath.Join(repo, "a.txt"), "uncommitted\n")
	write(t, filepath.Join(repo, "untracked.txt"), "u\n")
	w := create(t, repo, "clean")
	if got := read(t, filepath.Join(w.Path, "a.txt")); got != "a\n" {
		t.Errorf("a.txt = %q, want HEAD's", got)
	}
	if exists(filepath.Join(w.Path, "untracked.txt")) {
		t.Error("untracked file carried over")
	}
	if closeWorktree(t, w) {
		t.Error("worktree kept")
	}
}

func TestCopyChanges(t *testing.T) {
	t.Parallel()
	repo := newRepo(t)
	write(t, filepath.Join(repo, "a.txt"), "unstaged\n")
	write(t, filepath.Join(repo, "staged.txt"), "staged\n")
	run(t, repo, "add", "staged.txt")
	write(t, filepath.Join(repo, "untracked.txt"), "u\n")
	write(t, filepath.Join(repo, "x.log"), "ignored\n")
	if err := os.Remove(filepath.Join(repo, "sub", "deeper", "b.txt")); err != nil {
		t.Fatal(err)
	}
	before := status(t, repo)
	head := run(t, repo, "rev-parse", "HEAD")

	w, err := CreateWith(t.Context(), repo, "copy", Options{Root: tempDir(t), CopyChanges: true})
	if err != nil {
		t.Fatal(err)
	}
	if !w.Carried || w.Head != head || w.Base == head {
		t.Fatalf("Carried %v, Head %s, Base %s; want a snapshot on %s", w.Carried, w.Head, w.Base, head)
	}
	if parent := run(t, repo, "rev-parse", w.Base+"^"); parent != head {
		t.Errorf("snapshot parent = %s, want %s", parent, head)
	}
	for file, want := range map[string]string{"a.txt": "unstaged\n", "staged.txt": "staged\n", "untracked.txt": "u\n"} {
		if got := read(t, filepath.Join(w.Path, file)); got != want {
			t.Errorf("%s = %q, want %q", file, got, want)
		}
	}
	if exists(filepath.Join(w.Path, "x.log")) {
		t.Error("ignored file carried over")
	}
	if exists(filepath.Join(w.Path, "sub", "deeper", "b.txt")) {
		t.Error("deleted file present")
	}
	if changed(t, w) {
		t.Error("carried changes count as the subagent's")
	}
	if after := status(t, repo); after != before {
		t.Errorf("main tree status changed from %q to %q", before, after)
	}
	if closeWorktree(t, w) {
		t.Error("unchanged worktree kept")
	}
	if branchExists(t, repo, w.Branch) {
		t.Error("branch not deleted")
	}
}

func TestCopyChangesNothingToCopy(t *testing.T) {
	t.Parallel()
	repo := newRepo(t)
	write(t, filepath.Join(repo, "x.log"), "ignored\n")
	w, err := CreateWith(t.Context(), repo, "copy", Options{Root: tempDir(t), CopyChanges: true})
	if err != nil {
		t.Fatal(err)
	}
	if w.Carried || w.Base != w.Head {
		t.Errorf("Carried %v, Base %s, Head %s; want HEAD itself", w.Carried, w.Base, w.Head)
	}
	closeWorktree(t, w)
}

// The snapshot commit needs an identity; without one it is tack's.
func TestCopyChangesWithoutIdentity(t *testing.T) {
	repo := newRepo(t)
	write(t, filepath.Join(repo, "a.txt"), "changed\n")
	for _, k := range []string{"GIT_AUTHOR_NAME", "GIT_AUTHOR_EMAIL", "GIT_COMMITTER_NAME", "GIT_COMMITTER_EMAIL"} {
		t.Setenv(k, "")
	}
	t.Setenv("EMAIL", "")
	w, err := CreateWith(t.Context(), repo, "copy", Options{Root: tempDir(t), CopyChanges: true})
	if err != nil {
		t.Fatal(err)
	}
	if got := run(t, repo, "log", "-1", "--format=%an <%ae>", w.Base); got != "tack <tack@localhost>" {
		t.Errorf("snapshot author = %q", got)
	}
	closeWorktree(t, w)
}

// Another git process holding packed-refs.lock while Close deletes a packed
// branch makes git fail; Close waits for it.
func TestCloseRetriesOnLock(t *testing.T) {
	t.Parallel()
	repo := newRepo(t)
	w := create(t, repo, "lock")
	run(t, repo, "pack-refs", "--all")
	lock := filepath.Join(repo, ".git", "packed-refs.lock")
	write(t, lock, "")
	released := make(chan struct{})
	go func() {
		defer close(released)
		time.Sleep(1500 * time.Millisecond)
		os.Remove(lock)
	}()
	kept, err := w.Close(t.Context())
	<-released
	if kept || err != nil {
		t.Fatalf("Close = %v, %v", kept, err)
	}
	if branchExists(t, repo, w.Branch) {
		t.Error("branch not deleted")
	}
}

func TestPrune(t *testing.T) {
	t.Parallel()
	repo := newRepo(t)
	w := create(t, repo, "crashed")
	if err := os.RemoveAll(w.Path); err != nil {
		t.Fatal(err)
	}
	if err := Prune(t.Context(), repo); err != nil {
		t.Fatal(err)
	}
	if list := run(t, repo, "worktree", "list", "--porcelain"); strings.Contains(list, w.Path) {
		t.Errorf("stale worktree still listed:\n%s", list)
	}
	if !branchExists(t, repo, w.Branch) {
		t.Error("Prune deleted the branch")
	}
	if err := Prune(t.Context(), tempDir(t)); err == nil {
		t.Error("Prune outside a repository succeeded")
	}
}

// Closing a worktree whose directory is gone cannot tell whether work was
// lost there; it keeps what is left and says why.
func TestCloseMissingDirectory(t *testing.T) {
	t.Parallel()
	repo := newRepo(t)
	w := create(t, repo, "gone")
	os.RemoveAll(w.Path)
	if kept, err := w.Close(t.Context()); !kept || err == nil {
		t.Errorf("Close = %v, %v; want true and an error", kept, err)
	}
}

func TestCancelled(t *testing.T) {
	t.Parallel()
	repo := newRepo(t)
	root := tempDir(t)
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := CreateWith(ctx, repo, "x", Options{Root: root}); err == nil {
		t.Fatal("Create succeeded with a cancelled context")
	}
	if entries, _ := os.ReadDir(root); len(entries) != 0 {
		t.Errorf("root not empty: %v", entries)
	}
}

// Cancelling stops git and what it runs (here a slow post-checkout hook)
// and takes back the half-made worktree.
func TestCancelledDuringCheckout(t *testing.T) {
	t.Parallel()
	repo := newRepo(t)
	hook := filepath.Join(repo, ".git", "hooks", "post-checkout")
	write(t, hook, "#!/bin/sh\nsleep 30\n")
	if err := os.Chmod(hook, 0o755); err != nil {
		t.Fatal(err)
	}
	root := tempDir(t)
	ctx, cancel := context.WithTimeout(t.Context(), 500*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := CreateWith(ctx, repo, "slow", Options{Root: root})
	if err == nil || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err = %v, want the deadline", err)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("Create took %v after cancellation", d)
	}
	if entries, _ := os.ReadDir(root); len(entries) != 0 {
		t.Errorf("root not empty: %v", entries)
	}
	if list := run(t, repo, "worktree", "list", "--porcelain"); strings.Count(list, "worktree ") != 1 {
		t.Errorf("git worktree list:\n%s", list)
	}
	if branches := run(t, repo, "branch", "--list", "tack/*"); branches != "" {
		t.Errorf("branches left: %s", branches)
	}
}

func TestRootInsideTree(t *testing.T) {
	t.Parallel()
	repo := newRepo(t)
	if _, err := CreateWith(t.Context(), repo, "x", Options{Root: filepath.Join(repo, "wt")}); err == nil {
		t.Fatal("Create accepted a root inside the working tree")
	}
	if exists(filepath.Join(repo, "wt")) {
		t.Error("root made inside the working tree")
	}
	link := filepath.Join(tempDir(t), "link")
	if err := os.Symlink(filepath.Join(repo, "sub"), link); err != nil {
		t.Fatal(err)
	}
	if _, err := CreateWith(t.Context(), repo, "x", Options{Root: link}); err == nil {
		t.Fatal("Create accepted a root linked into the working tree")
	}
}

func TestSlugify(t *testing.T) {
	for in, want := range map[string]string{
		"explorer":               "explorer",
		"Code Reviewer!":         "Code-Reviewer",
		"../..//x.lock":          "x-lock",
		"":                       "agent",
		"日本":                     "agent",
		strings.Repeat("ab", 40): strings.Repeat("ab", 20),
	} {
		if got := slugify(in); got != want {
			t.Errorf("slugify(%q) = %q, want %q", in, got, want)
		}
	}
}
