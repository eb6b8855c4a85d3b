package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tackcode/tack/internal/hook"
	"github.com/tackcode/tack/internal/hook/hooktest"
	"github.com/tackcode/tack/internal/llm/llmtest"
)

// TestPermissionRequestHookAnswersForTheUser: a call that needs approval
// fires PermissionRequest once, after PreToolUse, with the call; a hook that
// answers allow lets it run where print mode, having nobody to ask, would
// deny it, and one that answers deny keeps it from running with its message.
func TestPermissionRequestHookAnswersForTheUser(t *testing.T) {
	for _, c := range []struct {
		name, answer string
		written      bool
	}{
		{"allow", `{"hookSpecificOutput": {"hookEventName": "PermissionRequest", "decision": {"behavior": "allow"}}}`, true},
		{"deny", `{"hookSpecificOutput": {"hookEventName": "PermissionRequest", "decision": {"behavior": "deny", "message": "writes wait for review"}}}`, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			e := newEnv(t)
			target := filepath.Join(e.dir, "w.txt")
			e.srv.Append(
				llmtest.Reply(llmtest.ToolUse("Write", map[string]any{"file_path": target, "content": "w\n"})),
				llmtest.Reply(llmtest.Text("finished")),
			)
			e.write("answer.json", c.answer)
			log := e.hookSettings(map[hook.Event][]string{hook.PermissionRequest: {"cat answer.json"}}, nil)
			out, errOut := e.run("-p", "write it", "--output-format", "json")
			if e.status != 0 {
				t.Fatalf("exit %d: %s\n%s", e.status, out, errOut)
			}
			if _, err := os.Stat(target); (err == nil) != c.written {
				t.Errorf("w.txt written: %v, want %v", err == nil, c.written)
			}
			got := hooktest.ReadLog(t, log)
			reqs := hooktest.Only(got, hook.PermissionRequest)
			if len(reqs) != 1 {
				t.Fatalf("PermissionRequest fired %d times (events %v)", len(reqs), hooktest.Events(got))
			}
			r := reqs[0]
			var input map[string]any
			_ = json.Unmarshal([]byte(jsonOf(r.Fields["tool_input"])), &input)
			if r.String("tool_name") != "Write" || input["file_path"] != target || r.String("permission_mode") != "default" {
				t.Errorf("PermissionRequest %s", r.Raw)
			}
			evs := hooktest.Events(got)
			pre, req := slices.Index(evs, hook.PreToolUse), slices.Index(evs, hook.PermissionRequest)
			if pre < 0 || req < pre {
				t.Errorf("events %v: want PermissionRequest after PreToolUse", evs)
			}
			res := resultOf(t, out)
			denials, _ := res["permission_denials"].([]any)
			if c.written == (len(denials) != 0) {
				t.Errorf("permission_denials %v", denials)
			}
			if !c.written {
				res, _ := e.srv.Requests()[1].ToolResult(e.srv.Requests()[0].ToolUseIDs()[0])
				if !strings.Contains(jsonOf(res.Content), "writes wait for review") {
					t.Errorf("the model did not read the hook's message: %+v", res)
				}
			}
		})
	}
}

// TestNotificationOnAPermissionPrompt: when a stream-json host is asked to
// approve a call (--permission-prompt-tool stdio), Notification fires once
// with notification_type permission_prompt and the tool's name, before the
// host answers; the call then runs as the host allowed.
func TestNotificationOnAPermissionPrompt(t *testing.T) {
	e := newEnv(t)
	target := filepath.Join(e.dir, "n.txt")
	e.srv.Append(
		llmtest.Reply(llmtest.ToolUse("Write", map[string]any{"file_path": target, "content": "n\n"})),
		llmtest.Reply(llmtest.Text("finished")),
	)
	log := e.hookSettings(nil, nil)
	l := e.start("--permission-prompt-tool", "stdio")
	l.send("write it")
	deadline := time.After(hang)
	for {
		var m map[string]any
		select {
		case m = <-l.lines:
		case <-deadline:
			t.Fatalf("no can_use_tool request; stderr:\n%s", l.stderr.String())
		}
		if m["type"] == "result" {
			break
		}
		req, _ := m["request"].(map[string]any)
		if m["type"] != "control_request" || req["subtype"] != "can_use_tool" {
			continue
		}
		// Notification fired before the host was asked.
		if n := hooktest.Only(hooktest.ReadLog(t, log), hook.Notification); len(n) != 1 ||
			n[0].String("notification_type") != "permission_prompt" || !strings.Contains(n[0].String("message"), "Write") {
			t.Errorf("Notifications when the host is asked: %v", n)
		}
		answer, _ := json.Marshal(map[string]any{"type": "control_response", "response": map[string]any{
			"subtype": "success", "request_id": m["request_id"],
			"response": map[string]any{"behavior": "allow", "updatedInput": req["input"]}}})
		if _, err := l.in.Write(append(answer, '\n')); err != nil {
			t.Fatal(err)
		}
	}
	l.end()
	if _, err := os.Stat(target); err != nil {
		t.Errorf("the allowed Write did not run: %v", err)
	}
	if n := hooktest.Only(hooktest.ReadLog(t, log), hook.Notification); len(n) != 1 {
		t.Errorf("Notification fired %d times, want once", len(n))
	}
}
