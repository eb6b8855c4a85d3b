package runtime

import (
	"context"
	"io"

	"github.com/tackcode/tack/internal/mcp/serve"
	"github.com/tackcode/tack/internal/tool"
	"github.com/tackcode/tack/internal/tool/toolsearch"
)

// ServeTools serves the main thread's tools that names names, in that
// order, as an MCP server over stdio (tack mcp serve), until the client
// leaves or ctx is done. They run in the main thread's environment, so
// Agent starts the session's subagents and Skill runs its skills; a name
// the session does not offer is left out. ToolSearch is served when named
// even with no tool deferred, as Claude Code serves it.
func (s *Session) ServeTools(ctx context.Context, names []string, in io.Reader, out io.Writer) error {
	var tools []tool.Tool
	for _, n := range names {
		if t, ok := s.main.registry.Get(n); ok {
			tools = append(tools, t)
		} else if n == toolsearch.Name {
			tools = append(tools, toolsearch.Tool())
		}
	}
	return serve.Serve(ctx, tool.NewRegistry(tools...), s.main.env, in, out)
}
