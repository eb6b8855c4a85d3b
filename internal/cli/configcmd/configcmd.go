// Package configcmd holds tack's configuration commands: `tack mcp` (the
// MCP servers of .mcp.json and ~/.claude.json: add, remove, list, approve,
// and the one-off `serve` and `call`), `tack plugin` (plugins and
// marketplaces), `tack agents` (the agents a session would have) and
// `tack config` (the merged settings and where each value comes from).
//
// They read and edit the files sessions read, and start no session (but
// `mcp serve`, whose session the root command gives), so
// they work on those files' own packages (config, mcp/mcpconfig,
// extension) rather than through the SDK; they never import the runtime.
// The root command (internal/cli) mounts them with Commands.
package configcmd

import (
	"github.com/spf13/cobra"

	"github.com/tackcode/tack/internal/cli/cmdio"
)

// Commands are the configuration commands, reading and writing through
// stdio. serve runs `tack mcp serve`, which serves a session's tools and so
// is the root command's to give (nil: not available).
func Commands(stdio cmdio.IO, serve MCPServeFunc) []*cobra.Command {
	return []*cobra.Command{
		newConfigCmd(stdio),
		newMCPCmd(stdio, probeMCP, serve, callMCP),
		newPluginCmd(stdio),
		newAgentsCmd(stdio),
	}
}
