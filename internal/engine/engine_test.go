package engine

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tackcode/tack/internal/llm"
	"github.com/tackcode/tack/internal/llm/anthropic"
	"github.com/tackcode/tack/internal/llm/llmtest"
	"github.com/tackcode/tack/internal/protocol"
	"github.com/tackcode/tack/internal/shell"
	"github.com/tackcode/tack/internal/tool"
)

// testTool is a tool whose behaviour a test scripts with a function.
type testTool struct {
	name     string
	readOnly bool
	run      func(ctx context.Context, input json.RawMessage) (tool.Result, error)
	runEnv   func(ctx context.Context, env *tool.Env) (tool.Result, error)
}

func (t *testTool) Name() string        { return t.name }
func (t *testTool) Description() string { return "test tool " + t.name }
func (t *testTool) InputSchema() json.RawMessage {
	return json.RawMessage(`{"type":"object","properties":{"n":{"type":"integer"},"text":{"type":"string"}},"additionalProperties":false}`)
}
func (t *testTool) ReadOnly(json.RawMessage) bool { return t.readOnly }
func (t *testTool) Run(ctx context.Context, env *tool.Env, input json.RawMessage) (tool.Result, error) {
	if t.runEnv != nil {
		return t.runEnv(ctx, env)
	}
	return t.run(ctx, input)
}

func echoTool(name string, readOnly bool) *testTool {
	return &testTool{name: name, readOnly: readOnly, run: func(_ context.Context, in json.RawMessage) (tool.Result, error) {
		return tool.TextResult(name+" got "+string(in), map[string]string{"echo": string(in)}), nil
	}}
}

// memRecorder keeps recorded messages.
type memRecorder struct {
	mu    sync.Mutex
	msgs  []protocol.Message
	syncs int
}

func (m *memRecorder) Record(msg protocol.Message) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.msgs = append(m.msgs, msg)
	return nil
}

func (m *memRecorder) Sync() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.syncs++
	return nil
}

// orderRecorder notes, at each sync, how many messages had been emitted,
// and fails its syncs with err.
type orderRecorder struct {
	emitted *[]protocol.Message
	at      []int
	err     error
}

func (o *orderRecorder) Record(protocol.Message) error { return nil }
func (o *orderRecorder) Sync() error {
	o.at = append(o.at, len(*o.emitted))
	return o.err
}

// flushRecorder is an orderRecorder that holds a record back until Flush.
type flushRecorder struct {
	orderRecorder
	flushedAt []int
}

func (f *flushRecorder) Flush() error {
	f.flushedAt = append(f.flushedAt, len(*f.emitted))
	return nil
}

// A recorder that holds records back writes them before the result goes
// out, so that a reader of the result finds the transcript complete; the
// sync still comes after the result.
func TestTurnRecordsAreWrittenBeforeTheResult(t *testing.T) {
	var emitted []protocol.Message
	rec := &flushRecorder{orderRecorder: orderRecorder{emitted: &emitted}}
	h := newHarness(t, nil, []llmtest.Turn{llmtest.Reply(llmtest.Text("hi"))}, func(c *Config) { c.Recorder = rec })
	res := h.sess.Run(context.Background(), []llm.Block{llm.Text("say hi")}, func(m protocol.Message) { emitted = append(emitted, m) })
	if res.IsError || emitted[len(emitted)-1] != protocol.Message(res) {
		t.Fatalf("result %+v", res)
	}
	if len(rec.flushedAt) != 1 || rec.flushedAt[0] != len(emitted)-1 {
		t.Errorf("flushed after %v of %d emitted messages, want once just before the result", rec.flushedAt, len(emitted))
	}
	if len(rec.at) != 1 || rec.at[0] != len(emitted) {
		t.Errorf("synced after %v of %d emitted messages, want once after the result", rec.at, len(emitted))
	}
}

// The result is out before the transcript is synced (a crash after the
// lines are written loses none of them), and a sync that fails, too late
// for the result, is told to the user.
func TestResultGoesOutBeforeTheTranscriptSync(t *testing.T) {
	var emitted []protocol.Message
	var notes []string
	rec := &orderRecorder{emitted: &emitted, err: errors.New("disk on fire")}
	h := newHarness(t, nil, []llmtest.Turn{llmtest.Reply(llmtest.Text("hi"))}, func(c *Config) {
		c.Recorder = rec
		c.Notify = func(m string) { notes = append(notes, m) }
	})
	res := h.sess.Run(context.Background(), []llm.Block{llm.Text("say hi")}, func(m protocol.Message) { emitted = append(emitted, m) })
	if res.IsError || len(res.Errors) != 0 {
		t.Fatalf("result %+v", res)
	}
	if len(rec.at) != 1 || rec.at[0] != len(emitted) || emitted[len(emitted)-1] != protocol.Message(res) {
		t.Fatalf("synced after %v of %d emitted messages, want once after the result", rec.at, len(emitted))
	}
	if !slices.Contains(notes, "transcript: disk on fire") {
		t.Errorf("notes %q: the failed sync was not told", notes)
	}
}

type harness struct {
	srv      *llmtest.Server
	sess     *Session
	rec      *memRecorder
	emitted  []protocol.Message
	provider *anthropic.Provider
}

func newHarness(t *testing.T, tools []tool.Tool, turns []llmtest.Turn, tweak func(*Config)) *harness {
	t.Helper()
	srv := llmtest.New(t, turns...)
	p := anthropic.New(anthropic.Config{APIKey: "test", BaseURL: srv.URL(), MaxRetries: 3})
	dir := t.TempDir()
	rec := &memRecorder{}
	fe := &freshEncoding{t: t, inner: p}
	cfg := Config{
		Provider: fe,
		Model:    llm.Catalogue().Resolve("haiku", func(string) string { return "" }),
		System:   []llm.Block{llm.Text("identity"), llm.Text("main prompt")},
		Tools:    tool.NewRegistry(tools...),
		Env: &tool.Env{ProjectDir: dir, Shell: shell.New(dir, nil), Files: tool.NewFileState(), ScratchDir: t.TempDir(),
			Model: tool.ModelCaller{Provider: p, Small: "claude-haiku-4-5", Main: "claude-haiku-4-5"}},
		Recorder: rec,
	}
	if tweak != nil {
		tweak(&cfg)
	}
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	fe.sess = s
	return &harness{srv: srv, sess: s, rec: rec, provider: p}
}

// freshEncoding checks that every request the engine sends encodes, through
// its encode cache, to exactly the bytes a fresh encoding gives: the cache
// must never send a stale message, whatever the test does to the history
// (tool results, interrupts, compaction, rewinds). It also checks that the
// request's messages are the session's history, but for the breakpoints
// on copies: the array the engine extends from request to request must
// never hold a stale message either.
type freshEncoding struct {
	t     *testing.T
	inner llm.Provider
	sess  *Session // set once the session exists
}

func (f *freshEncoding) Stream(ctx context.Context, req *llm.Request, obs llm.Observer) (*llm.Response, error) {
	if req.Cache != nil {
		cached, err := req.Body()
		if err != nil {
			return nil, err
		}
		fresh := *req
		fresh.Cache = nil
		want, err := fresh.Body()
		if err != nil {
			return nil, err
		}
		if !bytes.Equal(cached, want) {
			f.t.Errorf("the encode cache changed the request body:\ncached %s\nfresh  %s", cached, want)
		}
		if f.sess != nil {
			if i, ok := sameUnmarked(req.Messages, f.sess.Messages()); !ok {
				f.t.Errorf("request message %d is not the history's: %+v", i, req.Messages[min(i, len(req.Messages)-1)])
			}
		}
	}
	return f.inner.Stream(ctx, req, obs)
}

// sameUnmarked reports whether sent is a prefix of history, block by block,
// but for their cache breakpoints, and where it is not.
func sameUnmarked(sent, history []llm.Message) (int, bool) {
	if len(sent) > len(history) {
		return len(history), false
	}
	for i := range sent {
		a, b := sent[i], history[i]
		if a.Role != b.Role || len(a.Content) != len(b.Content) {
			return i, false
		}
		for j := range a.Content {
			x, y := a.Content[j], b.Content[j]
			x.CacheControl, y.CacheControl = nil, nil
			if !reflect.DeepEqual(x, y) {
				return i, false
			}
		}
	}
	return 0, true
}

func (h *harness) run(ctx context.Context, prompt string) *protocol.Result {
	return h.sess.Run(ctx, []llm.Block{llm.Text(prompt)}, func(m protocol.Message) { h.emitted = append(h.emitted, m) })
}

func TestTextTurn(t *testing.T) {
	h := newHarness(t, nil, []llmtest.Turn{{
		Content: []llm.Block{llmtest.Text("hello there")},
		Usage:   &llm.Usage{InputTokens: 1000, OutputTokens: 100},
	}}, nil)
	res := h.run(context.Background(), "say hi")
	if res.IsError || res.Subtype != protocol.ResultSuccess || res.Text() != "hello there" {
		t.Fatalf("result %+v", res)
	}
	if res.NumTurns != 1 {
		t.Errorf("num_turns %d", res.NumTurns)
	}
	// haiku: $1/M in, $5/M out.
	want := 1000*1e-6 + 100*5e-6
	if diff := res.TotalCostUSD - want; diff > 1e-12 || diff < -1e-12 {
		t.Errorf("cost %v, want %v", res.TotalCostUSD, want)
	}
	mu, ok := res.ModelUsage["claude-haiku-4-5"]
	if !ok || mu.InputTokens != 1000 || mu.OutputTokens != 100 || mu.ContextWindow != 200000 {
		t.Errorf("modelUsage %+v", res.ModelUsage)
	}
	if res.Usage.InputTokens != 1000 || res.Usage.OutputTokens != 100 {
		t.Errorf("usage %+v", res.Usage)
	}
	if last := h.emitted[len(h.emitted)-1]; last != protocol.Message(res) {
		t.Errorf("result not emitted last")
	}
	reqs := h.srv.Requests()
	if len(reqs) != 1 || reqs[0].LastUserText() != "say hi" {
		t.Fatalf("requests %+v", reqs)
	}
	// The prompt and the answer are in the transcript.
	if len(h.rec.msgs) != 2 {
		t.Fatalf("recorded %d messages", len(h.rec.msgs))
	}
	if _, ok := h.rec.msgs[0].(*protocol.User); !ok {
		t.Errorf("first record %T", h.rec.msgs[0])
	}
	if h.rec.syncs == 0 {
		t.Errorf("transcript never synced")
	}
}

func TestReadOnlyCallsRunInParallelAndMutatingInOrder(t *testing.T) {
	// The three read-only calls meet at a barrier: they can only all get
	// past it if they run at the same time.
	var arrived sync.WaitGroup
	arrived.Add(3)
	barrier := make(chan struct{})
	go func() { arrived.Wait(); close(barrier) }()
	reader := &testTool{name: "Look", readOnly: true, run: func(ctx context.Context, in json.RawMessage) (tool.Result, error) {
		arrived.Done()
		select {
		case <-barrier:
			return tool.TextResult("seen "+string(in), nil), nil
		case <-time.After(10 * time.Second):
			return tool.Result{}, fmt.Errorf("read-only calls did not run in parallel")
		}
	}}
	var running, maxRunning atomic.Int32
	var order []string
	var mu sync.Mutex
	writer := &testTool{name: "Change", run: func(ctx context.Context, in json.RawMessage) (tool.Result, error) {
		n := running.Add(1)
		defer running.Add(-1)
		if n > maxRunning.Load() {
			maxRunning.Store(n)
		}
		time.Sleep(5 * time.Millisecond)
		mu.Lock()
		order = append(order, string(in))
		mu.Unlock()
		return tool.TextResult("changed", nil), nil
	}}
	h := newHarness(t, []tool.Tool{reader, writer}, []llmtest.Turn{
		{Content: []llm.Block{
			llmtest.ToolUse("Look", map[string]int{"n": 1}),
			llmtest.ToolUse("Look", map[string]int{"n": 2}),
			llmtest.ToolUse("Look", map[string]int{"n": 3}),
			llmtest.ToolUse("Change", map[string]int{"n": 4}),
			llmtest.ToolUse("Change", map[string]int{"n": 5}),
			llmtest.ToolUse("Change", map[string]int{"n": 6}),
		}},
		{Content: []llm.Block{llmtest.Text("done")}},
	}, nil)
	res := h.run(context.Background(), "go")
	if res.IsError {
		t.Fatalf("result %+v", res)
	}
	if got := strings.Join(order, ","); got != `{"n":4},{"n":5},{"n":6}` {
		t.Errorf("mutating calls ran in order %s", got)
	}
	if maxRunning.Load() != 1 {
		t.Errorf("%d mutating calls overlapped", maxRunning.Load())
	}
	second := h.srv.Requests()[1]
	results := second.ToolResults()
	if len(results) != 6 {
		t.Fatalf("%d results in one message", len(results))
	}
	for i, r := range results {
		if r.IsError {
			t.Errorf("result %d is an error: %s", i, llm.TextOf(r.Content))
		}
	}
	if !strings.HasPrefix(llm.TextOf(results[0].Content), `seen {"n":1}`) {
		t.Errorf("first result %q", llm.TextOf(results[0].Content))
	}
	// One user message per result was emitted, in call order.
	var users []*protocol.User
	for _, m := range h.emitted {
		if u, ok := m.(*protocol.User); ok {
			users = append(users, u)
		}
	}
	if len(users) != 6 || users[0].Message.Content[0].ToolUseID != results[0].ToolUseID {
		t.Errorf("emitted user messages: %d", len(users))
	}
}

func TestMaxTurnsStopsAfterToolTurn(t *testing.T) {
	h := newHarness(t, []tool.Tool{echoTool("Echo", true)}, []llmtest.Turn{
		{Content: []llm.Block{llmtest.ToolUse("Echo", map[string]string{"text": "x"})}},
	}, func(c *Config) { c.MaxTurns = 1 })
	res := h.run(context.Background(), "go")
	if res.Subtype != protocol.ResultMaxTurns || !res.IsError || res.NumTurns != 2 {
		t.Fatalf("result %+v", res)
	}
	if len(res.Errors) != 1 || res.Errors[0] != "Reached maximum number of turns (1)" {
		t.Errorf("errors %q", res.Errors)
	}
	if res.Result != nil {
		t.Errorf("result text on error")
	}
	if len(h.srv.Requests()) != 1 {
		t.Errorf("%d requests", len(h.srv.Requests()))
	}
}

func TestMaxBudget(t *testing.T) {
	h := newHarness(t, []tool.Tool{echoTool("Echo", true)}, []llmtest.Turn{
		{Content: []llm.Block{llmtest.ToolUse("Echo", map[string]string{"text": "x"})},
			Usage: &llm.Usage{InputTokens: 2_000_000, OutputTokens: 10}},
		{Content: []llm.Block{llmtest.Text("never")}},
	}, func(c *Config) { c.MaxBudgetUSD = 1 })
	res := h.run(context.Background(), "go")
	if res.Subtype != protocol.ResultMaxBudget || !res.IsError {
		t.Fatalf("result %+v", res)
	}
	if res.TotalCostUSD < 1 {
		t.Errorf("cost %v", res.TotalCostUSD)
	}
	if len(h.srv.Requests()) != 1 {
		t.Errorf("a request was made past the budget")
	}
}

func TestBadToolCallsBecomeToolUseErrors(t *testing.T) {
	h := newHarness(t, []tool.Tool{echoTool("Echo", true)}, []llmtest.Turn{
		{Content: []llm.Block{
			llmtest.ToolUse("Nope", map[string]string{}),
			llmtest.ToolUse("Echo", map[string]any{"n": "not a number"}),
			llmtest.MalformedToolUse("Echo", `{"text": "unterminated`),
		}, MalformedInput: true},
		{Content: []llm.Block{llmtest.Text("ok")}},
	}, nil)
	res := h.run(context.Background(), "go")
	if res.IsError {
		t.Fatalf("result %+v", res)
	}
	results := h.srv.Requests()[1].ToolResults()
	if len(results) != 3 {
		t.Fatalf("%d results", len(results))
	}
	wants := []string{"No such tool available: Nope", "InputValidationError", "not a JSON object"}
	for i, r := range results {
		text := llm.TextOf(r.Content)
		if !r.IsError || !strings.HasPrefix(text, "<tool_use_error>") || !strings.Contains(text, wants[i]) {
			t.Errorf("result %d: error=%v %q", i, r.IsError, text)
		}
	}
	// The malformed input went back to the API as a valid object.
	asst := h.srv.Requests()[1].Messages[1]
	if string(asst.Content[2].Input) != "{}" {
		t.Errorf("malformed input sent back as %s", asst.Content[2].Input)
	}
}

func TestPanickingToolDoesNotEndTheSession(t *testing.T) {
	boom := &testTool{name: "Boom", run: func(context.Context, json.RawMessage) (tool.Result, error) { panic("kaboom") }}
	h := newHarness(t, []tool.Tool{boom}, []llmtest.Turn{
		{Content: []llm.Block{llmtest.ToolUse("Boom", map[string]int{})}},
		{Content: []llm.Block{llmtest.Text("survived")}},
	}, nil)
	res := h.run(context.Background(), "go")
	if res.IsError || res.Text() != "survived" {
		t.Fatalf("result %+v", res)
	}
	r := h.srv.Requests()[1].ToolResults()[0]
	if !r.IsError || !strings.Contains(llm.TextOf(r.Content), "kaboom") {
		t.Errorf("result %+v", r)
	}
}

func TestGateDenial(t *testing.T) {
	var ran atomic.Bool
	danger := &testTool{name: "Danger", run: func(context.Context, json.RawMessage) (tool.Result, error) {
		ran.Store(true)
		return tool.TextResult("ran", nil), nil
	}}
	h := newHarness(t, []tool.Tool{danger}, []llmtest.Turn{
		{Content: []llm.Block{llmtest.ToolUse("Danger", map[string]int{"n": 7})}},
		{Content: []llm.Block{llmtest.Text("ok")}},
	}, func(c *Config) {
		c.Gate = testGate{check: func(call ToolCall) Verdict {
			return Verdict{Behavior: Deny, Message: "no " + call.Name, Unattended: true}
		}}
	})
	res := h.run(context.Background(), "go")
	if ran.Load() {
		t.Fatal("denied tool ran")
	}
	if len(res.PermissionDenials) != 1 || res.PermissionDenials[0].ToolName != "Danger" ||
		string(res.PermissionDenials[0].ToolInput) != `{"n":7}` {
		t.Errorf("denials %+v", res.PermissionDenials)
	}
	r := h.srv.Requests()[1].ToolResults()[0]
	if !r.IsError || llm.TextOf(r.Content) != "no Danger" {
		t.Errorf("result %+v", r)
	}
	var sawDenied bool
	for _, m := range h.emitted {
		if s, ok := m.(*protocol.System); ok && s.Subtype == protocol.SubtypePermissionDenied {
			sawDenied = s.ToolName == "Danger"
		}
	}
	if !sawDenied {
		t.Errorf("no permission_denied message")
	}
}

func TestInterruptDuringTool(t *testing.T) {
	started := make(chan struct{})
	slow := &testTool{name: "Slow", run: func(ctx context.Context, _ json.RawMessage) (tool.Result, error) {
		close(started)
		<-ctx.Done()
		return tool.Result{Content: []llm.Block{llm.Text("interrupted")}, IsError: true}, nil
	}}
	h := newHarness(t, []tool.Tool{slow, echoTool("Echo", false)}, []llmtest.Turn{
		{Content: []llm.Block{llmtest.ToolUse("Slow", map[string]int{}), llmtest.ToolUse("Echo", map[string]int{})}},
	}, nil)
	ctx, cancel := context.WithCancel(context.Background())
	go func() { <-started; cancel() }()
	res := h.run(ctx, "go")
	if res.Subtype != protocol.ResultDuringExecution || res.TerminalReason != "aborted_tools" {
		t.Fatalf("result %+v", res)
	}
	msgs := h.sess.Messages()
	last := msgs[len(msgs)-1]
	if last.Role != llm.RoleUser || len(last.Content) != 3 {
		t.Fatalf("last message %+v", last)
	}
	if !strings.Contains(llm.TextOf(last.Content[1].Content), "interrupted by the user") {
		t.Errorf("unstarted call result %q", llm.TextOf(last.Content[1].Content))
	}
	if last.Content[2].Text != "[Request interrupted by user for tool use]" {
		t.Errorf("note %q", last.Content[2].Text)
	}
	// The transcript ends with the interruption note.
	lastRec := h.rec.msgs[len(h.rec.msgs)-1].(*protocol.User)
	if llm.TextOf(lastRec.Message.Content) != "[Request interrupted by user for tool use]" {
		t.Errorf("transcript does not record the interruption: %+v", lastRec)
	}
}

func TestLoopDetection(t *testing.T) {
	var turns []llmtest.Turn
	for i := 0; i < 10; i++ {
		turns = append(turns, llmtest.Turn{Content: []llm.Block{llmtest.ToolUse("Echo", map[string]string{"text": "same"})}})
	}
	h := newHarness(t, []tool.Tool{echoTool("Echo", true)}, turns, func(c *Config) { c.Loop = LoopLimit{Threshold: 4} })
	res := h.run(context.Background(), "go")
	if res.Subtype != protocol.ResultDuringExecution || res.TerminalReason != "loop_detected" {
		t.Fatalf("result %+v", res)
	}
	if !strings.Contains(res.Errors[0], "same Echo call") {
		t.Errorf("error %q", res.Errors[0])
	}
	if n := len(h.srv.Requests()); n != 4 {
		t.Errorf("%d requests before stopping", n)
	}
}

func TestCacheBreakpointsAndStablePrefix(t *testing.T) {
	h := newHarness(t, []tool.Tool{echoTool("Echo", true)}, []llmtest.Turn{
		{Content: []llm.Block{llmtest.ToolUse("Echo", map[string]string{"text": "a"}), llmtest.ToolUse("Echo", map[string]string{"text": "b"})}},
		{Content: []llm.Block{llmtest.ToolUse("Echo", map[string]string{"text": "c"})}},
		{Content: []llm.Block{llmtest.Text("done")}},
	}, nil)
	if res := h.run(context.Background(), "go"); res.IsError {
		t.Fatalf("result %+v", res)
	}
	reqs := h.srv.Requests()
	if len(reqs) != 3 {
		t.Fatalf("%d requests", len(reqs))
	}
	if n := reqs[0].CacheBreakpoints(); n != 2 {
		t.Errorf("first request has %d breakpoints, want 2 (system, last message)", n)
	}
	for i, r := range reqs[1:] {
		if n := r.CacheBreakpoints(); n != 3 {
			t.Errorf("request %d has %d breakpoints, want 3", i+2, n)
		}
		// The previous request's last message keeps its breakpoint.
		prevLast := len(reqs[i].Messages) - 1
		m := r.Messages[prevLast]
		if m.Content[len(m.Content)-1].CacheControl == nil {
			t.Errorf("request %d: no breakpoint where the previous request ended", i+2)
		}
	}
	// System and tools are byte-identical across requests.
	for _, r := range reqs[1:] {
		if r.SystemText() != reqs[0].SystemText() || string(mustJSON(r.Tools)) != string(mustJSON(reqs[0].Tools)) {
			t.Errorf("the cached prefix changed between requests")
		}
	}
	// History is not modified by the marks: the engine's copy has none.
	for _, m := range h.sess.Messages() {
		for _, b := range m.Content {
			if b.CacheControl != nil {
				t.Fatalf("a breakpoint leaked into the conversation history")
			}
		}
	}
}

func TestRetryAfterOverloadRunsToolsOnce(t *testing.T) {
	var runs atomic.Int32
	counter := &testTool{name: "Count", run: func(context.Context, json.RawMessage) (tool.Result, error) {
		runs.Add(1)
		return tool.TextResult("counted", nil), nil
	}}
	h := newHarness(t, []tool.Tool{counter}, []llmtest.Turn{
		{Content: []llm.Block{llmtest.ToolUse("Count", map[string]int{})},
			Faults: []llmtest.Fault{{Status: 529, RetryAfter: "0"}, {CutAfter: 6}}},
		{Content: []llm.Block{llmtest.Text("done")}, Faults: []llmtest.Fault{{Status: 429, RetryAfter: "0"}}},
	}, nil)
	res := h.run(context.Background(), "go")
	if res.IsError || res.Text() != "done" {
		t.Fatalf("result %+v", res)
	}
	if runs.Load() != 1 {
		t.Errorf("tool ran %d times", runs.Load())
	}
	var retries []*protocol.System
	for _, m := range h.emitted {
		if s, ok := m.(*protocol.System); ok && s.Subtype == protocol.SubtypeAPIRetry {
			retries = append(retries, s)
		}
	}
	if len(retries) != 3 || retries[0].ErrorStatus != 529 || retries[1].ErrorStatus != 0 || retries[2].ErrorStatus != 429 {
		t.Errorf("retries %+v", retries)
	}
	if res.NumTurns != 2 {
		t.Errorf("num_turns %d", res.NumTurns)
	}
}

func TestAPIErrorEndsRun(t *testing.T) {
	h := newHarness(t, nil, []llmtest.Turn{
		{Content: []llm.Block{llmtest.Text("x")}, Faults: []llmtest.Fault{{Status: 400, Message: "bad request body"}}},
	}, nil)
	res := h.run(context.Background(), "go")
	if res.Subtype != protocol.ResultDuringExecution || !strings.Contains(res.Errors[0], "bad request body") {
		t.Fatalf("result %+v", res)
	}
}

func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

func TestToolModelCallsAreCounted(t *testing.T) {
	asker := &testTool{name: "Ask", readOnly: true, runEnv: func(ctx context.Context, env *tool.Env) (tool.Result, error) {
		resp, err := env.Model.Provider.Stream(ctx, &llm.Request{Model: "claude-sonnet-5-5", MaxTokens: 100,
			Messages: []llm.Message{{Role: llm.RoleUser, Content: []llm.Block{llm.Text("side question")}}}}, llm.Observer{})
		if err != nil {
			return tool.Result{}, err
		}
		return tool.TextResult(llm.TextOf(resp.Content), nil), nil
	}}
	h := newHarness(t, []tool.Tool{asker}, []llmtest.Turn{
		{Content: []llm.Block{llmtest.ToolUse("Ask", map[string]int{})}, Usage: &llm.Usage{InputTokens: 10, OutputTokens: 10}},
		{Content: []llm.Block{llmtest.Text("side answer")}, Usage: &llm.Usage{InputTokens: 1_000_000}},
		{Content: []llm.Block{llmtest.Text("done")}, Usage: &llm.Usage{InputTokens: 10, OutputTokens: 10}},
	}, nil)
	res := h.run(context.Background(), "go")
	if res.IsError {
		t.Fatalf("result %+v", res)
	}
	side, ok := res.ModelUsage["claude-sonnet-5-5"]
	if !ok || side.InputTokens != 1_000_000 || side.CostUSD != 2 {
		t.Fatalf("the tool's model call is not in modelUsage: %+v", res.ModelUsage)
	}
	if res.TotalCostUSD < 2 || h.sess.Cost() != res.TotalCostUSD {
		t.Errorf("total %v, session %v", res.TotalCostUSD, h.sess.Cost())
	}
	// usage is the thread's own requests, as in Claude Code's result.
	if res.Usage.InputTokens != 20 || res.Usage.OutputTokens != 20 {
		t.Errorf("usage %+v, want the two own requests only", res.Usage)
	}
}

func TestThinkingIsSentBackVerbatim(t *testing.T) {
	h := newHarness(t, []tool.Tool{echoTool("Echo", true)}, []llmtest.Turn{
		{Content: []llm.Block{llmtest.Thinking("I should echo"), llmtest.ToolUse("Echo", map[string]string{"text": "x"})}},
		{Content: []llm.Block{llmtest.Text("done")}},
	}, nil)
	if res := h.run(context.Background(), "go"); res.IsError {
		t.Fatalf("result %+v", res)
	}
	asst := h.srv.Requests()[1].Messages[1]
	want := llmtest.Thinking("I should echo")
	if asst.Content[0].Type != llm.TypeThinking || asst.Content[0].Thinking != want.Thinking || asst.Content[0].Signature != want.Signature {
		t.Errorf("thinking sent back as %+v", asst.Content[0])
	}
}

func newBenchSession(b *testing.B, srv *llmtest.Server) *Session {
	dir := b.TempDir()
	p := anthropic.New(anthropic.Config{APIKey: "test", BaseURL: srv.URL()})
	s, err := New(Config{
		Provider: p,
		Model:    llm.Catalogue().Resolve("haiku", func(string) string { return "" }),
		System:   []llm.Block{llm.Text("identity"), llm.Text(strings.Repeat("main prompt ", 200))},
		Tools:    tool.NewRegistry(echoTool("Echo", true)),
		Env:      &tool.Env{ProjectDir: dir, Shell: shell.New(dir, nil), Files: tool.NewFileState(), ScratchDir: dir},
	})
	if err != nil {
		b.Fatal(err)
	}
	return s
}

func TestFallbackModelAfterOverload(t *testing.T) {
	h := newHarness(t, nil, []llmtest.Turn{
		{Content: []llm.Block{llmtest.Text("from the fallback")},
			// The harness's provider retries 3 times: four 529s exhaust it.
			Faults: []llmtest.Fault{{Status: 529, RetryAfter: "0"}, {Status: 529, RetryAfter: "0"}, {Status: 529, RetryAfter: "0"}, {Status: 529, RetryAfter: "0"}}},
	}, func(c *Config) {
		c.FallbackModel = llm.Catalogue().Resolve("sonnet", func(string) string { return "" })
	})
	res := h.run(context.Background(), "hi")
	if res.IsError || res.Text() != "from the fallback" {
		t.Fatalf("result %+v", res)
	}
	reqs := h.srv.Requests()
	if len(reqs) != 5 || reqs[3].Model != "claude-haiku-4-5" || reqs[4].Model != "claude-sonnet-5-5" {
		t.Errorf("models %s → %s", reqs[0].Model, reqs[len(reqs)-1].Model)
	}
	if h.sess.Model().ID != "claude-sonnet-5-5" {
		t.Errorf("the session did not stay on the fallback")
	}
}

// testGate is a Gate whose answers a test scripts.
type testGate struct {
	check func(ToolCall) Verdict
	ask   func(ToolCall, string) Verdict
}

func (g testGate) Check(_ context.Context, c ToolCall) Verdict { return g.check(c) }

func (g testGate) Ask(_ context.Context, c ToolCall, reason string) Verdict {
	if g.ask == nil {
		return Verdict{Behavior: Deny, Message: "nobody to ask: " + reason, Unattended: true}
	}
	return g.ask(c, reason)
}

func TestAnnouncementsJoinTheNextRequest(t *testing.T) {
	h := newHarness(t, []tool.Tool{echoTool("Echo", true)}, []llmtest.Turn{
		llmtest.Reply(llmtest.ToolUse("Echo", map[string]int{})),
		llmtest.Reply(llmtest.Text("done")),
	}, nil)
	h.sess.Announce("New tools are available: mcp__gh__list_issues.")
	if res := h.run(context.Background(), "go"); res.IsError {
		t.Fatalf("result %+v", res)
	}
	reqs := h.srv.Requests()
	first := llm.TextOf(reqs[0].Messages[0].Content)
	if !strings.Contains(first, "mcp__gh__list_issues") || !strings.HasSuffix(first, "</system-reminder>") {
		t.Errorf("first request: %q", first)
	}
	// Sent once.
	if strings.Count(llm.TextOf(reqs[1].Messages[len(reqs[1].Messages)-1].Content), "mcp__gh") != 0 {
		t.Error("announced twice")
	}
}

// A resumed session's recorded tools array is re-sent, byte for byte, while
// it offers exactly the registry's tools; once a tool joins (an MCP server
// connects) the registry's array is sent, with the new tool.
func TestRecordedToolsGiveWayToTheToolsOfTheRequest(t *testing.T) {
	recorded := []llm.ToolSpec{{Name: "a", Raw: json.RawMessage(`{"name":"a","description":"as recorded","input_schema":{"type":"object"}}`)}}
	h := newHarness(t, []tool.Tool{echoTool("a", true)}, []llmtest.Turn{
		{Content: []llm.Block{llmtest.Text("one")}}, {Content: []llm.Block{llmtest.Text("two")}},
	}, func(c *Config) { c.ToolSpecs = recorded })
	h.run(context.Background(), "first")
	h.sess.cfg.Tools.SetGroup("mcp", []tool.Tool{echoTool("mcp__s__b", true)})
	h.run(context.Background(), "second")
	reqs := h.srv.Requests()
	if got := string(reqs[0].Tools[0]); got != string(recorded[0].Raw) {
		t.Errorf("first request's tool %s, want the recorded bytes", got)
	}
	if got := reqs[1].ToolNames(); len(got) != 2 || got[1] != "mcp__s__b" {
		t.Errorf("second request's tools %v: the tool that joined is missing", got)
	}
	if sent := h.sess.SentTools(); len(sent) != 2 {
		t.Errorf("SentTools %v, want the latest request's two", sent)
	}
}
