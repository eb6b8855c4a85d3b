// Package bash provides the Bash tool, which runs shell commands in the
// session's shell (TaskOutput and TaskStop, for the commands it starts in
// the background, are with the other task tools in internal/tool/tasks).
package bash

import (
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/tackcode/tack/internal/shell"
	"github.com/tackcode/tack/internal/tool"
)

// Tools returns Bash.
func Tools() []tool.Tool { return []tool.Tool{Bash{}} }

//go:embed bash.md
var bashDescription string

const bashSchema = `{
  "type": "object",
  "properties": {
    "command": {"type": "string", "description": "The command to run"},
    "timeout": {"type": "number", "description": "Timeout in milliseconds (default 120000, at most 600000)"},
    "description": {"type": "string", "description": "What the command does, in 5-10 words"},
    "run_in_background": {"type": "boolean", "description": "Run in the background and return a task id at once; read its output with TaskOutput"},
    "dangerouslyDisableSandbox": {"type": "boolean", "description": "Run outside the sandbox; only when the sandbox made the command fail"}
  },
  "required": ["command"],
  "additionalProperties": false
}`

// Bash runs a command in the session's shell, whose working directory
// persists from one call to the next.
type Bash struct{}

// Result is Bash's structured result: stream-json's tool_use_result and the
// PostToolUse hook's tool_response. Stdout and Stderr lose their trailing
// newlines; Interrupted is set when the command was killed, by a timeout
// or an interrupt.
type Result struct {
	Stdout           string `json:"stdout"`
	Stderr           string `json:"stderr"`
	Interrupted      bool   `json:"interrupted"`
	IsImage          bool   `json:"isImage"`
	NoOutputExpected bool   `json:"noOutputExpected"`
	BackgroundTaskID string `json:"backgroundTaskId,omitempty"`
	// BackgroundOutputPath is the file a background command writes to.
	BackgroundOutputPath string `json:"backgroundOutputPath,omitempty"`
}

type bashInput struct {
	Command         string   `json:"command"`
	Timeout         *float64 `json:"timeout"`
	Description     string   `json:"description"`
	RunInBackground bool     `json:"run_in_background"`
	// DangerouslyDisableSandbox asks to run outside the session's sandbox;
	// the sandbox grants it unless allowUnsandboxedCommands is false, and
	// the permission gate then asks the user.
	DangerouslyDisableSandbox bool `json:"dangerouslyDisableSandbox"`
}

func (Bash) Name() string                    { return "Bash" }
func (Bash) Description() string             { return trimmed(bashDescription) }
func (Bash) InputSchema() json.RawMessage    { return json.RawMessage(bashSchema) }
func (Bash) ReadOnly(_ json.RawMessage) bool { return false }

// Run runs the command, or starts it in the background.
func (b Bash) Run(ctx context.Context, env *tool.Env, input json.RawMessage) (tool.Result, error) {
	var in bashInput
	if err := tool.Decode(b.Name(), input, &in); err != nil {
		return tool.Result{}, err
	}
	if strings.TrimSpace(in.Command) == "" {
		return tool.Result{}, tool.BadInput(b.Name(), "command is empty")
	}
	timeout, err := tool.Milliseconds(b.Name(), "timeout", in.Timeout, 0)
	if err != nil {
		return tool.Result{}, err
	}
	if env.Shell == nil {
		return tool.Result{}, errors.New("this session has no shell")
	}
	if in.RunInBackground {
		return startBackground(env, in.Command, in.Description, in.DangerouslyDisableSandbox)
	}
	// The shell applies the default and caps at the maximum.
	out, err := env.Shell.Run(ctx, in.Command, shell.RunOptions{Timeout: timeout, Unsandboxed: in.DangerouslyDisableSandbox})
	if err != nil {
		return tool.Result{}, err
	}
	return runResult(out), nil
}

// runResult renders a finished command: a status line when it failed, then
// stdout, then stderr, then a note when the cwd was reset.
func runResult(out shell.Output) tool.Result {
	res := Result{
		Stdout:      strings.TrimRight(out.Stdout, "\n"),
		Stderr:      strings.TrimRight(out.Stderr, "\n"),
		Interrupted: out.Interrupted || out.TimedOut,
	}
	var status string
	switch {
	case out.TimedOut:
		status = fmt.Sprintf("Command timed out after %s; its process group was killed.", out.Timeout)
	case out.Interrupted:
		status = "Command was interrupted; its process group was killed."
	case out.ExitCode != 0:
		status = fmt.Sprintf("Exit code %d", out.ExitCode)
	}
	var note string
	if out.CwdReset {
		note = "Shell cwd was reset to " + out.Cwd
	}
	text := joinLines(status, res.Stdout, res.Stderr, note)
	if text == "" {
		text = "(completed with no output)"
	}
	r := tool.TextResult(text, res)
	r.IsError = status != ""
	return r
}

func startBackground(env *tool.Env, command, description string, unsandboxed bool) (tool.Result, error) {
	dir, err := env.Scratch()
	if err != nil {
		return tool.Result{}, fmt.Errorf("scratch directory for background output: %w", err)
	}
	job, err := env.Shell.Start(command, shell.StartOptions{OutputDir: dir, Unsandboxed: unsandboxed, Description: description})
	if err != nil {
		return tool.Result{}, err
	}
	text := fmt.Sprintf("Command running in background with ID: %s. Output is being written to: %s\n"+
		"Use TaskOutput with task_id %q to read its output and status, and TaskStop to end it.",
		job.ID, job.OutputPath, job.ID)
	return tool.TextResult(text, Result{BackgroundTaskID: job.ID, BackgroundOutputPath: job.OutputPath}), nil
}

// joinLines joins the non-empty parts with newlines.
func joinLines(parts ...string) string {
	var kept []string
	for _, p := range parts {
		if p != "" {
			kept = append(kept, p)
		}
	}
	return strings.Join(kept, "\n")
}

// trimmed returns an embedded description without its final newline.
func trimmed(s string) string { return strings.TrimSpace(s) }
