package main

// End-to-end tests of the policy layer: settings files, permission rules
// and modes, and hooks, with the real binary, real hook scripts and the fake
// API.

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tackcode/tack/internal/llm"
	"github.com/tackcode/tack/internal/llm/llmtest"
)

// blockRM is the seed's hook script, as users have it.
const blockRM = `#!/bin/bash
COMMAND=$(jq -r '.tool_input.command' < /dev/stdin)
if echo "$COMMAND" | grep -q 'rm -rf'; then
  jq -n '{
    hookSpecificOutput: {
      hookEventName: "PreToolUse",
      permissionDecision: "deny",
      permissionDecisionReason: "rm -rf is blocked by policy"
    }
  }'
  exit 0
fi
exit 0
`

func (e *env) settings(name, content string) {
	e.t.Helper()
	e.write(filepath.Join(".claude", name), content)
}

func (e *env) script(name, content string) {
	e.t.Helper()
	e.write(name, content)
	if err := os.Chmod(filepath.Join(e.dir, name), 0o755); err != nil {
		e.t.Fatal(err)
	}
}

func resultOf(t *testing.T, out string) map[string]any {
	t.Helper()
	var res map[string]any
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("not a JSON result: %v\n%s", err, out)
	}
	return res
}

func bashTurns(command string) []llmtest.Turn {
	return []llmtest.Turn{
		llmtest.Reply(llmtest.ToolUse("Bash", map[string]any{"command": command})),
		llmtest.Reply(llmtest.Text("done")),
	}
}

func TestSeedHookBlocksRmRf(t *testing.T) {
	if _, err := exec.LookPath("jq"); err != nil {
		t.Fatal("jq is needed by the seed's hook script: apt-get install jq (.ci/run does)")
	}
	e := newEnv(t, bashTurns("rm -rf build")...)
	e.write("build/keep.txt", "x")
	e.script(".claude/hooks/block-rm.sh", blockRM)
	e.settings("settings.json", `{"hooks": {"PreToolUse": [
  {"matcher": "Bash", "hooks": [{"type": "command", "command": "\"$CLAUDE_PROJECT_DIR\"/.claude/hooks/block-rm.sh", "timeout": 30}]}
]}}`)
	out, errOut := e.run("-p", "clean up", "--dangerously-skip-permissions", "--output-format", "json")
	if e.status != 0 {
		t.Fatalf("exit %d: %s %s", e.status, out, errOut)
	}
	if _, err := os.Stat(filepath.Join(e.dir, "build", "keep.txt")); err != nil {
		t.Fatal("rm -rf ran despite the hook")
	}
	r := e.srv.Requests()[1].ToolResults()[0]
	if !r.IsError || !strings.Contains(llm.TextOf(r.Content), "rm -rf is blocked by policy") {
		t.Errorf("the model got %q", llm.TextOf(r.Content))
	}
	res := resultOf(t, out)
	if d, _ := res["permission_denials"].([]any); len(d) != 1 {
		t.Errorf("permission_denials %v", res["permission_denials"])
	}
}

func TestDenyRuleHoldsInBypassMode(t *testing.T) {
	e := newEnv(t, bashTurns("sudo rm -rf build")...)
	e.write("build/keep.txt", "x")
	e.settings("settings.json", `{"permissions": {"deny": ["Bash(rm *)"]}}`)
	out, _ := e.run("-p", "clean", "--dangerously-skip-permissions", "--output-format", "json")
	if e.status != 0 {
		t.Fatalf("exit %d", e.status)
	}
	if _, err := os.Stat(filepath.Join(e.dir, "build", "keep.txt")); err != nil {
		t.Fatal("a denied rm ran in bypass mode")
	}
	r := e.srv.Requests()[1].ToolResults()[0]
	if !r.IsError || !strings.Contains(llm.TextOf(r.Content), "Bash(rm *)") {
		t.Errorf("the model got %q", llm.TextOf(r.Content))
	}
	if d, _ := resultOf(t, out)["permission_denials"].([]any); len(d) != 1 {
		t.Errorf("denials %v", d)
	}
}

func TestModesInPrintMode(t *testing.T) {
	write := []llmtest.Turn{
		llmtest.Reply(llmtest.ToolUse("Write", map[string]any{"file_path": "notes.txt", "content": "hello\n"})),
		llmtest.Reply(llmtest.Text("done")),
	}
	// Default mode: nobody can approve the write, so it is denied and listed.
	e := newEnv(t, write...)
	out, _ := e.run("-p", "write", "--output-format", "json")
	if _, err := os.Stat(filepath.Join(e.dir, "notes.txt")); err == nil {
		t.Fatal("default mode wrote the file")
	}
	if d, _ := resultOf(t, out)["permission_denials"].([]any); len(d) != 1 {
		t.Errorf("denials %v", d)
	}
	// acceptEdits lets it run.
	e = newEnv(t, write...)
	e.run("-p", "write", "--permission-mode", "acceptEdits")
	if got, _ := os.ReadFile(filepath.Join(e.dir, "notes.txt")); string(got) != "hello\n" {
		t.Errorf("acceptEdits: notes.txt = %q", got)
	}
	// So does permissions.defaultMode in the project settings.
	e = newEnv(t, write...)
	e.settings("settings.json", `{"permissions": {"defaultMode": "acceptEdits"}}`)
	e.run("-p", "write")
	if _, err := os.Stat(filepath.Join(e.dir, "notes.txt")); err != nil {
		t.Errorf("settings defaultMode acceptEdits: %v", err)
	}
	// A read-only command runs in default mode; a write does not.
	e = newEnv(t,
		llmtest.Reply(llmtest.ToolUse("Bash", map[string]any{"command": "echo hi"}), llmtest.ToolUse("Bash", map[string]any{"command": "touch x"})),
		llmtest.Reply(llmtest.Text("done")))
	e.run("-p", "go")
	results := e.srv.Requests()[1].ToolResults()
	if results[0].IsError || llm.TextOf(results[0].Content) != "hi" {
		t.Errorf("echo: %+v", results[0])
	}
	if !results[1].IsError {
		t.Errorf("touch ran in default mode")
	}
}

func TestPostToolUseHookSeesToolResponse(t *testing.T) {
	e := newEnv(t, bashTurns("echo from-bash")...)
	seen := filepath.Join(t.TempDir(), "post.json")
	e.settings("settings.json", `{"hooks": {"PostToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "cat > `+seen+`"}]}]}}`)
	e.run("-p", "go", "--allowedTools", "Bash")
	if e.status != 0 {
		t.Fatalf("exit %d", e.status)
	}
	data, err := os.ReadFile(seen)
	if err != nil {
		t.Fatal(err)
	}
	var p map[string]any
	if err := json.Unmarshal(data, &p); err != nil {
		t.Fatal(err)
	}
	resp, _ := p["tool_response"].(map[string]any)
	input, _ := p["tool_input"].(map[string]any)
	if p["hook_event_name"] != "PostToolUse" || p["tool_name"] != "Bash" || resp["stdout"] != "from-bash" ||
		input["command"] != "echo from-bash" || p["session_id"] == "" || p["cwd"] == "" {
		t.Errorf("payload %s", data)
	}
	if tp, _ := p["transcript_path"].(string); !strings.HasSuffix(tp, ".jsonl") {
		t.Errorf("transcript_path %q", tp)
	}
}

func TestUserPromptSubmitExit2RefusesThePrompt(t *testing.T) {
	e := newEnv(t, llmtest.Reply(llmtest.Text("never")))
	e.settings("settings.json", `{"hooks": {"UserPromptSubmit": [{"hooks": [{"type": "command", "command": "echo 'prompts about prod are refused' >&2; exit 2"}]}]}}`)
	out, errOut := e.run("-p", "deploy to prod", "--output-format", "json")
	if e.status != 1 {
		t.Fatalf("exit %d: %s %s", e.status, out, errOut)
	}
	res := resultOf(t, out)
	if errs, _ := res["errors"].([]any); len(errs) != 1 || !strings.Contains(errs[0].(string), "prompts about prod are refused") {
		t.Errorf("errors %v", res["errors"])
	}
	if len(e.srv.Requests()) != 0 {
		t.Errorf("the refused prompt reached the model")
	}
}

func TestHangingHookIsKilledAndTheSessionGoesOn(t *testing.T) {
	e := newEnv(t, bashTurns("echo ok")...)
	e.settings("settings.json", `{"hooks": {"PreToolUse": [{"matcher": "*", "hooks": [{"type": "command", "command": "sleep 60", "timeout": 1}]}]}}`)
	start := time.Now()
	out, errOut := e.run("-p", "go", "--allowedTools", "Bash")
	if e.status != 0 || out != "done\n" {
		t.Fatalf("exit %d: %q %s", e.status, out, errOut)
	}
	if time.Since(start) > 30*time.Second {
		t.Errorf("the hung hook held the session")
	}
	if !strings.Contains(errOut, "PreToolUse") {
		t.Errorf("the timeout was not reported: %q", errOut)
	}
	if r := e.srv.Requests()[1].ToolResults()[0]; r.IsError {
		t.Errorf("the tool did not run: %+v", r)
	}
}

func TestHTTPHookPostsToALocalServer(t *testing.T) {
	var mu sync.Mutex
	var got []map[string]any
	hookSrv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var p map[string]any
		json.Unmarshal(body, &p)
		mu.Lock()
		got = append(got, p)
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"the audit service says no"}}`)
	}))
	defer hookSrv.Close()
	e := newEnv(t, bashTurns("echo hi")...)
	e.settings("settings.json", `{"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "http", "url": "`+hookSrv.URL+`/hook"}]}]}}`)
	e.run("-p", "go", "--dangerously-skip-permissions", "--output-format", "stream-json", "--verbose", "--include-hook-events")
	mu.Lock()
	defer mu.Unlock()
	if len(got) != 1 || got[0]["tool_name"] != "Bash" || got[0]["hook_event_name"] != "PreToolUse" {
		t.Fatalf("posted %v", got)
	}
	if r := e.srv.Requests()[1].ToolResults()[0]; !strings.Contains(llm.TextOf(r.Content), "the audit service says no") {
		t.Errorf("result %q", llm.TextOf(r.Content))
	}
}

func TestHookEventsInStreamJSON(t *testing.T) {
	e := newEnv(t, bashTurns("echo hi")...)
	e.settings("settings.json", `{"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "echo checked"}]}]}}`)
	out, _ := e.run("-p", "go", "--allowedTools", "Bash", "--output-format", "stream-json", "--verbose", "--include-hook-events")
	var seen []string
	for _, m := range lines(t, out) {
		if m["type"] == "system" && strings.HasPrefix(m["subtype"].(string), "hook_") {
			seen = append(seen, m["subtype"].(string)+" "+m["hook_name"].(string))
			if m["subtype"] == "hook_response" && (m["stdout"] != "checked\n" || m["outcome"] != "success" || m["exit_code"] != 0.0) {
				t.Errorf("hook_response %v", m)
			}
		}
	}
	if strings.Join(seen, ",") != "hook_started PreToolUse:Bash,hook_response PreToolUse:Bash" {
		t.Errorf("hook events %v", seen)
	}
	// Without the flag there are none.
	e2 := newEnv(t, bashTurns("echo hi")...)
	e2.settings("settings.json", `{"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "echo checked"}]}]}}`)
	out, _ = e2.run("-p", "go", "--allowedTools", "Bash", "--output-format", "stream-json", "--verbose")
	if strings.Contains(out, "hook_started") {
		t.Error("hook events without --include-hook-events")
	}
}

func TestMalformedSettingsAreClearErrors(t *testing.T) {
	cases := map[string]struct{ file, content, want string }{
		"bad JSON":        {"settings.json", "{\n  \"permissions\": {\n    \"allow\": [\"Bash\",]\n  }\n}", "settings.json:3:"},
		"wrong type":      {"settings.json", "{\"permissions\": {\"allow\": \"Bash\"}}", "settings.json:1:"},
		"unknown mode":    {"settings.local.json", "{\n\"permissions\": {\"defaultMode\": \"yolo\"}}", "settings.local.json:2:"},
		"bad rule":        {"settings.json", "{\"permissions\": {\"deny\": [\"Bash(rm *\"]}}", "settings.json:1:"},
		"bad matcher":     {"settings.json", "{\"hooks\": {\"PreToolUse\": [{\"matcher\": \"Bash(\", \"hooks\": [{\"type\": \"command\", \"command\": \"true\"}]}]}}", "settings.json:1:"},
		"unknown event":   {"settings.json", "{\"hooks\": {\"PreToolUze\": []}}", "settings.json:1:"},
		"missing command": {"settings.json", "{\"hooks\": {\"Stop\": [{\"hooks\": [{\"type\": \"command\"}]}]}}", "settings.json:1:"},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			e := newEnv(t, llmtest.Reply(llmtest.Text("never")))
			e.settings(c.file, c.content)
			out, errOut := e.run("-p", "hi")
			if e.status != 1 || out != "" {
				t.Fatalf("exit %d, out %q", e.status, out)
			}
			if strings.Count(strings.TrimSpace(errOut), "\n") != 0 || !strings.Contains(errOut, filepath.Join(".claude", c.want)) {
				t.Errorf("error %q does not name the file and line (%s)", errOut, c.want)
			}
			if len(e.srv.Requests()) != 0 {
				t.Error("a request was made with broken settings")
			}
			e.srv.Append() // nothing served: the script's turn stays unused
		})
	}
}

func TestSettingsEnvAndConfigCommand(t *testing.T) {
	e := newEnv(t, bashTurns("echo $TEAM_FLAG")...)
	e.settings("settings.json", `{"env": {"TEAM_FLAG": "from-settings"}, "model": "haiku"}`)
	e.run("-p", "go", "--allowedTools", "Bash")
	req := e.srv.Requests()[1]
	if got := llm.TextOf(req.ToolResults()[0].Content); got != "from-settings" {
		t.Errorf("tool saw %q", got)
	}
	if req.Model != "claude-haiku-4-5" {
		t.Errorf("settings model not used: %s", req.Model)
	}
	out, _ := e.run("config")
	if e.status != 0 || !strings.Contains(out, "env.TEAM_FLAG") || !strings.Contains(out, filepath.Join(".claude", "settings.json")) {
		t.Errorf("tack config: %d %q", e.status, out)
	}
}
