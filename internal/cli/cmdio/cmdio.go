// Package cmdio is the seam between tack's commands and the world, shared
// by the root command (internal/cli) and the configuration commands
// (internal/cli/configcmd): every command reads and writes through an IO,
// so it runs in tests without a terminal, and ends with an error that says
// its exit code.
package cmdio

import (
	"fmt"
	"io"
	"os"
)

// IO is what a command reads, writes and looks up.
type IO struct {
	In     io.Reader
	Out    io.Writer
	Err    io.Writer
	Getenv func(string) string
	// StdinIsTerminal is true when In is an interactive terminal, which is
	// then never read for piped input.
	StdinIsTerminal bool
}

// Env reads the environment: Getenv, or the process's.
func (s IO) Env() func(string) string {
	if s.Getenv != nil {
		return s.Getenv
	}
	return os.Getenv
}

// AgentEnv are the variables that locate tack's own files (~/.claude.json,
// the settings), from the command's environment, for agent.Options.Env.
func (s IO) AgentEnv() map[string]string {
	env := map[string]string{}
	getenv := s.Env()
	for _, k := range []string{"HOME", "CLAUDE_CONFIG_DIR", "TACK_MANAGED_SETTINGS"} {
		if v := getenv(k); v != "" {
			env[k] = v
		}
	}
	return env
}

// ExitError ends a command with an exit code, its message already shown.
type ExitError struct{ Code int }

func (e *ExitError) Error() string { return fmt.Sprintf("exit %d", e.Code) }

// UsageError is a problem with the command line: it is shown with a
// pointer to the command's help.
type UsageError struct{ Msg string }

func (e *UsageError) Error() string { return e.Msg }

// Usagef is a UsageError.
func Usagef(format string, args ...any) error {
	return &UsageError{Msg: fmt.Sprintf(format, args...)}
}
