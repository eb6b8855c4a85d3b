package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/tackcode/tack/internal/llm"
)

// CallTool calls the tool a server names toolName (its own name, not
// tack's mcp__server__tool) with args, for a caller other than the model:
// an mcp_tool hook. The server must be connected already; one still
// starting, failed, waiting for sign-in or disabled is an error naming it
// and its state, and nothing is started or signed in for the call. The
// result is what the model would see of it (text and images, cut to
// MAX_MCP_OUTPUT_TOKENS), with its isError.
func (m *Manager) CallTool(ctx context.Context, server, toolName string, args json.RawMessage) ([]llm.Block, bool, error) {
	s, err := m.get(server)
	if err != nil {
		return nil, false, err
	}
	st := s.statusInfo()
	if st.Status != StatusConnected {
		why := st.Status
		switch {
		case st.Status == StatusPending:
			why = "still starting"
		case st.Error != "":
			why += ": " + st.Error
		}
		return nil, false, fmt.Errorf("MCP server %q is not connected (%s)", server, why)
	}
	var t *mcpTool
	var names []string
	for _, c := range s.toolList() {
		if c.remote == toolName {
			t = c
		}
		names = append(names, c.remote)
	}
	if t == nil {
		return nil, false, fmt.Errorf("MCP server %q has no tool %q (it offers: %s)", server, toolName, strings.Join(names, ", "))
	}
	if len(args) == 0 {
		args = json.RawMessage("{}")
	}
	res, err := s.callTool(ctx, t, args)
	if err != nil {
		return nil, false, err
	}
	out := convertResult(res, t.limit())
	return out.Content, out.IsError, nil
}
