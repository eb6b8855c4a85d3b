package agent

import (
	"context"
	"time"

	"github.com/tackcode/tack/internal/mcp"
)

// Elicitation is an MCP server asking the user for input.
type Elicitation struct {
	Server  string
	Message string
	// Mode is "form" (answer with Content matching Schema, a JSON Schema)
	// or "url" (the user visits URL).
	Mode          string
	Schema        map[string]any
	URL           string
	ElicitationID string
}

// ElicitationAnswer is the user's answer to an Elicitation.
type ElicitationAnswer struct {
	// Action is ElicitAccept (with Content), ElicitDecline or ElicitCancel.
	Action  string
	Content map[string]any
}

// The actions of an ElicitationAnswer.
const (
	ElicitAccept  = "accept"
	ElicitDecline = "decline"
	ElicitCancel  = "cancel"
)

// MCPProgress is a progress notification of a running MCP tool call.
type MCPProgress struct {
	Server string
	// Tool is the server's own name of the tool; Name is the session's
	// (mcp__<server>__<tool>).
	Tool, Name string
	// ToolUseID is the model's id of the call, when known.
	ToolUseID string
	Progress  float64
	// Total is 0 when unknown.
	Total   float64
	Message string
}

// elicit is the callback as the runtime asks it; nil for none.
func elicit(cb func(context.Context, Elicitation) (ElicitationAnswer, error)) func(context.Context, mcp.ElicitationRequest) (mcp.ElicitationResult, error) {
	if cb == nil {
		return nil
	}
	return func(ctx context.Context, e mcp.ElicitationRequest) (mcp.ElicitationResult, error) {
		a, err := cb(ctx, Elicitation(e))
		return mcp.ElicitationResult(a), err
	}
}

// progress is the callback as the runtime calls it; nil for none.
func progress(cb func(MCPProgress)) func(mcp.Progress) {
	if cb == nil {
		return nil
	}
	return func(p mcp.Progress) { cb(MCPProgress(p)) }
}

// DefaultMCPStartupDeadline is how long the first request waits for MCP
// servers that are still starting, unless TACK_MCP_STARTUP_DEADLINE_MS or
// MCP_TIMEOUT says otherwise; slower ones join the session later. Those
// still starting then are reported (Options.Notify) and are failed in the
// init message: the first turn runs without them.
const DefaultMCPStartupDeadline = 3 * time.Second

// MCPLogin signs in to the remote MCP server name with OAuth now (the
// browser flow: its address is given through Notify), then connects to it
// again. For a server whose status is needs-auth.
func (c *Client) MCPLogin(ctx context.Context, name string) error { return c.s.MCPLogin(ctx, name) }
