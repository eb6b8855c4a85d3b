package agent

import (
	"context"
	"io"
)

// ServeMCP offers the session's own tools to another program as an MCP
// server over stdio (newline-delimited JSON-RPC read from in, written to
// out), as tack mcp serve does, until the client leaves or ctx is done.
//
// It serves the tools named in tools, in that order, that the session
// offers its model (a name it does not offer is left out). A call runs the
// tool directly, as the model's call would run after its approval: no
// permission rule, prompt or hook stands between the MCP client and the
// tool, so the client is the one to ask its user. Agent runs the session's
// subagents (their own calls are gated as usual) and Skill its skills.
//
// A success is answered as Claude Code's mcp serve answers it: one text
// block holding the tool's result object as JSON (the tool_use_result of
// stream-json), also given as structuredContent; a failure is the
// model-facing message, with isError set.
func (c *Client) ServeMCP(ctx context.Context, tools []string, in io.Reader, out io.Writer) error {
	return c.s.ServeTools(ctx, tools, in, out)
}
