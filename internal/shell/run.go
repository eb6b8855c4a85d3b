package shell

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"
)

const (
	// killGrace is how long a process group gets between SIGTERM and SIGKILL.
	killGrace = 2 * time.Second
	// pipeDrain is how long output is still read after the shell exits, or
	// after its group is killed, before the pipes are closed on whatever
	// (a background grandchild, a process that left the group) holds them.
	pipeDrain = 500 * time.Millisecond
	// groupPoll is how often a terminated group is checked for being gone.
	groupPoll = 20 * time.Millisecond
)

// RunOptions tune one command.
type RunOptions struct {
	// Timeout bounds the command. Zero means the shell's default timeout;
	// it is capped at the shell's maximum.
	Timeout time.Duration
	// Unsandboxed asks to run the command outside the shell's sandbox;
	// the sandbox decides whether it may.
	Unsandboxed bool
}

// Output is what a command produced.
type Output struct {
	// Stdout and Stderr are the streams, cut in the middle when longer than
	// the shell's MaxOutput (see Limits).
	Stdout, Stderr string
	// StdoutCut and StderrCut count the characters cut from each.
	StdoutCut, StderrCut int64
	// ExitCode is the shell's exit status, 128+N when signal N ended it.
	ExitCode int
	// Interrupted reports that ctx was cancelled and the command's process
	// group was killed.
	Interrupted bool
	// TimedOut reports that the timeout expired and the command's process
	// group was killed.
	TimedOut bool
	// Timeout is the limit the command ran with.
	Timeout time.Duration
	// Cwd is the working directory after the command.
	Cwd string
	// CwdReset reports that the working directory had vanished, before or
	// during the command, and the shell fell back to Cwd.
	CwdReset bool
}

// Run runs command with the shell's program as "-c", stdin from /dev/null,
// in the current working directory and the shell's environment. The
// directory the command ends in (after cd, even when it fails) becomes the
// working directory of the next command. The command runs in its own
// process group, which is killed when ctx is done or the timeout passes;
// Run then returns promptly even if some process still holds the output
// pipes open. The error is only for a command that could not be started.
func (s *Shell) Run(ctx context.Context, command string, opts RunOptions) (Output, error) {
	if err := ctx.Err(); err != nil {
		return Output{}, fmt.Errorf("run: %w", err)
	}
	limits := s.Limits()
	out := Output{Timeout: limits.Timeout(opts.Timeout)}
	dir, resetBefore := s.workDir()

	// The EXIT trap records where the shell ended, whatever the command's
	// status, even after `exit`. When it cannot run (`exec`, a fatal signal,
	// an EXIT trap of the command's own) the old cwd stays. A file rather
	// than a pipe, so that background children cannot hold it open.
	f, err := os.CreateTemp("", "tack-cwd-*")
	if err != nil {
		return Output{}, fmt.Errorf("run: cwd file: %w", err)
	}
	cwdFile := f.Name()
	f.Close()
	defer os.Remove(cwdFile)
	script := "trap " + quote("pwd -P >| "+quote(cwdFile)+" 2>/dev/null") + " EXIT\neval " + quote(command)

	stdout, stderr := newHeadTail(limits.MaxOutput), newHeadTail(limits.MaxOutput)
	cmd, release, err := s.command(dir, command, script, opts.Unsandboxed, cwdFile)
	if err != nil {
		return Output{}, fmt.Errorf("run: %w", err)
	}
	defer release()
	if s.runner != nil && !wrapped(cmd, s.program) {
		// The sandbox left it alone: the host runs it.
		if err := s.runElsewhere(ctx, cmd, &out, stdout); err != nil {
			return Output{}, err
		}
	} else {
		cmd.Stdout, cmd.Stderr = stdout, stderr
		cmd.WaitDelay = pipeDrain
		if err := cmd.Start(); err != nil {
			return Output{}, fmt.Errorf("start %s: %w", s.program, err)
		}
		out.Interrupted, out.TimedOut = supervise(ctx, cmd, out.Timeout)
		out.ExitCode = exitCode(cmd.ProcessState)
	}
	out.Stdout, out.StdoutCut = stdout.Result()
	out.Stderr, out.StderrCut = stderr.Result()
	if b, err := os.ReadFile(cwdFile); err == nil {
		if d := strings.TrimSuffix(string(b), "\n"); d != "" && isDir(d) {
			s.mu.Lock()
			s.cwd = d
			s.mu.Unlock()
		}
	}
	var resetAfter bool
	out.Cwd, resetAfter = s.workDir()
	out.CwdReset = resetBefore || resetAfter
	s.reportCwd(ctx)
	return out, nil
}

// wrapped reports whether the sandbox rewrote cmd, which then cannot run
// outside this process's children.
func wrapped(cmd *exec.Cmd, program string) bool {
	return len(cmd.Args) != 3 || cmd.Args[0] != program || cmd.Args[1] != "-c" || len(cmd.ExtraFiles) > 0
}

// runElsewhere runs cmd through the shell's Runner, bounded by
// out.Timeout as a child would be.
func (s *Shell) runElsewhere(ctx context.Context, cmd *exec.Cmd, out *Output, stdout *headTail) error {
	rctx, cancel := context.WithTimeout(ctx, out.Timeout)
	defer cancel()
	text, code, err := s.runner.Run(rctx, cmd.Args, cmd.Dir, cmd.Env)
	switch {
	case ctx.Err() != nil:
		out.Interrupted = true
	case rctx.Err() != nil:
		out.TimedOut = true
	case err != nil:
		return fmt.Errorf("run in the host's terminal: %w", err)
	}
	_, _ = stdout.Write([]byte(text))
	out.ExitCode = code
	return nil
}

// command returns cmd running script (for the user's command) in dir, in a
// process group of its own, through the sandbox if there is one; extra are
// files it writes besides the command's own. release must be called once
// the command has ended (or was never started).
func (s *Shell) command(dir, command, script string, unsandboxed bool, extra ...string) (cmd *exec.Cmd, release func(), err error) {
	cmd = exec.Command(s.program, "-c", script)
	cmd.Dir = dir
	cmd.Env = s.environ()
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	// s.wrap is set before the first command (and callers may hold s.mu).
	if s.wrap == nil {
		return cmd, func() {}, nil
	}
	release, err = s.wrap.Wrap(cmd, command, unsandboxed, extra)
	if err != nil {
		return nil, nil, err
	}
	return cmd, release, nil
}

// supervise waits for the started cmd, terminating its process group when
// ctx is done or timeout passes first.
func supervise(ctx context.Context, cmd *exec.Cmd, timeout time.Duration) (interrupted, timedOut bool) {
	done := make(chan struct{})
	go func() {
		// Wait's error is ErrWaitDelay, an exit status or a copy error from
		// our writers, which never fail; ProcessState says all we need.
		_ = cmd.Wait()
		close(done)
	}()
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	select {
	case <-done:
		return false, false
	case <-ctx.Done():
		interrupted = true
	case <-timer.C:
		timedOut = true
	}
	select {
	case <-done: // it finished just as the limit came
		return false, false
	default:
	}
	terminate(cmd.Process.Pid)
	// The group kill has reached the shell unless something is badly off;
	// killing it directly as well keeps Run from ever hanging on it.
	_ = cmd.Process.Kill()
	<-done
	return interrupted, timedOut
}

// terminate sends SIGTERM to process group pgid and, when live members
// are left after killGrace, SIGKILL.
func terminate(pgid int) {
	if err := syscall.Kill(-pgid, syscall.SIGTERM); errors.Is(err, syscall.ESRCH) {
		return
	}
	// A group id cannot be reused while the group has members, even
	// zombies, so polling it is safe; signalling an emptied one might not be.
	deadline := time.Now().Add(killGrace)
	for time.Now().Before(deadline) {
		if !groupAlive(pgid) {
			return
		}
		time.Sleep(groupPoll)
	}
	_ = syscall.Kill(-pgid, syscall.SIGKILL)
}

// groupAlive reports whether process group pgid has a member that is not a
// zombie. Orphaned zombies wait for init to reap them, which can take a
// while; they need no signal. Without /proc any member counts as live.
func groupAlive(pgid int) bool {
	if errors.Is(syscall.Kill(-pgid, 0), syscall.ESRCH) {
		return false
	}
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return true
	}
	for _, e := range entries {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue // gone meanwhile
		}
		if state, pgrp, ok := parseStat(b); ok && pgrp == pgid && state != 'Z' {
			return true
		}
	}
	return false
}

// parseStat reads the state and process group from /proc/PID/stat:
// "pid (comm) state ppid pgrp …", where comm may hold spaces and parens.
func parseStat(b []byte) (state byte, pgrp int, ok bool) {
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, 0, false
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 3 || len(f[0]) != 1 {
		return 0, 0, false
	}
	pgrp, err := strconv.Atoi(f[2])
	return f[0][0], pgrp, err == nil
}

// exitCode is the status a shell would report: the exit code, or 128+N for
// signal N.
func exitCode(ps *os.ProcessState) int {
	if ps == nil {
		return -1
	}
	if signaled(ps) {
		return 128 + int(ps.Sys().(syscall.WaitStatus).Signal())
	}
	return ps.ExitCode()
}

// signaled reports whether a signal ended the process.
func signaled(ps *os.ProcessState) bool {
	if ps == nil {
		return false
	}
	ws, ok := ps.Sys().(syscall.WaitStatus)
	return ok && ws.Signaled()
}
