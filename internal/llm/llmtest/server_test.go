package llmtest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tackcode/tack/internal/llm"
)

func TestStreamWireFormat(t *testing.T) {
	long := "The quick brown fox jumps over the lazy dog; the lazy dog sleeps on — ünïcödé."
	s := New(t, Reply(Thinking("Let me look at the files first."), Text(long), ToolUse("Bash", map[string]any{"command": "ls -la /tmp", "description": "list"})))
	resp, events, err := send(t, s, baseRequest())
	if err != nil {
		t.Fatal(err)
	}
	if ct := resp.Header.Get("content-type"); ct != "text/event-stream" {
		t.Errorf("content-type %q", ct)
	}
	if id := resp.Header.Get("request-id"); !strings.HasPrefix(id, "req_") {
		t.Errorf("request-id %q", id)
	}

	// The exact sequence, with the chunk counts the layout promises.
	var want []string
	want = append(want, "message_start", "ping")
	block := func(deltas int) {
		want = append(want, "content_block_start")
		for range deltas {
			want = append(want, "content_block_delta")
		}
		want = append(want, "content_block_stop")
	}
	block(textChunks(len("Let me look at the files first.")) + 1) // thinking deltas, then the signature
	block(textChunks(len(long)))
	in := `{"command":"ls -la /tmp","description":"list"}`
	block(1 + jsonChunks(len(in))) // the empty first fragment, then the input
	want = append(want, "message_delta", "message_stop")
	if got := eventNames(events); got != strings.Join(want, " ") {
		t.Fatalf("events:\n got %s\nwant %s", got, strings.Join(want, " "))
	}
	if textChunks(len(long)) < 2 || jsonChunks(len(in)) < 2 {
		t.Fatalf("test content too short to be split")
	}

	reqs := s.Requests()
	served := reqs[0].Response
	toolID := served[2].ID
	if !strings.HasPrefix(toolID, "toolu_") || len(toolID) < 20 {
		t.Errorf("assigned tool id %q", toolID)
	}
	if got := reqs[0].ToolUseIDs(); !slices.Equal(got, []string{toolID}) {
		t.Errorf("ToolUseIDs %v", got)
	}

	// Exact JSON of the framing events.
	var start struct {
		Type    string `json:"type"`
		Message map[string]json.RawMessage
	}
	if err := json.Unmarshal([]byte(events[0].data), &start); err != nil {
		t.Fatal(err)
	}
	for key, wantVal := range map[string]string{
		"type": `"message"`, "role": `"assistant"`, "model": `"claude-test-1"`, "content": `[]`,
		"stop_reason": `null`, "stop_sequence": `null`,
	} {
		if got := string(start.Message[key]); got != wantVal {
			t.Errorf("message_start %s = %s, want %s", key, got, wantVal)
		}
	}
	if len(start.Message) != 8 {
		t.Errorf("message_start message has keys %v, want id type role model content stop_reason stop_sequence usage", start.Message)
	}
	exact := map[int]string{
		1:               `{"type":"ping"}`,
		2:               `{"type":"content_block_start","index":0,"content_block":{"type":"thinking","thinking":"","signature":""}}`,
		6:               `{"type":"content_block_start","index":1,"content_block":{"type":"text","text":""}}`,
		len(events) - 1: `{"type":"message_stop"}`,
	}
	for i, w := range exact {
		if events[i].data != w {
			t.Errorf("event %d: %s\nwant %s", i, events[i].data, w)
		}
	}
	toolStart := slices.IndexFunc(events, func(e sseEvent) bool { return strings.Contains(e.data, `"index":2,"content_block"`) })
	if w := `{"type":"content_block_start","index":2,"content_block":{"type":"tool_use","id":"` + toolID + `","name":"Bash","input":{}}}`; events[toolStart].data != w {
		t.Errorf("tool_use start %s\nwant %s", events[toolStart].data, w)
	}
	if w := `{"type":"content_block_delta","index":2,"delta":{"type":"input_json_delta","partial_json":""}}`; events[toolStart+1].data != w {
		t.Errorf("first input delta %s, want %s", events[toolStart+1].data, w)
	}

	a := assemble(t, events)
	if !strings.HasPrefix(a.id, "msg_") || a.model != "claude-test-1" || a.stopReason != "tool_use" {
		t.Errorf("id %q model %q stop %q", a.id, a.model, a.stopReason)
	}
	if a.content[0].Thinking != "Let me look at the files first." || a.content[0].Signature != fakeSignature("Let me look at the files first.") {
		t.Errorf("thinking %+v", a.content[0])
	}
	if a.content[1].Text != long {
		t.Errorf("text %q", a.content[1].Text)
	}
	if a.content[2].ID != toolID || a.content[2].Name != "Bash" || !sameJSON(a.content[2].Input, json.RawMessage(in)) {
		t.Errorf("tool_use %+v", a.content[2])
	}
	if string(a.content[2].Input) != string(served[2].Input) {
		t.Errorf("streamed input %s differs from the recorded %s", a.content[2].Input, served[2].Input)
	}
	if a.startUsage.OutputTokens != 1 || a.startUsage.InputTokens != int64(len(reqs[0].Body)/4) {
		t.Errorf("message_start usage %+v (body %d bytes)", a.startUsage, len(reqs[0].Body))
	}
	if a.usage.OutputTokens < 10 || a.usage.InputTokens != a.startUsage.InputTokens {
		t.Errorf("message_delta usage %+v", a.usage)
	}
	var md map[string]json.RawMessage
	_ = json.Unmarshal([]byte(events[len(events)-2].data), &md)
	if string(md["delta"]) != `{"stop_reason":"tool_use","stop_sequence":null}` {
		t.Errorf("message_delta delta %s", md["delta"])
	}
}

func TestStreamOtherBlocksAndDefaults(t *testing.T) {
	raw := json.RawMessage(`{"type":"web_search_tool_result","tool_use_id":"srvtoolu_x","content":[]}`)
	usage := &llm.Usage{InputTokens: 7, CacheReadInputTokens: 100, CacheCreationInputTokens: 20, OutputTokens: 3}
	s := New(t,
		Turn{Content: []llm.Block{
			{Type: llm.TypeServerToolUse, Name: "web_search", Input: json.RawMessage(`{"query":"go"}`)},
			{Type: "web_search_tool_result", Raw: raw},
			RedactedThinking("opaque"),
			ToolUse("Noop", nil),
		}, StopReason: "pause_turn", Usage: usage, Model: "claude-other"},
		Reply(), // an empty answer is legal
	)
	_, events, err := send(t, s, baseRequest())
	if err != nil {
		t.Fatal(err)
	}
	a := assemble(t, events)
	if !strings.HasPrefix(a.content[0].ID, "srvtoolu_") || string(a.content[0].Input) != `{"query":"go"}` {
		t.Errorf("server_tool_use %+v", a.content[0])
	}
	if string(a.content[1].Raw) != string(raw) {
		t.Errorf("raw block %s", a.content[1].Raw)
	}
	if a.content[2].Type != llm.TypeRedactedThinking || a.content[2].Data != "opaque" {
		t.Errorf("redacted %+v", a.content[2])
	}
	// An empty input streams only the empty fragment.
	noop := slices.IndexFunc(events, func(e sseEvent) bool { return strings.Contains(e.data, `"name":"Noop"`) })
	if events[noop+1].data != `{"type":"content_block_delta","index":3,"delta":{"type":"input_json_delta","partial_json":""}}` || events[noop+2].name != "content_block_stop" {
		t.Errorf("empty input events: %v", events[noop:noop+3])
	}
	if a.stopReason != "pause_turn" || a.model != "claude-other" || a.usage != *usage {
		t.Errorf("stop %q model %q usage %+v", a.stopReason, a.model, a.usage)
	}
	if a.startUsage.CacheReadInputTokens != 100 || a.startUsage.OutputTokens != 1 {
		t.Errorf("start usage %+v", a.startUsage)
	}
	// The empty tool input must be answered before the next request.
	_, events, err = send(t, s, baseRequest(userMsg(Text("q")), llm.Message{Role: llm.RoleAssistant, Content: a.content},
		userMsg(llm.ToolResult(a.content[3].ID, "done", false))))
	if err != nil {
		t.Fatal(err)
	}
	if got := eventNames(events); got != "message_start ping message_delta message_stop" {
		t.Errorf("empty turn events %s", got)
	}
	if a := assemble(t, events); a.stopReason != "end_turn" {
		t.Errorf("default stop reason %q", a.stopReason)
	}
}

func TestStatusFaults(t *testing.T) {
	s := New(t, Turn{
		Content: []llm.Block{Text("finally")},
		Faults: []Fault{
			{Status: 429, RetryAfter: "2"},
			{Status: 529},
			{Status: 500},
			{Status: 400, Message: "prompt is too long: 210000 tokens > 200000 maximum"},
		},
	})
	want := []struct {
		status  int
		typ     string
		message string
		retry   string
	}{
		{429, "rate_limit_error", "Number of requests has exceeded your rate limit", "2"},
		{529, "overloaded_error", "Overloaded", ""},
		{500, "api_error", "Internal server error", ""},
		{400, "invalid_request_error", "prompt is too long: 210000 tokens > 200000 maximum", ""},
	}
	body, _ := baseRequest().Body()
	for i, w := range want {
		resp := post(t, s.URL()+"/v1/messages", string(body), stdHeaders())
		if resp.StatusCode != w.status {
			t.Fatalf("attempt %d: status %d, want %d", i+1, resp.StatusCode, w.status)
		}
		if got := resp.Header.Get("retry-after"); got != w.retry {
			t.Errorf("attempt %d: retry-after %q, want %q", i+1, got, w.retry)
		}
		if got := resp.Header.Get("x-should-retry"); got != "" {
			t.Errorf("attempt %d: a scripted fault must leave retrying to the client, got x-should-retry %q", i+1, got)
		}
		e := readErrorBody(t, resp)
		if e.Error.Type != w.typ || e.Error.Message != w.message {
			t.Errorf("attempt %d: error %+v, want %s %q", i+1, e.Error, w.typ, w.message)
		}
	}
	_, events, err := send(t, s, baseRequest())
	if err != nil {
		t.Fatal(err)
	}
	if a := assemble(t, events); llm.TextOf(a.content) != "finally" {
		t.Errorf("content %+v", a.content)
	}
	reqs := s.Requests()
	if len(reqs) != 5 {
		t.Fatalf("%d requests recorded, want 5", len(reqs))
	}
	for i, r := range reqs {
		if r.TurnIndex != 0 || r.Attempt != i+1 {
			t.Errorf("request %d: turn %d attempt %d", i, r.TurnIndex, r.Attempt)
		}
		if (r.Fault == nil) != (i == 4) || (i < 4 && r.Fault.Status != want[i].status) {
			t.Errorf("request %d: fault %+v", i, r.Fault)
		}
		if (r.Response == nil) != (i < 4) {
			t.Errorf("request %d: response %v", i, r.Response)
		}
		if r.Done.Before(r.Received) {
			t.Errorf("request %d: done %v before received %v", i, r.Done, r.Received)
		}
	}
	if s.Remaining() != 0 {
		t.Errorf("remaining %d", s.Remaining())
	}
}

func TestCutMidToolInputThenRetry(t *testing.T) {
	input := map[string]any{"command": "grep -rn 'func main' --include='*.go' .", "timeout": 120000}
	turn := Reply(Text("Searching."), ToolUse("Bash", input))
	// message_start, ping, text (start, 1 delta, stop), tool start, "" delta,
	// then the input fragments: cut after the first real fragment.
	turn.Faults = []Fault{{CutAfter: 8}}
	s := New(t, turn, Reply(Text("done")))

	_, events, err := send(t, s, baseRequest())
	if err == nil || !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Fatalf("stream ended with %v, want an unexpected EOF (dropped connection)", err)
	}
	if len(events) != 8 {
		t.Fatalf("got %d events before the cut, want 8: %s", len(events), eventNames(events))
	}
	last := events[7]
	if !strings.Contains(last.data, `"input_json_delta"`) || strings.Contains(last.data, `"partial_json":""`) {
		t.Errorf("cut does not land mid input: last event %s", last.data)
	}
	firstID := s.Requests()[0].Response[1].ID

	_, events, err = send(t, s, baseRequest())
	if err != nil {
		t.Fatal(err)
	}
	a := assemble(t, events)
	want, _ := json.Marshal(input)
	if !sameJSON(a.content[1].Input, want) {
		t.Errorf("retried input %s, want %s", a.content[1].Input, want)
	}
	if a.content[1].ID == firstID {
		t.Errorf("the retry reused tool id %s: each attempt gets fresh ids", firstID)
	}
	reqs := s.Requests()
	if reqs[0].Fault == nil || reqs[0].Fault.CutAfter != 8 || reqs[0].Done.IsZero() || reqs[1].Attempt != 2 || reqs[1].Fault != nil {
		t.Errorf("requests: %+v / %+v", reqs[0], reqs[1])
	}
	if s.Remaining() != 1 {
		t.Errorf("remaining %d, want 1", s.Remaining())
	}
}

func TestErrorEventFault(t *testing.T) {
	turn := Reply(Text("hello there"))
	turn.Faults = []Fault{{CutAfter: 3, ErrorEvent: "overloaded_error"}, {ErrorEvent: "api_error", Message: "boom"}}
	s := New(t, turn)
	_, events, err := send(t, s, baseRequest())
	if err != nil {
		t.Fatalf("an error event ends the stream cleanly, got %v", err)
	}
	if got := eventNames(events); got != "message_start ping content_block_start error" {
		t.Fatalf("events %s", got)
	}
	if w := `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`; events[3].data != w {
		t.Errorf("error event %s\nwant %s", events[3].data, w)
	}
	_, events, err = send(t, s, baseRequest())
	if err != nil {
		t.Fatal(err)
	}
	if len(events) != 1 || events[0].data != `{"type":"error","error":{"type":"api_error","message":"boom"}}` {
		t.Errorf("events %v", events)
	}
	_, events, err = send(t, s, baseRequest())
	if err != nil || events[len(events)-1].name != "message_stop" {
		t.Errorf("third attempt: %v %s", err, eventNames(events))
	}
}

func TestScriptExhaustedLoopAndAppend(t *testing.T) {
	t.Run("exhausted", func(t *testing.T) {
		s, c := newCollecting(t, Options{Turns: []Turn{Reply(Text("one"))}})
		if _, _, err := send(t, s, baseRequest()); err != nil {
			t.Fatal(err)
		}
		body, _ := baseRequest().Body()
		resp := post(t, s.URL()+"/v1/messages", string(body), stdHeaders())
		if resp.StatusCode != 500 || resp.Header.Get("x-should-retry") != "false" {
			t.Errorf("status %d x-should-retry %q", resp.StatusCode, resp.Header.Get("x-should-retry"))
		}
		if e := readErrorBody(t, resp); e.Error.Type != "api_error" || !strings.Contains(e.Error.Message, "script exhausted after 1 turns") {
			t.Errorf("error %+v", e.Error)
		}
		if p := c.problems(); len(p) != 1 || p[0] != "script exhausted after 1 turns" {
			t.Errorf("violations %q", p)
		}
		if r := s.Requests()[1]; r.TurnIndex != 1 || len(r.Violations) != 1 {
			t.Errorf("request %+v", r)
		}

		s.Append(Reply(Text("two")))
		_, events, err := send(t, s, baseRequest())
		if err != nil {
			t.Fatal(err)
		}
		if got := llm.TextOf(assemble(t, events).content); got != "two" {
			t.Errorf("after Append got %q", got)
		}
	})
	t.Run("loop", func(t *testing.T) {
		s := Start(t, Options{Turns: []Turn{Reply(Text("a")), Reply(Text("b"))}, Loop: true})
		var got []string
		for range 5 {
			_, events, err := send(t, s, baseRequest())
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, llm.TextOf(assemble(t, events).content))
		}
		if strings.Join(got, "") != "ababa" {
			t.Errorf("looped answers %q", got)
		}
		if idx := s.Requests()[2].TurnIndex; idx != 0 {
			t.Errorf("third request turn index %d, want 0", idx)
		}
	})
	t.Run("invalid append", func(t *testing.T) {
		s, c := newCollecting(t, Options{})
		s.Append(Turn{Faults: []Fault{{}}})
		if p := c.problems(); len(p) != 1 || !strings.Contains(p[0], "turn 0: fault 0: empty fault") {
			t.Errorf("violations %q", p)
		}
		if s.Remaining() != 0 {
			t.Errorf("invalid turn was added")
		}
	})
}

// TestConversationEcho plays a client through a tool round trip and shows
// what the echo checks demand of the request after it.
func TestConversationEcho(t *testing.T) {
	script := func() []Turn {
		cut := Reply(Text("Let me check."), ToolUse("Read", map[string]any{"file_path": "/etc/hosts"}))
		cut.Faults = []Fault{{CutAfter: 6}}
		return []Turn{cut, Reply(Text("It maps localhost."))}
	}
	// first runs turn 0 through its broken attempt and returns the good one.
	first := func(t *testing.T, s *Server) (broken, good assembled) {
		t.Helper()
		if _, _, err := send(t, s, baseRequest()); err == nil {
			t.Fatal("the cut attempt completed")
		}
		broken = assembled{content: s.Requests()[0].Response}
		_, events, err := send(t, s, baseRequest())
		if err != nil {
			t.Fatal(err)
		}
		return broken, assemble(t, events)
	}
	followUp := func(assistant []llm.Block) *llm.Request {
		var results []llm.Block
		for _, b := range assistant {
			if b.Type == llm.TypeToolUse {
				results = append(results, llm.ToolResult(b.ID, "127.0.0.1 localhost", false))
			}
		}
		return baseRequest(userMsg(Text("hello")), llm.Message{Role: llm.RoleAssistant, Content: assistant}, userMsg(results...))
	}
	clone := func(bs []llm.Block) []llm.Block { return append([]llm.Block(nil), bs...) }

	t.Run("faithful client", func(t *testing.T) {
		s := New(t, script()...) // any violation fails this test
		_, good := first(t, s)
		if _, _, err := send(t, s, followUp(good.content)); err != nil {
			t.Fatal(err)
		}
	})
	cases := []struct {
		name   string
		mangle func(broken, good []llm.Block) []llm.Block
		want   string
	}{
		{"changed id", func(_, good []llm.Block) []llm.Block { good[1].ID = "toolu_made_up"; return good },
			"(Read) served in turn 0 is not in the assistant messages sent back"},
		{"changed input", func(_, good []llm.Block) []llm.Block {
			good[1].Input = json.RawMessage(`{"file_path":"/etc/passwd"}`)
			return good
		}, `was sent back with input {"file_path":"/etc/passwd"}; turn 0 served {"file_path":"/etc/hosts"}`},
		{"changed name", func(_, good []llm.Block) []llm.Block { good[1].Name = "Write"; return good },
			`was sent back with name "Write"; turn 0 served "Read"`},
		{"merged broken stream", func(broken, good []llm.Block) []llm.Block { return append(good, broken[1]) },
			"comes from the broken stream of turn 0 attempt 1"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s, c := newCollecting(t, Options{Turns: script()})
			broken, good := first(t, s)
			resp, _, err := send(t, s, followUp(tc.mangle(clone(broken.content), clone(good.content))))
			if err == nil || resp.StatusCode != 400 {
				t.Fatalf("mangled echo accepted")
			}
			probs := c.problems()
			if len(probs) == 0 || !slices.ContainsFunc(probs, func(p string) bool { return strings.Contains(p, tc.want) }) {
				t.Errorf("violations %q, want one containing %q", probs, tc.want)
			}
		})
	}
	t.Run("pinned id survives its broken attempt", func(t *testing.T) {
		turns := script()
		turns[0].Content[1].ID = "toolu_pinned"
		s := New(t, turns...)
		_, good := first(t, s)
		if good.content[1].ID != "toolu_pinned" {
			t.Fatalf("id %s", good.content[1].ID)
		}
		if _, _, err := send(t, s, followUp(good.content)); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("reordered keys are the same input", func(t *testing.T) {
		s := New(t, Reply(ToolUse("Edit", map[string]any{"a": 1, "b": "x"})), Reply(Text("ok")))
		_, events, err := send(t, s, baseRequest())
		if err != nil {
			t.Fatal(err)
		}
		a := assemble(t, events)
		a.content[0].Input = json.RawMessage(`{ "b": "x", "a": 1.0 }`)
		if _, _, err := send(t, s, followUp(a.content)); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("new conversation is not an echo", func(t *testing.T) {
		s := New(t, Reply(ToolUse("Agent", map[string]any{"prompt": "look"})), Reply(Text("sub done")))
		if _, _, err := send(t, s, baseRequest()); err != nil {
			t.Fatal(err)
		}
		// A subagent starts its own conversation: nothing to echo.
		if _, _, err := send(t, s, baseRequest(userMsg(Text("look")))); err != nil {
			t.Fatal(err)
		}
	})
}

func TestAbandonedTurnIsConsumedAndNotExpectedBack(t *testing.T) {
	slow := Reply(ToolUse("Bash", map[string]any{"command": "sleep 1"}))
	slow.Delay = time.Minute
	s := New(t, slow, Reply(Text("after interrupt")))
	body, _ := baseRequest().Body()
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, s.URL()+"/v1/messages", strings.NewReader(string(body)))
	req.Header = stdHeaders()
	errc := make(chan error, 1)
	go func() {
		resp, err := http.DefaultClient.Do(req)
		if err == nil {
			resp.Body.Close()
		}
		errc <- err
	}()
	for len(s.Requests()) == 0 {
		time.Sleep(time.Millisecond) // wait for the request to arrive
	}
	cancel()
	if err := <-errc; err == nil {
		t.Fatal("interrupted request succeeded")
	}
	// The client did not get the tool_use, so it is not expected back.
	prior := baseRequest(userMsg(Text("a")), llm.Message{Role: llm.RoleAssistant, Content: []llm.Block{Text("earlier answer")}}, userMsg(Text("b")))
	deadline := time.Now().Add(5 * time.Second)
	for {
		s.mu.Lock()
		pending := s.lastReq != nil
		s.mu.Unlock()
		if !pending || time.Now().After(deadline) {
			break
		}
		time.Sleep(time.Millisecond) // the handler notices the cancel asynchronously
	}
	_, events, err := send(t, s, prior)
	if err != nil {
		t.Fatal(err)
	}
	if got := llm.TextOf(assemble(t, events).content); got != "after interrupt" {
		t.Errorf("got %q", got)
	}
}

func TestDelay(t *testing.T) {
	d := Reply(Text("slow"))
	d.Delay = 30 * time.Millisecond
	s := New(t, d)
	start := time.Now()
	if _, _, err := send(t, s, baseRequest()); err != nil {
		t.Fatal(err)
	}
	if el := time.Since(start); el < d.Delay {
		t.Errorf("answered after %v, before the %v delay", el, d.Delay)
	}
}

func TestCloseEndsDelays(t *testing.T) {
	d := Reply(Text("never"))
	d.Delay = time.Hour
	s, err := NewServer(Options{Turns: []Turn{d}})
	if err != nil {
		t.Fatal(err)
	}
	body, _ := baseRequest().Body()
	go func() {
		req, _ := http.NewRequest(http.MethodPost, s.URL()+"/v1/messages", strings.NewReader(string(body)))
		req.Header = stdHeaders()
		if resp, err := http.DefaultClient.Do(req); err == nil {
			resp.Body.Close()
		}
	}()
	for len(s.Requests()) == 0 {
		time.Sleep(time.Millisecond)
	}
	done := make(chan struct{})
	go func() { s.Close(); close(done) }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("Close blocked on a delayed response")
	}
	s.Close() // idempotent
}

func TestCountTokensAndUnknownPaths(t *testing.T) {
	s, c := newCollecting(t, Options{})
	resp := post(t, s.URL()+"/v1/messages/count_tokens", `{"model":"m","messages":[{"role":"user","content":"hello there"}]}`, stdHeaders())
	var ct struct {
		InputTokens int `json:"input_tokens"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&ct); err != nil || resp.StatusCode != 200 || ct.InputTokens < 1 {
		t.Errorf("count_tokens: %d %+v %v", resp.StatusCode, ct, err)
	}
	if p := c.problems(); len(p) > 0 {
		t.Errorf("violations %q", p)
	}
	h := stdHeaders()
	h.Del("anthropic-version")
	if resp := post(t, s.URL()+"/v1/messages/count_tokens", `{"model":"m","messages":[]}`, h); resp.StatusCode != 400 {
		t.Errorf("bad count_tokens status %d", resp.StatusCode)
	}
	if p := c.problems(); len(p) != 2 || !strings.Contains(p[0], "anthropic-version") || p[1] != "messages is empty" {
		t.Errorf("violations %q", p)
	}
	if n := len(s.Requests()); n != 0 {
		t.Errorf("count_tokens recorded in Requests: %d", n)
	}

	resp = post(t, s.URL()+"/v1/v1/messages", body(hi), stdHeaders())
	if resp.StatusCode != 404 {
		t.Errorf("status %d", resp.StatusCode)
	}
	if e := readErrorBody(t, resp); e.Error.Type != "not_found_error" || !strings.Contains(e.Error.Message, "no such endpoint POST /v1/v1/messages") {
		t.Errorf("error %+v", e.Error)
	}
	if r := s.Requests(); len(r) != 1 || r[0].TurnIndex != -1 || r[0].Path != "/v1/v1/messages" {
		t.Errorf("requests %+v", r)
	}
}

// fakeTB records what New reports through the test.
type fakeTB struct {
	testing.TB
	mu     sync.Mutex
	errors []string
}

func (f *fakeTB) Errorf(format string, args ...any) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.errors = append(f.errors, fmt.Sprintf(format, args...))
}

func TestNewFailsTheTestOnViolation(t *testing.T) {
	tb := &fakeTB{TB: t}
	s := New(tb, Reply(Text("x")))
	resp := post(t, s.URL()+"/v1/messages", body(hi+`,{"role":"assistant","content":""},`+hi), stdHeaders())
	if resp.StatusCode != 400 {
		t.Errorf("status %d", resp.StatusCode)
	}
	tb.mu.Lock()
	defer tb.mu.Unlock()
	want := "llmtest: POST /v1/messages request #0 (turn 0, attempt 1): messages[1].content[0]: text content blocks must be non-empty"
	if len(tb.errors) != 1 || tb.errors[0] != want {
		t.Errorf("reported %q\nwant %q", tb.errors, want)
	}
}

func TestInvalidScripts(t *testing.T) {
	cases := map[string]struct {
		turn Turn
		want string
	}{
		"status and cut":      {Turn{Content: []llm.Block{Text("x")}, Faults: []Fault{{Status: 500, CutAfter: 2}}}, "fault 0: status cannot be combined"},
		"status not an error": {Turn{Faults: []Fault{{Status: 200}}}, "status 200 is not an HTTP error status"},
		"cut past the end":    {Turn{Content: []llm.Block{Text("x")}, Faults: []Fault{{CutAfter: 7}}}, "cut_after 7 but the turn has only 7 events"},
		"retry_after on cut":  {Turn{Content: []llm.Block{Text("x")}, Faults: []Fault{{CutAfter: 1, RetryAfter: "1"}}}, "retry_after needs status"},
		"tool_result":         {Reply(llm.ToolResult("toolu_x", "r", false)), `content[0]: a model cannot send a "tool_result" block`},
		"no name":             {Reply(llm.Block{Type: llm.TypeToolUse}), "tool_use without a name"},
		"input not object":    {Reply(llm.Block{Type: llm.TypeToolUse, Name: "A", Input: json.RawMessage(`"x"`)}), "input must be a JSON object"},
		"duplicate ids":       {Reply(llm.Block{Type: llm.TypeToolUse, Name: "A", ID: "t"}, llm.Block{Type: llm.TypeToolUse, Name: "B", ID: "t"}), `content[1]: duplicate id "t"`},
		"stop reason":         {Turn{StopReason: "tool-use"}, `unknown stop_reason "tool-use"`},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			_, err := NewServer(Options{Turns: []Turn{Reply(Text("fine")), tc.turn}})
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "turn 1: ") {
				t.Errorf("error %v, want %q in turn 1", err, tc.want)
			}
		})
	}
	if _, err := NewServer(Options{Addr: "256.0.0.1:1"}); err == nil || !strings.Contains(err.Error(), "listen") {
		t.Errorf("bad address: %v", err)
	}
}

func TestLoadScript(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	good := write("good.json", `[
	  {"content":[{"type":"text","text":"checking"},{"type":"tool_use","name":"Bash","input":{"command":"ls"}}],
	   "faults":[{"status":529},{"cut_after":5},{"cut_after":2,"error_event":"overloaded_error"}],
	   "delay_ms":15},
	  {"content":[{"type":"thinking","thinking":"ok"},{"type":"text","text":"done"}],"stop_reason":"end_turn",
	   "usage":{"input_tokens":5,"cache_creation_input_tokens":0,"cache_read_input_tokens":0,"output_tokens":2},"model":"m"}
	]`)
	turns, err := LoadScript(good)
	if err != nil {
		t.Fatal(err)
	}
	if len(turns) != 2 || turns[0].Delay != 15*time.Millisecond || len(turns[0].Faults) != 3 || turns[0].Faults[2].ErrorEvent != "overloaded_error" ||
		turns[0].Content[1].Name != "Bash" || turns[1].Usage.OutputTokens != 2 || turns[1].Content[0].Thinking != "ok" {
		t.Errorf("loaded %+v", turns)
	}
	// Round trip through the JSON form.
	enc, err := json.Marshal(turns)
	if err != nil {
		t.Fatal(err)
	}
	var back []Turn
	if err := json.Unmarshal(enc, &back); err != nil {
		t.Fatal(err)
	}
	if again, _ := json.Marshal(back); string(again) != string(enc) || !strings.Contains(string(enc), `"delay_ms":15`) {
		t.Errorf("round trip changed the script:\n%s\n%s", enc, again)
	}

	for name, tc := range map[string]struct{ content, want string }{
		"typo":        {`[{"content":[],"stop_reson":"end_turn"}]`, `unknown field "stop_reson"`},
		"fault typo":  {`[{"content":[{"type":"text","text":"x"}],"faults":[{"cut_afer":1}]}]`, `unknown field "cut_afer"`},
		"bad fault":   {`[{"content":[{"type":"text","text":"x"}],"faults":[{"cut_after":99}]}]`, "turn 0: fault 0: cut_after 99"},
		"not a list":  {`{"content":[]}`, "cannot unmarshal"},
		"neg delay":   {`[{"content":[],"delay_ms":-1}]`, "delay_ms -1 is negative"},
		"not json":    {`[`, "unexpected end"},
		"second turn": {`[{"content":[]},{"content":[{"type":"tool_use","input":{}}]}]`, "turn 1: content[0]: tool_use without a name"},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := LoadScript(write(name+".json", tc.content))
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), name+".json") {
				t.Errorf("error %v, want %q naming the file", err, tc.want)
			}
		})
	}
	if _, err := LoadScript(filepath.Join(dir, "missing.json")); err == nil {
		t.Error("missing file loaded")
	}
}

func TestConcurrentRequests(t *testing.T) {
	turns := make([]Turn, 41)
	for i := range turns {
		turns[i] = Reply(Text("hello"), ToolUse("Read", map[string]any{"file_path": "/x"}))
	}
	s := New(t, turns...)
	var wg sync.WaitGroup
	for range 20 {
		wg.Go(func() {
			// Each request starts a conversation, so no echo is expected.
			_, events, err := send(t, s, baseRequest())
			if err != nil {
				t.Error(err)
				return
			}
			if events[len(events)-1].name != "message_stop" {
				t.Errorf("incomplete stream: %s", eventNames(events))
			}
			_ = s.Requests()
		})
	}
	wg.Wait()
	reqs := s.Requests()
	seen := map[int]bool{}
	for _, r := range reqs {
		if seen[r.TurnIndex] {
			t.Errorf("turn %d served twice", r.TurnIndex)
		}
		seen[r.TurnIndex] = true
	}
	if len(reqs) != 20 || s.Remaining() != 21 {
		t.Errorf("%d requests, %d remaining", len(reqs), s.Remaining())
	}
}

func TestIDsUniqueAcrossServers(t *testing.T) {
	a, b := New(t, Reply(ToolUse("A", nil))), New(t, Reply(ToolUse("A", nil)))
	_, ea, errA := send(t, a, baseRequest())
	_, eb, errB := send(t, b, baseRequest())
	if errA != nil || errB != nil {
		t.Fatal(errA, errB)
	}
	// Both servers' first tool id: a resumed session mixes servers, and the
	// API rejects duplicate ids.
	if ia, ib := assemble(t, ea).content[0].ID, assemble(t, eb).content[0].ID; ia == ib {
		t.Errorf("two servers handed out the same id %s", ia)
	}
	// The tool_use id is pinned when the script sets one.
	pinned := ToolUse("A", nil)
	pinned.ID = "toolu_pinned"
	c := New(t, Reply(pinned))
	_, ec, err := send(t, c, baseRequest())
	if err != nil {
		t.Fatal(err)
	}
	if id := assemble(t, ec).content[0].ID; id != "toolu_pinned" {
		t.Errorf("pinned id became %s", id)
	}
}

func TestRequestHelpers(t *testing.T) {
	s := New(t, Reply(Text("ok")))
	cc := &llm.CacheControl{Type: "ephemeral"}
	req := baseRequest(
		userMsg(Text("first")),
		llm.Message{Role: llm.RoleAssistant, Content: []llm.Block{{Type: llm.TypeToolUse, ID: "toolu_1", Name: "Read", Input: json.RawMessage(`{}`)}}},
		llm.Message{Role: llm.RoleUser, Content: []llm.Block{
			{Type: llm.TypeToolResult, ToolUseID: "toolu_1", Content: []llm.Block{{Type: llm.TypeText, Text: "r", CacheControl: cc}}},
			{Type: llm.TypeText, Text: "now this", CacheControl: cc},
		}},
	)
	req.System = []llm.Block{Text("You are "), {Type: llm.TypeText, Text: "tack.", CacheControl: cc}}
	req.Tools = []llm.ToolSpec{{Name: "Read", InputSchema: json.RawMessage(objSchema)}, {Raw: json.RawMessage(`{"type":"web_search_20250305","name":"web_search"}`)}}
	if _, _, err := send(t, s, req); err != nil {
		t.Fatal(err)
	}
	r := s.Requests()[0]
	if got := r.ToolNames(); !slices.Equal(got, []string{"Read", "web_search"}) {
		t.Errorf("ToolNames %v", got)
	}
	if r.Tool("web_search") == nil || r.Tool("Nope") != nil {
		t.Errorf("Tool lookup")
	}
	if r.SystemText() != "You are tack." || r.LastUserText() != "now this" {
		t.Errorf("SystemText %q LastUserText %q", r.SystemText(), r.LastUserText())
	}
	if res := r.ToolResults(); len(res) != 1 || res[0].ToolUseID != "toolu_1" {
		t.Errorf("ToolResults %+v", res)
	}
	if res, ok := r.ToolResult("toolu_1"); !ok || llm.TextOf(res.Content) != "r" {
		t.Errorf("ToolResult %+v %v", res, ok)
	}
	if n := r.CacheBreakpoints(); n != 3 {
		t.Errorf("CacheBreakpoints %d, want 3", n)
	}
	if r.Model != "claude-test-1" || r.MaxTokens != 1024 || !r.Stream || len(r.Messages) != 3 || r.Header.Get("x-api-key") != "test-key" {
		t.Errorf("decoded request %+v", r)
	}
}

func TestSplit(t *testing.T) {
	for _, tc := range []struct {
		s string
		n int
	}{{"", 3}, {"a", 3}, {"hello world", 4}, {"a€", 2}, {"€€€a", 4}, {"日本語のテキスト", 3}, {"ab", 6}} {
		parts := split(tc.s, tc.n)
		if strings.Join(parts, "") != tc.s {
			t.Errorf("split(%q, %d) = %q does not rejoin", tc.s, tc.n, parts)
		}
		if len(parts) > tc.n || (tc.s != "" && len(parts) != min(tc.n, len([]rune(tc.s)))) {
			t.Errorf("split(%q, %d) gave %d pieces", tc.s, tc.n, len(parts))
		}
		for _, p := range parts {
			if p == "" || !strings.HasPrefix(p, string([]rune(p)[0])) || strings.ContainsRune(p, '\uFFFD') {
				t.Errorf("split(%q, %d): bad piece %q", tc.s, tc.n, p)
			}
		}
	}
}

func BenchmarkRoundTrip(b *testing.B) {
	s, err := NewServer(Options{Turns: []Turn{Reply(Text("Looking at it."), ToolUse("Read", map[string]any{"file_path": "/src/main.go"}))}, Loop: true, DiscardRequests: true})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	schema := json.RawMessage(objSchema)
	var tools []llm.ToolSpec
	for _, n := range []string{"Bash", "Read", "Write", "Edit", "Glob", "Grep", "WebFetch", "Agent"} {
		tools = append(tools, llm.ToolSpec{Name: n, Description: strings.Repeat("describe ", 300), InputSchema: schema})
	}
	req := &llm.Request{Model: "m", MaxTokens: 1000, Tools: tools, System: []llm.Block{Text(strings.Repeat("prompt ", 1000))},
		Messages: []llm.Message{userMsg(Text("go"))}}
	body, _ := req.Body()
	client := &http.Client{}
	b.SetBytes(int64(len(body)))
	b.ResetTimer()
	for b.Loop() {
		hr, _ := http.NewRequest(http.MethodPost, s.URL()+"/v1/messages", strings.NewReader(string(body)))
		hr.Header = stdHeaders()
		resp, err := client.Do(hr)
		if err != nil {
			b.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 {
			b.Fatal(resp.StatusCode)
		}
	}
}

func TestByConversationServesEachConversationFromItsStart(t *testing.T) {
	srv := Start(t, Options{ByConversation: true, Turns: []Turn{
		Reply(ToolUse("Read", map[string]string{"file_path": "/x"})),
		Reply(Text("done")),
	}})
	p := anthropicLike(t, srv)
	// Two independent conversations interleave; each gets turn 0 first.
	first := p(t, `[{"role":"user","content":"a"}]`)
	second := p(t, `[{"role":"user","content":"b"}]`)
	if !strings.Contains(first, `"tool_use"`) || !strings.Contains(second, `"tool_use"`) {
		t.Fatalf("both conversations should start with turn 0:\n%s\n%s", first, second)
	}
	reqs := srv.Requests()
	if reqs[0].TurnIndex != 0 || reqs[1].TurnIndex != 0 {
		t.Errorf("turn indexes %d %d", reqs[0].TurnIndex, reqs[1].TurnIndex)
	}
	if _, err := NewServer(Options{ByConversation: true, Turns: []Turn{{Content: []llm.Block{Text("x")}, Faults: []Fault{{Status: 529}}}}}); err == nil {
		t.Error("faults accepted in ByConversation mode")
	}
}

// anthropicLike returns a function posting a messages array and returning the SSE body.
func anthropicLike(t *testing.T, srv *Server) func(*testing.T, string) string {
	return func(t *testing.T, messages string) string {
		t.Helper()
		body := `{"model":"m","max_tokens":10,"stream":true,"messages":` + messages + `}`
		req, _ := http.NewRequest("POST", srv.URL()+"/v1/messages", strings.NewReader(body))
		req.Header.Set("x-api-key", "k")
		req.Header.Set("anthropic-version", "2023-06-01")
		req.Header.Set("content-type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return string(b)
	}
}

func TestWhenServesEachRequestTheFirstTurnThatAcceptsIt(t *testing.T) {
	var violations []string
	srv, err := NewServer(Options{OnViolation: func(err error) { violations = append(violations, err.Error()) }, Turns: []Turn{
		{Content: []llm.Block{Text("for b")}, When: FirstUserContains("b")},
		{Content: []llm.Block{Text("for a")}, When: FirstUserContains("a")},
		Reply(Text("anyone")),
	}})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	p := anthropicLike(t, srv)
	if got := p(t, `[{"role":"user","content":"a"}]`); !strings.Contains(got, "for a") {
		t.Fatalf("request a got %s", got)
	}
	if got := p(t, `[{"role":"user","content":"a"}]`); !strings.Contains(got, "anyone") {
		t.Fatalf("second request a got %s", got)
	}
	if got := p(t, `[{"role":"user","content":"b"}]`); !strings.Contains(got, "for b") {
		t.Fatalf("request b got %s", got)
	}
	if srv.Remaining() != 0 {
		t.Errorf("remaining %d", srv.Remaining())
	}
	p(t, `[{"role":"user","content":"c"}]`)
	if len(violations) != 1 || !strings.Contains(violations[0], "no unserved turn") {
		t.Errorf("violations %q", violations)
	}
	if _, err := NewServer(Options{Turns: []Turn{{Content: []llm.Block{Text("x")}, When: FirstUserContains("x"), Faults: []Fault{{Status: 529}}}}}); err == nil {
		t.Error("faults accepted with When")
	}
}

// A server that discards its requests still tells OnAnswered of each one,
// once its answer is out, with the turn it was served and its timings.
func TestOnAnsweredWhileDiscarding(t *testing.T) {
	answered := make(chan Request, 2)
	s, err := NewServer(Options{Turns: []Turn{Reply(Text("one")), Reply(Text("two"))}, DiscardRequests: true,
		OnAnswered: func(r Request) { answered <- r }})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for i := range 2 {
		if _, _, err := send(t, s, &llm.Request{Model: "m", MaxTokens: 10, Messages: []llm.Message{userMsg(Text("go"))}}); err != nil {
			t.Fatal(err)
		}
		r := <-answered
		if r.TurnIndex != i || r.Received.IsZero() || r.Done.Before(r.Received) {
			t.Errorf("request %d: turn %d, received %v, done %v", i, r.TurnIndex, r.Received, r.Done)
		}
	}
	if got := len(s.Requests()); got != 0 {
		t.Errorf("%d requests kept by a server that discards them", got)
	}
}
