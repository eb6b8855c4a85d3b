package acp

import (
	"context"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/tackcode/tack/agent"
)

// replay sends a loaded session's conversation as the updates a client
// would have seen: the user's prompts, the answers, thinking, and each
// tool call with its result.
func (s *session) replay(ctx context.Context, history []agent.MessageParam) error {
	for _, m := range history {
		if err := ctx.Err(); err != nil {
			return err
		}
		for _, b := range m.Content {
			s.replayBlock(m.Role, b)
		}
	}
	return nil
}

func (s *session) replayBlock(role string, b agent.ContentBlock) {
	switch {
	case b.Type == agent.BlockText && b.Text == "":
	case b.Type == agent.BlockText && role == agent.RoleUser:
		s.send(sdk.UpdateUserMessageText(b.Text))
	case b.Type == agent.BlockText:
		s.send(sdk.UpdateAgentMessageText(b.Text))
	case b.Type == agent.BlockThinking && b.Thinking != "":
		s.send(sdk.UpdateAgentThoughtText(b.Thinking))
	case b.Type == agent.BlockToolUse:
		s.toolStart(b)
	case b.Type == agent.BlockToolResult:
		s.toolDone(b, nil)
	}
}
