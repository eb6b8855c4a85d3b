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
// leaves or ctx is done. They run in the main thread's environment (less
// its guard of unread files: servedEnv), so Agent starts the session's
// subagents and Skill runs its skills; a name
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
	return serve.Serve(ctx, tool.NewRegistry(tools...), servedEnv(s.main.env), in, out)
}

// servedEnv is the environment of served calls: the main thread's, but
// with its own record of files, unguarded (Write and Edit take files the
// client has not read, as Claude Code's mcp serve does), and its own
// tool state (background commands).
func servedEnv(e *tool.Env) *tool.Env {
	return &tool.Env{
		SessionID: e.SessionID, ProjectDir: e.ProjectDir, Shell: e.Shell, Files: tool.UnguardedFileState(), Writes: e.Writes,
		Tools: e.Tools, Model: e.Model, HTTP: e.HTTP, ScratchDir: e.ScratchDir, ReadDenied: e.ReadDenied,
		NestedMemory: e.NestedMemory, Subagents: e.Subagents, Modes: e.Modes, TaskApprover: e.TaskApprover,
	}
}
