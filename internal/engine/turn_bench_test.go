package engine

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/tackcode/tack/internal/llm"
	"github.com/tackcode/tack/internal/llm/anthropic"
	"github.com/tackcode/tack/internal/shell"
	"github.com/tackcode/tack/internal/tool"
)

// BenchmarkTurn is one prompt of one tool round trip (two requests) in a
// session that already holds 10 or 1 000 such turns: the engine, the
// request encoding and the HTTP client, against a server that only drains
// the body and answers from canned bytes. The server runs in a process of
// its own (this test binary, as TestTurnServer), so that the CPU this
// process spends, reported as client-cpu-ns/op, is the client's alone:
// what grows with the session's length is then the client's. It is meant
// to stay that at 10.
func BenchmarkTurn(b *testing.B) {
	for _, turns := range []int{10, 1000} {
		b.Run(fmt.Sprintf("history=%d", turns), func(b *testing.B) {
			srvURL := startTurnServer(b)
			s := turnSession(b, srvURL)
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
			before := processCPU(b)
			b.ResetTimer()
			for range b.N {
				s.restoreKeepingCache(base)
				run()
			}
			b.StopTimer()
			b.ReportMetric(float64(processCPU(b)-before)/float64(b.N), "client-cpu-ns/op")
		})
	}
}

// BenchmarkTurnFloor is BenchmarkTurn's floor: the two requests of a turn
// sent with net/http alone, as bytes already encoded (the body tack sends
// at that length of history), against the same server, their responses
// read to the end and not parsed. What it spends grows with the session's
// length as tack's must — the bytes to send — so BenchmarkTurn minus this
// is tack's own cost per turn.
func BenchmarkTurnFloor(b *testing.B) {
	for _, turns := range []int{10, 1000} {
		b.Run(fmt.Sprintf("history=%d", turns), func(b *testing.B) {
			srvURL := startTurnServer(b)
			s := turnSession(b, srvURL)
			s.Restore(append(history(turns), llm.Message{Role: llm.RoleUser, Content: []llm.Block{llm.Text("go on")}}))
			body, err := s.buildRequest().Body()
			if err != nil {
				b.Fatal(err)
			}
			client := &http.Client{Transport: &http.Transport{}}
			post := func() {
				req, err := http.NewRequest(http.MethodPost, srvURL+"/v1/messages", bytes.NewReader(body))
				if err != nil {
					b.Fatal(err)
				}
				req.Header.Set("Content-Type", "application/json")
				resp, err := client.Do(req)
				if err != nil {
					b.Fatal(err)
				}
				_, err = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if err != nil || resp.StatusCode != http.StatusOK {
					b.Fatal(resp.Status, err)
				}
			}
			post()
			b.SetBytes(int64(len(body)))
			b.ReportAllocs()
			before := processCPU(b)
			b.ResetTimer()
			for range b.N {
				post()
				post()
			}
			b.StopTimer()
			b.ReportMetric(float64(processCPU(b)-before)/float64(b.N), "client-cpu-ns/op")
		})
	}
}

// turnSession is the session BenchmarkTurn and BenchmarkTurnFloor build
// their history in, its model requests going to srvURL.
func turnSession(b *testing.B, srvURL string) *Session {
	dir := b.TempDir()
	s, err := New(Config{
		Provider: anthropic.New(anthropic.Config{APIKey: "test", BaseURL: srvURL}),
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

// processCPU is the user and system time this process has spent.
func processCPU(tb testing.TB) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		tb.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// startTurnServer starts this test binary as TestTurnServer and returns
// its URL; the server ends with the benchmark.
func startTurnServer(b *testing.B) string {
	cmd := exec.Command(os.Args[0], "-test.run=^TestTurnServer$")
	cmd.Env = append(os.Environ(), "TACK_TURN_SERVER=1")
	stdin, err := cmd.StdinPipe()
	if err != nil {
		b.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		stdin.Close() // the server's signal to end
		_ = cmd.Wait()
	})
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		b.Fatalf("turn server: %v", err)
	}
	return strings.TrimSpace(line)
}

// TestTurnServer is BenchmarkTurn's server when TACK_TURN_SERVER is set:
// it prints its URL, answers the odd requests with a tool call and the
// even ones with text, and ends when its standard input closes.
func TestTurnServer(t *testing.T) {
	if os.Getenv("TACK_TURN_SERVER") == "" {
		t.Skip("BenchmarkTurn's server process")
	}
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
	fmt.Println(srv.URL)
	_, _ = io.Copy(io.Discard, os.Stdin)
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

// BenchmarkNextRequest is the part of BenchmarkTurn that is tack's alone
// and could grow with the history: building and encoding a turn's two
// requests, with no network. It is meant to be the same at 1 000 turns as
// at 10.
func BenchmarkNextRequest(b *testing.B) {
	for _, turns := range []int{10, 1000} {
		b.Run(fmt.Sprintf("history=%d", turns), func(b *testing.B) {
			s := turnSession(b, "http://127.0.0.1:1")
			s.Restore(history(turns))
			base := append(make([]llm.Message, 0, len(s.messages)+16), s.Messages()...)
			turn := history(1)[1:3] // a call and its result
			prompt := llm.Message{Role: llm.RoleUser, Content: []llm.Block{llm.Text("go on")}}
			send := func() {
				if _, err := s.buildRequest().Encode(); err != nil {
					b.Fatal(err)
				}
			}
			s.messages = append(s.messages, prompt)
			send()
			b.ReportAllocs()
			for b.Loop() {
				s.restoreKeepingCache(base)
				s.messages = append(s.messages, prompt)
				send()
				s.messages = append(s.messages, turn...)
				send()
			}
		})
	}
}
