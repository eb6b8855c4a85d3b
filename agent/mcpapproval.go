package agent

import "github.com/tackcode/tack/internal/runtime"

// Project MCP servers. A server of the project's .mcp.json starts only once
// the user approved it; a session leaves the others waiting (with a
// notice). An interactive surface asks before starting the session, and
// records the answer as `tack mcp approve` does: in this project's entry of
// ~/.claude.json (enabledMcpjsonServers, disabledMcpjsonServers,
// enableAllProjectMcpServers), where Claude Code reads it too.

// PendingMCPServer is a server of the project's .mcp.json the user has
// neither approved nor refused.
type PendingMCPServer struct {
	Name string
	// Source is where it is defined (file:line:col).
	Source string
	// Launch is what it runs (its command line) or reaches (its URL).
	Launch string
}

// PendingMCPServers lists the project servers a session with opts would
// leave waiting for approval; none when the session runs untrusted or with
// StrictMCPConfig. It starts nothing.
func PendingMCPServers(opts Options) ([]PendingMCPServer, error) {
	cfg := configOf(opts)
	cfg.StrictMCPConfig = opts.StrictMCPConfig
	pending, err := runtime.PendingMCPServers(cfg)
	out := make([]PendingMCPServer, len(pending))
	for i, p := range pending {
		out[i] = PendingMCPServer(p)
	}
	return out, err
}

// DecideMCPServer records the user's answer for the project server name:
// approved (it starts from now on) or refused.
func DecideMCPServer(opts Options, name string, approved bool) error {
	return runtime.DecideMCPServer(configOf(opts), name, approved)
}

// ApproveAllMCPServers records that every server of the project's
// .mcp.json, now and to come, may start.
func ApproveAllMCPServers(opts Options) error {
	return runtime.ApproveAllMCPServers(configOf(opts))
}
