package tooltest

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

// Hang bounds how long anything that should be prompt may take; it only
// catches hangs.
const Hang = 10 * time.Second

// NewEnv returns an environment in a fresh project directory, with a shell.
func NewEnv(t *testing.T) *tool.Env {
	t.Helper()
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	env := &tool.Env{ProjectDir: dir, Shell: shell.New(dir, nil), Files: tool.NewFileState(), ScratchDir: filepath.Join(t.TempDir(), "scratch")}
	t.Cleanup(func() { env.Shell.Close() })
	return env
}

// Call validates input against the tool's schema, as the registry does
// before Run, then runs the tool.
func Call(ctx context.Context, t *testing.T, reg *tool.Registry, env *tool.Env, name, input string) (tool.Result, error) {
	t.Helper()
	tl, ok := reg.Get(name)
	if !ok {
		t.Fatalf("no tool %s", name)
	}
	if err := reg.Validate(tl, json.RawMessage(input)); err != nil {
		t.Fatalf("%s input %s rejected: %v", name, input, err)
	}
	return tl.Run(ctx, env, json.RawMessage(input))
}

// MustCall is Call for a run that must not fail.
func MustCall(t *testing.T, reg *tool.Registry, env *tool.Env, name, input string) tool.Result {
	t.Helper()
	r, err := Call(context.Background(), t, reg, env, name, input)
	if err != nil {
		t.Fatalf("%s %s: %v", name, input, err)
	}
	return r
}

// Text is a result's text.
func Text(r tool.Result) string { return llm.TextOf(r.Content) }

// Structured is a result's structured value, as JSON.
func Structured(t *testing.T, r tool.Result) string {
	t.Helper()
	b, err := json.Marshal(r.Structured)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// ReadPid waits for a command to write a pid into path.
func ReadPid(t *testing.T, path string) int {
	t.Helper()
	deadline := time.Now().Add(Hang)
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

// AssertGone fails unless pid is soon dead (or a zombie).
func AssertGone(t *testing.T, pid int) {
	t.Helper()
	deadline := time.Now().Add(Hang)
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
