package anthropic

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tackcode/tack/internal/llm"
	"github.com/tackcode/tack/internal/llm/llmtest"
)

func request() *llm.Request {
	return &llm.Request{Model: "claude-haiku-4-5", MaxTokens: 64,
		Messages: []llm.Message{{Role: llm.RoleUser, Content: []llm.Block{llm.Text("hi")}}}}
}

// newTest returns a provider whose waits are recorded instead of slept.
func newTest(cfg Config) (*Provider, *[]time.Duration) {
	p := New(cfg)
	var waits []time.Duration
	p.sleep = func(ctx context.Context, d time.Duration) error {
		waits = append(waits, d)
		return ctx.Err()
	}
	return p, &waits
}

func TestStreamAssemblesResponse(t *testing.T) {
	srv := llmtest.New(t, llmtest.Turn{
		Content: []llm.Block{llmtest.Thinking("hmm"), llmtest.Text("hello "), llmtest.ToolUse("Read", map[string]string{"file_path": "/a b"})},
		Usage:   &llm.Usage{InputTokens: 11, OutputTokens: 22, CacheReadInputTokens: 33, CacheCreationInputTokens: 44},
	})
	p, _ := newTest(Config{APIKey: "k", BaseURL: srv.URL()})
	var types []string
	var text strings.Builder
	resp, err := p.Stream(context.Background(), request(), llm.Observer{Event: func(ev llm.StreamEvent) {
		types = append(types, ev.Type)
		if ev.Delta.Type == "text_delta" {
			text.WriteString(ev.Delta.Text)
		}
	}})
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.Content) != 3 || resp.Content[0].Thinking != "hmm" || resp.Content[0].Signature == "" ||
		resp.Content[1].Text != "hello " || string(resp.Content[2].Input) != `{"file_path":"/a b"}` {
		t.Fatalf("content %+v", resp.Content)
	}
	if resp.StopReason != "tool_use" || resp.ID == "" || resp.Model != "claude-haiku-4-5" || resp.RequestID == "" {
		t.Errorf("response %+v", resp)
	}
	if resp.Usage.InputTokens != 11 || resp.Usage.OutputTokens != 22 || resp.Usage.CacheReadInputTokens != 33 || resp.Usage.CacheCreationInputTokens != 44 {
		t.Errorf("usage %+v", resp.Usage)
	}
	if types[0] != "message_start" || types[len(types)-1] != "message_stop" || text.String() != "hello " {
		t.Errorf("events %v, text %q", types, text.String())
	}
}

func TestHeadersAndAuth(t *testing.T) {
	srv := llmtest.New(t, llmtest.Reply(llmtest.Text("a")), llmtest.Reply(llmtest.Text("b")))
	p, _ := newTest(Config{APIKey: "key-1", BaseURL: srv.URL(), Headers: ParseHeaders("X-Team: infra\nX-Trace:  abc \nbogus line")})
	if _, err := p.Stream(context.Background(), &llm.Request{Model: "m", MaxTokens: 1, Betas: []string{"b1", "b2"},
		Messages: request().Messages}, llm.Observer{}); err != nil {
		t.Fatal(err)
	}
	h := srv.Requests()[0].Header
	if h.Get("x-api-key") != "key-1" || h.Get("X-Team") != "infra" || h.Get("X-Trace") != "abc" ||
		h.Get("anthropic-version") != APIVersion || h.Get("anthropic-beta") != "b1,b2" {
		t.Errorf("headers %v", h)
	}
	p2, _ := newTest(Config{AuthToken: "tok", BaseURL: srv.URL()})
	if _, err := p2.Stream(context.Background(), request(), llm.Observer{}); err != nil {
		t.Fatal(err)
	}
	h = srv.Requests()[1].Header
	if h.Get("authorization") != "Bearer tok" || h.Get("x-api-key") != "" {
		t.Errorf("bearer headers %v", h)
	}
}

func TestConfigFromEnv(t *testing.T) {
	env := map[string]string{"ANTHROPIC_API_KEY": "k", "ANTHROPIC_BASE_URL": "http://x", "ANTHROPIC_CUSTOM_HEADERS": "A: 1\nB: 2", "CLAUDE_CODE_MAX_RETRIES": "0"}
	c := ConfigFromEnv(func(k string) string { return env[k] })
	if c.APIKey != "k" || c.BaseURL != "http://x" || c.Headers.Get("A") != "1" || c.Headers.Get("B") != "2" || c.MaxRetries != -1 {
		t.Errorf("config %+v", c)
	}
	if (Config{}).HasCredentials() || !(Config{AuthToken: "t"}).HasCredentials() {
		t.Error("HasCredentials")
	}
}

func TestRetriesHonourRetryAfterAndReportEachRetry(t *testing.T) {
	srv := llmtest.New(t, llmtest.Turn{
		Content: []llm.Block{llmtest.ToolUse("Read", map[string]string{"file_path": "/x"})},
		Faults: []llmtest.Fault{
			{Status: 429, RetryAfter: "7"},
			{Status: 529},
			{CutAfter: 5},
			{CutAfter: 3, ErrorEvent: "overloaded_error"},
			{Status: 500},
		},
	})
	p, waits := newTest(Config{APIKey: "k", BaseURL: srv.URL()})
	var retries []llm.Retry
	var starts int
	resp, err := p.Stream(context.Background(), request(), llm.Observer{
		Retry: func(r llm.Retry) { retries = append(retries, r) },
		Event: func(ev llm.StreamEvent) {
			if ev.Type == "message_start" {
				starts++
			}
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.Content) != 1 || string(resp.Content[0].Input) != `{"file_path":"/x"}` {
		t.Errorf("the retried response is not the whole turn: %+v", resp.Content)
	}
	if len(retries) != 5 || len(*waits) != 5 {
		t.Fatalf("retries %+v, waits %v", retries, *waits)
	}
	wantStatus := []int{429, 529, 0, 0, 500}
	for i, r := range retries {
		if r.Attempt != i+1 || r.Status != wantStatus[i] || r.Delay != (*waits)[i] {
			t.Errorf("retry %d: %+v", i, r)
		}
	}
	if (*waits)[0] != 7*time.Second {
		t.Errorf("retry-after 7 waited %v", (*waits)[0])
	}
	for i, d := range (*waits)[1:] {
		if d <= 0 || d > maxDelay {
			t.Errorf("backoff %d is %v", i+1, d)
		}
	}
	if starts != 3 {
		t.Errorf("%d message_start events: each streamed attempt starts over", starts)
	}
}

func TestNoRetryOnClientErrorOrShouldRetryFalse(t *testing.T) {
	srv := llmtest.New(t, llmtest.Turn{Content: []llm.Block{llmtest.Text("x")},
		Faults: []llmtest.Fault{{Status: 400, Message: "messages: too many"}}})
	p, waits := newTest(Config{APIKey: "k", BaseURL: srv.URL()})
	_, err := p.Stream(context.Background(), request(), llm.Observer{})
	var apiErr *llm.APIError
	if !errors.As(err, &apiErr) || apiErr.Status != 400 || apiErr.Type != "invalid_request_error" || !strings.Contains(apiErr.Message, "too many") {
		t.Fatalf("err %v", err)
	}
	if len(*waits) != 0 || len(srv.Requests()) != 1 {
		t.Errorf("a 400 was retried")
	}
}

func TestRetriesAreBounded(t *testing.T) {
	var faults []llmtest.Fault
	for i := 0; i < 5; i++ {
		faults = append(faults, llmtest.Fault{Status: 529})
	}
	srv := llmtest.New(t, llmtest.Turn{Content: []llm.Block{llmtest.Text("x")}, Faults: faults})
	p, waits := newTest(Config{APIKey: "k", BaseURL: srv.URL(), MaxRetries: 2})
	_, err := p.Stream(context.Background(), request(), llm.Observer{})
	var apiErr *llm.APIError
	if !errors.As(err, &apiErr) || apiErr.Status != 529 {
		t.Fatalf("err %v", err)
	}
	if len(*waits) != 2 || len(srv.Requests()) != 3 {
		t.Errorf("waits %v, requests %d", *waits, len(srv.Requests()))
	}
	// Drain the script so the server's end-of-test check is satisfied.
	p.maxRetries = 10
	if _, err := p.Stream(context.Background(), request(), llm.Observer{}); err != nil {
		t.Fatal(err)
	}
}

func TestCancelStopsRetrying(t *testing.T) {
	srv := llmtest.New(t, llmtest.Turn{Content: []llm.Block{llmtest.Text("x")}, Faults: []llmtest.Fault{{Status: 529}}})
	p := New(Config{APIKey: "k", BaseURL: srv.URL()})
	ctx, cancel := context.WithCancel(context.Background())
	_, err := p.Stream(ctx, request(), llm.Observer{Retry: func(llm.Retry) { cancel() }})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err %v", err)
	}
	srv.Close()
}

func TestRetryAfterForms(t *testing.T) {
	h := http.Header{}
	h.Set("retry-after-ms", "1500")
	h.Set("retry-after", "9")
	if d := retryAfter(h); d != 1500*time.Millisecond {
		t.Errorf("retry-after-ms: %v", d)
	}
	h.Del("retry-after-ms")
	if d := retryAfter(h); d != 9*time.Second {
		t.Errorf("seconds: %v", d)
	}
	h.Set("retry-after", time.Now().Add(time.Hour).UTC().Format(http.TimeFormat))
	if d := retryAfter(h); d < 59*time.Minute || d > time.Hour {
		t.Errorf("date: %v", d)
	}
	if d := retryAfter(http.Header{}); d >= 0 {
		t.Errorf("no header gives %v, want negative (no advice)", d)
	}
	h.Set("retry-after", "0")
	if d := retryAfter(h); d != 0 || backoff(3, d) != 0 {
		t.Errorf("retry-after 0: %v, backoff %v", d, backoff(3, d))
	}
	if d := backoff(0, 10*time.Hour); d != maxRetryAfter {
		t.Errorf("retry-after is capped: %v", d)
	}
}

// A body sent as segments (the history from the encode cache, the new turn
// after it) goes with its Content-Length, not chunked, and a retried
// attempt sends the same bytes again.
func TestSegmentedBodyIsSizedAndResent(t *testing.T) {
	srv := llmtest.New(t,
		llmtest.Turn{Content: []llm.Block{llmtest.Text("one")}},
		llmtest.Turn{Content: []llm.Block{llmtest.Text("two")}, Faults: []llmtest.Fault{{Status: 500, RetryAfter: "0"}}},
	)
	p, _ := newTest(Config{APIKey: "k", BaseURL: srv.URL()})
	req := request()
	req.Cache = &llm.EncodeCache{}
	if _, err := p.Stream(context.Background(), req, llm.Observer{}); err != nil {
		t.Fatal(err)
	}
	req.Messages = append(req.Messages[:1:1],
		llm.Message{Role: llm.RoleAssistant, Content: []llm.Block{llm.Text("one")}},
		llm.Message{Role: llm.RoleUser, Content: []llm.Block{llm.Text("and then?")}})
	enc, err := req.Encode()
	if err != nil {
		t.Fatal(err)
	}
	if len(enc.Segments()) < 2 {
		t.Fatalf("the second request is %d segment(s): the test needs a segmented body", len(enc.Segments()))
	}
	if _, err := p.Stream(context.Background(), req, llm.Observer{}); err != nil {
		t.Fatal(err)
	}
	fresh := *req
	fresh.Cache = nil
	want, err := fresh.Body()
	if err != nil {
		t.Fatal(err)
	}
	reqs := srv.Requests()
	if len(reqs) != 3 {
		t.Fatalf("%d requests, want the first, a failed attempt and its retry", len(reqs))
	}
	for i, r := range reqs[1:] {
		if string(r.Body) != string(want) {
			t.Errorf("attempt %d sent\n%s\nwant\n%s", i+1, r.Body, want)
		}
		if got := r.Header.Get("Content-Length"); got != strconv.Itoa(len(want)) {
			t.Errorf("attempt %d: Content-Length %q, want %d (Transfer-Encoding %q)", i+1, got, len(want), r.Header.Get("Transfer-Encoding"))
		}
	}
}
