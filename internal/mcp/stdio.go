package mcp

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Bounds of a stdio server's shutdown and of what is kept of its stderr.
const (
	// stdinGrace is how long a server has to exit on its own once its
	// stdin is closed, before its process group is sent SIGTERM.
	stdinGrace = time.Second
	// termGrace is how long after SIGTERM the group is sent SIGKILL.
	termGrace = time.Second
	// stderrKeep is how many trailing bytes of stderr are kept for error
	// messages.
	stderrKeep = 4 << 10
)

// procTransport starts a stdio server in its own process group and speaks
// newline-delimited JSON-RPC over its stdin and stdout. The SDK's
// CommandTransport signals only the process it started: a server started
// through npx or a shell leaves its real server (a grandchild) running. Here
// the whole group is signalled, when the connection closes and as soon as
// the process we started exits.
type procTransport struct {
	name string
	cmd  *exec.Cmd
	proc *process // set by Connect
	// onListChanged is called with each list_changed notification the
	// server sends, as it is read (see procConn.Read).
	onListChanged func(ChangeKind)
}

func newProcTransport(cfg ServerConfig, env []string, dir string) *procTransport {
	cmd := exec.Command(cfg.Command, cfg.Args...)
	cmd.Env = mergeEnv(env, cfg.Env)
	cmd.Dir = dir
	// A group of its own: signals to the group reach every process the
	// server started, and the terminal's Ctrl-C does not reach it.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	return &procTransport{name: cfg.Name, cmd: cmd}
}

// mergeEnv lays over onto base (nil base: the process's environment).
func mergeEnv(base []string, over map[string]string) []string {
	if base == nil {
		base = os.Environ()
	}
	out := make([]string, 0, len(base)+len(over))
	for _, kv := range base {
		k, _, _ := strings.Cut(kv, "=")
		if _, ok := over[k]; !ok {
			out = append(out, kv)
		}
	}
	for k, v := range over {
		out = append(out, k+"="+v)
	}
	return out
}

// Connect starts the process. Its lifetime does not follow ctx: it ends
// when the connection is closed or the process exits.
func (t *procTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	p, err := startProcess(t.cmd)
	if err != nil {
		return nil, err
	}
	t.proc = p
	inner, err := (&mcp.IOTransport{Reader: p.stdout, Writer: p.stdin}).Connect(ctx)
	if err != nil {
		p.terminate()
		return nil, err
	}
	return &procConn{Connection: inner, proc: p, onListChanged: t.onListChanged}, nil
}

// procConn is the JSON-RPC connection to a server process; closing it
// stops the process group.
type procConn struct {
	mcp.Connection
	proc          *process
	onListChanged func(ChangeKind)
}

// listChanges are the notifications that a server's list changed.
var listChanges = map[string]ChangeKind{
	"notifications/tools/list_changed":     ChangeTools,
	"notifications/resources/list_changed": ChangeResources,
	"notifications/prompts/list_changed":   ChangePrompts,
}

// Read passes on the server's next message. A list_changed notification
// is told to onListChanged before it is passed on: the SDK hands
// notifications to their handler on a goroutine of its own, so a tool
// call's answer read after the notification could reach its caller before
// the handler ran, and the next request would miss the server's new tools.
func (c *procConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	msg, err := c.Connection.Read(ctx)
	if req, ok := msg.(*jsonrpc.Request); ok && !req.ID.IsValid() && c.onListChanged != nil {
		if kind, ok := listChanges[req.Method]; ok {
			c.onListChanged(kind)
		}
	}
	return msg, err
}

func (c *procConn) Close() error {
	err := c.Connection.Close()
	c.proc.terminate()
	return err
}

// process is a running stdio server.
type process struct {
	cmd    *exec.Cmd
	pgid   int
	stdin  *os.File // our end of its stdin
	stdout *os.File // our end of its stdout
	stderr *tailBuffer
	// stderrDone is closed once stderr is read to its end.
	stderrDone chan struct{}

	exited  chan struct{} // closed once the leader has exited and been reaped
	exitErr error         // set before exited is closed

	termOnce sync.Once
}

// startProcess starts cmd with pipes of its own making: exec's pipes would
// make Wait wait for every process holding them (a grandchild), and close
// stdout before the last message was read.
func startProcess(cmd *exec.Cmd) (*process, error) {
	inR, inW, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("stdin pipe: %w", err)
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		inR.Close()
		inW.Close()
		return nil, fmt.Errorf("stdout pipe: %w", err)
	}
	errR, errW, err := os.Pipe()
	if err != nil {
		inR.Close()
		inW.Close()
		outR.Close()
		outW.Close()
		return nil, fmt.Errorf("stderr pipe: %w", err)
	}
	cmd.Stdin, cmd.Stdout, cmd.Stderr = inR, outW, errW
	err = cmd.Start()
	// The child has its own copies of its ends now.
	inR.Close()
	outW.Close()
	errW.Close()
	if err != nil {
		inW.Close()
		outR.Close()
		errR.Close()
		return nil, err
	}
	p := &process{
		cmd:        cmd,
		pgid:       cmd.Process.Pid,
		stdin:      inW,
		stdout:     outR,
		stderr:     &tailBuffer{max: stderrKeep},
		stderrDone: make(chan struct{}),
		exited:     make(chan struct{}),
	}
	go func() {
		// Ends when every process of the group has closed stderr.
		_, _ = io.Copy(p.stderr, errR)
		errR.Close()
		close(p.stderrDone)
	}()
	go func() {
		p.exitErr = cmd.Wait()
		// The leader is gone: whatever it started is no use without it,
		// and would hold stdout open so that no one saw the server die.
		p.killGroup()
		close(p.exited)
	}()
	return p, nil
}

// pid is the process id of the server's leader process.
func (p *process) pid() int { return p.pgid }

// hasExited reports whether the leader has exited.
func (p *process) hasExited() bool {
	select {
	case <-p.exited:
		return true
	default:
		return false
	}
}

// waitStderr waits, at most d, for the last of stderr: what a server
// writes just before it exits explains why.
func (p *process) waitStderr(d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-p.stderrDone:
	case <-t.C:
	}
}

// exitDescription says how the leader ended ("" while it runs).
func (p *process) exitDescription() string {
	if !p.hasExited() {
		return ""
	}
	if p.exitErr == nil {
		return "exited with status 0"
	}
	var ee *exec.ExitError
	if errors.As(p.exitErr, &ee) {
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return "was killed by signal " + ws.Signal().String()
		}
		return fmt.Sprintf("exited with status %d", ee.ExitCode())
	}
	return p.exitErr.Error()
}

// terminate stops the server as the MCP specification asks: stdin closed,
// then SIGTERM, then SIGKILL, here to the whole process group. It returns
// once the leader is reaped and the group has been sent SIGKILL.
func (p *process) terminate() {
	p.termOnce.Do(func() {
		p.stdin.Close()
		p.stdout.Close()
		// While the leader runs, the group id is surely this group's.
		select {
		case <-p.exited:
		case <-time.After(stdinGrace):
			_ = syscall.Kill(-p.pgid, syscall.SIGTERM)
			select {
			case <-p.exited:
			case <-time.After(termGrace):
				p.killGroup()
			}
		}
		// The waiter kills what is left of the group once the leader is
		// reaped.
		<-p.exited
	})
}

// killGroup sends SIGKILL to every process left in the group. The group id
// cannot be taken by another group while any member lives; it is used only
// while the leader runs or right after it was reaped.
func (p *process) killGroup() {
	_ = syscall.Kill(-p.pgid, syscall.SIGKILL)
}

// tailBuffer keeps the last max bytes written to it.
type tailBuffer struct {
	mu  sync.Mutex
	max int
	buf []byte
}

func (b *tailBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	n := len(p)
	if len(p) >= b.max {
		b.buf = append(b.buf[:0], p[len(p)-b.max:]...)
		return n, nil
	}
	if over := len(b.buf) + len(p) - b.max; over > 0 {
		b.buf = append(b.buf[:0], b.buf[over:]...)
	}
	b.buf = append(b.buf, p...)
	return n, nil
}

// String returns the kept bytes, trimmed, starting at a line when cut.
func (b *tailBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	s := string(b.buf)
	if len(b.buf) == b.max {
		if i := strings.IndexByte(s, '\n'); i >= 0 && i < len(s)-1 {
			s = "…" + s[i+1:]
		}
	}
	return strings.TrimSpace(s)
}
