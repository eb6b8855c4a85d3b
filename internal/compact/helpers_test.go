package compact

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/tackcode/tack/internal/llm"
	"github.com/tackcode/tack/internal/llm/anthropic"
	"github.com/tackcode/tack/internal/llm/llmtest"
)

// fakeAPI starts the scripted Messages API and a real provider talking to it.
func fakeAPI(t *testing.T, turns ...llmtest.Turn) (*llmtest.Server, llm.Provider) {
	t.Helper()
	srv := llmtest.New(t, turns...)
	return srv, anthropic.New(anthropic.Config{APIKey: "k", BaseURL: srv.URL(), MaxRetries: -1})
}

func user(blocks ...llm.Block) llm.Message { return llm.Message{Role: llm.RoleUser, Content: blocks} }

func assistant(blocks ...llm.Block) llm.Message {
	return llm.Message{Role: llm.RoleAssistant, Content: blocks}
}

func text(s string) llm.Block { return llm.Text(s) }

func toolUse(id, name, input string) llm.Block {
	return llm.Block{Type: llm.TypeToolUse, ID: id, Name: name, Input: json.RawMessage(input)}
}

func result(id, s string) llm.Block { return llm.ToolResult(id, s, false) }

func reminder(s string) llm.Block { return text("<system-reminder>\n" + s + "\n</system-reminder>") }

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// texts returns every text in msgs, tool_result content included.
func texts(msgs []llm.Message) []string {
	var out []string
	var walk func([]llm.Block)
	walk = func(blocks []llm.Block) {
		for _, b := range blocks {
			if b.Type == llm.TypeText {
				out = append(out, b.Text)
			}
			walk(b.Content)
		}
	}
	for _, m := range msgs {
		walk(m.Content)
	}
	return out
}

// occurrences counts how often s appears in the texts of msgs.
func occurrences(msgs []llm.Message, s string) int {
	n := 0
	for _, t := range texts(msgs) {
		n += strings.Count(t, s)
	}
	return n
}

func newProviderFor(srv *llmtest.Server) llm.Provider {
	return anthropic.New(anthropic.Config{APIKey: "k", BaseURL: srv.URL(), MaxRetries: -1})
}
