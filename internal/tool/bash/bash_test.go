package bash

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tackcode/tack/internal/llm"
	"github.com/tackcode/tack/internal/shell"
	"github.com/tackcode/tack/internal/tool"
)

// hang bounds how long anything that should be prompt may take; it only
// catches hangs.
const hang = 10 * time.Second

func newEnv(t *testing.T) *tool.Env {
	t.Helper()
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	env := &tool.Env{ProjectDir: dir, Shell: shell.New(dir, nil), Files: tool.NewFileState(), ScratchDir: filepath.Join(t.TempDir(), "scratch")}
	t.Cleanup(func() { env.Shell.Close() })
	return env
}

var registry = tool.NewRegistry(Tools()...)

// call validates input against the tool's schema, as the registry does
// before Run, then runs the tool.
func call(ctx context.Context, t *testing.T, env *tool.Env, name, input string) (tool.Result, error) {
	t.Helper()
	tl, ok := registry.Get(name)
	if !ok {
		t.Fatalf("no tool %s", name)
	}
	if err := registry.Validate(tl, json.RawMessage(input)); err != nil {
		t.Fatalf("%s input %s rejected: %v", name, input, err)
	}
	return tl.Run(ctx, env, json.RawMessage(input))
}

// mustCall is call for a run that must not fail.
func mustCall(t *testing.T, env *tool.Env, name, input string) tool.Result {
	t.Helper()
	r, err := call(context.Background(), t, env, name, input)
	if err != nil {
		t.Fatalf("%s %s: %v", name, input, err)
	}
	return r
}

func text(r tool.Result) string { return llm.TextOf(r.Content) }

func structured(t *testing.T, r tool.Result) string {
	t.Helper()
	b, err := json.Marshal(r.Structured)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func bashInputJSON(command string, extra string) string {
	b, _ := json.Marshal(command)
	return fmt.Sprintf(`{"command":%s%s}`, b, extra)
}

func TestBashOK(t *testing.T) {
	env := newEnv(t)
	r := mustCall(t, env, "Bash", `{"command":"echo hi","description":"Print hi"}`)
	if text(r) != "hi" || r.IsError {
		t.Fatalf("got %q error %v", text(r), r.IsError)
	}
	// As in the samples' tool_use_result and tool_response.
	if got := structured(t, r); got != `{"stdout":"hi","stderr":"","interrupted":false,"isImage":false,"noOutputExpected":false}` {
		t.Fatalf("structured %s", got)
	}
}

func TestBashNoOutput(t *testing.T) {
	r := mustCall(t, newEnv(t), "Bash", `{"command":"true"}`)
	if text(r) != "(completed with no output)" || r.IsError {
		t.Fatalf("got %q error %v", text(r), r.IsError)
	}
}

func TestBashStderrAndExitCode(t *testing.T) {
	env := newEnv(t)
	r := mustCall(t, env, "Bash", bashInputJSON("echo out; echo err >&2; exit 3", ""))
	if text(r) != "Exit code 3\nout\nerr" || !r.IsError {
		t.Fatalf("got %q error %v", text(r), r.IsError)
	}
	if got := structured(t, r); got != `{"stdout":"out","stderr":"err","interrupted":false,"isImage":false,"noOutputExpected":false}` {
		t.Fatalf("structured %s", got)
	}
	r = mustCall(t, env, "Bash", `{"command":"echo warning >&2"}`)
	if text(r) != "warning" || r.IsError {
		t.Fatalf("stderr only: %q error %v", text(r), r.IsError)
	}
	if r := mustCall(t, env, "Bash", `{"command":"exit 1"}`); text(r) != "Exit code 1" || !r.IsError {
		t.Fatalf("silent failure: %q", text(r))
	}
}

func TestBashCwdPersists(t *testing.T) {
	env := newEnv(t)
	sub := filepath.Join(env.ProjectDir, "my sub")
	os.Mkdir(sub, 0o755)
	mustCall(t, env, "Bash", bashInputJSON(`cd "my sub"`, ""))
	if r := mustCall(t, env, "Bash", `{"command":"pwd"}`); text(r) != sub || env.Cwd() != sub {
		t.Fatalf("pwd %q, env cwd %q", text(r), env.Cwd())
	}
	os.Remove(sub)
	r := mustCall(t, env, "Bash", `{"command":"pwd"}`)
	if text(r) != env.ProjectDir+"\nShell cwd was reset to "+env.ProjectDir || r.IsError {
		t.Fatalf("after removal: %q", text(r))
	}
}

func TestBashTimeout(t *testing.T) {
	env := newEnv(t)
	start := time.Now()
	r := mustCall(t, env, "Bash", `{"command":"echo begun; sleep 300 & echo $! > child.pid; sleep 300","timeout":200}`)
	if time.Since(start) > hang {
		t.Fatalf("took %v", time.Since(start))
	}
	if !r.IsError || text(r) != "Command timed out after 200ms; its process group was killed.\nbegun" {
		t.Fatalf("got %q error %v", text(r), r.IsError)
	}
	if !r.Structured.(Result).Interrupted {
		t.Fatal("structured result not marked interrupted")
	}
	assertGone(t, readPid(t, filepath.Join(env.ProjectDir, "child.pid")))
}

func TestBashInterrupted(t *testing.T) {
	env := newEnv(t)
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(200*time.Millisecond, cancel)
	r, err := call(ctx, t, env, "Bash", `{"command":"sleep 300"}`)
	if err != nil {
		t.Fatal(err)
	}
	if !r.IsError || text(r) != "Command was interrupted; its process group was killed." || !r.Structured.(Result).Interrupted {
		t.Fatalf("got %q error %v", text(r), r.IsError)
	}
}

func TestBashHugeOutput(t *testing.T) {
	r := mustCall(t, newEnv(t), "Bash", `{"command":"yes | head -c 50000000"}`)
	if !strings.Contains(text(r), "\n\n... [49970000 characters truncated] ...\n\n") || len(text(r)) > 31000 {
		t.Fatalf("%d characters, without the expected marker", len(text(r)))
	}
}

func TestBashBadInput(t *testing.T) {
	env := newEnv(t)
	for _, input := range []string{`{"command":"  "}`, `{"command":"true","timeout":-5}`} {
		if _, err := call(context.Background(), t, env, "Bash", input); !tool.IsInputError(err) {
			t.Errorf("%s: want an input error, got %v", input, err)
		}
	}
	bash, _ := registry.Get("Bash")
	for _, input := range []string{`{}`, `{"command":"true","cwd":"/"}`, `{"command":"true","timeout":"5"}`} {
		if err := registry.Validate(bash, json.RawMessage(input)); !tool.IsInputError(err) {
			t.Errorf("schema accepted %s", input)
		}
	}
}

func TestMillis(t *testing.T) {
	f := func(v float64) *float64 { return &v }
	cases := []struct {
		in   *float64
		want time.Duration
	}{
		{nil, 7 * time.Second},
		{f(0), 0},
		{f(1.5), 1500 * time.Microsecond},
		{f(1e300), 365 * 24 * time.Hour},
	}
	for _, c := range cases {
		if got, err := millis("T", "timeout", c.in, 7*time.Second); err != nil || got != c.want {
			t.Errorf("millis(%v) = %v, %v; want %v", c.in, got, err, c.want)
		}
	}
}

// readPid waits for a command to write a pid into path.
func readPid(t *testing.T, path string) int {
	t.Helper()
	deadline := time.Now().Add(hang)
	for time.Now().Before(deadline) {
		b, _ := os.ReadFile(path)
		var pid int
		if _, err := fmt.Sscan(string(b), &pid); err == nil && pid > 0 {
			return pid
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("no pid in %s", path)
	return 0
}

// assertGone fails unless pid is soon dead (or a zombie).
func assertGone(t *testing.T, pid int) {
	t.Helper()
	deadline := time.Now().Add(hang)
	for {
		if syscall.Kill(pid, 0) != nil {
			return
		}
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if i := strings.LastIndexByte(string(b), ')'); err != nil || i >= 0 && i+2 < len(b) && b[i+2] == 'Z' {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("process %d is still alive", pid)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
