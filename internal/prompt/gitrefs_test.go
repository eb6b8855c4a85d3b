package prompt

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func noEnv(string) string { return "" }

// forEachRef is what git itself answers for mainRefs in dir.
func forEachRef(t *testing.T, dir string) string {
	t.Helper()
	cmd := exec.Command("git", append([]string{"for-each-ref", "--format=%(refname)%09%(symref)"}, mainRefs...)...)
	cmd.Dir = dir
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("git for-each-ref in %s: %v", dir, err)
	}
	return string(out)
}

// exactly keeps the lines of for-each-ref's output that name one of
// mainRefs: its patterns also match the refs below them
// (refs/heads/main/x), which mainBranch passes over.
func exactly(out string) string {
	var b strings.Builder
	for line := range strings.Lines(out) {
		name, _, _ := strings.Cut(line, "\t")
		if slices.Contains(mainRefs, name) {
			b.WriteString(line)
		}
	}
	return b.String()
}

// Reading the refs from the repository's files gives what git's
// for-each-ref gives, in every layout of refs a repository can have.
func TestReadMainRefsAgreesWithGit(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	commit := func(t *testing.T, dir string) { git(t, dir, "commit", "-q", "--allow-empty", "-m", "c") }
	cases := []struct {
		name  string
		setup func(t *testing.T, top string) (dir string)
	}{
		{"no commits yet", func(t *testing.T, top string) string {
			git(t, top, "init", "-q", "-b", "main")
			return top
		}},
		{"main", func(t *testing.T, top string) string {
			git(t, top, "init", "-q", "-b", "main")
			commit(t, top)
			return top
		}},
		{"master alone, from a subfolder", func(t *testing.T, top string) string {
			git(t, top, "init", "-q", "-b", "master")
			commit(t, top)
			sub := filepath.Join(top, "a", "b")
			if err := os.MkdirAll(sub, 0o755); err != nil {
				t.Fatal(err)
			}
			return sub
		}},
		{"packed refs", func(t *testing.T, top string) string {
			git(t, top, "init", "-q", "-b", "main")
			commit(t, top)
			git(t, top, "branch", "master")
			git(t, top, "tag", "-a", "-m", "v1", "v1") // a peeled line in packed-refs
			git(t, top, "pack-refs", "--all")
			return top
		}},
		{"a clone: origin/HEAD to a packed remote branch", func(t *testing.T, top string) string {
			src := filepath.Join(top, "src")
			git(t, top, "init", "-q", "-b", "trunk", src)
			commit(t, src)
			git(t, top, "clone", "-q", src, "dst")
			return filepath.Join(top, "dst")
		}},
		{"origin/HEAD to a branch that is gone", func(t *testing.T, top string) string {
			git(t, top, "init", "-q", "-b", "main")
			commit(t, top)
			git(t, top, "symbolic-ref", "refs/remotes/origin/HEAD", "refs/remotes/origin/gone")
			return top
		}},
		{"origin/HEAD as a plain ref", func(t *testing.T, top string) string {
			git(t, top, "init", "-q", "-b", "main")
			commit(t, top)
			git(t, top, "update-ref", "refs/remotes/origin/HEAD", "HEAD")
			return top
		}},
		{"a broken loose ref", func(t *testing.T, top string) string {
			git(t, top, "init", "-q", "-b", "main")
			commit(t, top)
			if err := os.WriteFile(filepath.Join(top, ".git", "refs", "heads", "master"), []byte("not an object\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			return top
		}},
		{"main is a folder of branches", func(t *testing.T, top string) string {
			git(t, top, "init", "-q", "-b", "main/x")
			commit(t, top)
			return top
		}},
		{"a linked worktree", func(t *testing.T, top string) string {
			repo := filepath.Join(top, "repo")
			git(t, top, "init", "-q", "-b", "main", repo)
			commit(t, repo)
			git(t, repo, "branch", "master")
			git(t, repo, "pack-refs", "--all")
			git(t, repo, "worktree", "add", "-q", "-b", "feature", filepath.Join(top, "wt"))
			return filepath.Join(top, "wt")
		}},
		{"a separate git folder", func(t *testing.T, top string) string {
			work := filepath.Join(top, "work")
			git(t, top, "init", "-q", "-b", "master", "--separate-git-dir", filepath.Join(top, "real.git"), work)
			commit(t, work)
			return work
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := c.setup(t, t.TempDir())
			want := exactly(forEachRef(t, dir))
			got, ok := readMainRefs(dir, noEnv)
			if !ok {
				t.Fatalf("not read from the files; git says %q", want)
			}
			if got != want {
				t.Errorf("read %q, git says %q", got, want)
			}
			if mainBranch(got, "current") != mainBranch(want, "current") {
				t.Errorf("main branch %q, git's %q", mainBranch(got, "current"), mainBranch(want, "current"))
			}
		})
	}
}

// Where the files cannot be trusted to say what git would, git is asked.
func TestReadMainRefsLeavesToGit(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	repo := func(t *testing.T) string {
		dir := t.TempDir()
		git(t, dir, "init", "-q", "-b", "main")
		git(t, dir, "commit", "-q", "--allow-empty", "-m", "c")
		return dir
	}
	t.Run("GIT_DIR set", func(t *testing.T) {
		dir := repo(t)
		env := func(k string) string {
			if k == "GIT_DIR" {
				return filepath.Join(dir, ".git")
			}
			return ""
		}
		if _, ok := readMainRefs(dir, env); ok {
			t.Error("read with GIT_DIR set")
		}
	})
	t.Run("another ref storage", func(t *testing.T) {
		dir := repo(t)
		git(t, dir, "config", "extensions.refStorage", "reftable")
		if _, ok := readMainRefs(dir, noEnv); ok {
			t.Error("read a repository whose config names a ref storage")
		}
	})
	t.Run("a reftable folder", func(t *testing.T) {
		dir := repo(t)
		if err := os.Mkdir(filepath.Join(dir, ".git", "reftable"), 0o755); err != nil {
			t.Fatal(err)
		}
		if _, ok := readMainRefs(dir, noEnv); ok {
			t.Error("read a repository with a reftable folder")
		}
	})
	t.Run("a symbolic ref to a symbolic ref", func(t *testing.T) {
		dir := repo(t)
		git(t, dir, "symbolic-ref", "refs/remotes/origin/main", "refs/heads/main")
		git(t, dir, "symbolic-ref", "refs/remotes/origin/HEAD", "refs/remotes/origin/main")
		if _, ok := readMainRefs(dir, noEnv); ok {
			t.Error("read a chain of symbolic refs")
		}
	})
}

// The session's git status runs for-each-ref only when the files do not
// answer, and says the same either way.
func TestGitStatusRunsForEachRefOnlyWhenNeeded(t *testing.T) {
	real, err := exec.LookPath("git")
	if err != nil {
		t.Skip("git is not installed")
	}
	bin := t.TempDir()
	logPath := filepath.Join(bin, "calls")
	script := "#!/bin/sh\necho \"$*\" >> " + logPath + "\nexec " + real + " \"$@\"\n"
	if err := os.WriteFile(filepath.Join(bin, "git"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	git(t, dir, "init", "-q", "-b", "trunk")
	git(t, dir, "commit", "-q", "--allow-empty", "-m", "c")
	git(t, dir, "branch", "master")
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	calls := func() string {
		b, _ := os.ReadFile(logPath)
		_ = os.Remove(logPath)
		return string(b)
	}

	read := GitStatus(context.Background(), dir)
	if c := calls(); strings.Contains(c, "for-each-ref") || !strings.Contains(c, "status") || !strings.Contains(c, "log") {
		t.Errorf("git was run for:\n%s", c)
	}
	git(t, dir, "config", "extensions.refStorage", "files") // ignored by git at format version 0
	asked := GitStatus(context.Background(), dir)
	if c := calls(); !strings.Contains(c, "for-each-ref") {
		t.Errorf("for-each-ref not run where the files could not answer:\n%s", c)
	}
	if read != asked || !strings.Contains(read, "): master\n") {
		t.Errorf("read from the files:\n%s\nasked of git:\n%s", read, asked)
	}
}
