package cli

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/tackcode/tack/agent"
	"github.com/tackcode/tack/internal/mcp/mcpconfig"
)

// serveMCP is `tack mcp serve`: tack's tools over MCP on stdin/stdout.
func serveMCP(cmd *cobra.Command, stdio IO) error {
	return agent.ServeMCP(cmd.Context(), agent.Options{}, stdio.In, stdio.Out)
}

// callMCP is `tack mcp call`: one tool call, its result printed.
func callMCP(ctx context.Context, stdio IO, srv mcpconfig.Server, tool string, input json.RawMessage) error {
	text, isError, err := agent.CallMCPTool(ctx, srv, tool, input)
	if err != nil {
		return err
	}
	fmt.Fprint(stdio.Out, text)
	if isError {
		return &exitError{code: 1}
	}
	return nil
}
