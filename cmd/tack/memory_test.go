package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/tackcode/tack/internal/llm"
	"github.com/tackcode/tack/internal/llm/llmtest"
	"github.com/tackcode/tack/internal/session"
)

var contentsOf = regexp.MustCompile(`Contents of (\S+) \(`)

// memoryPaths lists the memory files a text carries, in order.
func memoryPaths(text string) []string {
	var out []string
	for _, m := range contentsOf.FindAllStringSubmatch(text, -1) {
		out = append(out, m[1])
	}
	return out
}

func TestMemoryReachesTheModel(t *testing.T) {
	e := newEnv(t)
	// The working directory is two levels below a project root with memory.
	root := e.dir
	cwd := filepath.Join(root, "app", "svc")
	e.write(filepath.Join("app", "CLAUDE.md"), "Monorepo rule: run make lint.\n@docs/style.md\n")
	e.write(filepath.Join("app", "docs", "style.md"), "Tabs, not spaces.\n")
	e.write(filepath.Join("app", "svc", "CLAUDE.md"), "Service rule: no globals.\n")
	e.write(filepath.Join("app", "svc", "CLAUDE.local.md"), "My sandbox is at /tmp/sb.\n")
	e.write(filepath.Join("app", "svc", ".claude", "rules", "errors.md"), "Wrap errors with context.\n")
	e.write(filepath.Join("app", "svc", "pkg", "CLAUDE.md"), "pkg rule: keep it small.\n")
	e.write(filepath.Join("app", "svc", "pkg", "x.go"), "package pkg\n")
	if err := os.MkdirAll(filepath.Join(e.home, ".claude"), 0o755); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(e.home, ".claude", "CLAUDE.md"), []byte("I like short answers.\n"), 0o644)
	real, _ := filepath.EvalSymlinks(cwd)
	memDir := filepath.Join(e.home, ".claude", "projects", session.Slug(real), "memory")
	os.MkdirAll(memDir, 0o755)
	os.WriteFile(filepath.Join(memDir, "MEMORY.md"), []byte("The user prefers table tests.\n"), 0o644)

	e.srv.Append(
		llmtest.Reply(llmtest.ToolUse("Read", map[string]any{"file_path": filepath.Join(cwd, "pkg", "x.go")})),
		llmtest.Reply(llmtest.ToolUse("Read", map[string]any{"file_path": filepath.Join(cwd, "pkg", "x.go"), "limit": 5})),
		llmtest.Reply(llmtest.Text("ok")))
	e.dir = cwd
	if out, errOut := e.run("-p", "what are the rules?"); e.status != 0 {
		t.Fatalf("exit %d: %s %s", e.status, out, errOut)
	}
	reqs := e.srv.Requests()
	first := reqs[0].Messages[0]
	got := memoryPaths(llm.TextOf(first.Content))
	want := []string{
		filepath.Join(e.home, ".claude", "CLAUDE.md"),
		filepath.Join(root, "app", "CLAUDE.md"),
		filepath.Join(root, "app", "docs", "style.md"),
		filepath.Join(cwd, "CLAUDE.md"),
		filepath.Join(cwd, ".claude", "rules", "errors.md"),
		filepath.Join(cwd, "CLAUDE.local.md"),
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("memory sent\n got %q\nwant %q", got, want)
	}
	if last := first.Content[len(first.Content)-1]; last.Text != "what are the rules?" {
		t.Errorf("the prompt is not last: %q", last.Text)
	}
	if !strings.Contains(reqs[0].SystemText(), "The user prefers table tests.") {
		t.Error("auto memory is not in the system prompt")
	}
	// The nested pkg/CLAUDE.md comes with the first read there, once.
	firstRead := llm.TextOf(reqs[1].ToolResults()[0].Content)
	if !strings.Contains(firstRead, "pkg rule: keep it small.") {
		t.Errorf("nested memory missing from the first read: %q", firstRead)
	}
	if strings.Contains(llm.TextOf(reqs[2].ToolResults()[0].Content), "pkg rule") {
		t.Error("nested memory sent twice")
	}
	if strings.Contains(llm.TextOf(first.Content), "pkg rule") {
		t.Error("nested memory loaded at start")
	}
}
