package tui

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/colorprofile"
	"github.com/charmbracelet/x/ansi"

	"github.com/tackcode/tack/agent"
	"github.com/tackcode/tack/internal/llm"
	"github.com/tackcode/tack/internal/llm/llmtest"
)

// screenLog collects what the program writes, as plain text.
type screenLog struct {
	mu  sync.Mutex
	buf strings.Builder
}

func (s *screenLog) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.buf.Write(p)
	return len(p), nil
}

func (s *screenLog) text() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return ansi.Strip(s.buf.String())
}

// waitFor polls the output until it holds want; the deadline only keeps a
// broken test from hanging.
func (s *screenLog) waitFor(t *testing.T, want string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !strings.Contains(s.text(), want) {
		if time.Now().After(deadline) {
			t.Fatalf("never shown: %q\noutput:\n%s", want, s.text())
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// renameWhenIdle types /rename NAME until the UI takes it: while a turn
// is still ending it answers "wait until the model has finished".
func (r *running) renameWhenIdle(t *testing.T, name string) {
	t.Helper()
	done := "Named this conversation " + name
	deadline := time.Now().Add(30 * time.Second)
	for tries := 0; ; tries++ {
		before := strings.Count(r.out.text(), "wait until the model has finished")
		r.typeKeys("/rename " + name + "\r")
		for !strings.Contains(r.out.text(), done) && strings.Count(r.out.text(), "wait until the model has finished") == before {
			if time.Now().After(deadline) {
				t.Fatalf("/rename never taken after %d tries\noutput:\n%s", tries+1, r.out.text())
			}
			time.Sleep(10 * time.Millisecond)
		}
		if strings.Contains(r.out.text(), done) {
			return
		}
	}
}

// running is the real program on a real agent.Client, fed keys through a
// pipe.
type running struct {
	t     *testing.T
	home  string
	keys  *os.File
	out   *screenLog
	ended chan error
}

// startRun runs the UI in dir, a folder the user trusts, on a session
// against srv.
func startRun(t *testing.T, srv *llmtest.Server, dir, prompt string) *running {
	t.Helper()
	return startRunIn(t, srv, dir, prompt, true, "")
}

// startRunIn runs the UI in dir on a session against srv, with a home of
// its own unless home is given; unless trusted, the UI asks whether the
// folder is trusted first. edit changes the options.
func startRunIn(t *testing.T, srv *llmtest.Server, dir, prompt string, trusted bool, home string, edit ...func(*agent.Options)) *running {
	t.Helper()
	if home == "" {
		home = t.TempDir()
	}
	getenv := func(k string) string {
		switch k {
		case "HOME":
			return home
		case "CLAUDE_CONFIG_DIR":
			return filepath.Join(home, ".claude")
		}
		return ""
	}
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close(); w.Close() })
	run := &running{t: t, home: home, keys: w, out: &screenLog{}, ended: make(chan error, 1)}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	opts := agent.Options{Cwd: dir, SettingSources: []string{"local"}, Env: map[string]string{
		"ANTHROPIC_API_KEY": "test-key", "ANTHROPIC_BASE_URL": srv.URL(), "HOME": home, "CLAUDE_CONFIG_DIR": filepath.Join(home, ".claude"),
	}}
	for _, e := range edit {
		e(&opts)
	}
	if trusted {
		if _, err := agent.TrustWorkspace(opts); err != nil {
			t.Fatal(err)
		}
	}
	go func() {
		run.ended <- Run(ctx, Config{
			Options: opts,
			Prompt:  prompt,
			In:      r, Out: run.out, Getenv: getenv,
			ProgramOptions: []tea.ProgramOption{tea.WithWindowSize(100, 40), tea.WithColorProfile(colorprofile.NoTTY), tea.WithoutSignalHandler()},
		})
	}()
	return run
}

func (r *running) typeKeys(s string) {
	r.t.Helper()
	if _, err := r.keys.WriteString(s); err != nil {
		r.t.Fatal(err)
	}
}

// quit presses Ctrl-C twice and waits for Run to return.
func (r *running) quit() {
	r.t.Helper()
	r.typeKeys("\x03\x03")
	select {
	case err := <-r.ended:
		if err != nil {
			r.t.Errorf("Run: %v", err)
		}
	case <-time.After(30 * time.Second):
		r.t.Fatal("Ctrl-C twice did not end the program")
	}
}

// TestRunWithAgentClient runs the real program on the real agent.Client
// against the fake Messages API: a prompt, a Write approved "always" in the
// dialog, and a second Write the saved rule lets through without asking.
func TestRunWithAgentClient(t *testing.T) {
	dir := t.TempDir()
	srv := llmtest.New(t,
		llmtest.Reply(llmtest.Text("Hello from the model.")),
		llmtest.Reply(llmtest.ToolUse("Write", map[string]any{"file_path": filepath.Join(dir, "a.txt"), "content": "one\n"})),
		llmtest.Reply(llmtest.ToolUse("Write", map[string]any{"file_path": filepath.Join(dir, "b.txt"), "content": "two\n"})),
		llmtest.Reply(llmtest.Text("Both files written.")),
	)
	r := startRun(t, srv, dir, "say hello")
	out := r.out
	// The first prompt is echoed into the scrollback, before the answer.
	out.waitFor(t, "> say hello")
	out.waitFor(t, "Hello from the model.")
	r.typeKeys("write the files\r")
	out.waitFor(t, "Do you want to proceed?")
	r.typeKeys("2") // allow always
	out.waitFor(t, "Both files written.")
	for name, want := range map[string]string{"a.txt": "one\n", "b.txt": "two\n"} {
		if data, err := os.ReadFile(filepath.Join(dir, name)); err != nil || string(data) != want {
			t.Errorf("%s: %q %v", name, data, err)
		}
	}
	if n := strings.Count(out.text(), "Do you want to proceed?"); n != 1 {
		t.Errorf("asked %d times; the rule allowed always should cover the second Write", n)
	}
	if data, err := os.ReadFile(filepath.Join(dir, ".claude", "settings.local.json")); err != nil || !strings.Contains(string(data), `"Edit(./*)"`) {
		t.Errorf("local settings: %s %v", data, err)
	}
	r.quit()
}

// TestClearAndResumeWithAgentClient: /clear starts an empty conversation;
// /resume ID brings the first one back, its history sent to the model.
func TestClearAndResumeWithAgentClient(t *testing.T) {
	srv := llmtest.New(t,
		llmtest.Reply(llmtest.Text("First answer.")),
		llmtest.Reply(llmtest.Text("Fresh answer.")),
		llmtest.Reply(llmtest.Text("Back again.")),
	)
	dir := t.TempDir()
	r := startRun(t, srv, dir, "remember the number 7")
	r.out.waitFor(t, "First answer.")
	r.typeKeys("/status\r")
	r.out.waitFor(t, "Session: ")
	first := strings.Fields(r.out.text()[strings.Index(r.out.text(), "Session: ")+len("Session: "):])[0]
	r.typeKeys("/clear\r")
	r.out.waitFor(t, "Started a new conversation")
	r.typeKeys("fresh start\r")
	r.out.waitFor(t, "Fresh answer.")
	r.typeKeys("/resume " + first + "\r")
	r.out.waitFor(t, "Resumed the conversation "+first)
	r.typeKeys("what was the number?\r")
	r.out.waitFor(t, "Back again.")
	reqs := srv.Requests()
	if len(reqs) != 3 {
		t.Fatalf("%d requests", len(reqs))
	}
	if n := len(reqs[1].Messages); n != 1 {
		t.Errorf("after /clear the model got %d messages, want 1", n)
	}
	if got := reqs[2].Messages; len(got) != 3 || !strings.Contains(llm.TextOf(got[0].Content), "remember the number 7") {
		t.Errorf("after /resume the model got %d messages: %+v", len(got), got)
	}
	// /rename names the conversation: -r NAME finds it.
	// "Back again." shows before the turn has ended, and /rename waits for
	// that: the UI says to try again, as a user would.
	r.renameWhenIdle(t, "number-talk")
	named, err := agent.NewClient(context.Background(), agent.Options{Cwd: dir, Resume: "number-talk", NoSessionPersistence: true,
		Env: map[string]string{"ANTHROPIC_API_KEY": "test-key", "HOME": r.home, "CLAUDE_CONFIG_DIR": filepath.Join(r.home, ".claude")}})
	if err != nil {
		t.Fatalf("resume by the name: %v", err)
	}
	if id := named.SessionID(); id != first {
		t.Errorf("resume by the name: session %s, want %s", id, first)
	}
	named.Close()
	r.quit()
}

// TestDeclinedTrustHolds: answered "no", the folder's hooks never run, in
// the session, after /clear, and when the session is continued (-c), which
// asks again.
func TestDeclinedTrustHolds(t *testing.T) {
	srv := llmtest.New(t,
		llmtest.Reply(llmtest.Text("Answered untrusted.")),
		llmtest.Reply(llmtest.Text("Continued untrusted.")),
	)
	dir := t.TempDir()
	canary := filepath.Join(t.TempDir(), "session-start")
	if err := os.MkdirAll(filepath.Join(dir, ".claude"), 0o755); err != nil {
		t.Fatal(err)
	}
	hook := `{"hooks": {"SessionStart": [{"hooks": [{"type": "command", "command": "touch ` + canary + `"}]}]}}`
	if err := os.WriteFile(filepath.Join(dir, ".claude", "settings.local.json"), []byte(hook), 0o644); err != nil {
		t.Fatal(err)
	}
	r := startRunIn(t, srv, dir, "", false, "")
	r.out.waitFor(t, "Do you trust the files in this folder?")
	r.out.waitFor(t, "hooks (.claude/settings.local.json)")
	r.typeKeys("2")
	r.out.waitFor(t, dir+" is not a trusted folder")
	r.typeKeys("hello\r")
	r.out.waitFor(t, "Answered untrusted.")
	r.typeKeys("/clear\r")
	r.out.waitFor(t, "Started a new conversation")
	if n := strings.Count(r.out.text(), "is not a trusted folder, so what it brings is off"); n != 2 {
		t.Errorf("the notice was shown %d times, want once per session (2)", n)
	}
	r.quit()
	if _, err := os.Stat(canary); err == nil {
		t.Fatal("the folder's SessionStart hook ran")
	}

	// tack -c in the same folder asks again, before the session resumes.
	c := startRunIn(t, srv, dir, "", false, r.home, func(o *agent.Options) { o.Continue = true })
	c.out.waitFor(t, "Do you trust the files in this folder?")
	if strings.Contains(c.out.text(), "Answered untrusted.") {
		t.Error("the conversation was resumed before the answer")
	}
	c.typeKeys("2")
	c.out.waitFor(t, "Answered untrusted.") // the resumed conversation
	c.typeKeys("and now?\r")
	c.out.waitFor(t, "Continued untrusted.")
	c.quit()
	if _, err := os.Stat(canary); err == nil {
		t.Fatal("the folder's SessionStart hook ran on -c")
	}
}

// TestMCPServerThatNeverAnswers: a server that reads its input and never
// answers is announced as failed once its start-up time is over, and /mcp
// shows it failed with the reason and what to set; the session goes on.
func TestMCPServerThatNeverAnswers(t *testing.T) {
	srv := llmtest.New(t, llmtest.Reply(llmtest.Text("Still answering.")))
	r := startRunIn(t, srv, t.TempDir(), "", true, "", func(o *agent.Options) {
		o.Env["MCP_TIMEOUT"] = "1500"
		o.MCPConfig = []string{`{"mcpServers": {"reader": {"command": "sh", "args": ["-c", "cat >/dev/null"]}}}`}
	})
	const why = "no answer to the MCP handshake (initialize request) within 1.5s; set MCP_TIMEOUT (milliseconds) to wait longer"
	r.out.waitFor(t, `MCP server "reader" failed: `+why)
	r.typeKeys("/mcp\r")
	r.out.waitFor(t, "reader: failed · stdio dynamic")
	if _, shown, _ := strings.Cut(r.out.text(), "> /mcp"); !strings.Contains(shown, "reader: failed · stdio dynamic") || !strings.Contains(shown, why) {
		t.Errorf("/mcp shows:\n%s", shown)
	}
	r.typeKeys("hello\r")
	r.out.waitFor(t, "Still answering.")
	r.quit()
}
