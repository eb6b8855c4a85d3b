package acp

import (
	"context"
	"fmt"
	"strings"
	"syscall"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/tackcode/tack/agent"
)

// clientTerminal runs Bash's commands in the client's terminals
// (terminal/create, terminal/wait_for_exit, terminal/output,
// terminal/release), and shows each in its tool call.
type clientTerminal struct{ s *session }

var _ agent.Terminal = clientTerminal{}

func (t clientTerminal) Run(ctx context.Context, args []string, dir string, env []string) (string, int, error) {
	s := t.s
	// The Bash call the terminal belongs to goes out first.
	if err := s.client.Flush(ctx); err != nil {
		return "", 0, err
	}
	vars := make([]sdk.EnvVariable, 0, len(env))
	for _, kv := range env {
		if k, v, ok := strings.Cut(kv, "="); ok {
			vars = append(vars, sdk.EnvVariable{Name: k, Value: v})
		}
	}
	created, err := s.conn.CreateTerminal(ctx, sdk.CreateTerminalRequest{SessionId: sdk.SessionId(s.id),
		Command: args[0], Args: args[1:], Cwd: &dir, Env: vars})
	if err != nil {
		return "", 0, fmt.Errorf("terminal/create: %w", err)
	}
	id := created.TerminalId
	// The terminal outlives an interrupt long enough to be stopped, read
	// and released.
	bg := context.WithoutCancel(ctx)
	defer func() {
		_, _ = s.conn.ReleaseTerminal(bg, sdk.ReleaseTerminalRequest{SessionId: sdk.SessionId(s.id), TerminalId: id})
	}()
	s.showTerminal(id)
	exit, err := s.conn.WaitForTerminalExit(ctx, sdk.WaitForTerminalExitRequest{SessionId: sdk.SessionId(s.id), TerminalId: id})
	if ctx.Err() != nil {
		if _, err := s.conn.KillTerminal(bg, sdk.KillTerminalRequest{SessionId: sdk.SessionId(s.id), TerminalId: id}); err != nil {
			return "", 0, fmt.Errorf("terminal/kill: %w", err)
		}
		exit, err = s.conn.WaitForTerminalExit(bg, sdk.WaitForTerminalExitRequest{SessionId: sdk.SessionId(s.id), TerminalId: id})
	}
	if err != nil {
		return "", 0, fmt.Errorf("terminal/wait_for_exit: %w", err)
	}
	out, err := s.conn.TerminalOutput(bg, sdk.TerminalOutputRequest{SessionId: sdk.SessionId(s.id), TerminalId: id})
	if err != nil {
		return "", 0, fmt.Errorf("terminal/output: %w", err)
	}
	return out.Output, exitStatus(exit.ExitCode, exit.Signal), nil
}

// signals are the signals a terminal reports by name, by number.
var signals = map[string]syscall.Signal{"HUP": syscall.SIGHUP, "INT": syscall.SIGINT, "QUIT": syscall.SIGQUIT,
	"ABRT": syscall.SIGABRT, "KILL": syscall.SIGKILL, "PIPE": syscall.SIGPIPE, "TERM": syscall.SIGTERM}

// exitStatus is the status a shell reports: the code, or 128+N for
// signal N (a signal of unknown name counts as SIGKILL).
func exitStatus(code *int, signal *string) int {
	switch {
	case code != nil:
		return *code
	case signal == nil:
		return -1
	}
	if n, ok := signals[strings.TrimPrefix(strings.ToUpper(*signal), "SIG")]; ok {
		return 128 + int(n)
	}
	return 128 + int(syscall.SIGKILL)
}

// showTerminal embeds the terminal in the Bash call running now: the
// oldest reported Bash call without one (Bash calls run one at a time, in
// order).
func (s *session) showTerminal(id string) {
	s.mu.Lock()
	var callID string
	var first *toolCall
	for cid, c := range s.calls {
		if c.name == "Bash" && c.terminal == "" && (first == nil || c.seq < first.seq) {
			callID, first = cid, c
		}
	}
	if first != nil {
		first.terminal = id
	}
	s.mu.Unlock()
	if first == nil {
		return // a subagent's command
	}
	running := sdk.ToolCallStatusInProgress
	s.send(sdk.SessionUpdate{ToolCallUpdate: &sdk.SessionToolCallUpdate{ToolCallId: sdk.ToolCallId(callID), Status: &running,
		Content: []sdk.ToolCallContent{sdk.ToolTerminalRef(id)}}})
}
