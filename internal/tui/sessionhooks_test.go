package tui

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tackcode/tack/agent"
	"github.com/tackcode/tack/internal/hook/hooktest"
	"github.com/tackcode/tack/internal/llm/llmtest"
)

// logSessionHooks makes the folder's local settings log every Setup,
// SessionStart and SessionEnd payload to the returned file.
func logSessionHooks(t *testing.T, dir string) string {
	t.Helper()
	log := filepath.Join(t.TempDir(), "hooks.jsonl")
	b, err := json.Marshal(map[string]any{"hooks": hooktest.LoggingHooks(log, "Setup", "SessionStart", "SessionEnd")})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(dir, ".claude"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, ".claude", "settings.local.json"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	return log
}

// lifecycle is each payload as "Event:source-or-reason@session".
func lifecycle(payloads []hooktest.Payload, names map[string]string) []string {
	var out []string
	for _, p := range payloads {
		what := p.String("source") + p.String("reason") + p.String("trigger")
		out = append(out, string(p.Event)+":"+what+"@"+names[p.String("session_id")])
	}
	return out
}

// leave sends keys that leave the program and waits for Run to return.
func (r *running) leave(keys string) {
	r.t.Helper()
	r.typeKeys(keys)
	select {
	case err := <-r.ended:
		if err != nil {
			r.t.Errorf("Run: %v", err)
		}
	case <-time.After(30 * time.Second):
		r.t.Fatalf("%q did not end the program", keys)
	}
}

// sessionShown is the session id /status shows.
func (r *running) sessionShown() string {
	r.t.Helper()
	const label = "Session: "
	before := strings.Count(r.out.text(), label)
	r.typeKeys("/status\r")
	deadline := time.Now().Add(30 * time.Second)
	for {
		text := r.out.text()
		if strings.Count(text, label) > before {
			if f := strings.Fields(text[strings.LastIndex(text, label)+len(label):]); len(f) > 0 {
				return f[0]
			}
		}
		if time.Now().After(deadline) {
			r.t.Fatalf("/status showed no session:\n%s", text)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestSessionHooksThroughTheUI: with --init the UI's first session runs the
// Setup hooks, once; /rename changes the session without ending it for the
// hooks; /clear ends the conversation with reason clear and starts the
// next with source clear; /resume ends that one with reason resume and
// resumes the first (source resume); leaving at the prompt ends it with
// reason prompt_input_exit.
func TestSessionHooksThroughTheUI(t *testing.T) {
	srv := llmtest.New(t,
		llmtest.Reply(llmtest.Text("First answer.")),
		llmtest.Reply(llmtest.Text("Fresh answer.")),
	)
	dir := t.TempDir()
	log := logSessionHooks(t, dir)
	r := startRunIn(t, srv, dir, "hello", true, "", func(o *agent.Options) { o.Setup = agent.SetupInit })
	r.out.waitFor(t, "First answer.")
	first := r.sessionShown()
	r.renameWhenIdle(t, "first-talk")
	if again := r.sessionShown(); again != first {
		t.Errorf("/rename changed the session: %s, then %s", first, again)
	}
	r.typeKeys("/clear\r")
	r.out.waitFor(t, "Started a new conversation")
	r.typeKeys("fresh start\r")
	r.out.waitFor(t, "Fresh answer.")
	second := r.sessionShown()
	r.typeKeys("/resume " + first + "\r")
	r.out.waitFor(t, "Resumed the conversation "+first)
	r.quit()

	got := hooktest.ReadLog(t, log)
	names := map[string]string{first: "first", second: "second"}
	want := []string{
		"Setup:init@first",
		"SessionStart:startup@first",
		"SessionEnd:clear@first",
		"SessionStart:clear@second",
		"SessionEnd:resume@second",
		"SessionStart:resume@first",
		"SessionEnd:prompt_input_exit@first",
	}
	if seq := lifecycle(got, names); !slices.Equal(seq, want) {
		t.Errorf("events\n got %s\nwant %s", strings.Join(seq, "\n     "), strings.Join(want, "\n     "))
	}
	// SessionEnd says which prompt came last (the second session's, run
	// in it); SessionStart comes before any.
	for _, p := range got {
		switch p.Event {
		case "SessionEnd":
			if p.String("session_id") == second && p.String("prompt_id") == "" {
				t.Errorf("SessionEnd without prompt_id: %s", p.Raw)
			}
		case "SessionStart":
			if p.Has("prompt_id") || p.String("model") == "" {
				t.Errorf("SessionStart %s", p.Raw)
			}
		}
	}
}

// TestLeavingTheUIEndsTheSession: each way of leaving at the prompt ends
// the session with reason prompt_input_exit.
func TestLeavingTheUIEndsTheSession(t *testing.T) {
	for name, keys := range map[string]string{"ctrl-c twice": "\x03\x03", "ctrl-d": "\x04", "/exit": "/exit\r", "/quit": "/quit\r"} {
		t.Run(name, func(t *testing.T) {
			srv := llmtest.New(t)
			dir := t.TempDir()
			log := logSessionHooks(t, dir)
			r := startRun(t, srv, dir, "")
			r.out.waitFor(t, "/help for commands")
			r.leave(keys)
			got := hooktest.ReadLog(t, log)
			if seq := lifecycle(got, nil); !slices.Equal(seq, []string{"SessionStart:startup@", "SessionEnd:prompt_input_exit@"}) {
				t.Errorf("events %v", seq)
			}
		})
	}
}
