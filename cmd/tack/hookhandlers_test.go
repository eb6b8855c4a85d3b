package main

// End-to-end tests of the hook handler types the session runs itself: an
// agent hook (a subagent of the session judges the call) and an mcp_tool
// hook (a tool of one of the session's MCP servers does). Each denies a
// Bash rm -rf: the file survives, the model is told why, and the result
// lists the denial.

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tackcode/tack/internal/llm"
	"github.com/tackcode/tack/internal/llm/llmtest"
)

// deniedRmRf checks what a denied "rm -rf x" leaves: x, the reason in the
// tool result the model gets next (the request at index next), and the
// denial in the result.
func deniedRmRf(t *testing.T, e *env, out string, next int, reason string) {
	t.Helper()
	if _, err := os.Stat(filepath.Join(e.dir, "x", "keep.txt")); err != nil {
		t.Fatal("rm -rf x ran despite the hook")
	}
	r := e.srv.Requests()[next].ToolResults()
	if len(r) != 1 || !r[0].IsError || !strings.Contains(llm.TextOf(r[0].Content), reason) {
		t.Errorf("the model got %+v, want an error with %q", r, reason)
	}
	res := resultOf(t, out)
	d, _ := res["permission_denials"].([]any)
	if len(d) != 1 {
		t.Fatalf("permission_denials %v", res["permission_denials"])
	}
	if den, _ := d[0].(map[string]any); den["tool_name"] != "Bash" || !strings.Contains(string(mustJSON(den["tool_input"])), "rm -rf x") {
		t.Errorf("the denial %v", den)
	}
}

// TestAgentHookDeniesBash runs an agent hook on every PreToolUse: its
// subagent reads the project's policy with Read and refuses the rm -rf.
// The subagent has Read, Grep and Glob only, runs on the small model with
// the hook prompt and the payload, and fires no hooks itself (the hook
// matches every tool, its own Read included, and runs once).
func TestAgentHookDeniesBash(t *testing.T) {
	const judging = "Refuse any command that deletes what POLICY.md protects."
	outside := filepath.Join(t.TempDir(), "elsewhere.txt")
	if err := os.WriteFile(outside, []byte("outside the project"), 0o644); err != nil {
		t.Fatal(err)
	}
	e := newEnv(t,
		llmtest.Turn{When: llmtest.FirstUserContains("clean up"), Content: []llm.Block{llmtest.ToolUse("Bash", map[string]any{"command": "rm -rf x"})}},
		llmtest.Turn{When: llmtest.FirstUserContains(judging), Content: []llm.Block{llmtest.Text("Let me read the policy."),
			llmtest.ToolUse("Read", map[string]any{"file_path": "POLICY.md"}),
			llmtest.ToolUse("Read", map[string]any{"file_path": "SECRET.md"}),
			llmtest.ToolUse("Read", map[string]any{"file_path": outside})}},
		llmtest.Turn{When: llmtest.FirstUserContains(judging), Content: []llm.Block{llmtest.Text(`{"ok": false, "reason": "POLICY.md protects x: do not delete it"}`)}},
		llmtest.Turn{When: llmtest.FirstUserContains("clean up"), Content: []llm.Block{llmtest.Text("done")}})
	e.write("x/keep.txt", "keep me")
	e.write("POLICY.md", "The folder x is protected.\n")
	e.write("SECRET.md", "the key")
	e.settings("settings.json", `{"permissions": {"deny": ["Read(./SECRET.md)"]}, "hooks": {"PreToolUse": [
  {"matcher": "*", "hooks": [{"type": "agent", "prompt": "`+judging+` The call: $ARGUMENTS", "timeout": 60}]}
]}}`)
	out, errOut := e.run("-p", "clean up", "--dangerously-skip-permissions", "--output-format", "json")
	if e.status != 0 {
		t.Fatalf("exit %d: %s %s", e.status, out, errOut)
	}
	reqs := e.srv.Requests()
	if len(reqs) != 4 {
		t.Fatalf("%d requests, want the main turn, the hook agent's two, the main turn: %s", len(reqs), errOut)
	}
	deniedRmRf(t, e, out, 3, "POLICY.md protects x: do not delete it")

	judge := reqs[1]
	if names := judge.ToolNames(); !slices.Equal(names, []string{"Glob", "Grep", "Read"}) && !slices.Equal(names, []string{"Read", "Grep", "Glob"}) {
		t.Errorf("the hook agent's tools: %v", names)
	}
	if !strings.Contains(judge.Model, "haiku") || judge.Model == reqs[0].Model {
		t.Errorf("the hook agent runs on %s (the session on %s), want the small model", judge.Model, reqs[0].Model)
	}
	if !strings.Contains(judge.SystemText(), `{"ok": false, "reason": "..."}`) {
		t.Errorf("the hook agent's system prompt: %q", judge.SystemText())
	}
	var payload map[string]any
	first := llm.TextOf(judge.Messages[0].Content)
	if i := strings.Index(first, "The call: "); i < 0 || json.Unmarshal([]byte(first[i+len("The call: "):]), &payload) != nil {
		t.Fatalf("no payload in the hook agent's prompt: %q", first)
	} else if payload["hook_event_name"] != "PreToolUse" || payload["tool_name"] != "Bash" {
		t.Errorf("payload %v", payload)
	}
	// It reads the project; the session's rules hold (the session runs in
	// bypass mode, the hook agent in dontAsk: what would be asked is
	// denied).
	results := reqs[2].ToolResults()
	if len(results) != 3 {
		t.Fatalf("%d tool results", len(results))
	}
	if got := llm.TextOf(results[0].Content); results[0].IsError || !strings.Contains(got, "The folder x is protected.") {
		t.Errorf("the hook agent's Read got %q", got)
	}
	if got := llm.TextOf(results[1].Content); !results[1].IsError || !strings.Contains(got, "Read(./SECRET.md)") {
		t.Errorf("a Read the rules deny got %q", got)
	}
	if got := llm.TextOf(results[2].Content); !results[2].IsError || !strings.Contains(got, "dontAsk") {
		t.Errorf("a Read outside the project got %q", got)
	}
	// What the hook agent spent counts in the session's.
	if usage, _ := resultOf(t, out)["modelUsage"].(map[string]any); usage[judge.Model] == nil {
		t.Errorf("modelUsage %v has no %s", usage, judge.Model)
	}
}

// TestAgentHookOnSessionStartIsReported: the session is not built yet when
// SessionStart fires, so an agent hook there cannot run; it says so, and
// the session goes on.
func TestAgentHookOnSessionStartIsReported(t *testing.T) {
	e := newEnv(t, llmtest.Reply(llmtest.Text("hello")))
	e.settings("settings.json", `{"hooks": {"SessionStart": [{"hooks": [{"type": "agent", "prompt": "Check the project"}]}]}}`)
	out, errOut := e.run("-p", "hi", "--output-format", "json")
	if e.status != 0 || resultOf(t, out)["result"] != "hello" {
		t.Fatalf("exit %d: %s %s", e.status, out, errOut)
	}
	if !strings.Contains(errOut, "SessionStart:startup hook error: agent hook: the session is still starting") {
		t.Errorf("stderr: %s", errOut)
	}
	if n := len(e.srv.Requests()); n != 1 {
		t.Errorf("%d requests", n)
	}
}

// TestAgentHookFailureIsReported: a hook agent whose answer is no verdict
// does not block; the failure names the hook, and the call runs.
func TestAgentHookFailureIsReported(t *testing.T) {
	e := newEnv(t,
		llmtest.Turn{When: llmtest.FirstUserContains("list"), Content: []llm.Block{llmtest.ToolUse("Bash", map[string]any{"command": "echo listed > out.txt"})}},
		llmtest.Turn{When: llmtest.FirstUserContains("Judge this"), Content: []llm.Block{llmtest.Text("I am not sure.")}},
		llmtest.Turn{When: llmtest.FirstUserContains("list"), Content: []llm.Block{llmtest.Text("done")}})
	e.settings("settings.json", `{"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "agent", "prompt": "Judge this: $ARGUMENTS"}]}]}}`)
	out, errOut := e.run("-p", "list", "--dangerously-skip-permissions", "--output-format", "json")
	if e.status != 0 {
		t.Fatalf("exit %d: %s %s", e.status, out, errOut)
	}
	if got := strings.TrimSpace(e.read("out.txt")); got != "listed" {
		t.Errorf("the call did not run: %q", got)
	}
	if !strings.Contains(errOut, "PreToolUse:Bash hook error: agent hook: the model did not answer with JSON") {
		t.Errorf("no error naming the hook: %s", errOut)
	}
}

// TestMCPToolHookDeniesBash runs an mcp_tool hook that asks a real MCP
// server (test/mcp/policy-server.mjs) about the command, its input filled
// from the payload with ${...}: the server's decision JSON denies it, and
// its reason quotes what the hook sent.
func TestMCPToolHookDeniesBash(t *testing.T) {
	e := newEnv(t, bashTurns("rm -rf x")...)
	e.write("x/keep.txt", "keep me")
	e.settings("settings.json", `{"hooks": {"PreToolUse": [
  {"matcher": "Bash", "hooks": [{"type": "mcp_tool", "server": "policy", "tool": "check_command",
    "input": {"command": "${tool_input.command}", "session": "${session_id}"}}]}
]}}`)
	policy := map[string]any{"command": "node", "args": []string{filepath.Join(mcpFixture(t), "policy-server.mjs")}}
	out, errOut := e.run("-p", "clean up", "--dangerously-skip-permissions", "--output-format", "json",
		"--mcp-config", mcpConfig(map[string]any{"policy": policy}))
	if e.status != 0 {
		t.Fatalf("exit %d: %s %s", e.status, out, errOut)
	}
	session, _ := resultOf(t, out)["session_id"].(string)
	deniedRmRf(t, e, out, 1, `the policy server refuses "rm -rf x" (session `+session+`): it deletes files`)
}

// TestMCPToolHookErrors: an unknown placeholder and a server that is not
// there are non-blocking errors naming the hook; the call runs.
func TestMCPToolHookErrors(t *testing.T) {
	e := newEnv(t, bashTurns("echo ran > out.txt")...)
	e.settings("settings.json", `{"hooks": {"PreToolUse": [
  {"matcher": "Bash", "hooks": [
    {"type": "mcp_tool", "server": "policy", "tool": "check_command", "input": {"command": "${tool_input.cmd}"}},
    {"type": "mcp_tool", "server": "absent", "tool": "check_command", "input": {}}]}
]}}`)
	policy := map[string]any{"command": "node", "args": []string{filepath.Join(mcpFixture(t), "policy-server.mjs")}}
	out, errOut := e.run("-p", "go", "--dangerously-skip-permissions", "--output-format", "json",
		"--mcp-config", mcpConfig(map[string]any{"policy": policy}))
	if e.status != 0 {
		t.Fatalf("exit %d: %s %s", e.status, out, errOut)
	}
	if got := strings.TrimSpace(e.read("out.txt")); got != "ran" {
		t.Errorf("the call did not run: %q", got)
	}
	for _, want := range []string{
		`PreToolUse:Bash hook error: mcp_tool hook policy/check_command: input names what the PreToolUse payload does not hold: ${tool_input.cmd}: tool_input has no "cmd"`,
		`PreToolUse:Bash hook error: mcp_tool hook absent/check_command: no MCP server named "absent"`,
	} {
		if !strings.Contains(errOut, want) {
			t.Errorf("stderr lacks %q:\n%s", want, errOut)
		}
	}
}

// TestOnceHookAcrossResume: a once-only hook runs once in a session, which
// a resume (a new process) goes on with; a fork is a session of its own
// and runs it again. A hook without once runs at every prompt.
func TestOnceHookAcrossResume(t *testing.T) {
	e := newEnv(t, llmtest.Reply(llmtest.Text("one")), llmtest.Reply(llmtest.Text("two")),
		llmtest.Reply(llmtest.Text("three")), llmtest.Reply(llmtest.Text("four")))
	e.settings("settings.json", `{"hooks": {"UserPromptSubmit": [{"hooks": [
  {"type": "command", "command": "echo once >> once.log", "once": true},
  {"type": "command", "command": "echo every >> every.log"}]}]}}`)
	_, id := e.sessionRun("-p", "first")
	e.sessionRun("-p", "second", "-r", id)
	if got := e.read("once.log"); got != "once\n" {
		t.Errorf("after a resume the once-only hook ran %q, want once", got)
	}
	_, forked := e.sessionRun("-p", "third", "-r", id, "--fork-session")
	if forked == id {
		t.Fatal("the fork kept the id")
	}
	if got := e.read("once.log"); got != "once\nonce\n" {
		t.Errorf("the fork did not run the once-only hook: %q", got)
	}
	e.sessionRun("-p", "fourth", "-r", forked)
	if got := e.read("once.log"); got != "once\nonce\n" {
		t.Errorf("the resumed fork ran it again: %q", got)
	}
	if got := e.read("every.log"); got != strings.Repeat("every\n", 4) {
		t.Errorf("the other hook ran %q", got)
	}
}

// TestAgentHookTimeoutHolds: the handler's timeout bounds its subagent; a
// hook agent that takes longer is a non-blocking failure naming the hook.
func TestAgentHookTimeoutHolds(t *testing.T) {
	e := newEnv(t,
		llmtest.Turn{When: llmtest.FirstUserContains("list"), Content: []llm.Block{llmtest.ToolUse("Bash", map[string]any{"command": "echo listed > out.txt"})}},
		llmtest.Turn{When: llmtest.FirstUserContains("Judge this"), Delay: 20 * time.Second, Content: []llm.Block{llmtest.Text(`{"ok": false, "reason": "too late"}`)}},
		llmtest.Turn{When: llmtest.FirstUserContains("list"), Content: []llm.Block{llmtest.Text("done")}})
	e.settings("settings.json", `{"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "agent", "prompt": "Judge this: $ARGUMENTS", "timeout": 1}]}]}}`)
	out, errOut := e.run("-p", "list", "--dangerously-skip-permissions", "--output-format", "json")
	if e.status != 0 {
		t.Fatalf("exit %d: %s %s", e.status, out, errOut)
	}
	if got := strings.TrimSpace(e.read("out.txt")); got != "listed" {
		t.Errorf("the call did not run: %q", got)
	}
	if !strings.Contains(errOut, "PreToolUse:Bash hook error: timed out after 1s") {
		t.Errorf("no timeout naming the hook: %s", errOut)
	}
}
