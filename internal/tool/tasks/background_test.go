package tasks_test

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
	"github.com/tackcode/tack/internal/tool/bash"
	"github.com/tackcode/tack/internal/tool/tasks"
	"github.com/tackcode/tack/internal/tool/tooltest"
)

func TestBackgroundTaskFlow(t *testing.T) {
	env := tooltest.NewEnv(t)
	gate := filepath.Join(env.ProjectDir, "gate")
	r := tooltest.MustCall(t, background, env, "Bash", bashInput(`echo one; while [ ! -e gate ]; do sleep 0.02; done; echo two`, `,"run_in_background":true`))
	if r.IsError || !strings.Contains(tooltest.Text(r), "bash_1") || !strings.Contains(tooltest.Text(r), "TaskOutput") {
		t.Fatalf("start: %q", tooltest.Text(r))
	}
	var started struct {
		ID   string `json:"backgroundTaskId"`
		Path string `json:"backgroundOutputPath"`
	}
	if got := tooltest.Structured(t, r); !strings.HasPrefix(got, `{"stdout":"","stderr":"","interrupted":false,"isImage":false,"noOutputExpected":false,"backgroundTaskId":"bash_1","backgroundOutputPath":`) ||
		json.Unmarshal([]byte(got), &started) != nil || !strings.Contains(tooltest.Text(r), started.Path) {
		t.Fatalf("structured %s: the output path is not the one the text names", got)
	}

	// Poll without blocking until the first line is there.
	deadline := time.Now().Add(tooltest.Hang)
	var first string
	for !strings.Contains(first, "one") {
		if time.Now().After(deadline) {
			t.Fatalf("no output: %q", first)
		}
		r = tooltest.MustCall(t, background, env, "TaskOutput", `{"task_id":"bash_1","block":false}`)
		if !strings.HasPrefix(tooltest.Text(r), "Task bash_1 is still running.\n") {
			t.Fatalf("running: %q", tooltest.Text(r))
		}
		if out := r.Structured.(tasks.TaskOutputResult).Output; out != "" {
			first += out
		}
	}
	if first != "one\n" {
		t.Fatalf("first output %q", first)
	}
	// Each call returns what is new since the previous one.
	r = tooltest.MustCall(t, background, env, "TaskOutput", `{"task_id":"bash_1","block":false}`)
	if tooltest.Text(r) != "Task bash_1 is still running.\n(no new output)" {
		t.Fatalf("nothing new: %q", tooltest.Text(r))
	}
	res := r.Structured.(tasks.TaskOutputResult)
	if res.Status != "running" || res.ExitCode != nil || !strings.HasPrefix(res.OutputFile, env.ScratchDir) {
		t.Fatalf("structured %+v", res)
	}

	os.WriteFile(gate, nil, 0o644)
	r = tooltest.MustCall(t, background, env, "TaskOutput", `{"task_id":"bash_1"}`) // blocks until it ends
	if tooltest.Text(r) != "Task bash_1 exited with code 0.\ntwo\n" || r.IsError {
		t.Fatalf("ended: %q", tooltest.Text(r))
	}
	if res := r.Structured.(tasks.TaskOutputResult); res.Status != "exited" || res.ExitCode == nil || *res.ExitCode != 0 {
		t.Fatalf("structured %+v", res)
	}
	if _, err := tooltest.Call(context.Background(), t, background, env, "TaskStop", `{"task_id":"bash_1"}`); err == nil || !strings.Contains(err.Error(), "not running") {
		t.Fatalf("stopping an ended task: %v", err)
	}
}

func TestTaskOutputWaitsAtMostTimeout(t *testing.T) {
	env := tooltest.NewEnv(t)
	tooltest.MustCall(t, background, env, "Bash", `{"command":"sleep 300","run_in_background":true}`)
	start := time.Now()
	r := tooltest.MustCall(t, background, env, "TaskOutput", `{"task_id":"bash_1","timeout":100}`)
	if time.Since(start) > tooltest.Hang || tooltest.Text(r) != "Task bash_1 is still running.\n(no new output)" {
		t.Fatalf("got %q after %v", tooltest.Text(r), time.Since(start))
	}

	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(100*time.Millisecond, cancel)
	if _, err := tooltest.Call(ctx, t, background, env, "TaskOutput", `{"task_id":"bash_1","timeout":600000}`); err == nil {
		t.Fatal("an interrupted wait did not fail")
	}
}

func TestTaskStop(t *testing.T) {
	env := tooltest.NewEnv(t)
	tooltest.MustCall(t, background, env, "Bash", `{"command":"sleep 300 & echo $! > child.pid; sleep 300","run_in_background":true}`)
	child := tooltest.ReadPid(t, filepath.Join(env.ProjectDir, "child.pid"))

	r := tooltest.MustCall(t, background, env, "TaskStop", `{"shell_id":"bash_1"}`) // the deprecated name works
	if r.IsError || !strings.HasPrefix(tooltest.Text(r), "Stopped task bash_1 (sleep 300") {
		t.Fatalf("stop: %q", tooltest.Text(r))
	}
	if res := r.Structured.(tasks.TaskStopResult); res.TaskID != "bash_1" || res.TaskType != "local_bash" || !strings.HasPrefix(res.Command, "sleep 300 &") {
		t.Fatalf("structured %+v", res)
	}
	tooltest.AssertGone(t, child)
	if r := tooltest.MustCall(t, background, env, "TaskOutput", `{"task_id":"bash_1","block":false}`); !strings.HasPrefix(tooltest.Text(r), "Task bash_1 was killed") {
		t.Fatalf("after stop: %q", tooltest.Text(r))
	}
	if _, err := tooltest.Call(context.Background(), t, background, env, "TaskStop", `{"task_id":"bash_1"}`); err == nil || tool.IsInputError(err) {
		t.Fatalf("second stop: %v", err)
	}
}

func TestUnknownTasks(t *testing.T) {
	env := tooltest.NewEnv(t)
	for _, c := range []struct{ name, input string }{
		{"TaskStop", `{}`},
		{"TaskStop", `{"task_id":"bash_9"}`},
		{"TaskOutput", `{"task_id":"bash_9"}`},
		{"TaskOutput", `{"task_id":""}`},
	} {
		if _, err := tooltest.Call(context.Background(), t, background, env, c.name, c.input); !tool.IsInputError(err) {
			t.Errorf("%s %s: want an input error, got %v", c.name, c.input, err)
		}
	}
}

func TestSessionCloseStopsBackgroundTasks(t *testing.T) {
	env := tooltest.NewEnv(t)
	tooltest.MustCall(t, background, env, "Bash", `{"command":"sleep 300 & echo $! > child.pid; sleep 300","run_in_background":true}`)
	child := tooltest.ReadPid(t, filepath.Join(env.ProjectDir, "child.pid"))
	env.Shell.Close()
	tooltest.AssertGone(t, child)
}

// background offers Bash and the tools that read and stop what it starts
// in the background.
var background = tool.NewRegistry(append(bash.Tools(), tasks.Background()...)...)

func bashInput(command string, extra string) string {
	b, _ := json.Marshal(command)
	return fmt.Sprintf(`{"command":%s%s}`, b, extra)
}
