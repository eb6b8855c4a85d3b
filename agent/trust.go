package agent

import (
	"fmt"

	"github.com/tackcode/tack/internal/runtime"
)

// Workspace trust. A folder can bring code that tack would run for the
// user: hooks and env in .claude/settings.json, MCP servers in .mcp.json,
// shell commands in skills… Until the user trusts the folder, an
// interactive surface asks first, and a session that runs without that
// trust (Options.Untrusted) leaves the folder's code off. Trust is recorded
// where Claude Code records it, so that a folder trusted in one is trusted
// in the other.

// Workspace is a folder as workspace trust sees it.
type Workspace struct {
	// Dir is the folder trust is recorded for: the root of the git
	// repository holding the working directory, else the working
	// directory itself (symbolic links resolved).
	Dir string
	// Trusted reports whether the user trusts the folder; TrustedBy is the
	// folder whose record says so: Dir, the working directory or — for a
	// folder that brings no code of its own — a folder above it.
	Trusted   bool
	TrustedBy string
	// Brings lists what the folder brings that an untrusted session leaves
	// off, one line each ("hooks, env (.claude/settings.json)", "MCP
	// servers (.mcp.json)"). It is found by reading files, never by running
	// anything. Empty for a folder that brings nothing.
	Brings []string
	// ConfigFile is the file trust is recorded in: ~/.claude.json, or
	// $CLAUDE_CONFIG_DIR/.claude.json.
	ConfigFile string
}

// CheckWorkspace reports whether the user trusts the folder a session with
// opts would run in (opts.Cwd; HOME and CLAUDE_CONFIG_DIR from opts.Env or
// the environment, never from a settings file), and what the folder
// brings. It runs nothing. A malformed settings file of the folder, or a
// malformed ~/.claude.json, is an error naming its file, line and column.
func CheckWorkspace(opts Options) (Workspace, error) {
	ws, err := runtime.CheckWorkspace(configOf(opts))
	return Workspace(ws), err
}

// TrustWorkspace records that the user trusts the folder a session with
// opts would run in (Workspace.Dir), as Claude Code's "Yes, proceed" does:
// projects[Dir].hasTrustDialogAccepted in ~/.claude.json becomes true,
// every other byte of the file kept. It returns the folder as now trusted.
func TrustWorkspace(opts Options) (Workspace, error) {
	ws, err := runtime.TrustWorkspace(configOf(opts))
	return Workspace(ws), err
}

// UntrustedWorkspaceError is what Query and NewClient return when the
// settings set requireWorkspaceTrust, the folder is not trusted, and the
// session was not started with Options.Untrusted.
type UntrustedWorkspaceError struct {
	// Dir is the folder (Workspace.Dir).
	Dir string
	// Setting is where requireWorkspaceTrust is set: "managed
	// /etc/claude-code/managed-settings.json:2:3".
	Setting string
}

func (e *UntrustedWorkspaceError) Error() string {
	return fmt.Sprintf("%s is not a trusted folder, and requireWorkspaceTrust (%s) forbids running in one: trust it first with `tack trust %s`",
		e.Dir, e.Setting, e.Dir)
}
