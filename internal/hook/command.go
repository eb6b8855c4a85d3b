package hook

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"maps"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/tackcode/tack/internal/lazyregexp"
)

// pipeDrain is how long a command hook's output is still read after its
// shell exits (or its group is killed) before the pipes are closed on
// whatever background child still holds them.
const pipeDrain = 500 * time.Millisecond

// missingScript recognises an interpreter's "no such script" error.
var missingScript = lazyregexp.New(`(?i)no such file|can't open`)

// runCommand runs a command hook: Shell -c COMMAND in Options.Dir or the
// payload's cwd, the payload on stdin, in a process group of its own that
// is killed when ctx ends (the hook's timeout or the caller's cancellation).
func (r *Runner) runCommand(ctx context.Context, h Handler, in Input, payload []byte) answer {
	base := in.Common()
	projectDir := r.opts.ProjectDir
	if projectDir == "" {
		projectDir = base.Cwd
	}
	env := slices.Clip(r.env)
	env = append(env, "CLAUDE_PROJECT_DIR="+projectDir)
	for _, k := range slices.Sorted(maps.Keys(h.Env)) {
		env = append(env, k+"="+h.Env[k])
	}

	cmd := exec.CommandContext(ctx, r.shell(), "-c", h.Command)
	cmd.Dir = base.Cwd
	if r.opts.Dir != "" {
		cmd.Dir = r.opts.Dir
	}
	cmd.Env = env
	cmd.Stdin = bytes.NewReader(payload)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	// Kill the whole group, not just the shell: a hook's children (a
	// pipeline, a script's subprocesses) must not outlive its timeout.
	cmd.Cancel = func() error {
		if cmd.Process == nil {
			return nil
		}
		err := syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		if errors.Is(err, syscall.ESRCH) {
			return nil
		}
		return err
	}
	cmd.WaitDelay = pipeDrain

	var mu sync.Mutex // both streams write to the interleaved output
	combined := newCapped(r.maxOut)
	stdout, stderr := newCapped(r.maxOut), newCapped(r.maxOut)
	cmd.Stdout = teeLocked{stdout, combined, &mu}
	cmd.Stderr = teeLocked{stderr, combined, &mu}

	if err := cmd.Start(); err != nil {
		return answer{status: StatusError, message: fmt.Sprintf("failed to start %s: %v", shortCommand(h.Command), err)}
	}
	waitErr := cmd.Wait()

	mu.Lock()
	a := answer{stdout: stdout.String(), stderr: stderr.String(), output: combined.String()}
	mu.Unlock()
	if ps := cmd.ProcessState; ps != nil {
		code := ps.ExitCode()
		if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			code = 128 + int(ws.Signal())
		}
		a.exitCode = &code
	}
	if ctx.Err() != nil {
		a.status = StatusCancelled
		return a
	}
	if a.exitCode == nil {
		a.status, a.message = StatusError, fmt.Sprintf("%s: %v", shortCommand(h.Command), waitErr)
		return a
	}
	switch code := *a.exitCode; code {
	case 0:
		a.status, a.text = StatusSuccess, a.stdout
	case 2:
		ev := in.EventName()
		// A Stop hook whose script is gone would otherwise keep the model
		// going forever; Claude Code reads such an exit 2 as a failure too.
		if (ev == Stop || ev == SubagentStop) && strings.TrimSpace(a.stdout) == "" && missingScript().MatchString(a.stderr) {
			a.status = StatusError
			a.message = fmt.Sprintf("hook script appears to be missing: %s", strings.TrimSpace(a.stderr))
			return a
		}
		a.status, a.message = StatusBlocking, blockReason(a.stderr, "No stderr output")
	default:
		a.status = StatusError
		a.message = fmt.Sprintf("Failed with non-blocking status code %d: %s", code, blockReason(a.stderr, "No stderr output"))
	}
	return a
}

// shortCommand is a command for an error message.
func shortCommand(c string) string {
	const max = 80
	c = strings.Join(strings.Fields(c), " ")
	if len(c) > max {
		return c[:max] + "…"
	}
	return c
}

// capped keeps the first limit bytes written and counts the rest, so a
// chatty hook cannot exhaust memory.
type capped struct {
	buf     bytes.Buffer
	limit   int
	dropped int64
}

func newCapped(limit int) *capped { return &capped{limit: limit} }

// Write never fails: a hook must not die of SIGPIPE because tack stopped
// keeping its output.
func (c *capped) Write(p []byte) (int, error) {
	room := c.limit - c.buf.Len()
	if room >= len(p) {
		c.buf.Write(p)
		return len(p), nil
	}
	if room > 0 {
		c.buf.Write(p[:room])
	}
	c.dropped += int64(len(p) - max(room, 0))
	return len(p), nil
}

func (c *capped) String() string {
	if c.dropped == 0 {
		return c.buf.String()
	}
	return fmt.Sprintf("%s\n… [%d bytes of output dropped]", c.buf.String(), c.dropped)
}

// teeLocked writes to its own stream and to the shared interleaved one,
// under a lock: exec copies stdout and stderr on two goroutines.
type teeLocked struct {
	own, shared *capped
	mu          *sync.Mutex
}

func (t teeLocked) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.own.Write(p)
	t.shared.Write(p)
	return len(p), nil
}
