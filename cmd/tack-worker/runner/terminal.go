package runner

import (
	"bytes"
	"context"
	"errors"
	"os/exec"
	"runtime"
	"syscall"
)

// processTerminal runs Bash's commands as the worker's children, each in a
// process group of its own that the kernel kills (SIGKILL to the shell)
// when the worker dies, so that a command of a killed worker does not go
// on beside the worker that takes its run over.
type processTerminal struct{}

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
