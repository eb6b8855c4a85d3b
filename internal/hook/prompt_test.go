package hook

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tackcode/tack/internal/llm"
)

// stubProvider answers every request with a fixed text and records requests.
type stubProvider struct {
	mu     sync.Mutex
	answer string
	err    error
	delay  time.Duration
	reqs   []*llm.Request
}

func (p *stubProvider) Stream(ctx context.Context, req *llm.Request, _ llm.Observer) (*llm.Response, error) {
	p.mu.Lock()
	p.reqs = append(p.reqs, req)
	answer, err, delay := p.answer, p.err, p.delay
	p.mu.Unlock()
	if delay > 0 {
		select {
		case <-time.After(delay):
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	if err != nil {
		return nil, err
	}
	return &llm.Response{Model: req.Model, Content: []llm.Block{llm.Text(answer)}, StopReason: "end_turn"}, nil
}

func (p *stubProvider) requests() []*llm.Request {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.reqs
}

func userText(t *testing.T, req *llm.Request) string {
	t.Helper()
	if len(req.Messages) != 1 || req.Messages[0].Role != llm.RoleUser || len(req.Messages[0].Content) != 1 {
		t.Fatalf("one user message expected: %+v", req.Messages)
	}
	return req.Messages[0].Content[0].Text
}

func TestPromptHookDenies(t *testing.T) {
	dir := t.TempDir()
	p := &stubProvider{answer: "```json\n{\"ok\": false, \"reason\": \"touches production\"}\n```"}
	h := Handler{Type: TypePrompt, Prompt: "Is this command safe? $ARGUMENTS -- answer JSON"}
	r := newRunner(t, Options{Hooks: on(PreToolUse, "Bash", h), Provider: p, SmallModel: "claude-haiku-4-5"})
	in := bashCall(dir, "kubectl delete ns prod")
	o := r.Run(context.Background(), in)
	noErrors(t, o)
	if o.Permission != DecisionDeny || !o.Block || o.Reason != "touches production" {
		t.Errorf("ok:false denies: %+v", o)
	}
	reqs := p.requests()
	if len(reqs) != 1 {
		t.Fatalf("%d requests", len(reqs))
	}
	payload, _ := in.MarshalJSON()
	if got := userText(t, reqs[0]); got != "Is this command safe? "+string(payload)+" -- answer JSON" {
		t.Errorf("$ARGUMENTS not replaced: %q", got)
	}
	if reqs[0].Model != "claude-haiku-4-5" || len(reqs[0].System) != 1 || !strings.Contains(reqs[0].System[0].Text, `"ok"`) || reqs[0].MaxTokens <= 0 {
		t.Errorf("request %+v", reqs[0])
	}
	if _, err := reqs[0].Body(); err != nil {
		t.Errorf("the request does not encode: %v", err)
	}
}

func TestPromptHookBlocksStopAndPrompt(t *testing.T) {
	dir := t.TempDir()
	p := &stubProvider{answer: `Looking at it: {"ok": false, "reason": "the tests were not run"}`}
	h := Handler{Type: TypePrompt, Prompt: "Did the agent run the tests?", Model: "claude-sonnet-4-5"}
	r := newRunner(t, Options{Hooks: Config{Stop: {{Hooks: []Handler{h}}}, UserPromptSubmit: {{Hooks: []Handler{h}}}}, Provider: p, SmallModel: "small"})
	for _, in := range []Input{StopInput{Base: base(dir), LastAssistantMessage: "done"}, UserPromptSubmitInput{Base: base(dir), Prompt: "ship it"}} {
		o := r.Run(context.Background(), in)
		if !o.Block || o.Reason != "the tests were not run" {
			t.Errorf("%s: %+v", in.EventName(), o)
		}
	}
	reqs := p.requests()
	payload, _ := StopInput{Base: base(dir), LastAssistantMessage: "done"}.MarshalJSON()
	if got := userText(t, reqs[0]); got != "Did the agent run the tests?\n\n"+string(payload) {
		t.Errorf("the payload is appended when $ARGUMENTS is absent: %q", got)
	}
	if reqs[0].Model != "claude-sonnet-4-5" {
		t.Errorf("the handler's model overrides the default: %s", reqs[0].Model)
	}
}

func TestPromptHookOKAndFailures(t *testing.T) {
	dir := t.TempDir()
	h := Handler{Type: TypePrompt, Prompt: "check $ARGUMENTS"}
	cases := []struct {
		name     string
		p        *stubProvider
		model    string
		status   Status
		errorHas string
	}{
		{"ok", &stubProvider{answer: `{"ok": true}`}, "m", StatusSuccess, ""},
		{"prose", &stubProvider{answer: "I think it is fine."}, "m", StatusError, "did not answer with JSON"},
		{"no ok", &stubProvider{answer: `{"reason": "x"}`}, "m", StatusError, `no boolean "ok"`},
		{"api error", &stubProvider{err: errors.New("overloaded")}, "m", StatusError, "overloaded"},
		{"no model", &stubProvider{answer: `{"ok": true}`}, "", StatusError, "no model"},
		{"timeout", &stubProvider{answer: `{"ok": false}`, delay: 10 * time.Second}, "m", StatusCancelled, "timed out"},
	}
	for _, c := range cases {
		hh := h
		if c.name == "timeout" {
			hh.Timeout = 0.2
		}
		r := newRunner(t, Options{Hooks: on(PreToolUse, "", hh), Provider: c.p, SmallModel: c.model})
		o := r.Run(context.Background(), bashCall(dir, "ls"))
		if o.Results[0].Status != c.status || o.Permission != DecisionNone || o.Block {
			t.Errorf("%s: %+v", c.name, o.Results[0])
		}
		if c.errorHas == "" {
			noErrors(t, o)
		} else if len(o.Errors) != 1 || !strings.Contains(o.Errors[0], c.errorHas) {
			t.Errorf("%s: errors %q", c.name, o.Errors)
		}
	}
	r := newRunner(t, Options{Hooks: on(PreToolUse, "", h)})
	if o := r.Run(context.Background(), bashCall(dir, "ls")); len(o.Errors) != 1 || !strings.Contains(o.Errors[0], "need a model provider") {
		t.Errorf("no provider: %q", o.Errors)
	}
}

func TestCallbacks(t *testing.T) {
	dir := t.TempDir()
	var got []json.RawMessage
	var gotIn []Input
	var mu sync.Mutex
	allow := Handler{Type: TypeCallback, CallbackID: "hook_0", Callback: func(ctx context.Context, in Input, payload json.RawMessage) (*Output, error) {
		mu.Lock()
		got, gotIn = append(got, payload), append(gotIn, in)
		mu.Unlock()
		return &Output{SystemMessage: "seen", HookSpecificOutput: &SpecificOutput{HookEventName: PreToolUse, PermissionDecision: "allow", UpdatedInput: json.RawMessage(`{"command":"ls -la"}`)}}, nil
	}}
	r := newRunner(t, Options{Hooks: on(PreToolUse, "Bash", allow, allow)}) // same id: once
	in := bashCall(dir, "ls")
	o := r.Run(context.Background(), in)
	noErrors(t, o)
	if o.Permission != DecisionAllow || string(o.UpdatedInput) != `{"command":"ls -la"}` || len(o.SystemMessages) != 1 {
		t.Errorf("%+v", o)
	}
	want, _ := in.MarshalJSON()
	if len(got) != 1 || string(got[0]) != string(want) || gotIn[0].(PreToolUseInput).ToolUseID != "toolu_1" {
		t.Errorf("callback got %s", got)
	}
	if o.Results[0].Stdout == "" || o.Results[0].JSON == nil {
		t.Errorf("the callback's answer is recorded: %+v", o.Results[0])
	}

	failing := Handler{Type: TypeCallback, Callback: func(context.Context, Input, json.RawMessage) (*Output, error) {
		return nil, errors.New("sdk went away")
	}}
	panicking := Handler{Type: TypeCallback, CallbackID: "p", Callback: func(context.Context, Input, json.RawMessage) (*Output, error) {
		panic("bug")
	}}
	stuck := Handler{Type: TypeCallback, CallbackID: "s", Timeout: 0.2, Callback: func(context.Context, Input, json.RawMessage) (*Output, error) {
		time.Sleep(3 * time.Second) // ignores ctx
		return &Output{Decision: "block"}, nil
	}}
	later := Handler{Type: TypeCallback, CallbackID: "a", Callback: func(context.Context, Input, json.RawMessage) (*Output, error) {
		return &Output{Async: true, AsyncTimeout: 1000}, nil
	}}
	r = newRunner(t, Options{Hooks: on(Stop, "", failing, panicking, stuck, later)})
	start := time.Now()
	o = r.Run(context.Background(), StopInput{Base: base(dir)})
	if time.Since(start) > 2*time.Second {
		t.Error("a stuck callback held the run past its timeout")
	}
	if o.Block || len(o.Errors) != 3 || !strings.Contains(o.Errors[0], "sdk went away") || !strings.Contains(o.Errors[1], "panicked: bug") || !strings.Contains(o.Errors[2], "timed out") {
		t.Errorf("errors %q", o.Errors)
	}
	if o.Results[3].Status != StatusSuccess || o.Results[3].JSON != nil {
		t.Errorf("async:true is a success without answer: %+v", o.Results[3])
	}

	// With onFailure block, a failing callback on a guarded event blocks.
	failing.OnFailure = "block"
	r = newRunner(t, Options{Hooks: on(UserPromptSubmit, "", failing)})
	if o := r.Run(context.Background(), UserPromptSubmitInput{Base: base(dir)}); !o.Block || !strings.Contains(o.Reason, "sdk went away") {
		t.Errorf("%+v", o)
	}
}

// scriptedAgent answers agent hooks with a fixed final text.
type scriptedAgent struct {
	text   string
	prompt string
}

func (a *scriptedAgent) RunHookAgent(ctx context.Context, h Handler, in Input, prompt string) (string, error) {
	a.prompt = prompt
	return a.text, nil
}

// scriptedMCP answers mcp_tool hooks with a fixed result and records the
// call.
type scriptedMCP struct {
	text         string
	isError      bool
	server, tool string
	input        json.RawMessage
}

func (m *scriptedMCP) CallHookTool(ctx context.Context, server, tool string, input json.RawMessage) (string, bool, error) {
	m.server, m.tool, m.input = server, tool, input
	return m.text, m.isError, nil
}

func TestAgentAndMCPToolHooks(t *testing.T) {
	dir := t.TempDir()
	agent := Handler{Type: TypeAgent, Prompt: "Review $ARGUMENTS"}
	tool := Handler{Type: TypeMCPTool, Server: "policy", Tool: "check", Input: json.RawMessage(`{"cmd":"${tool_input.command}"}`)}
	r := newRunner(t, Options{Hooks: on(PreToolUse, "", agent, tool)})
	o := r.Run(context.Background(), bashCall(dir, "ls"))
	if o.Block || len(o.Errors) != 2 || !strings.Contains(o.Errors[0], "agent hooks need a session") ||
		!strings.Contains(o.Errors[1], "mcp_tool hook policy/check: mcp_tool hooks need the session's MCP servers") {
		t.Errorf("without seams: %+v", o)
	}

	// The agent's final text is read as a verdict, prose around it or not.
	a := &scriptedAgent{text: "I read the file.\n```json\n{\"ok\": false, \"reason\": \"the agent found a leaked key\"}\n```"}
	m := &scriptedMCP{text: `{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"ask","permissionDecisionReason":"mcp says ask"}}`}
	r = newRunner(t, Options{Hooks: on(PreToolUse, "", agent, tool), Agent: a, MCP: m})
	in := bashCall(dir, "cat .env")
	o = r.Run(context.Background(), in)
	noErrors(t, o)
	payload, _ := in.MarshalJSON()
	if o.Permission != DecisionDeny || o.Reason != "the agent found a leaked key" || a.prompt != "Review "+string(payload) {
		t.Errorf("agent verdict: %+v (agent prompt %q)", o, a.prompt)
	}
	if m.server != "policy" || m.tool != "check" || string(m.input) != `{"cmd":"cat .env"}` {
		t.Errorf("mcp call %s/%s %s", m.server, m.tool, m.input)
	}

	// An answer that is no verdict, and a tool result with isError, are
	// non-blocking errors that name the hook.
	a.text = "I could not decide."
	m.text, m.isError = "database unreachable", true
	o = r.Run(context.Background(), in)
	if o.Block || o.Permission != DecisionNone || len(o.Errors) != 2 ||
		!strings.Contains(o.Errors[0], "PreToolUse:Bash hook error: agent hook: the model did not answer with JSON") ||
		!strings.Contains(o.Errors[1], "PreToolUse:Bash hook error: mcp_tool hook policy/check failed: database unreachable") {
		t.Errorf("failures: %+v", o)
	}

	// A tool's plain text is like a command's plain stdout: no decision.
	m.text, m.isError = "looks fine", false
	a.text = `{"ok": true}`
	o = r.Run(context.Background(), in)
	noErrors(t, o)
	if o.Block || o.Permission != DecisionNone {
		t.Errorf("plain text decided: %+v", o)
	}
}

func TestSubstituteInput(t *testing.T) {
	payload := []byte(`{"hook_event_name":"PreToolUse","session_id":"s1","tool_input":{"command":"rm -rf x","timeout":120,"edits":[{"old":"a"},{"old":"b"}],"flags":{"force":true},"none":null}}`)
	for _, c := range []struct {
		name, input, want, err string
	}{
		{name: "no input", input: ``, want: `{}`},
		{name: "no placeholder", input: `{"a":1,"b":"x"}`, want: `{"a":1,"b":"x"}`},
		{name: "top level", input: `{"id":"${session_id}"}`, want: `{"id":"s1"}`},
		{name: "nested", input: `{"cmd":"${tool_input.command}"}`, want: `{"cmd":"rm -rf x"}`},
		{name: "array index", input: `{"second":"${tool_input.edits.1.old}"}`, want: `{"second":"b"}`},
		{name: "inside text, twice", input: `{"note":"${session_id} ran ${tool_input.command}!"}`, want: `{"note":"s1 ran rm -rf x!"}`},
		{name: "number as text", input: `{"t":"${tool_input.timeout}"}`, want: `{"t":"120"}`},
		{name: "object as JSON text", input: `{"f":"${tool_input.flags}"}`, want: `{"f":"{\"force\":true}"}`},
		{name: "null as text", input: `{"n":"${tool_input.none}"}`, want: `{"n":"null"}`},
		{name: "deep in arrays and objects, keys untouched", input: `{"${session_id}":[{"x":["${tool_input.command}", 7]}]}`, want: `{"${session_id}":[{"x":["rm -rf x",7]}]}`},
		{name: "numbers kept as written", input: `{"big":12345678901234567890,"c":"${session_id}"}`, want: `{"big":12345678901234567890,"c":"s1"}`},
		{name: "missing key", input: `{"p":"${tool_input.file_path}"}`, err: `input names what the PreToolUse payload does not hold: ${tool_input.file_path}: tool_input has no "file_path"`},
		{name: "every missing path", input: `{"a":"${nope}","b":"${tool_input.edits.5}"}`, err: `${nope}: the payload has no "nope"`},
		{name: "into a string", input: `{"a":"${tool_input.command.x}"}`, err: `${tool_input.command.x}: command is not an object or a list`},
		{name: "empty path", input: `{"a":"${}"}`, err: `${}: an empty path`},
		{name: "not JSON", input: `{"a":"${session_id}"`, err: "input is not JSON"},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := substituteInput(json.RawMessage(c.input), payload)
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("error %v, want %q (got %s)", err, c.err, got)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != c.want {
				t.Errorf("got %s, want %s", got, c.want)
			}
		})
	}
	_, err := substituteInput(json.RawMessage(`{"a":"${nope}","b":"${tool_input.edits.5}"}`), payload)
	if err == nil || !strings.Contains(err.Error(), `${tool_input.edits.5}: edits is a list of 2, without an item "5"`) {
		t.Errorf("the second missing path is not named: %v", err)
	}
}

func TestAddBringsHooksInMidSession(t *testing.T) {
	dir := t.TempDir()
	calls := 0
	var mu sync.Mutex
	count := func(context.Context, Input, json.RawMessage) (*Output, error) {
		mu.Lock()
		calls++
		mu.Unlock()
		return nil, nil
	}
	r := newRunner(t, Options{})
	if r.Has(PreToolUse) {
		t.Fatal("an empty runner has PreToolUse hooks")
	}
	once := Handler{Type: TypeCallback, Callback: count, Once: true}
	if err := r.Add(on(PreToolUse, "Bash", once)); err != nil {
		t.Fatal(err)
	}
	if !r.Has(PreToolUse) {
		t.Fatal("Add did not bring the hook in")
	}
	noErrors(t, r.Run(context.Background(), bashCall(dir, "ls")))
	noErrors(t, r.Run(context.Background(), bashCall(dir, "ls")))
	// A second Add of the same configuration is a new set of hooks.
	if err := r.Add(on(PreToolUse, "Bash", once)); err != nil {
		t.Fatal(err)
	}
	noErrors(t, r.Run(context.Background(), bashCall(dir, "ls")))
	if calls != 2 {
		t.Errorf("%d calls, want 2 (each once-only hook once)", calls)
	}
	if err := r.Add(Config{PreToolUse: {{Matcher: "(", Hooks: []Handler{once}}}}); err == nil {
		t.Error("a bad matcher was added")
	}
}
