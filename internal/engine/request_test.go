package engine

import (
	"bytes"
	"context"
	"testing"

	"github.com/tackcode/tack/internal/llm"
	"github.com/tackcode/tack/internal/llm/llmtest"
)

// hasMark reports whether m's last block carries a cache breakpoint.
func hasMark(m llm.Message) bool {
	return len(m.Content) > 0 && m.Content[len(m.Content)-1].CacheControl != nil
}

// Consecutive requests of a growing history extend one messages array
// rather than copying the history; the breakpoints move with the end of
// the conversation, and the history's own messages never carry them.
func TestRequestsExtendOneMessagesArray(t *testing.T) {
	s := newHarness(t, nil, nil, nil).sess
	s.Restore(history(3))
	r1 := s.buildRequest()
	n1 := len(r1.Messages)
	s.messages = append(s.messages,
		llm.Message{Role: llm.RoleAssistant, Content: []llm.Block{llm.Text("more")}},
		llm.Message{Role: llm.RoleUser, Content: []llm.Block{llm.Text("and more")}})
	r2 := s.buildRequest()
	if len(r2.Messages) != n1+2 || &r2.Messages[0] != &r1.Messages[0] {
		t.Fatalf("the second request copied the history (%d messages)", len(r2.Messages))
	}
	if cap(r1.Messages) != n1 || cap(r2.Messages) != len(r2.Messages) {
		t.Errorf("requests' arrays are not capped: %d/%d, %d/%d", len(r1.Messages), cap(r1.Messages), len(r2.Messages), cap(r2.Messages))
	}
	for i, m := range r2.Messages {
		want := i == n1-1 || i == len(r2.Messages)-1 // the previous request's end, and this one's
		if hasMark(m) != want {
			t.Errorf("message %d: breakpoint %v, want %v", i, hasMark(m), want)
		}
		if !want && len(m.Content) > 0 && &m.Content[0] != &s.messages[i].Content[0] {
			t.Errorf("message %d is not the history's own", i)
		}
	}
	for i, m := range s.messages {
		if hasMark(m) {
			t.Errorf("the history's message %d carries a breakpoint", i)
		}
	}
	// A history replaced (a restore, a compaction) builds the array anew.
	s.Restore(history(2))
	r3 := s.buildRequest()
	if &r3.Messages[0] == &r2.Messages[0] || len(r3.Messages) != len(history(2)) {
		t.Errorf("a restored history reused the old array")
	}
	for i, m := range r3.Messages {
		if hasMark(m) != (i == len(r3.Messages)-1) {
			t.Errorf("restored: message %d breakpoint %v", i, hasMark(m))
		}
	}
}

// With prompt caching off, no breakpoint marks the previous request's last
// message, yet that message can still change: a request that failed leaves
// the prompt last in the history, and the next prompt joins it. The next
// request carries the joined message, both in the array the engine extends
// and in the bytes the encode cache reuses (freshEncoding checks both).
func TestAnEditedLastMessageIsSentWithoutBreakpoints(t *testing.T) {
	h := newHarness(t, nil, []llmtest.Turn{
		{Content: []llm.Block{llmtest.Text("one")}},
		{Content: []llm.Block{llmtest.Text("two")}, Faults: []llmtest.Fault{{Status: 400, Message: "bad request"}}},
	}, func(c *Config) { c.DisableCache = true })
	ctx := context.Background()
	if res := h.run(ctx, "first"); res.IsError {
		t.Fatalf("first run: %+v", res)
	}
	if res := h.run(ctx, "second"); !res.IsError {
		t.Fatalf("the second run should have failed: %+v", res)
	}
	if res := h.run(ctx, "third"); res.IsError {
		t.Fatalf("third run: %+v", res)
	}
	reqs := h.srv.Requests()
	last := reqs[len(reqs)-1]
	if !bytes.Contains(last.Body, []byte(`"second"`)) || !bytes.Contains(last.Body, []byte(`"third"`)) {
		t.Fatalf("the last request lost a prompt of the joined message: %s", last.Body)
	}
	if bytes.Contains(last.Body, []byte("cache_control")) {
		t.Errorf("caching is off, yet the request carries a breakpoint: %s", last.Body)
	}
}
