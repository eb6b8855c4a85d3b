package search

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tackcode/tack/internal/tool"
)

func globLines(text string) []string {
	if text == "No files found" {
		return nil
	}
	text, _, _ = strings.Cut(text, "\n\n")
	return strings.Split(text, "\n")
}

func TestGlobNewestFirst(t *testing.T) {
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{"b.go": "", "a.go": "", "c.go": "", "sub/d.go": "", "e.txt": ""},
		"c.go", "a.go", "sub/d.go", "b.go", "e.txt")
	env := &tool.Env{ProjectDir: dir}
	text, st := mustCall(t, globTool{}, env, map[string]any{"pattern": "**/*.go"})
	want := []string{"b.go", "sub/d.go", "a.go", "c.go"}
	for i := range want {
		want[i] = filepath.Join(dir, want[i])
	}
	if got := globLines(text); strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("got %v\nwant %v", got, want)
	}
	res := st.(GlobResult)
	if res.NumFiles != 4 || res.Truncated || len(res.Filenames) != 4 || res.Filenames[0] != want[0] {
		t.Errorf("structured %+v", res)
	}

	// Without ** the pattern stays in its directory.
	text, _ = mustCall(t, globTool{}, env, map[string]any{"pattern": "*.go"})
	if got := globLines(text); len(got) != 3 {
		t.Errorf("*.go matched %v", got)
	}
}

func TestGlobCap(t *testing.T) {
	dir := t.TempDir()
	files := map[string]string{}
	var order []string
	for i := range 150 {
		name := fmt.Sprintf("f%03d.txt", i)
		files[name] = ""
		order = append(order, name)
	}
	writeTree(t, dir, files, order...)
	text, st := mustCall(t, globTool{}, &tool.Env{ProjectDir: dir}, map[string]any{"pattern": "*.txt"})
	res := st.(GlobResult)
	if !res.Truncated || res.NumFiles != 100 || len(res.Filenames) != 100 {
		t.Fatalf("structured: truncated %v, %d files", res.Truncated, res.NumFiles)
	}
	if res.Filenames[0] != filepath.Join(dir, "f149.txt") || res.Filenames[99] != filepath.Join(dir, "f050.txt") {
		t.Errorf("first %s last %s", res.Filenames[0], res.Filenames[99])
	}
	if !strings.Contains(text, "truncated") || !strings.Contains(text, "150") || !strings.Contains(text, "more specific") {
		t.Errorf("no truncation note in %q", text[len(text)-200:])
	}
	if n := len(globLines(text)); n != 100 {
		t.Errorf("%d lines", n)
	}
}

func TestGlobGitignore(t *testing.T) {
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{
		".gitignore":          "*.log\nbuild/\n!keep.log\n# comment\n/rooted.txt\n",
		".git/info/exclude":   "excluded.txt\n",
		".git/config":         "",
		"a.log":               "",
		"keep.log":            "",
		"build/out.txt":       "",
		"excluded.txt":        "",
		"rooted.txt":          "",
		"src/rooted.txt":      "",
		"src/main.go":         "",
		"src/.gitignore":      "secret.txt\n!*.log\n",
		"src/secret.txt":      "",
		"src/trace.log":       "",
		"other/secret.txt":    "",
		"other/deep/x.log":    "",
		"other/build/y.txt":   "",
		".hidden/visible.txt": "",
	})
	env := &tool.Env{ProjectDir: dir}
	text, _ := mustCall(t, globTool{}, env, map[string]any{"pattern": "**/*"})
	got := map[string]bool{}
	for _, p := range globLines(text) {
		rel, _ := filepath.Rel(dir, p)
		got[filepath.ToSlash(rel)] = true
	}
	for _, want := range []string{".gitignore", "keep.log", "src/rooted.txt", "src/main.go", "src/.gitignore", "src/trace.log", "other/secret.txt", ".hidden/visible.txt"} {
		if !got[want] {
			t.Errorf("missing %s", want)
		}
	}
	for _, not := range []string{"a.log", "build/out.txt", "excluded.txt", "rooted.txt", "src/secret.txt", "other/deep/x.log", "other/build/y.txt", ".git/config", ".git/info/exclude"} {
		if got[not] {
			t.Errorf("listed ignored %s", not)
		}
	}

	// Searching inside the repository still applies the root's rules.
	text, _ = mustCall(t, globTool{}, env, map[string]any{"pattern": "**/*.log", "path": "other"})
	if text != "No files found" {
		t.Errorf("other/**/*.log: %q", text)
	}
	// An ignored directory asked for explicitly is searched.
	text, _ = mustCall(t, globTool{}, env, map[string]any{"pattern": "*.txt", "path": "build"})
	if globLines(text)[0] != filepath.Join(dir, "build/out.txt") {
		t.Errorf("explicit ignored dir: %q", text)
	}
}

func TestGlobPath(t *testing.T) {
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{"sub/a.go": "", "sub/inner/b.go": "", "c.go": ""})
	env := &tool.Env{ProjectDir: dir}
	for _, in := range []map[string]any{
		{"pattern": "*.go", "path": "sub"},
		{"pattern": "*.go", "path": filepath.Join(dir, "sub")},
		{"pattern": "sub/*.go"},
		{"pattern": filepath.Join(dir, "sub", "*.go")},
		{"pattern": "../*.go", "path": filepath.Join(dir, "sub", "inner")},
	} {
		text, _ := mustCall(t, globTool{}, env, in)
		if text != filepath.Join(dir, "sub/a.go") {
			t.Errorf("%v: %q", in, text)
		}
	}
	text, _ := mustCall(t, globTool{}, env, map[string]any{"pattern": "**/*.rs"})
	if text != "No files found" {
		t.Errorf("no match: %q", text)
	}
	text, _ = mustCall(t, globTool{}, env, map[string]any{"pattern": "missing/**/*.go"})
	if text != "No files found" {
		t.Errorf("missing pattern dir: %q", text)
	}
	for _, in := range []map[string]any{
		{"pattern": "*.go", "path": "nowhere"},
		{"pattern": "*.go", "path": "c.go"},
		{"pattern": "[*.go"},
		{"path": "sub"},
	} {
		if _, _, err := call(t, globTool{}, env, in); !tool.IsInputError(err) {
			t.Errorf("%v: want input error, got %v", in, err)
		}
	}
}

func TestGlobSymlinkAndCancel(t *testing.T) {
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{"a.txt": ""})
	if err := os.Symlink(filepath.Join(dir, "a.txt"), filepath.Join(dir, "link.txt")); err != nil {
		t.Skip(err)
	}
	paths, err := globFiles(t.Context(), dir, "*.txt")
	if err != nil || len(paths) != 1 {
		t.Errorf("symlinks are not followed: %v %v", paths, err)
	}
	ctx, cancel := contextCancelled(t)
	defer cancel()
	if _, err := globFiles(ctx, dir, "*.txt"); err == nil {
		t.Error("cancelled walk reported no error")
	}
}
