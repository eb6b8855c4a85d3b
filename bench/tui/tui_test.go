// Package tui benchmarks the interactive terminal UI: the real Bubble Tea
// program of internal/tui, writing to a counting terminal, driven by a
// scripted engine that streams tokens as fast as a fast model does.
//
//	go test ./bench/tui -run '^$' -bench . -benchtime 1x
//
// BenchmarkStreamBytes reports the bytes written to the terminal per
// streamed token (and the full redraws, which must be 0);
// BenchmarkLongSessionRSS the resident memory after a session of 2 000
// messages has been displayed (target ≤ 100 MiB); BenchmarkKeystrokeLatency
// the time from a key press to the terminal write that shows it, while the
// model streams.
package tui

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"iter"
	"os"
	"runtime"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/colorprofile"

	"github.com/tackcode/tack/agent"
	itui "github.com/tackcode/tack/internal/tui"
)

// script is what the engine does with a prompt.
type script func(ctx context.Context, prompt string, emit func(agent.Message))

// engine is a scripted session.
type engine struct {
	ctx    context.Context
	cancel context.CancelFunc
	run    script
	out    chan agent.Message
	queue  chan string
	done   chan struct{} // closed when a prompt's run has ended
}

func newEngine(run script) *engine {
	ctx, cancel := context.WithCancel(context.Background())
	e := &engine{ctx: ctx, cancel: cancel, run: run, out: make(chan agent.Message, 64), queue: make(chan string, 16), done: make(chan struct{}, 16)}
	go func() {
		defer close(e.out)
		for {
			select {
			case p := <-e.queue:
				e.run(ctx, p, func(m agent.Message) {
					select {
					case e.out <- m:
					case <-ctx.Done():
					}
				})
				e.done <- struct{}{}
			case <-ctx.Done():
				return
			}
		}
	}()
	return e
}

func (e *engine) Send(p string) error             { e.queue <- p; return nil }
func (e *engine) SendPrompt(p agent.Prompt) error { e.queue <- p.Text; return nil }
func (e *engine) Messages() iter.Seq2[agent.Message, error] {
	return func(yield func(agent.Message, error) bool) {
		for m := range e.out {
			if !yield(m, nil) {
				return
			}
		}
	}
}
func (e *engine) Interrupt() []string                          { return nil }
func (e *engine) SetModel(string) (string, error)              { return "claude-bench", nil }
func (e *engine) SetPermissionMode(agent.PermissionMode) error { return nil }
func (e *engine) Info() agent.ClientInfo {
	return agent.ClientInfo{SessionID: "bench", Model: "claude-bench"}
}
func (e *engine) MCPServers() []agent.MCPServerStatus           { return nil }
func (e *engine) LanguageServers() []agent.LanguageServerStatus { return nil }
func (e *engine) Flush(context.Context) error                   { return nil }
func (e *engine) CloseFor(agent.EndReason) error                { e.cancel(); return nil }
func (e *engine) Notify(context.Context, string, string, string) []string {
	return nil
}
func (e *engine) RewindFiles(string, bool) agent.RewindResult       { return agent.RewindResult{} }
func (e *engine) MCPLogin(context.Context, string) error            { return nil }
func (e *engine) ContextUsage() agent.ContextUsage                  { return agent.ContextUsage{} }
func (e *engine) UpdatePermissions(...agent.PermissionUpdate) error { return nil }
func (e *engine) Settings() agent.Settings                          { return agent.Settings{} }
func (e *engine) Hooks() []agent.HookEntry                          { return nil }

// terminal counts what the UI writes and signals writes holding a marker.
type terminal struct {
	mu      sync.Mutex
	bytes   int64
	writes  int64
	redraws int64 // full-screen clears
	marker  []byte
	seen    chan time.Time
}

func (t *terminal) Write(p []byte) (int, error) {
	t.mu.Lock()
	t.bytes += int64(len(p))
	t.writes++
	t.redraws += int64(bytes.Count(p, []byte("\x1b[2J")))
	marker := t.marker
	t.mu.Unlock()
	if marker != nil && bytes.Contains(p, marker) {
		select {
		case t.seen <- time.Now():
		default:
		}
	}
	return len(p), nil
}

func (t *terminal) counts() (bytes, writes, redraws int64) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.bytes, t.writes, t.redraws
}

func event(v string) agent.Message {
	return &agent.StreamEvent{Type: "stream_event", Event: json.RawMessage(v)}
}

// streamText streams text token by token (a token is a word), one every
// gap, as a model's answer.
func streamText(ctx context.Context, emit func(agent.Message), words []string, gap time.Duration) {
	emit(event(`{"type":"message_start","message":{}}`))
	emit(event(`{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`))
	var all strings.Builder
	for _, w := range words {
		if ctx.Err() != nil {
			return
		}
		all.WriteString(w)
		b, _ := json.Marshal(w)
		emit(event(`{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":` + string(b) + `}}`))
		if gap > 0 {
			time.Sleep(gap)
		}
	}
	emit(event(`{"type":"content_block_stop","index":0}`))
	emit(&agent.AssistantMessage{Type: "assistant", Message: assistantText(all.String())})
}

func assistantText(s string) (m agent.APIMessage) {
	m.Role = agent.RoleAssistant
	m.Content = []agent.ContentBlock{agent.TextBlock(s)}
	return m
}

// words makes n tokens of prose: lowercase words, lines of 12 words,
// paragraphs of 4 lines.
func words(n int) []string {
	vocab := []string{"the", "model", "reads", "code", "and", "edits", "files", "while", "tests", "run", "in", "order"}
	out := make([]string, n)
	for i := range out {
		w := vocab[i%len(vocab)]
		switch {
		case (i+1)%48 == 0:
			w += ".\n\n"
		case (i+1)%12 == 0:
			w += "\n"
		default:
			w += " "
		}
		out[i] = w
	}
	return out
}

// session runs the UI with the engine until stop is called.
type session struct {
	term  *terminal
	eng   *engine
	keys  *os.File // write end of the UI's input
	stop  func()
	ended chan error
}

func startSession(b *testing.B, run script) *session {
	b.Helper()
	dir := b.TempDir()
	r, w, err := os.Pipe()
	if err != nil {
		b.Fatal(err)
	}
	term := &terminal{seen: make(chan time.Time, 1)}
	eng := newEngine(run)
	ctx, cancel := context.WithCancel(context.Background())
	s := &session{term: term, eng: eng, keys: w, ended: make(chan error, 1)}
	getenv := func(k string) string {
		switch k {
		case "HOME":
			return dir
		case "CLAUDE_CONFIG_DIR":
			return dir + "/.claude"
		}
		return ""
	}
	// A folder the user trusts: the UI starts without asking.
	opts := agent.Options{Cwd: dir, SettingSources: []string{}, Env: map[string]string{"HOME": dir, "CLAUDE_CONFIG_DIR": dir + "/.claude"}}
	if _, err := agent.TrustWorkspace(opts); err != nil {
		b.Fatal(err)
	}
	go func() {
		s.ended <- itui.Run(ctx, itui.Config{
			Options: opts,
			In:      r, Out: term, Getenv: getenv,
			Start: func(context.Context, agent.Options) (itui.Engine, error) { return eng, nil },
			ProgramOptions: []tea.ProgramOption{
				tea.WithWindowSize(100, 40), tea.WithColorProfile(colorprofile.ANSI256),
				tea.WithoutSignalHandler(), tea.WithEnvironment([]string{"TERM=xterm-256color"}),
			},
		})
	}()
	s.stop = func() {
		cancel()
		if err := <-s.ended; err != nil {
			b.Errorf("the UI ended with %v", err)
		}
		r.Close()
		w.Close()
	}
	// Let the first frame out.
	deadline := time.Now().Add(10 * time.Second)
	for {
		if n, _, _ := term.counts(); n > 0 {
			break
		}
		if time.Now().After(deadline) {
			b.Fatal("the UI drew nothing")
		}
		time.Sleep(5 * time.Millisecond)
	}
	return s
}

// prompt types a prompt and Enter, and waits for the engine to finish
// running it, then for the UI to settle.
func (s *session) prompt(b *testing.B, text string) {
	b.Helper()
	if _, err := s.keys.WriteString(text + "\r"); err != nil {
		b.Fatal(err)
	}
	select {
	case <-s.eng.done:
	case <-time.After(5 * time.Minute):
		b.Fatal("the run never ended")
	}
	time.Sleep(200 * time.Millisecond) // the last frames and prints
}

func BenchmarkStreamBytes(b *testing.B) {
	const tokens = 2000
	text := words(tokens)
	for b.Loop() {
		s := startSession(b, func(ctx context.Context, _ string, emit func(agent.Message)) {
			streamText(ctx, emit, text, time.Millisecond)
			emit(&agent.ResultMessage{Type: "result", Subtype: "success"})
		})
		before, _, _ := s.term.counts()
		s.prompt(b, "go")
		after, writes, redraws := s.term.counts()
		s.stop()
		b.ReportMetric(float64(after-before)/tokens, "bytes/token")
		b.ReportMetric(float64(writes), "writes")
		b.ReportMetric(float64(redraws), "full-redraws")
	}
}

func BenchmarkLongSessionRSS(b *testing.B) {
	const turns = 500 // each: text, tool call, tool result, text → 2 000 messages
	for b.Loop() {
		s := startSession(b, func(ctx context.Context, _ string, emit func(agent.Message)) {
			for i := range turns {
				if ctx.Err() != nil {
					return
				}
				para := strings.Repeat(fmt.Sprintf("Step %d: reading the code and deciding what to change next. ", i), 4)
				emit(&agent.AssistantMessage{Type: "assistant", Message: assistantText(para)})
				id := "toolu_" + strconv.Itoa(i)
				input, _ := json.Marshal(map[string]string{"command": fmt.Sprintf("go test ./pkg%d/...", i)})
				var tu agent.APIMessage
				tu.Role = agent.RoleAssistant
				tu.Content = []agent.ContentBlock{{Type: agent.BlockToolUse, ID: id, Name: "Bash", Input: input}}
				emit(&agent.AssistantMessage{Type: "assistant", Message: tu})
				out := strings.Repeat("ok  \tgithub.com/x/pkg\t0.123s\n", 40)
				emit(&agent.UserMessage{Type: "user", Message: agent.MessageParam{Role: agent.RoleUser, Content: []agent.ContentBlock{{Type: agent.BlockToolResult, ToolUseID: id, Content: []agent.ContentBlock{agent.TextBlock(out)}}}}})
				emit(&agent.AssistantMessage{Type: "assistant", Message: assistantText("Done with step " + strconv.Itoa(i) + ".")})
			}
			emit(&agent.ResultMessage{Type: "result", Subtype: "success"})
		})
		s.prompt(b, "go")
		runtime.GC()
		debug.FreeOSMemory()
		rss := rssMiB(b)
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		s.stop()
		b.ReportMetric(rss, "RSS-MiB")
		b.ReportMetric(float64(ms.HeapInuse)/(1<<20), "heap-MiB")
		if rss > 100 {
			b.Errorf("RSS %.1f MiB after a 2 000-message session: over the 100 MiB target", rss)
		}
	}
}

func rssMiB(b *testing.B) float64 {
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		b.Skip("no /proc/self/status")
	}
	for _, l := range strings.Split(string(data), "\n") {
		if f := strings.Fields(l); len(f) >= 2 && f[0] == "VmRSS:" {
			kb, _ := strconv.ParseFloat(f[1], 64)
			return kb / 1024
		}
	}
	b.Skip("no VmRSS")
	return 0
}

func BenchmarkKeystrokeLatency(b *testing.B) {
	const presses = 30
	for b.Loop() {
		streaming := make(chan struct{})
		s := startSession(b, func(ctx context.Context, _ string, emit func(agent.Message)) {
			close(streaming)
			// Streams until the session ends.
			for ctx.Err() == nil {
				streamText(ctx, emit, words(480), time.Millisecond)
			}
		})
		if _, err := s.keys.WriteString("go\r"); err != nil {
			b.Fatal(err)
		}
		<-streaming
		time.Sleep(100 * time.Millisecond)
		var lat []time.Duration
		for i := range presses {
			// A letter neither the streamed text nor any escape sequence
			// holds, a new one each time.
			key := string(rune('а' + i))
			s.term.mu.Lock()
			s.term.marker = []byte(key)
			s.term.mu.Unlock()
			select { // a late sighting of the previous key
			case <-s.term.seen:
			default:
			}
			t0 := time.Now()
			if _, err := s.keys.WriteString(key); err != nil {
				b.Fatal(err)
			}
			select {
			case t1 := <-s.term.seen:
				lat = append(lat, t1.Sub(t0))
			case <-time.After(5 * time.Second):
				b.Fatalf("key %d never shown", i)
			}
			time.Sleep(20 * time.Millisecond)
		}
		s.stop()
		slices.Sort(lat)
		b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50-ms")
		b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds())/1000, "p99-ms")
	}
}
