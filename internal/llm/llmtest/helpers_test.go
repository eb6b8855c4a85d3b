package llmtest

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/tackcode/tack/internal/llm"
)

// sseEvent is one parsed SSE frame.
type sseEvent struct {
	name string
	data string
}

// readSSE parses a stream strictly in the API's framing ("event: X\ndata:
// Y\n\n"). It returns the events read and the error that ended the stream
// (nil for a clean end).
func readSSE(r io.Reader) ([]sseEvent, error) {
	br := bufio.NewReader(r)
	var events []sseEvent
	for {
		line, err := br.ReadString('\n')
		if err != nil {
			if err == io.EOF && line == "" {
				return events, nil
			}
			return events, fmt.Errorf("after %d events: %w", len(events), err)
		}
		name, ok := strings.CutPrefix(line, "event: ")
		if !ok {
			return events, fmt.Errorf("frame %d starts with %q, want \"event: \"", len(events), line)
		}
		dline, err := br.ReadString('\n')
		if err != nil {
			return events, fmt.Errorf("after %d events: %w", len(events), err)
		}
		data, ok := strings.CutPrefix(dline, "data: ")
		if !ok {
			return events, fmt.Errorf("frame %d: second line %q, want \"data: \"", len(events), dline)
		}
		blank, err := br.ReadString('\n')
		if err != nil {
			return events, fmt.Errorf("after %d events: %w", len(events), err)
		}
		if blank != "\n" {
			return events, fmt.Errorf("frame %d not ended by a blank line: %q", len(events), blank)
		}
		data = strings.TrimSuffix(data, "\n")
		if !json.Valid([]byte(data)) {
			return events, fmt.Errorf("frame %d data is not JSON: %s", len(events), data)
		}
		events = append(events, sseEvent{name: strings.TrimSuffix(name, "\n"), data: data})
	}
}

func eventNames(events []sseEvent) string {
	names := make([]string, len(events))
	for i, e := range events {
		names[i] = e.name
	}
	return strings.Join(names, " ")
}

// assembled is a response rebuilt from its events, as a client would.
type assembled struct {
	id, model  string
	content    []llm.Block
	stopReason string
	startUsage llm.Usage
	usage      llm.Usage
}

// assemble rebuilds the message from a complete event list.
func assemble(t *testing.T, events []sseEvent) assembled {
	t.Helper()
	var a assembled
	var partial []string // accumulated input JSON per block
	for _, e := range events {
		var ev struct {
			Type    string `json:"type"`
			Index   int    `json:"index"`
			Message struct {
				ID    string    `json:"id"`
				Model string    `json:"model"`
				Usage llm.Usage `json:"usage"`
			} `json:"message"`
			ContentBlock llm.Block `json:"content_block"`
			Delta        struct {
				Type        string `json:"type"`
				Text        string `json:"text"`
				PartialJSON string `json:"partial_json"`
				Thinking    string `json:"thinking"`
				Signature   string `json:"signature"`
				StopReason  string `json:"stop_reason"`
			} `json:"delta"`
			Usage llm.Usage `json:"usage"`
		}
		if err := json.Unmarshal([]byte(e.data), &ev); err != nil {
			t.Fatalf("event %s: %v", e.name, err)
		}
		if ev.Type != e.name {
			t.Fatalf("event %q carries data of type %q", e.name, ev.Type)
		}
		switch e.name {
		case "message_start":
			a.id, a.model, a.startUsage = ev.Message.ID, ev.Message.Model, ev.Message.Usage
		case "content_block_start":
			if ev.Index != len(a.content) {
				t.Fatalf("content_block_start index %d, want %d", ev.Index, len(a.content))
			}
			a.content = append(a.content, ev.ContentBlock)
			partial = append(partial, "")
		case "content_block_delta":
			b := &a.content[ev.Index]
			switch ev.Delta.Type {
			case "text_delta":
				b.Text += ev.Delta.Text
			case "input_json_delta":
				partial[ev.Index] += ev.Delta.PartialJSON
			case "thinking_delta":
				b.Thinking += ev.Delta.Thinking
			case "signature_delta":
				b.Signature += ev.Delta.Signature
			default:
				t.Fatalf("unknown delta type %q", ev.Delta.Type)
			}
		case "content_block_stop":
			b := &a.content[ev.Index]
			if b.Type == llm.TypeToolUse || b.Type == llm.TypeServerToolUse {
				if partial[ev.Index] == "" {
					b.Input = json.RawMessage("{}")
				} else {
					b.Input = json.RawMessage(partial[ev.Index])
				}
			}
		case "message_delta":
			a.stopReason, a.usage = ev.Delta.StopReason, ev.Usage
		}
	}
	return a
}

// stdHeaders are the headers a well-behaved client sends.
func stdHeaders() http.Header {
	return http.Header{
		"Anthropic-Version": {"2023-06-01"},
		"X-Api-Key":         {"test-key"},
		"Content-Type":      {"application/json"},
	}
}

// post sends body to path with headers and returns the response.
func post(t *testing.T, url, body string, h http.Header) *http.Response {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header = h
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("POST %s: %v", url, err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

// send posts a Messages request and reads the whole SSE answer.
func send(t *testing.T, s *Server, req *llm.Request) (*http.Response, []sseEvent, error) {
	t.Helper()
	body, err := req.Body()
	if err != nil {
		t.Fatal(err)
	}
	resp := post(t, s.URL()+"/v1/messages", string(body), stdHeaders())
	if resp.StatusCode != http.StatusOK {
		raw, _ := io.ReadAll(resp.Body)
		return resp, nil, fmt.Errorf("status %d: %s", resp.StatusCode, raw)
	}
	events, err := readSSE(resp.Body)
	return resp, events, err
}

// errorBody is the API's error response.
type errorBody struct {
	Type  string `json:"type"`
	Error struct {
		Type    string `json:"type"`
		Message string `json:"message"`
	} `json:"error"`
	RequestID string `json:"request_id"`
}

func readErrorBody(t *testing.T, resp *http.Response) errorBody {
	t.Helper()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	var e errorBody
	if err := dec.Decode(&e); err != nil {
		t.Fatalf("error body %s: %v", raw, err)
	}
	if e.Type != "error" {
		t.Errorf("error body type %q, want error", e.Type)
	}
	if e.RequestID == "" || e.RequestID != resp.Header.Get("request-id") {
		t.Errorf("request_id %q, header request-id %q: want the same req_ id", e.RequestID, resp.Header.Get("request-id"))
	}
	return e
}

// collector gathers violations for servers whose tests expect some.
type collector struct {
	mu   sync.Mutex
	errs []error
}

func (c *collector) add(err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.errs = append(c.errs, err)
}

func (c *collector) problems() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make([]string, len(c.errs))
	for i, err := range c.errs {
		var v *Violation
		if errors.As(err, &v) {
			out[i] = v.Problem
		} else {
			out[i] = err.Error()
		}
	}
	return out
}

// newCollecting starts a server whose violations are collected, not fatal.
func newCollecting(t *testing.T, opts Options) (*Server, *collector) {
	t.Helper()
	c := &collector{}
	opts.OnViolation = c.add
	s, err := NewServer(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	return s, c
}

// userMsg is a user message of text blocks.
func userMsg(blocks ...llm.Block) llm.Message {
	return llm.Message{Role: llm.RoleUser, Content: blocks}
}

// baseRequest is a minimal valid request.
func baseRequest(msgs ...llm.Message) *llm.Request {
	if len(msgs) == 0 {
		msgs = []llm.Message{userMsg(llm.Text("hello"))}
	}
	return &llm.Request{Model: "claude-test-1", MaxTokens: 1024, Messages: msgs}
}
