package engine

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/tackcode/tack/internal/llm"
	"github.com/tackcode/tack/internal/llm/anthropic"
	"github.com/tackcode/tack/internal/shell"
	"github.com/tackcode/tack/internal/tool"
)

// BenchmarkTurn is one prompt of one tool round trip (two requests) in a
// session that already holds 10 or 1 000 such turns: the engine, the
// request encoding and the HTTP client, against a server that only drains
// the body and answers from canned bytes, so that what grows with the
// session's length is the client's. Its time per operation at 1 000 turns
// is meant to stay that at 10.
func BenchmarkTurn(b *testing.B) {
	for _, turns := range []int{10, 1000} {
		b.Run(fmt.Sprintf("history=%d", turns), func(b *testing.B) {
			var n atomic.Int64
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if _, err := io.Copy(io.Discard, r.Body); err != nil {
					return
				}
				w.Header().Set("Content-Type", "text/event-stream")
				i := n.Add(1)
				if i%2 == 1 {
					io.WriteString(w, cannedToolUse(i))
				} else {
					io.WriteString(w, cannedText)
				}
			}))
			defer srv.Close()
			dir := b.TempDir()
			s, err := New(Config{
				Provider: anthropic.New(anthropic.Config{APIKey: "test", BaseURL: srv.URL}),
				Model:    llm.Catalogue().Resolve("haiku", func(string) string { return "" }),
				System:   []llm.Block{llm.Text("identity"), llm.Text(strings.Repeat("main prompt ", 200))},
				Tools:    tool.NewRegistry(echoTool("Echo", true)),
				Env:      &tool.Env{ProjectDir: dir, Shell: shell.New(dir, nil), Files: tool.NewFileState(), ScratchDir: dir},
			})
			if err != nil {
				b.Fatal(err)
			}
			s.Restore(history(turns))
			// Room for the turn each operation adds, so that putting the
			// history back copies nothing.
			base := append(make([]llm.Message, 0, len(s.messages)+16), s.Messages()...)
			run := func() {
				if res := s.Run(context.Background(), []llm.Block{llm.Text("go on")}, nil); res.IsError {
					b.Fatal(res.Errors)
				}
			}
			run() // the encode cache now holds the history, as in a running session
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				s.restoreKeepingCache(base)
				run()
			}
		})
	}
}

// restoreKeepingCache puts the conversation back to msgs without the
// bookkeeping Restore resets, so the next request finds its prefix cached
// as the next request of a running session does, the latest usage
// measured msgs, as a running session's last response measured its
// history, and the request array holds msgs, as a running session's
// holds its history.
func (s *Session) restoreKeepingCache(msgs []llm.Message) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.messages = msgs
	s.usageAt = len(msgs)
	// The marks go back first: the array then holds the history again.
	for _, p := range s.marks {
		if p < len(s.sent) && p < len(msgs) {
			s.sent[p] = msgs[p]
		}
	}
	s.marks = s.marks[:0]
	s.sent = s.sent[:min(len(s.sent), len(msgs))]
}

// history is a conversation of n tool round trips, each like the one the
// benchmark adds.
func history(n int) []llm.Message {
	msgs := []llm.Message{{Role: llm.RoleUser, Content: []llm.Block{llm.Text("walk the tree")}}}
	for i := range n {
		id := fmt.Sprintf("toolu_h%d", i)
		msgs = append(msgs,
			llm.Message{Role: llm.RoleAssistant, Content: []llm.Block{llm.Text(fmt.Sprintf("step %d", i)),
				{Type: llm.TypeToolUse, ID: id, Name: "Echo", Input: []byte(fmt.Sprintf(`{"n":%d}`, i))}}},
			llm.Message{Role: llm.RoleUser, Content: []llm.Block{llm.ToolResult(id, fmt.Sprintf(`Echo got {"n":%d}`, i), false)}},
			llm.Message{Role: llm.RoleAssistant, Content: []llm.Block{llm.Text("done")}},
			llm.Message{Role: llm.RoleUser, Content: []llm.Block{llm.Text("go on")}})
	}
	return msgs[:len(msgs)-1]
}

const sseUsage = `"usage":{"input_tokens":10,"output_tokens":1}`

func cannedToolUse(i int64) string {
	return "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_1\",\"type\":\"message\",\"role\":\"assistant\",\"model\":\"claude-haiku-4-5\",\"content\":[],\"stop_reason\":null,\"stop_sequence\":null," + sseUsage + "}}\n\n" +
		"event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"tool_use\",\"id\":\"toolu_b" + fmt.Sprint(i) + "\",\"name\":\"Echo\",\"input\":{}}}\n\n" +
		"event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"{\\\"n\\\":" + fmt.Sprint(i) + "}\"}}\n\n" +
		"event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":0}\n\n" +
		"event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"tool_use\",\"stop_sequence\":null}," + sseUsage + "}\n\n" +
		"event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n"
}

const cannedText = "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_2\",\"type\":\"message\",\"role\":\"assistant\",\"model\":\"claude-haiku-4-5\",\"content\":[],\"stop_reason\":null,\"stop_sequence\":null," + sseUsage + "}}\n\n" +
	"event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n" +
	"event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"done\"}}\n\n" +
	"event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":0}\n\n" +
	"event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\",\"stop_sequence\":null}," + sseUsage + "}\n\n" +
	"event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n"
