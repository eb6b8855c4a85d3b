package engine

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/tackcode/tack/internal/hook"
	"github.com/tackcode/tack/internal/llm"
	"github.com/tackcode/tack/internal/llm/llmtest"
	"github.com/tackcode/tack/internal/protocol"
	"github.com/tackcode/tack/internal/tool"
)

// logTo is a command hook line appending its payload to log, one line each.
func logTo(log string) string { return `{ cat; echo; } >> ` + log }

// payloads reads the hook payloads logged at path.
func payloads(t *testing.T, path string) []map[string]any {
	t.Helper()
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []map[string]any
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		if strings.TrimSpace(sc.Text()) == "" {
			continue
		}
		var p map[string]any
		if err := json.Unmarshal(sc.Bytes(), &p); err != nil {
			t.Fatalf("payload %q: %v", sc.Text(), err)
		}
		out = append(out, p)
	}
	return out
}

// recording is a tool that records the inputs it ran with.
type recording struct {
	mu  sync.Mutex
	ran []string
}

func (r *recording) tool(name string, readOnly bool) *testTool {
	return &testTool{name: name, readOnly: readOnly, run: func(_ context.Context, in json.RawMessage) (tool.Result, error) {
		r.mu.Lock()
		r.ran = append(r.ran, name+string(in))
		r.mu.Unlock()
		return tool.TextResult(name+" did "+string(in), map[string]string{"did": string(in)}), nil
	}}
}

func (r *recording) calls() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.ran...)
}

// A PreToolUse defer ends the run: the read before the deferred call keeps
// its result, the deferred call and the write after it do not run, no
// denial is recorded and only the read's result is recorded. The next run
// takes the two waiting calls through the hooks again, first, and their
// results reach the model in their places, before the new prompt.
func TestDeferEndsTheRunAndTheNextRunDecidesTheWaitingCalls(t *testing.T) {
	dir := t.TempDir()
	approved := filepath.Join(dir, "approved")
	log := filepath.Join(dir, "pre.jsonl")
	// Defers text "b" until the host approved it (the file exists).
	script := logTo(log) + `; tail -n 1 ` + log + ` | grep -q '"text":"b"' && [ ! -e ` + approved + ` ] &&
echo '{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"defer"}}'; true`
	var rec recording
	h := newHarness(t, []tool.Tool{rec.tool("Look", true), rec.tool("Put", false)}, []llmtest.Turn{
		llmtest.Reply(llmtest.Text("Looking."), llmtest.ToolUse("Look", map[string]string{"text": "a"}),
			llmtest.ToolUse("Look", map[string]string{"text": "b"}), llmtest.ToolUse("Put", map[string]string{"text": "c"})),
		llmtest.Reply(llmtest.Text("all three done")),
	}, withHooks(t, hook.Config{hook.PreToolUse: command(script)}, nil))

	res := h.run(context.Background(), "go")
	if res.IsError || res.Subtype != protocol.ResultSuccess || res.TerminalReason != "tool_deferred" ||
		res.StopReason == nil || *res.StopReason != "tool_deferred" || res.Text() != "Looking." {
		t.Fatalf("result %+v", res)
	}
	d := res.DeferredToolUse
	if d == nil || d.Name != "Look" || string(d.Input) != `{"text":"b"}` {
		t.Fatalf("deferred_tool_use %+v", d)
	}
	if len(res.PermissionDenials) != 0 {
		t.Errorf("denials %+v: a deferral is not a denial", res.PermissionDenials)
	}
	if got := rec.calls(); len(got) != 1 || got[0] != `Look{"text":"a"}` {
		t.Errorf("ran %v, want only the read before the deferred call", got)
	}
	if n := len(h.srv.Requests()); n != 1 {
		t.Errorf("%d requests: a deferral ends the run without asking the model again", n)
	}
	if name, decision := h.sess.LastTool(); name != "Look" || decision != "ask" {
		t.Errorf("LastTool() = %s %s, want the deferred call, asked", name, decision)
	}
	if got := h.sess.Deferred(); got == nil || got.ID != d.ID {
		t.Errorf("Deferred() = %+v, want the deferred call", got)
	}
	var recorded []string
	for _, m := range h.rec.msgs {
		if u, ok := m.(*protocol.User); ok {
			for _, b := range u.Message.Content {
				if b.Type == llm.TypeToolResult {
					recorded = append(recorded, b.ToolUseID)
				}
			}
		}
	}
	if len(recorded) != 1 {
		t.Errorf("recorded results for %v, want the read's only", recorded)
	}

	if err := os.WriteFile(approved, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	res = h.run(context.Background(), "approved, go on")
	if res.IsError || res.Text() != "all three done" || res.DeferredToolUse != nil {
		t.Fatalf("second run %+v", res)
	}
	if got := rec.calls(); len(got) != 3 || got[1] != `Look{"text":"b"}` || got[2] != `Put{"text":"c"}` {
		t.Errorf("ran %v, want the waiting calls after the read", got)
	}
	if h.sess.Deferred() != nil {
		t.Error("a call still waits after the run that decided it")
	}
	if n := len(payloads(t, log)); n != 4 {
		t.Errorf("%d PreToolUse payloads, want 4 (a, b deferred, then b and c)", n)
	}
	req := h.srv.Requests()[1]
	last := req.LastMessage()
	if len(last.Content) < 4 {
		t.Fatalf("last message %+v", last)
	}
	for i, want := range []string{`Look did {"text":"a"}`, `Look did {"text":"b"}`, `Put did {"text":"c"}`} {
		if b := last.Content[i]; b.Type != llm.TypeToolResult || b.IsError || llm.TextOf(b.Content) != want {
			t.Errorf("block %d %+v, want the result %q", i, b, want)
		}
	}
	if !strings.Contains(llm.TextOf(last.Content[3:]), "approved, go on") {
		t.Errorf("the prompt does not follow the results: %+v", last.Content[3:])
	}
}

// A resumed conversation holds results the transcript lacked for the
// deferred call and the calls after it; ResumeDeferred makes them wait, and
// the next run's real results replace them.
func TestResumeDeferredReplacesTheRestoredResults(t *testing.T) {
	var rec recording
	h := newHarness(t, []tool.Tool{rec.tool("Put", false)}, []llmtest.Turn{llmtest.Reply(llmtest.Text("wrote both"))}, nil)
	h.sess.Restore([]llm.Message{
		{Role: llm.RoleUser, Content: []llm.Block{llm.Text("write x and y")}},
		{Role: llm.RoleAssistant, Content: []llm.Block{
			{Type: llm.TypeToolUse, ID: "toolu_x", Name: "Put", Input: json.RawMessage(`{"text":"x"}`)},
			{Type: llm.TypeToolUse, ID: "toolu_y", Name: "Put", Input: json.RawMessage(`{"text":"y"}`)}}},
		{Role: llm.RoleUser, Content: []llm.Block{llm.ToolResult("toolu_x", "interrupted: not run", true), llm.ToolResult("toolu_y", "interrupted: not run", true)}},
	})
	if h.sess.ResumeDeferred("toolu_nope") {
		t.Error("ResumeDeferred accepted a call the conversation does not end with")
	}
	if !h.sess.ResumeDeferred("toolu_y") {
		t.Fatal("ResumeDeferred refused the last call")
	}
	if d := h.sess.Deferred(); d == nil || d.ID != "toolu_y" {
		t.Fatalf("Deferred() = %+v", d)
	}
	if res := h.run(context.Background(), "go on"); res.IsError {
		t.Fatalf("result %+v", res)
	}
	if got := rec.calls(); len(got) != 1 || got[0] != `Put{"text":"y"}` {
		t.Errorf("ran %v, want y only: x was decided before the deferral", got)
	}
	results := h.srv.Requests()[0].ToolResults()
	if len(results) != 2 || llm.TextOf(results[0].Content) != "interrupted: not run" || llm.TextOf(results[1].Content) != `Put did {"text":"y"}` {
		t.Errorf("results %+v", results)
	}
}

// Inside a subagent nobody can resume the run: a deferred call fails, and
// the subagent goes on.
func TestDeferInASubagentFailsTheCall(t *testing.T) {
	var rec recording
	deferAll := `echo '{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"defer"}}'`
	h := newHarness(t, []tool.Tool{rec.tool("Put", false)}, []llmtest.Turn{
		llmtest.Reply(llmtest.ToolUse("Put", map[string]string{"text": "x"})),
		llmtest.Reply(llmtest.Text("could not")),
	}, withHooks(t, hook.Config{hook.PreToolUse: command(deferAll)}, func(c *Config) { c.ParentToolUseID = "toolu_parent" }))
	res := h.run(context.Background(), "go")
	if res.IsError || res.TerminalReason != "completed" || res.DeferredToolUse != nil || len(rec.calls()) != 0 {
		t.Fatalf("result %+v, ran %v", res, rec.calls())
	}
	r := h.srv.Requests()[1].ToolResults()[0]
	if !r.IsError || !strings.Contains(llm.TextOf(r.Content), "cannot wait") {
		t.Errorf("result %+v", r)
	}
}

// PermissionDenied fires for a denial by the gate and by a hook, with the
// reason the model reads; a retry:true answer adds a note to the result.
func TestPermissionDeniedFiresForEveryDenialAndRetryIsNoted(t *testing.T) {
	dir := t.TempDir()
	log := filepath.Join(dir, "denied.jsonl")
	retry := logTo(log) + `; echo '{"hookSpecificOutput":{"hookEventName":"PermissionDenied","retry":true}}'`
	denyB := `grep -q '"text":"b"' && echo '{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"b is banned"}}'; true`
	var rec recording
	h := newHarness(t, []tool.Tool{rec.tool("Put", false)}, []llmtest.Turn{
		llmtest.Reply(llmtest.ToolUse("Put", map[string]string{"text": "a"}), llmtest.ToolUse("Put", map[string]string{"text": "b"})),
		llmtest.Reply(llmtest.Text("ok")),
	}, withHooks(t, hook.Config{hook.PermissionDenied: command(retry), hook.PreToolUse: command(denyB)}, func(c *Config) {
		c.Gate = testGate{check: func(call ToolCall) Verdict {
			if strings.Contains(string(call.Input), `"a"`) {
				return Verdict{Behavior: Deny, Message: "a is not allowed here"}
			}
			return Verdict{Behavior: Allow}
		}}
	}))
	res := h.run(context.Background(), "go")
	if res.IsError || len(res.PermissionDenials) != 2 || len(rec.calls()) != 0 {
		t.Fatalf("result %+v, ran %v", res, rec.calls())
	}
	got := payloads(t, log)
	if len(got) != 2 {
		t.Fatalf("%d PermissionDenied payloads, want 2", len(got))
	}
	results := h.srv.Requests()[1].ToolResults()
	for i, want := range []string{"a is not allowed here", "PreToolUse:Put hook error: b is banned"} {
		p := got[i]
		if p["hook_event_name"] != "PermissionDenied" || p["tool_name"] != "Put" || p["reason"] != want || p["tool_use_id"] != results[i].ToolUseID {
			t.Errorf("payload %d %v, want reason %q", i, p, want)
		}
		text := llm.TextOf(results[i].Content)
		if !results[i].IsError || !strings.HasPrefix(text, want) || !strings.Contains(text, retryNote) {
			t.Errorf("result %d %q: want the reason, then the retry note", i, text)
		}
	}
}

// PostToolBatch fires once, after every call of the response and its
// PostToolUse, with each call in order and the response PostToolUse got;
// its context and a block's reason join the results in the next request.
func TestPostToolBatchOnceWithEveryCallBeforeTheNextRequest(t *testing.T) {
	dir := t.TempDir()
	log := filepath.Join(dir, "events.jsonl")
	block := `echo '{"decision":"block","reason":"the batch read secrets","hookSpecificOutput":{"hookEventName":"PostToolBatch","additionalContext":"summarise before writing"}}'`
	var rec recording
	h := newHarness(t, []tool.Tool{rec.tool("Look", true), rec.tool("Put", false)}, []llmtest.Turn{
		llmtest.Reply(llmtest.ToolUse("Look", map[string]string{"text": "a"}), llmtest.ToolUse("Look", map[string]string{"text": "b"}),
			llmtest.ToolUse("Put", map[string]string{"text": "c"})),
		llmtest.Reply(llmtest.Text("ok")),
	}, withHooks(t, hook.Config{
		hook.PostToolUse: command(logTo(log)),
		hook.PostToolBatch: {{Hooks: []hook.Handler{{Type: hook.TypeCommand, Command: logTo(log), Timeout: 10},
			{Type: hook.TypeCommand, Command: block, Timeout: 10}}}},
	}, func(c *Config) {
		c.Gate = testGate{check: func(call ToolCall) Verdict {
			if call.Name == "Put" {
				return Verdict{Behavior: Deny, Message: "no writing"}
			}
			return Verdict{Behavior: Allow}
		}}
	}))
	if res := h.run(context.Background(), "go"); res.IsError {
		t.Fatalf("result %+v", res)
	}
	got := payloads(t, log)
	var events []string
	for _, p := range got {
		events = append(events, p["hook_event_name"].(string))
	}
	if strings.Join(events, " ") != "PostToolUse PostToolUse PostToolBatch" {
		t.Fatalf("events %v", events)
	}
	calls, _ := got[2]["tool_calls"].([]any)
	ids := h.srv.Requests()[0].ToolUseIDs()
	if len(calls) != 3 {
		t.Fatalf("tool_calls %v", got[2]["tool_calls"])
	}
	for i, c := range calls {
		c := c.(map[string]any)
		if c["tool_use_id"] != ids[i] {
			t.Errorf("call %d id %v, want %s", i, c["tool_use_id"], ids[i])
		}
		_, hasResponse := c["tool_response"]
		if i < 2 {
			// The result as the model read it, as Claude Code sends it.
			res, _ := h.srv.Requests()[1].ToolResult(ids[i])
			if resp, _ := c["tool_response"].(string); c["tool_name"] != "Look" || resp == "" || resp != llm.TextOf(res.Content) {
				t.Errorf("call %d %v, want the result the model read %q", i, c, llm.TextOf(res.Content))
			}
		} else if c["tool_name"] != "Put" || hasResponse {
			t.Errorf("denied call %v: want no tool_response", c)
		}
	}
	text := llm.TextOf(h.srv.Requests()[1].LastMessage().Content)
	if !strings.Contains(text, "PostToolBatch hook feedback: the batch read secrets") || !strings.Contains(text, "summarise before writing") {
		t.Errorf("next request's last message %q", text)
	}
}

// A turn that ends on an API error fires StopFailure, not Stop, with the
// error's type and message.
func TestStopFailureInsteadOfStopOnAPIError(t *testing.T) {
	log := filepath.Join(t.TempDir(), "events.jsonl")
	h := newHarness(t, nil, []llmtest.Turn{
		{Content: []llm.Block{llmtest.Text("x")}, Faults: []llmtest.Fault{{Status: 400, Message: "messages: bad block"}}},
	}, withHooks(t, hook.Config{hook.Stop: command(logTo(log)), hook.StopFailure: command(logTo(log))}, nil))
	res := h.run(context.Background(), "go")
	if !res.IsError || res.TerminalReason != "api_error" {
		t.Fatalf("result %+v", res)
	}
	got := payloads(t, log)
	if len(got) != 1 || got[0]["hook_event_name"] != "StopFailure" || got[0]["error"] != "invalid_request" ||
		!strings.Contains(got[0]["error_details"].(string), "messages: bad block") {
		t.Errorf("payloads %v", got)
	}
}

func TestFailureKinds(t *testing.T) {
	for _, c := range []struct {
		err  error
		want string
	}{
		{&llm.APIError{Status: 400, Type: "invalid_request_error"}, "invalid_request"},
		{&llm.APIError{Status: 401, Type: "authentication_error"}, "authentication_failed"},
		{&llm.APIError{Status: 402}, "billing_error"},
		{&llm.APIError{Status: 404, Type: "not_found_error"}, "model_not_found"},
		{&llm.APIError{Status: 429}, "rate_limit"},
		{&llm.APIError{Type: "overloaded_error"}, "overloaded"},
		{&llm.APIError{Status: 529}, "overloaded"},
		{&llm.APIError{Status: 503}, "server_error"},
		{&llm.APIError{Status: 500, Type: "api_error"}, "server_error"},
		{errors.New("connection reset"), "unknown"},
	} {
		if got := failureKind(c.err); got != c.want {
			t.Errorf("%v: %q, want %q", c.err, got, c.want)
		}
	}
}
