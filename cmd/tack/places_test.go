package main

// End-to-end tests of the hook events of tasks, worktrees, MCP elicitation
// and agent teams: TaskCreated, TaskCompleted, WorktreeCreate,
// WorktreeRemove, Elicitation, ElicitationResult and TeammateIdle.

import (
	"encoding/json"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/tackcode/tack/internal/hook"
	"github.com/tackcode/tack/internal/hook/hooktest"
	"github.com/tackcode/tack/internal/llm"
	"github.com/tackcode/tack/internal/llm/llmtest"
)

// hooksWith is LoggingHooks(log, events…) with more handlers added after
// the logging ones: extra maps an event to its handlers (settings JSON).
func hooksWith(log string, extra map[hook.Event][]map[string]any, events ...hook.Event) map[string]any {
	hooks := hooktest.LoggingHooks(log, events...)
	for ev, handlers := range extra {
		for _, h := range handlers {
			group := map[string]any{"hooks": []any{h}}
			if m, ok := h["matcher"]; ok {
				group["matcher"] = m
				delete(h, "matcher")
			}
			list, _ := hooks[string(ev)].([]any)
			hooks[string(ev)] = append(list, group)
		}
	}
	return hooks
}

// writeSettings writes the project settings with hooks.
func (e *env) writeSettings(hooks map[string]any) {
	e.t.Helper()
	b, err := json.Marshal(map[string]any{"hooks": hooks})
	if err != nil {
		e.t.Fatal(err)
	}
	e.settings("settings.json", string(b))
}

func needJQ(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("jq"); err != nil {
		t.Skip("jq is not installed (scripts/test installs it)")
	}
}

// toolResult is the result of the call the request before r made: the
// first tool_result block of r.
func toolResult(t *testing.T, r llmtest.Request) llm.Block {
	t.Helper()
	results := r.ToolResults()
	if len(results) == 0 {
		t.Fatalf("request without a tool result: %v", r.LastMessage())
	}
	return results[0]
}

// TestTaskHooksGuardTheTaskList scripts TaskCreate and TaskUpdate calls:
// TaskCreated and TaskCompleted fire with the task's id, subject and
// description; a TaskCreated hook's exit 2 keeps a task out of the list and
// a TaskCompleted hook's decision "block" keeps one open, each reason
// reaching the model as the tool's error.
func TestTaskHooksGuardTheTaskList(t *testing.T) {
	needJQ(t)
	e := newEnv(t)
	create := func(subject, description string) llmtest.Turn {
		return llmtest.Reply(llmtest.ToolUse("TaskCreate", map[string]any{"subject": subject, "description": description}))
	}
	complete := func(id string) llmtest.Turn {
		return llmtest.Reply(llmtest.ToolUse("TaskUpdate", map[string]any{"taskId": id, "status": "completed"}))
	}
	e.srv.Append(
		create("Write the parser", "Parse the grammar into a tree"),
		create("Skip the tests", "Nobody will notice"),
		complete("1"),
		create("Ship it", "Tag and publish"),
		complete("3"),
		llmtest.Reply(llmtest.ToolUse("TaskList", map[string]any{})),
		llmtest.Reply(llmtest.Text("done")),
	)
	log := filepath.Join(t.TempDir(), "hooks.jsonl")
	e.writeSettings(hooksWith(log, map[hook.Event][]map[string]any{
		hook.TaskCreated: {{"type": "command",
			"command": `if jq -e '.task_subject | test("^Skip")' >/dev/null; then echo "tests are not optional" >&2; exit 2; fi`}},
		hook.TaskCompleted: {{"type": "command",
			"command": `if jq -e '.task_subject == "Ship it"' >/dev/null; then echo '{"decision":"block","reason":"not reviewed yet"}'; fi`}},
	}, hook.TaskCreated, hook.TaskCompleted))

	out, errOut := e.run("-p", "plan the work", "--output-format", "json")
	if e.status != 0 {
		t.Fatalf("exit %d: %s\n%s", e.status, out, errOut)
	}
	sessionID, _ := resultOf(t, out)["session_id"].(string)
	reqs := e.srv.Requests()
	if len(reqs) != 7 {
		t.Fatalf("%d requests, want 7", len(reqs))
	}
	for i, want := range map[int]string{
		2: `TaskCreated hook blocked creating task #2 ("Skip the tests"): tests are not optional`,
		5: `TaskCompleted hook blocked completing task #3 ("Ship it"): not reviewed yet`,
	} {
		if r := toolResult(t, reqs[i]); !r.IsError || llm.TextOf(r.Content) != want {
			t.Errorf("request %d: tool result (error %v) %q, want the error %q", i, r.IsError, llm.TextOf(r.Content), want)
		}
	}
	if r := toolResult(t, reqs[3]); r.IsError {
		t.Errorf("completing task #1: %s", llm.TextOf(r.Content))
	}
	if got := llm.TextOf(toolResult(t, reqs[6]).Content); got != "#1 [completed] Write the parser\n#3 [pending] Ship it" {
		t.Errorf("TaskList:\n%s", got)
	}

	got := hooktest.ReadLog(t, log)
	type fired struct{ event, id, subject, description string }
	var seen []fired
	for _, p := range got {
		seen = append(seen, fired{string(p.Event), p.String("task_id"), p.String("task_subject"), p.String("task_description")})
		if p.String("session_id") != sessionID || p.String("permission_mode") != "default" || p.String("cwd") == "" {
			t.Errorf("%s common fields: %s", p.Event, p.Raw)
		}
	}
	want := []fired{
		{"TaskCreated", "1", "Write the parser", "Parse the grammar into a tree"},
		{"TaskCreated", "2", "Skip the tests", "Nobody will notice"},
		{"TaskCompleted", "1", "Write the parser", "Parse the grammar into a tree"},
		{"TaskCreated", "3", "Ship it", "Tag and publish"},
		{"TaskCompleted", "3", "Ship it", "Tag and publish"},
	}
	if !slices.Equal(seen, want) {
		t.Errorf("hooks fired\n got %v\nwant %v", seen, want)
	}
	_ = strings.Contains
}
