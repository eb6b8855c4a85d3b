package cli

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/tackcode/tack/agent"
	"github.com/tackcode/tack/internal/cli/cmdio"
)

// servedTools are the tools `tack mcp serve` offers: those of Claude
// Code's `claude mcp serve` that tack has, then Glob and Grep, which tack
// served before (Claude Code's sessions have them; its server does not
// list them).
var servedTools = []string{
	"Agent", "Bash", "Edit", "NotebookEdit", "Read", "Skill", "TaskStop", "ToolSearch", "WebFetch", "WebSearch", "Write",
	"Glob", "Grep",
}

// serveMCP is `tack mcp serve`: a session in the working directory, with
// the settings, skills and agents a session here has, whose tools are
// served over standard input and output. It prompts nothing, so it needs
// no credentials to start: the tools that ask the model (Agent, WebFetch,
// WebSearch, a forked Skill) fail without them. The MCP client decides
// what to call, and the tools run without asking.
func serveMCP(cmd *cobra.Command, stdio cmdio.IO) error {
	ctx := cmd.Context()
	c, err := agent.NewClient(ctx, agent.Options{
		Entrypoint:           "mcp",
		NoSessionPersistence: true,
		WithoutCredentials:   true,
		// The session's own MCP servers would serve nobody: their tools
		// are not offered.
		StrictMCPConfig: true,
	})
	if err != nil {
		return fmt.Errorf("mcp serve: %w", err)
	}
	defer c.Close()
	return c.ServeMCP(ctx, servedTools, stdio.In, stdio.Out)
}
