package tui

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tackcode/tack/agent"
	"github.com/tackcode/tack/internal/llm/llmtest"
)

func hookStatusMsg(id, text string, running bool) engineMsg {
	return engineMsg{msg: &agent.SystemMessage{Subtype: agent.SubtypeHookStatus, Fields: map[string]any{
		"hook_id": id, "hook_name": "PreToolUse:Bash", "hook_event": "PreToolUse", "status_message": text, "running": running}}}
}

// The spinner says what the running hook said it does, the latest one
// first, and goes back to its own label when they end.
func TestSpinnerShowsRunningHooksStatusMessage(t *testing.T) {
	h := newHarness(t)
	h.typeText("go")
	h.enter()
	h.send(hookStatusMsg("h1", "Checking the command against the policy", true))
	if v := h.view(); !strings.Contains(v, "Checking the command against the policy") || strings.Contains(v, "Working…") {
		t.Errorf("the hook's status is not shown:\n%s", v)
	}
	h.send(hookStatusMsg("h2", "Formatting", true))
	if v := h.view(); !strings.Contains(v, "Formatting") {
		t.Errorf("the latest hook's status is not shown:\n%s", v)
	}
	h.send(hookStatusMsg("h2", "Formatting", false))
	if v := h.view(); !strings.Contains(v, "Checking the command against the policy") || strings.Contains(v, "Formatting") {
		t.Errorf("after the second hook ended:\n%s", v)
	}
	h.send(hookStatusMsg("h1", "Checking the command against the policy", false))
	if v := h.view(); strings.Contains(v, "Checking the command") || !strings.Contains(v, "Working…") {
		t.Errorf("after every hook ended:\n%s", v)
	}
	// A hook still running when the run ends is forgotten with it.
	h.send(hookStatusMsg("h3", "Still going", true))
	h.send(engineMsg{msg: result(0)})
	h.typeText("again")
	h.enter()
	if v := h.view(); strings.Contains(v, "Still going") {
		t.Errorf("a hook of the last run is shown:\n%s", v)
	}
}

// TestHookStatusMessageWithAgentClient runs a real session whose
// PreToolUse hook has a statusMessage and waits for the test: the UI shows
// the message while the hook runs.
func TestHookStatusMessageWithAgentClient(t *testing.T) {
	dir := t.TempDir()
	release := filepath.Join(t.TempDir(), "release")
	if err := os.WriteFile(filepath.Join(dir, "a.txt"), []byte("alpha\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(dir, ".claude"), 0o755); err != nil {
		t.Fatal(err)
	}
	settings := `{"hooks": {"PreToolUse": [{"matcher": "Read", "hooks": [{"type": "command", "timeout": 60,
  "command": "while [ ! -f '` + release + `' ]; do sleep 0.02; done", "statusMessage": "Consulting the read policy"}]}]}}`
	if err := os.WriteFile(filepath.Join(dir, ".claude", "settings.local.json"), []byte(settings), 0o644); err != nil {
		t.Fatal(err)
	}
	srv := llmtest.New(t,
		llmtest.Reply(llmtest.ToolUse("Read", map[string]any{"file_path": filepath.Join(dir, "a.txt")})),
		llmtest.Reply(llmtest.Text("Read it.")))
	r := startRun(t, srv, dir, "read a.txt")
	r.out.waitFor(t, "Consulting the read policy")
	if err := os.WriteFile(release, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	r.out.waitFor(t, "Read it.")
	r.quit()
}
