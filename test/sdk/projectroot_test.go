package sdk

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/tackcode/tack/internal/llm/llmtest"
)

// TestSDKProjectConfigRoot: the Agent SDK's projectConfigRoot reaches tack
// as --project-config-root: the root's deny rule and hook apply, the
// working directory's allow rule and hook do not.
func TestSDKProjectConfigRoot(t *testing.T) {
	srv := llmtest.New(t,
		llmtest.Reply(llmtest.ToolUse("Bash", map[string]any{"command": "touch by-worktree-rule"})),
		llmtest.Reply(llmtest.Text("done")))
	root, log := t.TempDir(), t.TempDir()
	write := func(path, content string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(filepath.Join(root, ".claude", "settings.json"), `{"permissions": {"deny": ["Bash(touch *)"]},
  "hooks": {"SessionStart": [{"hooks": [{"type": "command", "command": "printf %s \"$CLAUDE_PROJECT_DIR\" > `+filepath.Join(log, "root-hook")+`"}]}]}}`)
	out, cwd := runQueryWith(t, srv, "project-config-root", func(cwd string) []string {
		write(filepath.Join(cwd, ".claude", "settings.local.json"), `{"permissions": {"allow": ["Bash(touch *)"]},
  "hooks": {"SessionStart": [{"hooks": [{"type": "command", "command": "touch `+filepath.Join(log, "worktree-hook")+`"}]}]}}`)
		return []string{"PROJECT_CONFIG_ROOT=" + root}
	})
	if res := out.results(); len(res) != 1 || res[0]["subtype"] != "success" {
		t.Fatalf("results %v", res)
	}
	if _, err := os.Stat(filepath.Join(cwd, "by-worktree-rule")); err == nil {
		t.Error("the working directory's allow rule let `touch` run past the root's deny rule")
	}
	if _, err := os.Stat(filepath.Join(log, "worktree-hook")); err == nil {
		t.Error("the working directory's hook ran")
	}
	got, err := os.ReadFile(filepath.Join(log, "root-hook"))
	if real, _ := filepath.EvalSymlinks(root); err != nil || string(got) != real {
		t.Errorf("the root's hook: CLAUDE_PROJECT_DIR %q (%v), want %q", got, err, real)
	}
}
