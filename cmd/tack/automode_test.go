package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tackcode/tack/internal/hook"
	"github.com/tackcode/tack/internal/hook/hooktest"
	"github.com/tackcode/tack/internal/llm"
	"github.com/tackcode/tack/internal/llm/llmtest"
)

// autoTurns script a session that runs two commands in auto mode, and the
// classifier that allows the first and blocks the second.
func autoTurns() []llmtest.Turn {
	small := func(r *llmtest.Request) bool { return r.Model == "claude-haiku-4-5" }
	session := func(r *llmtest.Request) bool { return !small(r) }
	decide := func(decision, reason string) llm.Block {
		return llmtest.ToolUse("decide", map[string]string{"decision": decision, "reason": reason})
	}
	return []llmtest.Turn{
		{Content: []llm.Block{llmtest.ToolUse("Bash", map[string]any{"command": "touch made.txt"})}, When: session},
		{Content: []llm.Block{decide("allow", "the user asked for the file")}, When: small},
		{Content: []llm.Block{llmtest.ToolUse("Bash", map[string]any{"command": "rm -rf keep"})}, When: session},
		{Content: []llm.Block{decide("block", "deleting keep was not asked for")}, When: small},
		{Content: []llm.Block{llmtest.Text("made it, left keep")}, When: session},
	}
}

func TestAutoModeInPrintMode(t *testing.T) {
	e := newEnv(t, autoTurns()...)
	e.write("keep/a.txt", "x")
	log := e.hookSettings(nil, nil)
	out, errOut := e.run("-p", "make made.txt", "--permission-mode", "auto", "--output-format", "json")
	if e.status != 0 {
		t.Fatalf("exit %d: %s", e.status, errOut)
	}
	if _, err := os.Stat(filepath.Join(e.dir, "made.txt")); err != nil {
		t.Errorf("the allowed command did not run: %v", err)
	}
	if _, err := os.Stat(filepath.Join(e.dir, "keep", "a.txt")); err != nil {
		t.Errorf("the blocked command ran: %v", err)
	}
	res := resultOf(t, out)
	denials, _ := res["permission_denials"].([]any)
	if len(denials) != 1 || denials[0].(map[string]any)["tool_name"] != "Bash" ||
		!strings.Contains(denials[0].(map[string]any)["tool_input"].(map[string]any)["command"].(string), "rm -rf keep") {
		t.Errorf("permission_denials %v", res["permission_denials"])
	}
	if usage, _ := res["modelUsage"].(map[string]any); usage["claude-haiku-4-5"] == nil {
		t.Errorf("the classifier's usage is missing from modelUsage: %v", res["modelUsage"])
	}
	var told string
	for _, r := range e.srv.Requests() {
		for _, b := range r.ToolResults() {
			if b.IsError {
				told = llm.TextOf(b.Content)
			}
		}
	}
	if !strings.Contains(told, "deleting keep was not asked for") {
		t.Errorf("the model was told %q", told)
	}
	// The classifier decides instead of a dialog: no PermissionRequest;
	// its block fires PermissionDenied, with its reason.
	got := hooktest.ReadLog(t, log)
	if n := len(hooktest.Only(got, hook.PermissionRequest)); n != 0 {
		t.Errorf("PermissionRequest fired %d times", n)
	}
	denied := hooktest.Only(got, hook.PermissionDenied)
	if len(denied) != 1 || !strings.Contains(denied[0].String("reason"), "deleting keep was not asked for") ||
		denied[0].String("permission_mode") != "auto" || !strings.Contains(jsonOf(denied[0].Fields["tool_input"]), "rm -rf keep") {
		t.Errorf("PermissionDenied payloads %v", denied)
	}
}

// defaultMode "auto" in settings is valid, and the session starts in it.
func TestAutoModeFromSettings(t *testing.T) {
	e := newEnv(t, autoTurns()...)
	e.write("keep/a.txt", "x")
	e.settings("settings.json", `{"permissions": {"defaultMode": "auto"}}`)
	out, errOut := e.run("-p", "make made.txt", "--output-format", "stream-json", "--verbose")
	if e.status != 0 {
		t.Fatalf("exit %d: %s", e.status, errOut)
	}
	var mode, denied string
	for _, m := range lines(t, out) {
		switch m["subtype"] {
		case "init":
			mode, _ = m["permissionMode"].(string)
		case "permission_denied":
			denied, _ = m["message"].(string)
			if denied == "" {
				denied, _ = m["reason"].(string)
			}
		}
	}
	if mode != "auto" {
		t.Errorf("init permissionMode %q, want auto", mode)
	}
	if !strings.Contains(denied, "deleting keep was not asked for") {
		t.Errorf("permission_denied says %q", denied)
	}
	if _, err := os.Stat(filepath.Join(e.dir, "made.txt")); err != nil {
		t.Errorf("the allowed command did not run: %v", err)
	}
}
