package bash

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tackcode/tack/internal/tool"
	"github.com/tackcode/tack/internal/tool/tooltest"
)

// hang bounds how long anything that should be prompt may take.
const hang = tooltest.Hang

var registry = tool.NewRegistry(Tools()...)

func newEnv(t *testing.T) *tool.Env { return tooltest.NewEnv(t) }

func call(ctx context.Context, t *testing.T, env *tool.Env, name, input string) (tool.Result, error) {
	t.Helper()
	return tooltest.Call(ctx, t, registry, env, name, input)
}

func mustCall(t *testing.T, env *tool.Env, name, input string) tool.Result {
	t.Helper()
	return tooltest.MustCall(t, registry, env, name, input)
}

func text(r tool.Result) string { return tooltest.Text(r) }

func structured(t *testing.T, r tool.Result) string { t.Helper(); return tooltest.Structured(t, r) }

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
		if got, err := tool.Milliseconds("T", "timeout", c.in, 7*time.Second); err != nil || got != c.want {
			t.Errorf("Milliseconds(%v) = %v, %v; want %v", c.in, got, err, c.want)
		}
	}
}

func readPid(t *testing.T, path string) int { t.Helper(); return tooltest.ReadPid(t, path) }

func assertGone(t *testing.T, pid int) { t.Helper(); tooltest.AssertGone(t, pid) }
