package runtime

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/tackcode/tack/internal/llm"
)

// hookTools calls the tools of mcp_tool hooks on the session's MCP servers
// (hook.MCPToolCaller). Only a connected server is called: one still
// starting (SessionStart hooks run while they do) is an error naming it.
type hookTools struct{ s *Session }

func (h hookTools) CallHookTool(ctx context.Context, server, toolName string, input json.RawMessage) (string, bool, error) {
	st := h.s.mcp
	if st == nil {
		return "", false, fmt.Errorf("MCP server %q is not connected: the session's MCP servers have not been started yet", server)
	}
	blocks, isError, err := st.manager.CallTool(ctx, server, toolName, input)
	if err != nil {
		return "", false, err
	}
	// The text of the result, a line per block, as Claude Code reads it.
	var texts []string
	for _, b := range blocks {
		if b.Type == llm.TypeText {
			texts = append(texts, b.Text)
		} else {
			texts = append(texts, "["+b.Type+"]")
		}
	}
	return strings.Join(texts, "\n"), isError, nil
}
