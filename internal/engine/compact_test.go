package engine

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/tackcode/tack/internal/hook"
	"github.com/tackcode/tack/internal/llm"
	"github.com/tackcode/tack/internal/llm/llmtest"
	"github.com/tackcode/tack/internal/protocol"
	"github.com/tackcode/tack/internal/tool"
)

func (m *memRecorder) RecordCompaction(trigger string, preTokens int, first protocol.Message) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.msgs = append(m.msgs, &protocol.System{Subtype: "compact_boundary", Fields: map[string]any{"trigger": trigger}}, first)
	return nil
}

// compactHooks records PreCompact / PostCompact / SessionStart(compact).
func compactHooks(t *testing.T, fired *[]string) func(*Config) {
	cb := func(_ context.Context, in hook.Input, _ json.RawMessage) (*hook.Output, error) {
		name := string(in.EventName())
		if ss, ok := in.(*hook.SessionStartInput); ok {
			name += ":" + ss.Source
		}
		*fired = append(*fired, name)
		return nil, nil
	}
	m := []hook.Matcher{{Hooks: []hook.Handler{{Type: hook.TypeCallback, Callback: cb}}}}
	return withHooks(t, hook.Config{hook.PreCompact: m, hook.PostCompact: m, hook.SessionStart: m}, func(c *Config) {
		c.Compaction.Memory = func() []llm.Block {
			return []llm.Block{llm.Text("<system-reminder>root memory, re-read</system-reminder>")}
		}
	})
}

func TestAutoCompactionKeepsInstructionsAndMemory(t *testing.T) {
	var fired []string
	h := newHarness(t, []tool.Tool{echoTool("Echo", true)}, []llmtest.Turn{
		{Content: []llm.Block{llmtest.ToolUse("Echo", map[string]string{"text": "a"})}, Usage: &llm.Usage{InputTokens: 180_000, OutputTokens: 10}},
		llmtest.Reply(llmtest.Text("<summary>We echoed a.</summary>")), // the summary request
		llmtest.Reply(llmtest.Text("done")),
	}, compactHooks(t, &fired))
	res := h.run(context.Background(), "Always answer in French. Echo a, then stop.")
	if res.IsError || res.Text() != "done" {
		t.Fatalf("result %+v", res)
	}
	reqs := h.srv.Requests()
	if len(reqs) != 3 {
		t.Fatalf("%d requests", len(reqs))
	}
	if !strings.Contains(reqs[1].LastUserText(), "summary") {
		t.Errorf("the summary request does not carry the summary prompt: %q", reqs[1].LastUserText()[:min(200, len(reqs[1].LastUserText()))])
	}
	after := llm.TextOf(reqs[2].Messages[0].Content)
	for _, want := range []string{"root memory, re-read", "We echoed a.", "Always answer in French. Echo a, then stop."} {
		if !strings.Contains(after, want) {
			t.Errorf("the compacted history lacks %q:\n%s", want, after)
		}
	}
	if strings.Join(fired, ",") != "PreCompact,SessionStart:compact,PostCompact" {
		t.Errorf("hooks fired %v", fired)
	}
	var boundary bool
	for _, m := range h.emitted {
		if s, ok := m.(*protocol.System); ok && s.Subtype == "compact_boundary" {
			boundary = true
		}
	}
	if !boundary {
		t.Error("no compact_boundary message")
	}
	var recorded bool
	for _, m := range h.rec.msgs {
		if s, ok := m.(*protocol.System); ok && s.Subtype == "compact_boundary" {
			recorded = true
		}
	}
	if !recorded {
		t.Error("the transcript does not mark the compaction")
	}
	// The summary request's cost is counted.
	if res.Usage.InputTokens < 180_000 || len(res.ModelUsage) != 1 {
		t.Errorf("usage %+v", res.Usage)
	}
}

func TestPromptTooLongCompactsAndRetriesOnce(t *testing.T) {
	var fired []string
	h := newHarness(t, nil, []llmtest.Turn{
		llmtest.Reply(llmtest.Text("first answer")),
		{Content: []llm.Block{llmtest.Text("<summary>short</summary>")}, Faults: []llmtest.Fault{{Status: 400, Message: "prompt is too long: 210000 tokens > 200000 maximum"}}},
		llmtest.Reply(llmtest.Text("second answer")),
	}, compactHooks(t, &fired))
	if res := h.run(context.Background(), "one"); res.IsError {
		t.Fatalf("first run %+v", res)
	}
	res := h.run(context.Background(), "two")
	if res.IsError || res.Text() != "second answer" {
		t.Fatalf("result %+v", res)
	}
	if len(fired) == 0 || fired[0] != "PreCompact" {
		t.Errorf("hooks %v", fired)
	}
}

func TestManualCompact(t *testing.T) {
	var fired []string
	h := newHarness(t, nil, []llmtest.Turn{
		llmtest.Reply(llmtest.Text("hello")),
		llmtest.Reply(llmtest.Text("<summary>greeted</summary>")),
	}, compactHooks(t, &fired))
	if res := h.sess.Compact(context.Background(), "", nil); !res.IsError {
		t.Errorf("compacting nothing succeeded: %+v", res)
	}
	h.run(context.Background(), "say hello")
	res := h.sess.Compact(context.Background(), "focus on greetings", func(protocol.Message) {})
	if res.IsError {
		t.Fatalf("compact %+v", res)
	}
	if got := h.srv.Requests()[1].LastUserText(); !strings.Contains(got, "focus on greetings") {
		t.Errorf("custom instructions not sent: %q", got)
	}
	msgs := h.sess.Messages()
	if len(msgs) != 1 || !strings.Contains(llm.TextOf(msgs[0].Content), "greeted") || !strings.Contains(llm.TextOf(msgs[0].Content), "say hello") {
		t.Errorf("history after compact: %+v", msgs)
	}
}

// A new prompt judges the history by the previous prompt's last response
// (what the API counted), not by re-estimating every message: a session
// whose last answer filled the window compacts before its next prompt's
// request, although its few messages estimate small.
func TestNextPromptCompactsByTheLastResponsesUsage(t *testing.T) {
	var fired []string
	h := newHarness(t, nil, []llmtest.Turn{
		{Content: []llm.Block{llmtest.Text("first answer")}, Usage: &llm.Usage{InputTokens: 190_000, OutputTokens: 10}},
		llmtest.Reply(llmtest.Text("<summary>We talked.</summary>")), // the summary request
		llmtest.Reply(llmtest.Text("second answer")),
	}, compactHooks(t, &fired))
	if res := h.run(context.Background(), "first"); res.IsError || res.Text() != "first answer" {
		t.Fatalf("first prompt: %+v", res)
	}
	if len(fired) != 0 {
		t.Fatalf("compacted during the first prompt: %v", fired)
	}
	if res := h.run(context.Background(), "second"); res.IsError || res.Text() != "second answer" {
		t.Fatalf("second prompt: %+v", res)
	}
	reqs := h.srv.Requests()
	if len(reqs) != 3 || !strings.Contains(reqs[1].LastUserText(), "summary") {
		t.Fatalf("want the first request, a summary, then the second prompt's; got %d requests", len(reqs))
	}
	if !strings.Contains(llm.TextOf(reqs[2].Messages[0].Content), "We talked.") {
		t.Errorf("the second prompt's request does not start from the summary")
	}
}
