// Package gittest makes the git repositories the worker's tests clone.
package gittest

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// Git runs git in dir and returns its output, failing t on an error.
func Git(t testing.TB, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@t", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@t")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %s: %v: %s", strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out))
}

// Repo makes a bare repository under dir named name, with one commit on
// main holding files (paths relative to the repository's root, folders
// made as needed), and returns its file:// URL and path.
func Repo(t testing.TB, dir, name string, files map[string]string) (url, path string) {
	t.Helper()
	src := filepath.Join(dir, name+"-src")
	path = filepath.Join(dir, name+".git")
	Git(t, dir, "init", "-q", "-b", "main", src)
	for f, content := range files {
		p := filepath.Join(src, f)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	Git(t, src, "add", "-A")
	Git(t, src, "commit", "-q", "-m", "start")
	Git(t, dir, "clone", "-q", "--bare", src, path)
	return "file://" + path, path
}

// Show is the content of file at rev in the repository at path.
func Show(t testing.TB, path, rev, file string) string {
	t.Helper()
	return Git(t, path, "show", rev+":"+file)
}
