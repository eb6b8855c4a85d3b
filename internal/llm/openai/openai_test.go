package openai

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/tackcode/tack/internal/llm"
	"github.com/tackcode/tack/internal/llm/llmtest"
)

var allCaps = Capabilities{Tools: true, Images: true, Reasoning: true}

// newTest returns a provider for the fake's chat endpoint whose waits are
// recorded instead of slept.
func newTest(srv *llmtest.Server, caps Capabilities) (*Provider, *[]time.Duration) {
	p := New(Config{Name: "local", BaseURL: srv.URL() + "/v1", APIKey: "sk-test", Models: map[string]Capabilities{"qwen": caps}})
	var waits []time.Duration
	p.sleep = func(ctx context.Context, d time.Duration) error {
		waits = append(waits, d)
		return ctx.Err()
	}
	return p, &waits
}

func request(content ...llm.Block) *llm.Request {
	if len(content) == 0 {
		content = []llm.Block{llm.Text("hi")}
	}
	return &llm.Request{Model: "local/qwen", MaxTokens: 64,
		System:   []llm.Block{{Type: llm.TypeText, Text: "be brief", CacheControl: &llm.CacheControl{Type: "ephemeral"}}},
		Messages: []llm.Message{{Role: llm.RoleUser, Content: content}}}
}

var readTool = llm.ToolSpec{Name: "Read", Description: "read a file",
	InputSchema: json.RawMessage(`{"type": "object", "properties": {"file_path": {"type": "string"}}, "required": ["file_path"]}`)}

func TestStreamAssemblesTextAndEvents(t *testing.T) {
	srv := llmtest.Start(t, llmtest.Options{ChatKey: "sk-test", Turns: []llmtest.Turn{{
		Content: []llm.Block{llmtest.Thinking("let me see"), llmtest.Text("héllo world")},
		Usage:   &llm.Usage{InputTokens: 70, CacheReadInputTokens: 30, OutputTokens: 9},
	}}})
	p, _ := newTest(srv, allCaps)
	var types []string
	var text strings.Builder
	resp, err := p.Stream(context.Background(), request(), llm.Observer{Event: func(ev llm.StreamEvent) {
		types = append(types, ev.Type)
		if ev.Delta.Type == "text_delta" {
			text.WriteString(ev.Delta.Text)
		}
		var raw struct{ Type string }
		if err := json.Unmarshal(ev.Raw, &raw); err != nil || raw.Type != ev.Type {
			t.Errorf("event %s has raw %s", ev.Type, ev.Raw)
		}
	}})
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.Content) != 2 || resp.Content[0].Type != llm.TypeThinking || resp.Content[0].Thinking != "let me see" ||
		resp.Content[1].Text != "héllo world" {
		t.Fatalf("content %+v", resp.Content)
	}
	if resp.StopReason != "end_turn" || resp.Model != "local/qwen" {
		t.Errorf("response %+v", resp)
	}
	if resp.Usage.InputTokens != 70 || resp.Usage.CacheReadInputTokens != 30 || resp.Usage.OutputTokens != 9 {
		t.Errorf("usage %+v, want input 70 (prompt 100 less 30 cached), cache read 30, output 9", resp.Usage)
	}
	want := "message_start content_block_start content_block_delta content_block_delta content_block_stop " +
		"content_block_start content_block_delta content_block_delta content_block_stop message_delta message_stop"
	if got := strings.Join(types, " "); got != want || text.String() != "héllo world" {
		t.Errorf("events %s\nwant   %s\ntext %q", got, want, text.String())
	}
	got := srv.Requests()[0]
	if got.Model != "qwen" || got.SystemText() != "be brief" || got.LastUserText() != "hi" {
		t.Errorf("request model %q system %q user %q", got.Model, got.SystemText(), got.LastUserText())
	}
	if strings.Contains(string(got.Body), "cache_control") {
		t.Errorf("cache_control sent to a Chat Completions server: %s", got.Body)
	}
}

func TestStreamWithoutReasoningDropsIt(t *testing.T) {
	srv := llmtest.New(t, llmtest.Reply(llmtest.Thinking("hidden"), llmtest.Text("ok")))
	p, _ := newTest(srv, Capabilities{Tools: true})
	resp, err := p.Stream(context.Background(), request(), llm.Observer{})
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.Content) != 1 || resp.Content[0].Text != "ok" {
		t.Errorf("content %+v: reasoning of a model without reasoning should be dropped", resp.Content)
	}
}

func TestParallelToolCallsRoundTrip(t *testing.T) {
	srv := llmtest.New(t,
		llmtest.Reply(llmtest.Text("reading both"), llmtest.ToolUse("Read", map[string]string{"file_path": "/a"}),
			llmtest.ToolUse("Read", map[string]string{"file_path": "/b"})),
		llmtest.Reply(llmtest.Text("done")))
	p, _ := newTest(srv, allCaps)
	req := request(llm.Text("read /a and /b"))
	req.Tools = []llm.ToolSpec{readTool}
	resp, err := p.Stream(context.Background(), req, llm.Observer{})
	if err != nil {
		t.Fatal(err)
	}
	if resp.StopReason != "tool_use" || len(resp.Content) != 3 {
		t.Fatalf("response %+v", resp)
	}
	a, b := resp.Content[1], resp.Content[2]
	if a.Type != llm.TypeToolUse || a.Name != "Read" || string(a.Input) != `{"file_path":"/a"}` || string(b.Input) != `{"file_path":"/b"}` || a.ID == b.ID {
		t.Fatalf("tool calls %+v %+v", a, b)
	}
	req.Messages = append(req.Messages, resp.Message(), llm.Message{Role: llm.RoleUser, Content: []llm.Block{
		llm.ToolResult(a.ID, "contents of a", false), llm.ToolResult(b.ID, "no such file", true)}})
	if _, err := p.Stream(context.Background(), req, llm.Observer{}); err != nil {
		t.Fatal(err)
	}
	second := srv.Requests()[1]
	if r, ok := second.ToolResult(a.ID); !ok || llm.TextOf(r.Content) != "contents of a" {
		t.Errorf("result of %s: %+v", a.ID, r)
	}
	if r, ok := second.ToolResult(b.ID); !ok || llm.TextOf(r.Content) != "Error: no such file" {
		t.Errorf("result of %s: %+v", b.ID, r)
	}
	var body struct {
		Tools []struct {
			Type     string
			Function struct {
				Name       string
				Parameters json.RawMessage
			}
		}
	}
	if err := json.Unmarshal(second.Body, &body); err != nil || len(body.Tools) != 1 || body.Tools[0].Type != "function" ||
		string(body.Tools[0].Function.Parameters) != `{"type":"object","properties":{"file_path":{"type":"string"}},"required":["file_path"]}` {
		t.Errorf("tools sent %s (%v)", second.Body, err)
	}
}

func TestRetriesRateLimitAndBrokenStream(t *testing.T) {
	srv := llmtest.New(t, llmtest.Turn{
		Content: []llm.Block{llmtest.Text("finally here")},
		Faults:  []llmtest.Fault{{Status: 429, RetryAfter: "2"}, {CutAfter: 2}, {Status: 503}},
	})
	p, waits := newTest(srv, allCaps)
	var retries []llm.Retry
	resp, err := p.Stream(context.Background(), request(), llm.Observer{Retry: func(r llm.Retry) { retries = append(retries, r) }})
	if err != nil {
		t.Fatal(err)
	}
	if llm.TextOf(resp.Content) != "finally here" {
		t.Errorf("content %+v", resp.Content)
	}
	if len(*waits) != 3 || (*waits)[0] != 2*time.Second {
		t.Errorf("waits %v, want 3 with the first the retry-after of 2s", *waits)
	}
	if len(retries) != 3 || retries[0].Status != 429 || retries[1].Status != 0 || retries[2].Status != 503 ||
		!strings.Contains(retries[0].Cause, `provider "local"`) {
		t.Errorf("retries %+v", retries)
	}
}

func TestPermanentErrorNamesProviderAndKey(t *testing.T) {
	srv := llmtest.New(t, llmtest.Turn{Content: []llm.Block{llmtest.Text("x")}, Faults: []llmtest.Fault{{Status: 401}}})
	p, waits := newTest(srv, allCaps)
	p.cfg.KeySource = "providers.local.apiKeyEnv (LOCAL_KEY)"
	_, err := p.Stream(context.Background(), request(), llm.Observer{})
	if err == nil || len(*waits) != 0 {
		t.Fatalf("err %v after %d waits", err, len(*waits))
	}
	var apiErr *llm.APIError
	if !errors.As(err, &apiErr) || apiErr.Status != 401 || !strings.Contains(err.Error(), `provider "local"`) ||
		!strings.Contains(err.Error(), "LOCAL_KEY") {
		t.Errorf("error %v", err)
	}
}

func TestCapabilityErrors(t *testing.T) {
	srv := llmtest.New(t)
	p, _ := newTest(srv, Capabilities{})
	img := llm.Block{Type: llm.TypeImage, Source: &llm.ImageSource{Type: "base64", MediaType: "image/png", Data: "iVBOR"}}
	for name, req := range map[string]*llm.Request{
		"images": request(llm.Text("look"), img),
		"tools":  func() *llm.Request { r := request(); r.Tools = []llm.ToolSpec{readTool}; return r }(),
	} {
		_, err := p.Stream(context.Background(), req, llm.Observer{})
		var capErr *CapabilityError
		if !errors.As(err, &capErr) || capErr.Capability != name || !strings.Contains(err.Error(), `provider "local" model "qwen"`) {
			t.Errorf("%s: error %v", name, err)
		}
	}
	if n := len(srv.Requests()); n != 0 {
		t.Errorf("%d requests sent for requests the model cannot take", n)
	}
}

func TestImagesGoAsImageURLParts(t *testing.T) {
	srv := llmtest.New(t,
		llmtest.Reply(llmtest.ToolUse("Read", map[string]string{"file_path": "/shot.png"})),
		llmtest.Reply(llmtest.Text("a cat")))
	p, _ := newTest(srv, allCaps)
	img := llm.Block{Type: llm.TypeImage, Source: &llm.ImageSource{Type: "base64", MediaType: "image/png", Data: "iVBORw0KGgo="}}
	req := request(llm.Text("what is this?"), img)
	req.Tools = []llm.ToolSpec{readTool}
	resp, err := p.Stream(context.Background(), req, llm.Observer{})
	if err != nil {
		t.Fatal(err)
	}
	id := resp.Content[0].ID
	req.Messages = append(req.Messages, resp.Message(), llm.Message{Role: llm.RoleUser, Content: []llm.Block{
		{Type: llm.TypeToolResult, ToolUseID: id, Content: []llm.Block{llm.Text("the screenshot"), img}}}})
	if _, err := p.Stream(context.Background(), req, llm.Observer{}); err != nil {
		t.Fatal(err)
	}
	reqs := srv.Requests()
	if !strings.Contains(string(reqs[0].Body), `"image_url":{"url":"data:image/png;base64,iVBORw0KGgo="}`) {
		t.Errorf("first request %s", reqs[0].Body)
	}
	last := reqs[1].LastMessage()
	var images int
	for _, b := range last.Content {
		if b.Type == llm.TypeImage && b.Source.Data == "iVBORw0KGgo=" {
			images++
		}
	}
	if r, ok := reqs[1].ToolResult(id); !ok || llm.TextOf(r.Content) != "the screenshot" || images != 1 {
		t.Errorf("tool result %+v, %d images after it in %+v", r, images, last)
	}

	// Without images, a tool's image is left out with a note, the turn goes on.
	p2, _ := newTest(srv, Capabilities{Tools: true})
	srv.Append(llmtest.Reply(llmtest.ToolUse("Read", map[string]string{"file_path": "/shot.png"})), llmtest.Reply(llmtest.Text("ok")))
	first := request(llm.Text("read it"))
	first.Tools = []llm.ToolSpec{readTool}
	resp, err = p2.Stream(context.Background(), first, llm.Observer{})
	if err != nil {
		t.Fatal(err)
	}
	first.Messages = append(first.Messages, resp.Message(), llm.Message{Role: llm.RoleUser, Content: []llm.Block{
		{Type: llm.TypeToolResult, ToolUseID: resp.Content[0].ID, Content: []llm.Block{llm.Text("the screenshot"), img}}}})
	if _, err := p2.Stream(context.Background(), first, llm.Observer{}); err != nil {
		t.Fatal(err)
	}
	reqs = srv.Requests()
	r, _ := reqs[len(reqs)-1].ToolResult(resp.Content[0].ID)
	if txt := llm.TextOf(r.Content); !strings.Contains(txt, "the screenshot") || !strings.Contains(txt, "does not take images") {
		t.Errorf("tool result without images: %q", txt)
	}
}

func TestStopReasons(t *testing.T) {
	calls := map[int]int{0: 1}
	for _, c := range []struct {
		finish string
		calls  map[int]int
		want   string
	}{
		{"stop", nil, "end_turn"}, {"length", nil, "max_tokens"}, {"tool_calls", calls, "tool_use"},
		{"stop", calls, "tool_use"}, {"content_filter", nil, "refusal"}, {"length", calls, "max_tokens"},
	} {
		if got := stopReason(c.finish, c.calls); got != c.want {
			t.Errorf("stopReason(%q, %d calls) = %q, want %q", c.finish, len(c.calls), got, c.want)
		}
	}
}
