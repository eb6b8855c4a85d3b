package prompt

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func git(t *testing.T, dir string, args ...string) {
	t.Helper()
	full := append([]string{"-C", dir, "-c", "user.name=t", "-c", "user.email=t@example.com"}, args...)
	if out, err := exec.Command("git", full...).CombinedOutput(); err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
}

// A detached HEAD, origin/HEAD naming the main branch, a long status cut
// at a line, and only the last five commits.
func TestGitStatus(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	dir := t.TempDir()
	if got := GitStatus(context.Background(), dir); got != "" {
		t.Errorf("outside a repository: %q", got)
	}
	git(t, dir, "init", "-q", "-b", "trunk")
	if got := GitStatus(context.Background(), dir); !strings.Contains(got, "(no commits yet)") || !strings.Contains(got, "Current branch: trunk") {
		t.Errorf("a repository without commits:\n%s", got)
	}
	for i := range 7 {
		git(t, dir, "commit", "-q", "--allow-empty", "-m", fmt.Sprintf("commit %d", i))
	}
	git(t, dir, "update-ref", "refs/remotes/origin/trunk", "HEAD")
	git(t, dir, "symbolic-ref", "refs/remotes/origin/HEAD", "refs/remotes/origin/trunk")
	git(t, dir, "checkout", "-q", "--detach")
	for i := range 200 {
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("untracked-file-%03d.txt", i)), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got := GitStatus(context.Background(), dir)
	for _, want := range []string{"Current branch: (detached HEAD)", "Main branch (what pull requests usually target): trunk",
		"?? untracked-file-000.txt", "more lines; run git status", "commit 6", "commit 2"} {
		if !strings.Contains(got, want) {
			t.Errorf("lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "commit 1") || strings.Contains(got, "untracked-file-199.txt") || len(got) > maxStatusBytes+1000 {
		t.Errorf("not cut:\n%s", got)
	}
}

func TestMainBranch(t *testing.T) {
	for _, tc := range []struct{ refs, want string }{
		{"refs/heads/main\t\nrefs/heads/master\t\n", "main"},
		{"refs/heads/master\t\n", "master"},
		{"", "dev"},
		{"refs/heads/main\t\nrefs/remotes/origin/HEAD\trefs/remotes/origin/develop\n", "develop"},
	} {
		if got := mainBranch(tc.refs, "dev"); got != tc.want {
			t.Errorf("mainBranch(%q) = %q, want %q", tc.refs, got, tc.want)
		}
	}
}

func TestSplitBranch(t *testing.T) {
	for _, tc := range []struct{ out, branch, rest string }{
		{"## main\n", "main", ""},
		{"## main...origin/main [ahead 1]\n M a.go\n", "main", " M a.go\n"},
		{"## feature/x [gone]\n?? b\n", "feature/x", "?? b\n"},
		{"## No commits yet on trunk\n", "trunk", ""},
		{"## HEAD (no branch)\n M a\n", "(detached HEAD)", " M a\n"},
	} {
		if b, r := splitBranch(tc.out); b != tc.branch || r != tc.rest {
			t.Errorf("splitBranch(%q) = %q, %q; want %q, %q", tc.out, b, r, tc.branch, tc.rest)
		}
	}
}
