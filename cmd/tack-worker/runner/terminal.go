package runner

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"runtime"
	"syscall"
)

// processTerminal runs Bash's commands as the worker's children, each in a
// process group of its own that is killed when the worker dies, so that a
// command of a killed worker does not go on beside the worker that takes
// its run over. The kernel kills the shell (Pdeathsig), but not what the
// shell started (a subshell, a pipeline, a sleep): a watcher in the
// group, a shell that reads a pipe only the worker writes to, kills the
// whole group when the pipe closes, which it does when the worker dies.
type processTerminal struct{}

// watchGroup is the watcher's script: at end of input (the worker's end
// of the pipe closed), SIGKILL to its own process group, the command's.
const watchGroup = "read _; kill -KILL 0"

func (processTerminal) Run(ctx context.Context, args []string, dir string, env []string) (string, int, error) {
	if len(args) == 0 {
		return "", 0, errors.New("terminal: no command")
	}
	// Pdeathsig fires when the thread that started the child ends, not the
	// process: the goroutine keeps its thread until the command is over.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Dir, cmd.Env = dir, env
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		return "", 0, err
	}
	stopWatch := watch(cmd.Process.Pid)
	defer stopWatch()
	done := make(chan struct{})
	go func() {
		select {
		case <-ctx.Done():
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		case <-done:
		}
	}()
	err := cmd.Wait()
	close(done)
	var exit *exec.ExitError
	switch {
	case err == nil:
		return out.String(), 0, nil
	case errors.As(err, &exit):
		if ws, ok := exit.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return out.String(), 128 + int(ws.Signal()), nil
		}
		return out.String(), exit.ExitCode(), nil
	}
	return out.String(), -1, err
}

// watch starts the watcher of process group pgid and returns what stops
// it when the command has ended normally: the watcher alone is killed, so
// what the command left running on purpose (a server started in the
// background) lives on as before. Without a watcher (it could not start)
// the command still runs, guarded by Pdeathsig only.
func watch(pgid int) (stop func()) {
	r, w, err := os.Pipe()
	if err != nil {
		return func() {}
	}
	cmd := exec.Command("/bin/sh", "-c", watchGroup)
	cmd.Stdin = r
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pgid: pgid}
	err = cmd.Start()
	r.Close()
	if err != nil {
		w.Close()
		return func() {}
	}
	return func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		w.Close()
	}
}
