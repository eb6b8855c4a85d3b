package acp

import (
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
	"strings"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/tackcode/tack/agent"
)

var (
	// rejectedPrompt is what the model is told when the user rejects a call.
	//go:embed rejected.md
	rejectedPrompt string
	// noQuestionsPrompt is what the model is told when it asks the user a
	// question, which an ACP client has no dialog for.
	//go:embed noquestions.md
	noQuestionsPrompt string
)

// The options of a permission request.
const (
	optAllow  = "allow"
	optAlways = "always"
	optReject = "reject"
)

// canUseTool asks the client about a call that needs approval.
func (s *session) canUseTool(ctx context.Context, name string, input json.RawMessage, info agent.ToolPermissionContext) (agent.PermissionResult, error) {
	if name == agent.AskUserQuestionTool {
		return agent.PermissionResult{Message: strings.TrimSpace(noQuestionsPrompt)}, nil
	}
	// The tool call goes out before the question about it.
	if err := s.client.Flush(ctx); err != nil {
		return agent.PermissionResult{}, err
	}
	rule := agent.SuggestRule(name, input, s.cwd)
	options := []sdk.PermissionOption{{OptionId: optAllow, Name: "Allow", Kind: sdk.PermissionOptionKindAllowOnce}}
	if rule != "" {
		options = append(options, sdk.PermissionOption{OptionId: optAlways, Name: "Always allow " + rule, Kind: sdk.PermissionOptionKindAllowAlways})
	}
	options = append(options, sdk.PermissionOption{OptionId: optReject, Name: "Reject", Kind: sdk.PermissionOptionKindRejectOnce})
	var in callInput
	_ = json.Unmarshal(input, &in)
	pending := sdk.ToolCallStatusPending
	call := sdk.ToolCallUpdate{ToolCallId: sdk.ToolCallId(info.ToolUseID), Title: sdk.Ptr(titleOf(name, in, s.cwd)),
		Kind: sdk.Ptr(kindOf(name, in)), Status: &pending, RawInput: input, Locations: locationsOf(in, s.cwd)}
	s.mu.Lock()
	if c := s.calls[info.ToolUseID]; c != nil {
		call.Content = c.diff
	}
	s.mu.Unlock()
	resp, err := s.conn.RequestPermission(ctx, sdk.RequestPermissionRequest{SessionId: sdk.SessionId(s.id), ToolCall: call, Options: options})
	if err != nil {
		return agent.PermissionResult{}, fmt.Errorf("ask the client about %s: %w", name, err)
	}
	if resp.Outcome.Selected == nil {
		// The client cancelled the turn while asking.
		s.cancel()
		return agent.PermissionResult{Message: strings.TrimSpace(rejectedPrompt)}, nil
	}
	switch resp.Outcome.Selected.OptionId {
	case optAllow:
		return s.allowed(info.ToolUseID, agent.PermissionResult{Allow: true}), nil
	case optAlways:
		rv, err := agent.ParsePermissionRule(rule)
		if err != nil {
			return agent.PermissionResult{}, fmt.Errorf("allow always %s: %w", rule, err)
		}
		return s.allowed(info.ToolUseID, agent.PermissionResult{Allow: true, UpdatedPermissions: []agent.PermissionUpdate{{
			Type: "addRules", Behavior: "allow", Destination: "localSettings", Rules: []agent.PermissionRuleValue{rv}}}}), nil
	case optReject:
		return agent.PermissionResult{Message: strings.TrimSpace(rejectedPrompt)}, nil
	}
	return agent.PermissionResult{}, fmt.Errorf("the client chose option %q, which was not offered", resp.Outcome.Selected.OptionId)
}

// allowed reports the call as running and passes the answer on.
func (s *session) allowed(id string, r agent.PermissionResult) agent.PermissionResult {
	running := sdk.ToolCallStatusInProgress
	s.send(sdk.SessionUpdate{ToolCallUpdate: &sdk.SessionToolCallUpdate{ToolCallId: sdk.ToolCallId(id), Status: &running}})
	return r
}
