package agent

import (
	"context"
	"io"

	"github.com/tackcode/tack/internal/mcp"
	"github.com/tackcode/tack/internal/mcp/mcpconfig"
	"github.com/tackcode/tack/internal/runtime"
)

// Elicitation is an MCP server asking the user for input.
type Elicitation = mcp.ElicitationRequest

// ElicitationAnswer is the user's answer to an Elicitation.
type ElicitationAnswer = mcp.ElicitationResult

// MCPProgress is a progress notification of a running MCP tool call.
type MCPProgress = mcp.Progress

// DefaultMCPStartupDeadline is how long the first request waits for MCP
// servers that are still starting, unless TACK_MCP_STARTUP_DEADLINE_MS or
// MCP_TIMEOUT says otherwise; slower ones join the session later. Those
// still starting then are reported (Options.Notify) and are failed in the
// init message: the first turn runs without them.
const DefaultMCPStartupDeadline = runtime.DefaultMCPStartupDeadline

// ProbeMCPServer connects to one configured server and reports its status
// (for `tack mcp list`).
func ProbeMCPServer(ctx context.Context, srv mcpconfig.Server) (status, detail string) {
	return runtime.ProbeMCPServer(ctx, srv)
}

// CallMCPTool connects to one server, calls one of its tools and returns
// the result's text and whether it is an error (for `tack mcp call`).
func CallMCPTool(ctx context.Context, srv mcpconfig.Server, toolName string, input []byte) (string, bool, error) {
	return runtime.CallMCPTool(ctx, srv, toolName, input)
}

// ServeMCP runs tack's own tools as an MCP server on in and out (`tack mcp
// serve`) in opts.Cwd. The MCP client decides what to call: tools run
// without asking.
func ServeMCP(ctx context.Context, opts Options, in io.Reader, out io.Writer) error {
	return runtime.ServeMCP(ctx, opts.Cwd, in, out)
}

// MCPLogin signs in to the remote MCP server name with OAuth now (the
// browser flow: its address is given through Notify), then connects to it
// again. For a server whose status is needs-auth.
func (c *Client) MCPLogin(ctx context.Context, name string) error { return c.s.MCPLogin(ctx, name) }
