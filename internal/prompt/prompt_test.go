package prompt

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tackcode/tack/internal/llm"
)

func TestSystemBlocks(t *testing.T) {
	env := Env{Cwd: "/work/app", IsGitRepo: true, Platform: "linux", Shell: "bash", OSVersion: "Linux 6.1", Date: "2026-11-30", Model: "claude-opus-5-5"}
	blocks := System(Options{Env: env, Append: "Answer in French.", AutoMemory: "remember: tabs"})
	if len(blocks) != 5 || !strings.Contains(blocks[0].Text, "tack") || blocks[2].Text != "remember: tabs" || blocks[4].Text != "Answer in French." {
		t.Fatalf("blocks %+v", blocks)
	}
	main := llm.TextOf(blocks[1:4])
	for _, want := range []string{"# Using tools", "Working directory: /work/app", "Git repository: yes", "Platform: linux",
		"Shell: bash", "OS version: Linux 6.1", "Today's date: 2026-11-30", "Model: claude-opus-5-5"} {
		if !strings.Contains(main, want) {
			t.Errorf("main prompt lacks %q", want)
		}
	}
	// The same inputs give the same bytes: the prompt sits in the cached prefix.
	if again := System(Options{Env: env, Append: "Answer in French.", AutoMemory: "remember: tabs"}); llm.TextOf(again) != llm.TextOf(blocks) {
		t.Error("System is not deterministic")
	}
	replaced := System(Options{Replace: "You are a pirate.", ReplaceSet: true, Append: "Arr.", Env: env})
	if len(replaced) != 3 || replaced[1].Text != "You are a pirate." || replaced[2].Text != "Arr." {
		t.Errorf("replaced %+v", replaced)
	}
	if empty := System(Options{ReplaceSet: true, Env: env}); len(empty) != 1 {
		t.Errorf("an empty replacement leaves %d blocks", len(empty))
	}
}

func TestDetectEnv(t *testing.T) {
	repo := t.TempDir()
	sub := filepath.Join(repo, "a", "b")
	if err := os.MkdirAll(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 11, 30, 23, 0, 0, 0, time.UTC)
	getenv := func(k string) string { return map[string]string{"SHELL": "/usr/bin/zsh"}[k] }
	if e := DetectEnv(sub, now, getenv); e.IsGitRepo || e.Shell != "zsh" || e.Date != "2026-11-30" || e.Cwd != sub {
		t.Errorf("env %+v", e)
	}
	if err := os.Mkdir(filepath.Join(repo, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	if e := DetectEnv(sub, now, getenv); !e.IsGitRepo {
		t.Error("a .git in an ancestor is not seen")
	}
}
