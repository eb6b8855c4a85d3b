package bash

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tackcode/tack/internal/tool"
)

func TestBackgroundTaskFlow(t *testing.T) {
	env := newEnv(t)
	gate := filepath.Join(env.ProjectDir, "gate")
	r := mustCall(t, env, "Bash", bashInputJSON(`echo one; while [ ! -e gate ]; do sleep 0.02; done; echo two`, `,"run_in_background":true`))
	if r.IsError || !strings.Contains(text(r), "bash_1") || !strings.Contains(text(r), "TaskOutput") {
		t.Fatalf("start: %q", text(r))
	}
	if got := structured(t, r); got != `{"stdout":"","stderr":"","interrupted":false,"isImage":false,"noOutputExpected":false,"backgroundTaskId":"bash_1"}` {
		t.Fatalf("structured %s", got)
	}

	// Poll without blocking until the first line is there.
	deadline := time.Now().Add(hang)
	var first string
	for !strings.Contains(first, "one") {
		if time.Now().After(deadline) {
			t.Fatalf("no output: %q", first)
		}
		r = mustCall(t, env, "TaskOutput", `{"task_id":"bash_1","block":false}`)
		if !strings.HasPrefix(text(r), "Task bash_1 is still running.\n") {
			t.Fatalf("running: %q", text(r))
		}
		if out := r.Structured.(TaskOutputResult).Output; out != "" {
			first += out
		}
	}
	if first != "one\n" {
		t.Fatalf("first output %q", first)
	}
	// Each call returns what is new since the previous one.
	r = mustCall(t, env, "TaskOutput", `{"task_id":"bash_1","block":false}`)
	if text(r) != "Task bash_1 is still running.\n(no new output)" {
		t.Fatalf("nothing new: %q", text(r))
	}
	res := r.Structured.(TaskOutputResult)
	if res.Status != "running" || res.ExitCode != nil || !strings.HasPrefix(res.OutputFile, env.ScratchDir) {
		t.Fatalf("structured %+v", res)
	}

	os.WriteFile(gate, nil, 0o644)
	r = mustCall(t, env, "TaskOutput", `{"task_id":"bash_1"}`) // blocks until it ends
	if text(r) != "Task bash_1 exited with code 0.\ntwo\n" || r.IsError {
		t.Fatalf("ended: %q", text(r))
	}
	if res := r.Structured.(TaskOutputResult); res.Status != "exited" || res.ExitCode == nil || *res.ExitCode != 0 {
		t.Fatalf("structured %+v", res)
	}
	if _, err := call(context.Background(), t, env, "TaskStop", `{"task_id":"bash_1"}`); err == nil || !strings.Contains(err.Error(), "not running") {
		t.Fatalf("stopping an ended task: %v", err)
	}
}

func TestTaskOutputWaitsAtMostTimeout(t *testing.T) {
	env := newEnv(t)
	mustCall(t, env, "Bash", `{"command":"sleep 300","run_in_background":true}`)
	start := time.Now()
	r := mustCall(t, env, "TaskOutput", `{"task_id":"bash_1","timeout":100}`)
	if time.Since(start) > hang || text(r) != "Task bash_1 is still running.\n(no new output)" {
		t.Fatalf("got %q after %v", text(r), time.Since(start))
	}

	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(100*time.Millisecond, cancel)
	if _, err := call(ctx, t, env, "TaskOutput", `{"task_id":"bash_1","timeout":600000}`); err == nil {
		t.Fatal("an interrupted wait did not fail")
	}
}

func TestTaskStop(t *testing.T) {
	env := newEnv(t)
	mustCall(t, env, "Bash", `{"command":"sleep 300 & echo $! > child.pid; sleep 300","run_in_background":true}`)
	child := readPid(t, filepath.Join(env.ProjectDir, "child.pid"))

	r := mustCall(t, env, "TaskStop", `{"shell_id":"bash_1"}`) // the deprecated name works
	if r.IsError || !strings.HasPrefix(text(r), "Stopped task bash_1 (sleep 300") {
		t.Fatalf("stop: %q", text(r))
	}
	if res := r.Structured.(TaskStopResult); res.TaskID != "bash_1" || res.TaskType != "local_bash" || !strings.HasPrefix(res.Command, "sleep 300 &") {
		t.Fatalf("structured %+v", res)
	}
	assertGone(t, child)
	if r := mustCall(t, env, "TaskOutput", `{"task_id":"bash_1","block":false}`); !strings.HasPrefix(text(r), "Task bash_1 was killed") {
		t.Fatalf("after stop: %q", text(r))
	}
	if _, err := call(context.Background(), t, env, "TaskStop", `{"task_id":"bash_1"}`); err == nil || tool.IsInputError(err) {
		t.Fatalf("second stop: %v", err)
	}
}

func TestUnknownTasks(t *testing.T) {
	env := newEnv(t)
	for _, c := range []struct{ name, input string }{
		{"TaskStop", `{}`},
		{"TaskStop", `{"task_id":"bash_9"}`},
		{"TaskOutput", `{"task_id":"bash_9"}`},
		{"TaskOutput", `{"task_id":""}`},
	} {
		if _, err := call(context.Background(), t, env, c.name, c.input); !tool.IsInputError(err) {
			t.Errorf("%s %s: want an input error, got %v", c.name, c.input, err)
		}
	}
}

func TestSessionCloseStopsBackgroundTasks(t *testing.T) {
	env := newEnv(t)
	mustCall(t, env, "Bash", `{"command":"sleep 300 & echo $! > child.pid; sleep 300","run_in_background":true}`)
	child := readPid(t, filepath.Join(env.ProjectDir, "child.pid"))
	env.Shell.Close()
	assertGone(t, child)
}
