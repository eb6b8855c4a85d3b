package cli

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/tackcode/tack/internal/llm"
	"github.com/tackcode/tack/internal/llm/llmtest"
)

// sdkPeer plays the Agent SDK: it runs tack in stream-json mode in-process
// and talks to it over pipes, one JSON line at a time.
type sdkPeer struct {
	t      *testing.T
	dir    string
	in     *io.PipeWriter
	out    *bufio.Reader
	code   chan int
	errOut *syncBuffer
	// seen is every line read so far.
	seen []map[string]any
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

var streamArgs = []string{"--output-format", "stream-json", "--verbose", "--input-format", "stream-json"}

func startPeer(t *testing.T, srv *llmtest.Server, args ...string) *sdkPeer {
	t.Helper()
	t.Setenv("ANTHROPIC_API_KEY", "test")
	t.Setenv("ANTHROPIC_BASE_URL", srv.URL())
	t.Setenv("CLAUDE_CONFIG_DIR", t.TempDir())
	t.Setenv("HOME", t.TempDir())
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Chdir(dir)
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	p := &sdkPeer{t: t, dir: dir, in: inW, out: bufio.NewReader(outR), code: make(chan int, 1), errOut: &syncBuffer{}}
	go func() {
		code := Main(context.Background(), append(append([]string{}, streamArgs...), args...), IO{In: inR, Out: outW, Err: p.errOut})
		outW.Close()
		inR.Close()
		p.code <- code
	}()
	t.Cleanup(func() {
		inW.Close()
		io.Copy(io.Discard, outR)
	})
	return p
}

func (p *sdkPeer) send(v any) {
	p.t.Helper()
	line, err := json.Marshal(v)
	if err != nil {
		p.t.Fatal(err)
	}
	p.sendLine(string(line))
}

func (p *sdkPeer) sendLine(line string) {
	p.t.Helper()
	if _, err := io.WriteString(p.in, line+"\n"); err != nil {
		p.t.Fatalf("write stdin: %v (stderr: %s)", err, p.errOut.String())
	}
}

func (p *sdkPeer) user(text string) {
	p.t.Helper()
	p.send(map[string]any{"type": "user", "session_id": "", "parent_tool_use_id": nil,
		"message": map[string]any{"role": "user", "content": []any{map[string]any{"type": "text", "text": text}}}})
}

func (p *sdkPeer) controlRequest(id string, req map[string]any) {
	p.t.Helper()
	p.send(map[string]any{"type": "control_request", "request_id": id, "request": req})
}

func (p *sdkPeer) answer(id string, resp any) {
	p.t.Helper()
	p.send(map[string]any{"type": "control_response", "response": map[string]any{"subtype": "success", "request_id": id, "response": resp}})
}

// next reads the next line; the test fails at the end of the output.
func (p *sdkPeer) next() map[string]any {
	p.t.Helper()
	line, err := p.out.ReadBytes('\n')
	if err != nil {
		p.t.Fatalf("stdout ended (%v) after %d lines; stderr:\n%s", err, len(p.seen), p.errOut.String())
	}
	var m map[string]any
	if err := json.Unmarshal(line, &m); err != nil {
		p.t.Fatalf("stdout line is not JSON: %v: %s", err, line)
	}
	p.seen = append(p.seen, m)
	return m
}

// until reads lines until one satisfies pred, and returns it.
func (p *sdkPeer) until(pred func(map[string]any) bool) map[string]any {
	p.t.Helper()
	for {
		if m := p.next(); pred(m) {
			return m
		}
	}
}

func isType(typ string) func(map[string]any) bool {
	return func(m map[string]any) bool { return m["type"] == typ }
}

func isControl(subtype string) func(map[string]any) bool {
	return func(m map[string]any) bool {
		req, _ := m["request"].(map[string]any)
		return m["type"] == "control_request" && req["subtype"] == subtype
	}
}

func isResponseTo(id string) func(map[string]any) bool {
	return func(m map[string]any) bool {
		r, _ := m["response"].(map[string]any)
		return m["type"] == "control_response" && r["request_id"] == id
	}
}

// finish closes stdin, reads the rest of stdout and returns the exit code.
func (p *sdkPeer) finish() int {
	p.t.Helper()
	p.in.Close()
	for {
		line, err := p.out.ReadBytes('\n')
		if len(bytes.TrimSpace(line)) > 0 {
			var m map[string]any
			if err := json.Unmarshal(line, &m); err != nil {
				p.t.Fatalf("stdout line is not JSON: %v: %s", err, line)
			}
			p.seen = append(p.seen, m)
		}
		if err != nil {
			break
		}
	}
	return <-p.code
}

// kinds lists the seen lines as type or type/subtype.
func (p *sdkPeer) kinds() []string {
	var out []string
	for _, m := range p.seen {
		k, _ := m["type"].(string)
		if st, ok := m["subtype"].(string); ok && k == "system" {
			k += "/" + st
			if st == "session_state_changed" {
				k += ":" + m["state"].(string)
			}
		}
		out = append(out, k)
	}
	return out
}

func TestStreamTwoTurnsInOneSession(t *testing.T) {
	srv := llmtest.New(t, llmtest.Reply(llmtest.Text("first answer")), llmtest.Reply(llmtest.Text("second answer")))
	t.Setenv("CLAUDE_CODE_SDK_READS_SESSION_STATE", "1")
	// Flags of the SDK's argv, in both forms, one tack accepts with nothing
	// to do, and one it has never heard of: a warning for the last, not a
	// failure.
	p := startPeer(t, srv, "--thinking=adaptive", "--effort", "high", "--betas=x", "--await-initialize", "--future-flag", "v", "--max-turns=5")
	p.controlRequest("init1", map[string]any{"subtype": "initialize", "systemPrompt": []string{"You are a terse test agent."},
		"appendSystemPrompt": "Answer in one line.",
		"agents":             map[string]any{"reviewer": map[string]any{"description": "Reviews diffs", "prompt": "You review.", "model": "haiku"}}})
	p.user("first question")
	p.user("second question")
	// stdin ends before any work is done: the queued messages still run.
	code := p.finish()
	if code != 0 {
		t.Fatalf("exit %d; stderr:\n%s", code, p.errOut.String())
	}
	resp := p.seen[0]["response"].(map[string]any)
	if p.seen[0]["type"] != "control_response" || resp["subtype"] != "success" || resp["request_id"] != "init1" {
		t.Fatalf("first line %v", p.seen[0])
	}
	body := resp["response"].(map[string]any)
	var agents []string
	for _, a := range body["agents"].([]any) {
		agents = append(agents, a.(map[string]any)["name"].(string))
	}
	if !slices.Contains(agents, "reviewer") {
		t.Errorf("initialize agents %v lack the SDK's reviewer", agents)
	}
	if models, _ := body["models"].([]any); len(models) == 0 {
		t.Error("initialize lists no models")
	}
	if acc, _ := body["account"].(map[string]any); acc["apiKeySource"] != "ANTHROPIC_API_KEY" {
		t.Errorf("account %v", body["account"])
	}
	for _, k := range []string{"commands", "output_style", "pid"} {
		if _, ok := body[k]; !ok {
			t.Errorf("initialize response lacks %s", k)
		}
	}
	// The order of one session: running, then per message init … result,
	// idle once the queue is empty.
	kinds := p.kinds()
	var results []map[string]any
	for _, m := range p.seen {
		if m["type"] == "result" {
			results = append(results, m)
		}
	}
	if len(results) != 2 || results[0]["result"] != "first answer" || results[1]["result"] != "second answer" {
		t.Fatalf("results %v\nkinds %v", results, kinds)
	}
	if results[0]["session_id"] != results[1]["session_id"] {
		t.Errorf("two sessions: %v %v", results[0]["session_id"], results[1]["session_id"])
	}
	if kinds[1] != "system/session_state_changed:running" || kinds[2] != "system/init" || kinds[len(kinds)-1] != "system/session_state_changed:idle" ||
		kinds[len(kinds)-2] != "result" {
		t.Errorf("order %v", kinds)
	}
	if n := strings.Count(strings.Join(kinds, " "), "system/init"); n != 2 {
		t.Errorf("%d init messages, want one per turn: %v", n, kinds)
	}
	for _, m := range p.seen {
		if m["subtype"] == "session_state_changed" && m["sdk_host_only"] != true {
			t.Errorf("state change not marked sdk_host_only: %v", m)
		}
	}
	// The second request carries the first turn.
	reqs := srv.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d requests", len(reqs))
	}
	var history []string
	for _, m := range reqs[1].Messages {
		history = append(history, string(m.Role)+":"+llm.TextOf(m.Content))
	}
	got := strings.Join(history, "|")
	if !strings.Contains(got, "first question") || !strings.Contains(got, "assistant:first answer") || !strings.HasSuffix(got, "second question") {
		t.Errorf("second request history %q", got)
	}
	if sys := reqs[0].SystemText(); !strings.Contains(sys, "You are a terse test agent.") || !strings.Contains(sys, "Answer in one line.") {
		t.Errorf("system prompt %q", sys)
	}
	stderr := p.errOut.String()
	for _, w := range []string{"--future-flag"} {
		if !strings.Contains(stderr, w) {
			t.Errorf("no warning about %s in stderr:\n%s", w, stderr)
		}
	}
	// --thinking and --effort are honoured: adaptive thinking and the
	// effort in every request, no warning.
	if strings.Contains(stderr, "--thinking") || strings.Contains(stderr, "--effort") {
		t.Errorf("a warning about a flag tack honours: %s", stderr)
	}
	if string(reqs[0].Thinking) != `{"type":"adaptive"}` || !strings.Contains(string(reqs[0].Body), `"output_config":{"effort":"high"}`) {
		t.Errorf("thinking %s, body %.300s", reqs[0].Thinking, reqs[0].Body)
	}
	// --betas is honoured: every request asks for the beta.
	if strings.Contains(stderr, "betas") || !slices.Contains(strings.Split(reqs[0].Header.Get("anthropic-beta"), ","), "x") {
		t.Errorf("--betas=x: stderr %q, anthropic-beta %q", stderr, reqs[0].Header.Get("anthropic-beta"))
	}
	if strings.Contains(stderr, "await-initialize") {
		t.Errorf("a warning about --await-initialize, which tack honours: %s", stderr)
	}
}

func TestStreamCanUseToolAllowsAndDenies(t *testing.T) {
	srv := llmtest.New(t,
		llmtest.Reply(llmtest.ToolUse("Bash", map[string]any{"command": "touch allowed.txt"})),
		llmtest.Reply(llmtest.ToolUse("Bash", map[string]any{"command": "touch denied.txt"})),
		llmtest.Reply(llmtest.Text("done")))
	t.Setenv("CLAUDE_CODE_SDK_READS_SESSION_STATE", "1")
	p := startPeer(t, srv, "--permission-prompt-tool=stdio")
	p.controlRequest("i", map[string]any{"subtype": "initialize"})
	p.user("make two files")
	ask := p.until(isControl("can_use_tool"))
	req := ask["request"].(map[string]any)
	if req["tool_name"] != "Bash" || req["input"].(map[string]any)["command"] != "touch allowed.txt" || req["tool_use_id"] == "" {
		t.Fatalf("can_use_tool %v", req)
	}
	// The question comes after the assistant message that asked for the
	// call, and with the session waiting for the host.
	kinds := p.kinds()
	if kinds[len(kinds)-2] != "system/session_state_changed:requires_action" || !slices.Contains(kinds, "assistant") {
		t.Errorf("before can_use_tool: %v", kinds)
	}
	p.answer(ask["request_id"].(string), map[string]any{"behavior": "allow", "updatedInput": req["input"], "toolUseID": req["tool_use_id"]})
	ask = p.until(isControl("can_use_tool"))
	req = ask["request"].(map[string]any)
	if req["input"].(map[string]any)["command"] != "touch denied.txt" {
		t.Fatalf("second can_use_tool %v", req)
	}
	p.answer(ask["request_id"].(string), map[string]any{"behavior": "deny", "message": "not that one"})
	res := p.until(isType("result"))
	if res["subtype"] != "success" || res["result"] != "done" {
		t.Fatalf("result %v", res)
	}
	denials, _ := res["permission_denials"].([]any)
	if len(denials) != 1 || denials[0].(map[string]any)["tool_input"].(map[string]any)["command"] != "touch denied.txt" {
		t.Errorf("permission_denials %v", res["permission_denials"])
	}
	if code := p.finish(); code != 0 {
		t.Fatalf("exit %d: %s", code, p.errOut.String())
	}
	if _, err := os.Stat(filepath.Join(p.dir, "allowed.txt")); err != nil {
		t.Errorf("the allowed call did not run: %v", err)
	}
	if _, err := os.Stat(filepath.Join(p.dir, "denied.txt")); err == nil {
		t.Error("the denied call ran")
	}
	r := srv.Requests()[2].ToolResults()[0]
	if !r.IsError || !strings.Contains(llm.TextOf(r.Content), "not that one") {
		t.Errorf("denied tool result %+v", r)
	}
}

func TestStreamHookCallbackDecides(t *testing.T) {
	srv := llmtest.New(t,
		llmtest.Reply(llmtest.ToolUse("Bash", map[string]any{"command": "echo hi > out.txt"})),
		llmtest.Reply(llmtest.Text("blocked")))
	p := startPeer(t, srv, "--allowedTools", "Bash")
	p.controlRequest("i", map[string]any{"subtype": "initialize", "hooks": map[string]any{
		"PreToolUse": []any{map[string]any{"matcher": "Bash", "hookCallbackIds": []string{"hook_0"}}}}})
	if r := p.until(isResponseTo("i")); r["response"].(map[string]any)["response"].(map[string]any)["hooks_applied"] != true {
		t.Errorf("initialize response %v", r)
	}
	p.user("write it")
	call := p.until(isControl("hook_callback"))
	req := call["request"].(map[string]any)
	in, _ := req["input"].(map[string]any)
	if req["callback_id"] != "hook_0" || in["hook_event_name"] != "PreToolUse" || in["tool_name"] != "Bash" || req["tool_use_id"] == nil || req["tool_use_id"] != in["tool_use_id"] {
		t.Fatalf("hook_callback %v", req)
	}
	p.answer(call["request_id"].(string), map[string]any{"hookSpecificOutput": map[string]any{
		"hookEventName": "PreToolUse", "permissionDecision": "deny", "permissionDecisionReason": "no writes today"}})
	res := p.until(isType("result"))
	if res["result"] != "blocked" {
		t.Fatalf("result %v", res)
	}
	if code := p.finish(); code != 0 {
		t.Fatalf("exit %d: %s", code, p.errOut.String())
	}
	if _, err := os.Stat(filepath.Join(p.dir, "out.txt")); err == nil {
		t.Error("the hook's deny did not stop the call")
	}
	r := srv.Requests()[1].ToolResults()[0]
	if !r.IsError || !strings.Contains(llm.TextOf(r.Content), "no writes today") {
		t.Errorf("tool result %+v", r)
	}
}

func TestStreamInterruptThenGoOn(t *testing.T) {
	srv := llmtest.New(t,
		llmtest.Reply(llmtest.ToolUse("Bash", map[string]any{"command": "sleep 60"})),
		llmtest.Reply(llmtest.Text("still here")))
	p := startPeer(t, srv, "--allowedTools", "Bash")
	p.user("wait a minute")
	p.until(func(m map[string]any) bool {
		if m["type"] != "assistant" {
			return false
		}
		content := m["message"].(map[string]any)["content"].([]any)
		return content[0].(map[string]any)["type"] == "tool_use"
	})
	p.controlRequest("stop", map[string]any{"subtype": "interrupt"})
	var res map[string]any
	for res == nil {
		m := p.next()
		switch {
		case isResponseTo("stop")(m):
			r := m["response"].(map[string]any)
			if q, ok := r["response"].(map[string]any)["still_queued"].([]any); r["subtype"] != "success" || !ok || len(q) != 0 {
				t.Errorf("interrupt response %v", m)
			}
		case m["type"] == "result":
			res = m
		}
	}
	if res["subtype"] != "error_during_execution" || res["is_error"] != true || !strings.HasPrefix(res["terminal_reason"].(string), "aborted") {
		t.Fatalf("interrupted result %v", res)
	}
	// The session goes on.
	p.user("are you there?")
	if res := p.until(isType("result")); res["result"] != "still here" {
		t.Fatalf("result after the interrupt %v", res)
	}
	if code := p.finish(); code != 0 {
		t.Fatalf("exit %d: %s", code, p.errOut.String())
	}
	last := srv.Requests()[1]
	if got := fmt.Sprint(userTexts(last)); !strings.Contains(got, "Request interrupted by user") || !strings.Contains(got, "are you there?") {
		t.Errorf("the request after the interrupt: %s", got)
	}
}

func userTexts(r llmtest.Request) []string {
	var out []string
	for _, m := range r.Messages {
		if m.Role == llm.RoleUser {
			out = append(out, llm.TextOf(m.Content))
		}
	}
	return out
}

func TestStreamBadInputAndUnknownControl(t *testing.T) {
	srv := llmtest.New(t)
	p := startPeer(t, srv)
	p.sendLine("this is not json")
	p.send(map[string]any{"type": "control_response", "response": map[string]any{"subtype": "success", "request_id": "nobody-asked", "response": map[string]any{}}})
	p.controlRequest("x1", map[string]any{"subtype": "frobnicate"})
	r := p.until(isResponseTo("x1"))["response"].(map[string]any)
	if r["subtype"] != "error" || r["error_code"] != "unsupported_request" || !strings.Contains(r["error"].(string), "frobnicate") {
		t.Errorf("unknown subtype answered %v", r)
	}
	p.controlRequest("m1", map[string]any{"subtype": "set_permission_mode", "mode": "acceptEdits"})
	if r := p.until(isResponseTo("m1"))["response"].(map[string]any); r["subtype"] != "success" {
		t.Errorf("set_permission_mode answered %v", r)
	}
	if code := p.finish(); code != 0 {
		t.Fatalf("exit %d: %s", code, p.errOut.String())
	}
	stderr := p.errOut.String()
	if !strings.Contains(stderr, "line 1") || !strings.Contains(stderr, "not a JSON message") || !strings.Contains(stderr, "nobody-asked") {
		t.Errorf("stderr does not name the bad lines:\n%s", stderr)
	}
	if n := len(srv.Requests()); n != 0 {
		t.Errorf("%d model requests without a user message", n)
	}
}

func TestStreamControlRequestsOnASession(t *testing.T) {
	srv := llmtest.New(t, llmtest.Reply(llmtest.Text("ok")))
	p := startPeer(t, srv)
	p.controlRequest("i", map[string]any{"subtype": "initialize"})
	p.controlRequest("m", map[string]any{"subtype": "set_model", "model": "haiku"})
	if r := p.until(isResponseTo("m"))["response"].(map[string]any); r["subtype"] != "success" || r["response"].(map[string]any)["model"] != "claude-haiku-4-5" {
		t.Errorf("set_model answered %v", r)
	}
	p.controlRequest("bad", map[string]any{"subtype": "set_model", "model": "gpt-nonsense"})
	if r := p.until(isResponseTo("bad"))["response"].(map[string]any); r["subtype"] != "error" || !strings.Contains(fmt.Sprint(r["error"]), "set_model") {
		t.Errorf("set_model of no model answered %v", r)
	}
	p.controlRequest("s", map[string]any{"subtype": "mcp_status"})
	if r := p.until(isResponseTo("s"))["response"].(map[string]any); r["subtype"] != "success" {
		t.Errorf("mcp_status answered %v", r)
	} else if _, ok := r["response"].(map[string]any)["mcpServers"].([]any); !ok {
		t.Errorf("mcp_status answered %v", r)
	}
	// The SDK's reinitialize: the session is described again; hooks sent
	// now are not registered, and the answer says so.
	p.controlRequest("again", map[string]any{"subtype": "initialize", "hooks": map[string]any{"Stop": []any{map[string]any{"hookCallbackIds": []string{"hook_0"}}}}})
	if r := p.until(isResponseTo("again"))["response"].(map[string]any); r["subtype"] != "success" || r["response"].(map[string]any)["hooks_applied"] != false ||
		r["response"].(map[string]any)["model"] != "claude-haiku-4-5" {
		t.Errorf("a second initialize answered %v", r)
	}
	p.user("hi")
	init := p.until(func(m map[string]any) bool { return m["subtype"] == "init" })
	if init["model"] != "claude-haiku-4-5" {
		t.Errorf("init after set_model: %v", init["model"])
	}
	p.until(isType("result"))
	if code := p.finish(); code != 0 {
		t.Fatalf("exit %d: %s", code, p.errOut.String())
	}
	if got := srv.Requests()[0].Model; got != "claude-haiku-4-5" {
		t.Errorf("request model %s", got)
	}
}

func TestStreamNeedsStreamOutputAndUnknownFlagsStayErrorsElsewhere(t *testing.T) {
	srv := llmtest.New(t)
	_, errOut, code := run(t, srv, "-p", "--input-format", "stream-json", "--output-format", "json")
	if code != 1 || !strings.Contains(errOut, "--output-format stream-json") {
		t.Errorf("exit %d: %s", code, errOut)
	}
	_, errOut, code = run(t, srv, "-p", "hi", "--future-flag")
	if code != 1 || !strings.Contains(errOut, "unknown flag") {
		t.Errorf("an unknown flag outside stream-json mode: exit %d: %s", code, errOut)
	}
}

func TestStreamPartialMessages(t *testing.T) {
	srv := llmtest.New(t, llmtest.Reply(llmtest.Text("streamed answer")))
	p := startPeer(t, srv, "--include-partial-messages")
	p.user("hi")
	p.until(isType("result"))
	if code := p.finish(); code != 0 {
		t.Fatalf("exit %d: %s", code, p.errOut.String())
	}
	var events []string
	firstAssistant := -1
	for i, m := range p.seen {
		switch m["type"] {
		case "stream_event":
			events = append(events, m["event"].(map[string]any)["type"].(string))
			if m["parent_tool_use_id"] != nil || m["session_id"] == "" {
				t.Errorf("stream_event %v", m)
			}
		case "assistant":
			if firstAssistant < 0 {
				firstAssistant = i
			}
		}
	}
	if len(events) == 0 || events[0] != "message_start" || events[len(events)-1] != "message_stop" || !slices.Contains(events, "content_block_delta") {
		t.Errorf("stream events %v", events)
	}
	if firstAssistant < 0 || p.seen[firstAssistant-1]["type"] != "stream_event" {
		t.Errorf("the assistant message does not follow its stream events: %v", p.kinds())
	}
}

func TestStreamHookOnFailureBlock(t *testing.T) {
	srv := llmtest.New(t,
		llmtest.Reply(llmtest.ToolUse("Bash", map[string]any{"command": "echo hi > out.txt"})),
		llmtest.Reply(llmtest.Text("could not")))
	p := startPeer(t, srv, "--allowedTools", "Bash")
	p.controlRequest("i", map[string]any{"subtype": "initialize", "hooks": map[string]any{
		"PreToolUse": []any{map[string]any{"matcher": "Bash", "hookCallbackIds": []string{"hook_0"}, "onFailure": "block"}}}})
	if r := p.until(isResponseTo("i")); r["response"].(map[string]any)["response"].(map[string]any)["hook_on_failure_supported"] != true {
		t.Errorf("initialize response %v", r)
	}
	p.user("write it")
	call := p.until(isControl("hook_callback"))
	// The SDK's callback threw: an error answer.
	p.send(map[string]any{"type": "control_response", "response": map[string]any{"subtype": "error", "request_id": call["request_id"], "error": "callback exploded"}})
	if res := p.until(isType("result")); res["result"] != "could not" {
		t.Fatalf("result %v", res)
	}
	if code := p.finish(); code != 0 {
		t.Fatalf("exit %d: %s", code, p.errOut.String())
	}
	if _, err := os.Stat(filepath.Join(p.dir, "out.txt")); err == nil {
		t.Error("a failing hook with onFailure block did not stop the call")
	}
	if r := srv.Requests()[1].ToolResults()[0]; !r.IsError {
		t.Errorf("tool result %+v", r)
	}
}

func TestStreamErrorResultExitsOne(t *testing.T) {
	srv := llmtest.New(t, llmtest.Reply(llmtest.ToolUse("Read", map[string]any{"file_path": "/etc/hostname"})))
	p := startPeer(t, srv, "--max-turns=1")
	p.user("read it")
	if res := p.until(isType("result")); res["subtype"] != "error_max_turns" {
		t.Fatalf("result %v", res)
	}
	if code := p.finish(); code != 1 {
		t.Errorf("exit %d after an error result, want 1", code)
	}
}

func TestStreamStdinClosedWhileAsking(t *testing.T) {
	srv := llmtest.New(t,
		llmtest.Reply(llmtest.ToolUse("Bash", map[string]any{"command": "touch never.txt"})),
		llmtest.Reply(llmtest.Text("gave up")))
	p := startPeer(t, srv, "--permission-prompt-tool", "stdio")
	p.user("make it")
	p.until(isControl("can_use_tool"))
	// The SDK goes away without answering: the question fails, the call
	// is denied, the turn ends and tack exits.
	if code := p.finish(); code != 0 {
		t.Fatalf("exit %d: %s", code, p.errOut.String())
	}
	if k := p.kinds(); k[len(k)-1] != "result" {
		t.Errorf("last line %v", k)
	}
	if _, err := os.Stat(filepath.Join(p.dir, "never.txt")); err == nil {
		t.Error("the unanswered call ran")
	}
	if r := srv.Requests()[1].ToolResults()[0]; !r.IsError || !strings.Contains(llm.TextOf(r.Content), "closed standard input") {
		t.Errorf("tool result %+v", r)
	}
}

func TestStreamSessionThatCannotStart(t *testing.T) {
	srv := llmtest.New(t)
	p := startPeer(t, srv)
	t.Setenv("ANTHROPIC_API_KEY", "")
	p.controlRequest("i", map[string]any{"subtype": "initialize"})
	r := p.until(isResponseTo("i"))["response"].(map[string]any)
	if r["subtype"] != "error" || !strings.Contains(r["error"].(string), "ANTHROPIC_API_KEY") {
		t.Errorf("initialize answered %v", r)
	}
	if code := p.finish(); code != 1 {
		t.Errorf("exit %d, want 1", code)
	}
	if !strings.Contains(p.errOut.String(), "ANTHROPIC_API_KEY") {
		t.Errorf("stderr %q", p.errOut.String())
	}
}

func TestStreamStructuredOutput(t *testing.T) {
	srv := llmtest.New(t,
		llmtest.Reply(llmtest.ToolUse("StructuredOutput", map[string]any{"city": "Lyon"})),
		llmtest.Reply(llmtest.Text("done")))
	schema := `{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}`
	p := startPeer(t, srv, "--json-schema="+schema)
	p.controlRequest("i", map[string]any{"subtype": "initialize", "jsonSchema": json.RawMessage(schema)})
	p.user("which city?")
	res := p.until(isType("result"))
	if got, _ := json.Marshal(res["structured_output"]); res["is_error"] != false || string(got) != `{"city":"Lyon"}` {
		t.Errorf("result %v", res)
	}
	// The accepted call ends the turn: the second reply is never asked for.
	if n := len(srv.Requests()); n != 1 {
		t.Errorf("%d model requests, want 1", n)
	}
	if code := p.finish(); code != 0 {
		t.Fatalf("exit %d: %s", code, p.errOut.String())
	}
	if strings.Contains(p.errOut.String(), "json-schema") {
		t.Errorf("a warning about --json-schema: %s", p.errOut.String())
	}
}

// TestStreamPriorityNowJoinsTheRunningTurn: a user message with priority
// "now" joins the running turn (with the tool results in flight); one
// without it would wait for the next turn.
func TestStreamPriorityNowJoinsTheRunningTurn(t *testing.T) {
	srv := llmtest.New(t,
		llmtest.Reply(llmtest.ToolUse("Bash", map[string]any{"command": "while [ ! -f go ]; do sleep 0.02; done"})),
		llmtest.Reply(llmtest.Text("done, and noted")))
	p := startPeer(t, srv, "--permission-mode", "bypassPermissions")
	p.user("do the work")
	p.until(func(m map[string]any) bool {
		if m["type"] != "assistant" {
			return false
		}
		content := m["message"].(map[string]any)["content"].([]any)
		return content[0].(map[string]any)["type"] == "tool_use"
	})
	p.send(map[string]any{"type": "user", "session_id": "", "parent_tool_use_id": nil, "priority": "now",
		"message": map[string]any{"role": "user", "content": "also note the time"}})
	// Lines are handled in order: once this is answered, the message is in.
	p.controlRequest("sync", map[string]any{"subtype": "mcp_status"})
	p.until(isResponseTo("sync"))
	if err := os.WriteFile(filepath.Join(p.dir, "go"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if res := p.until(isType("result")); res["result"] != "done, and noted" {
		t.Fatalf("result %v", res)
	}
	if code := p.finish(); code != 0 {
		t.Fatalf("exit %d: %s", code, p.errOut.String())
	}
	reqs := srv.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d requests", len(reqs))
	}
	texts := userTexts(reqs[1])
	if last := texts[len(texts)-1]; !strings.Contains(last, "also note the time") {
		t.Errorf("the message did not join the tool results: %q", texts)
	}
}

// TestStreamUserMessageWithAnImage: image blocks of a user message reach
// the model; blocks a prompt cannot carry are left out with a warning.
func TestStreamUserMessageWithAnImage(t *testing.T) {
	srv := llmtest.New(t, llmtest.Reply(llmtest.Text("a cat")))
	p := startPeer(t, srv)
	p.send(map[string]any{"type": "user", "session_id": "", "parent_tool_use_id": nil,
		"message": map[string]any{"role": "user", "content": []any{
			map[string]any{"type": "text", "text": "what is in the picture?"},
			map[string]any{"type": "image", "source": map[string]any{"type": "base64", "media_type": "image/jpeg", "data": "/9j/4AAQ"}},
			map[string]any{"type": "tool_result", "tool_use_id": "x", "content": "stray"},
		}}})
	if res := p.until(isType("result")); res["result"] != "a cat" {
		t.Fatalf("result %v", res)
	}
	if code := p.finish(); code != 0 {
		t.Fatalf("exit %d: %s", code, p.errOut.String())
	}
	body := string(srv.Requests()[0].Body)
	if !strings.Contains(body, `"media_type":"image/jpeg"`) || !strings.Contains(body, "what is in the picture?") || strings.Contains(body, "stray") {
		t.Errorf("request body %s", body)
	}
	if !strings.Contains(p.errOut.String(), "1 content block(s) a prompt cannot carry") {
		t.Errorf("stderr %q", p.errOut.String())
	}
}

// TestStreamInitializeDescribesCommands: the initialize answer lists the
// project's commands with their descriptions and argument hints
// (supportedCommands() in the SDK).
func TestStreamInitializeDescribesCommands(t *testing.T) {
	srv := llmtest.New(t)
	p := startPeer(t, srv)
	path := filepath.Join(p.dir, ".claude", "commands", "commit.md")
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte("---\ndescription: Commit the staged changes\nargument-hint: [message]\n---\nCommit: $ARGUMENTS\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	p.controlRequest("init", map[string]any{"subtype": "initialize"})
	resp := p.until(isResponseTo("init"))["response"].(map[string]any)["response"].(map[string]any)
	var found map[string]any
	for _, c := range resp["commands"].([]any) {
		if c.(map[string]any)["name"] == "commit" {
			found = c.(map[string]any)
		}
	}
	if found == nil || found["description"] != "Commit the staged changes" || found["argumentHint"] != "[message]" {
		t.Errorf("commands %v", resp["commands"])
	}
	if code := p.finish(); code != 0 {
		t.Fatalf("exit %d: %s", code, p.errOut.String())
	}
}
