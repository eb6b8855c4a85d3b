package hooktest

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/tackcode/tack/internal/hook"
)

// command returns the logging hook's command line for ev.
func command(t *testing.T, log string, ev hook.Event) string {
	t.Helper()
	b, _ := json.Marshal(LoggingHooks(log, ev))
	var cfg map[string][]struct {
		Hooks []struct{ Type, Command string }
	}
	if err := json.Unmarshal(b, &cfg); err != nil {
		t.Fatal(err)
	}
	if len(cfg) != 1 || len(cfg[string(ev)]) != 1 || cfg[string(ev)][0].Hooks[0].Type != "command" {
		t.Fatalf("LoggingHooks(%s) = %s", ev, b)
	}
	return cfg[string(ev)][0].Hooks[0].Command
}

func TestLoggingHooksCoverEveryEventByDefault(t *testing.T) {
	got := LoggingHooks("/tmp/x.jsonl")
	for _, ev := range hook.Events() {
		if _, ok := got[string(ev)]; !ok {
			t.Errorf("no hook for %s", ev)
		}
	}
	if len(got) != len(hook.Events()) {
		t.Errorf("%d events, want %d", len(got), len(hook.Events()))
	}
}

// Hooks running at once, with payloads far larger than a pipe's buffer,
// each leave exactly their payload as one line.
func TestParallelHooksLogWholeLines(t *testing.T) {
	log := filepath.Join(t.TempDir(), "hooks.jsonl")
	cmd := command(t, log, hook.PostToolUse)
	const n = 16
	var wg sync.WaitGroup
	payloads := make([][]byte, n)
	for i := range n {
		big, _ := json.Marshal(map[string]string{"stdout": strings.Repeat(fmt.Sprint(i%10), 300_000)})
		in := hook.PostToolUseInput{Base: hook.Base{SessionID: "s", TranscriptPath: "/t", Cwd: "/"}, ToolName: "Bash",
			ToolUseID: fmt.Sprintf("toolu_%d", i), ToolResponse: big}
		payloads[i], _ = in.MarshalJSON()
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := exec.Command("bash", "-c", cmd)
			c.Stdin = strings.NewReader(string(payloads[i]))
			if out, err := c.CombinedOutput(); err != nil {
				t.Errorf("hook %d: %v %s", i, err, out)
			}
		}()
	}
	wg.Wait()
	got := ReadLog(t, log)
	if len(got) != n {
		t.Fatalf("%d lines, want %d", len(got), n)
	}
	var raw []string
	for _, p := range got {
		raw = append(raw, string(p.Raw))
		if p.Event != hook.PostToolUse || p.String("tool_name") != "Bash" {
			t.Errorf("payload %s…", p.Raw[:80])
		}
	}
	var want []string
	for _, p := range payloads {
		want = append(want, string(p))
	}
	slices.Sort(raw)
	slices.Sort(want)
	if !slices.Equal(raw, want) {
		t.Error("the logged lines are not the payloads")
	}
}

// recorder is a testing.TB that keeps what Fatalf says.
type recorder struct {
	testing.TB
	failures []string
}

func (r *recorder) Helper() {}
func (r *recorder) Fatalf(format string, args ...any) {
	r.failures = append(r.failures, fmt.Sprintf(format, args...))
}

func TestReadLogNamesTheEventAndTheViolation(t *testing.T) {
	log := filepath.Join(t.TempDir(), "hooks.jsonl")
	good, _ := hook.StopInput{Base: hook.Base{SessionID: "s", TranscriptPath: "/t", Cwd: "/"}}.MarshalJSON()
	bad := `{"session_id":"s","transcript_path":"/t","cwd":"/","hook_event_name":"PreToolUse","tool_input":{},"tool_use_id":"x"}`
	if err := os.WriteFile(log, []byte(string(good)+"\n"+bad+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r := &recorder{TB: t}
	ReadLog(r, log)
	if len(r.failures) != 1 || !strings.Contains(r.failures[0], "hooks.jsonl:2") ||
		!strings.Contains(r.failures[0], "PreToolUse payload does not match its schema") || !strings.Contains(r.failures[0], "tool_name") {
		t.Errorf("failures %q", r.failures)
	}
	if got := ReadLog(t, filepath.Join(t.TempDir(), "none.jsonl")); got != nil {
		t.Errorf("no log is no payloads, got %v", got)
	}
	if err := Validate([]byte(`{"hook_event_name":"Nope"}`)); err == nil || !strings.Contains(err.Error(), `"Nope"`) {
		t.Errorf("unknown event: %v", err)
	}
	if err := ValidateOutput([]byte(`{"decision":"maybe"}`)); err == nil {
		t.Error("an invalid output validates")
	}
}

func TestOnlyAndEvents(t *testing.T) {
	ps := []Payload{{Event: hook.PreToolUse}, {Event: hook.Stop}, {Event: hook.PreToolUse}}
	if got := Events(Only(ps, hook.PreToolUse)); !slices.Equal(got, []hook.Event{hook.PreToolUse, hook.PreToolUse}) {
		t.Errorf("Only: %v", got)
	}
	if got := Events(ps); !slices.Equal(got, []hook.Event{hook.PreToolUse, hook.Stop, hook.PreToolUse}) {
		t.Errorf("Events: %v", got)
	}
}
