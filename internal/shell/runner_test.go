package shell

import (
	"context"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"
)

// localRunner runs what it is handed as a child, recording each command,
// as a host's terminal would run it.
type localRunner struct{ got [][]string }

func (r *localRunner) Run(ctx context.Context, args []string, dir string, env []string) (string, int, error) {
	r.got = append(r.got, args)
	cmd := exec.CommandContext(ctx, args[0], args[1:]...)
	cmd.Dir, cmd.Env = dir, env
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	out, err := cmd.CombinedOutput()
	if cmd.ProcessState == nil {
		return "", 0, err
	}
	return string(out), exitCode(cmd.ProcessState), nil
}

// rewrite is a sandbox that wraps every command in env(1).
type rewrite struct{}

func (rewrite) Wrap(cmd *exec.Cmd, _ string, _ bool, _ []string) (func(), error) {
	path, err := exec.LookPath("env")
	if err != nil {
		return nil, err
	}
	cmd.Path, cmd.Args = path, append([]string{"env"}, cmd.Args...)
	return func() {}, nil
}

func TestRunnerRunsTheCommandsTheSandboxLeavesAlone(t *testing.T) {
	dir := testDir(t)
	s := New(dir, nil)
	r := &localRunner{}
	s.SetRunner(r)
	out := run(t, s, "mkdir sub && cd sub && echo hello; exit 3")
	if len(r.got) != 1 || r.got[0][0] != s.program || r.got[0][1] != "-c" {
		t.Fatalf("runner got %q", r.got)
	}
	if out.Stdout != "hello\n" || out.ExitCode != 3 {
		t.Errorf("output %+v", out)
	}
	// The working directory is kept across the runner's commands too.
	if cwd := run(t, s, "pwd").Stdout; strings.TrimSpace(cwd) != dir+"/sub" {
		t.Errorf("pwd %q", cwd)
	}

	boxed := New(dir, nil)
	boxed.SetWrapper(rewrite{})
	r2 := &localRunner{}
	boxed.SetRunner(r2)
	if got := run(t, boxed, "echo inside").Stdout; got != "inside\n" || len(r2.got) != 0 {
		t.Errorf("a wrapped command went to the runner (%q) or failed (%q)", r2.got, got)
	}
}

func TestRunnerTimeout(t *testing.T) {
	s := New(testDir(t), nil)
	s.SetRunner(&localRunner{})
	out, err := s.Run(context.Background(), "sleep 30", RunOptions{Timeout: 100 * time.Millisecond})
	if err != nil || !out.TimedOut || out.Interrupted {
		t.Errorf("out %+v, err %v", out, err)
	}
}
