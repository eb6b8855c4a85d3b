package acp

import (
	"slices"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/tackcode/tack/agent"
)

// modes are tack's permission modes, offered as the session's modes.
var modes = []sdk.SessionMode{
	{Id: sdk.SessionModeId(agent.PermissionDefault), Name: "Default", Description: sdk.Ptr("Ask before running commands and changing files, as the permission rules say")},
	{Id: sdk.SessionModeId(agent.PermissionAcceptEdits), Name: "Accept edits", Description: sdk.Ptr("Change files in the working directories without asking")},
	{Id: sdk.SessionModeId(agent.PermissionPlan), Name: "Plan", Description: sdk.Ptr("Explore and plan; change nothing until the plan is approved")},
	{Id: sdk.SessionModeId(agent.PermissionAuto), Name: "Auto", Description: sdk.Ptr("A classifier decides what would need asking")},
	{Id: sdk.SessionModeId(agent.PermissionDontAsk), Name: "Don't ask", Description: sdk.Ptr("Deny what the rules do not allow, without asking")},
	{Id: sdk.SessionModeId(agent.PermissionBypass), Name: "Bypass permissions", Description: sdk.Ptr("Run everything without asking (unless the settings forbid this mode)")},
}

func modeIDs() []string {
	out := make([]string, len(modes))
	for i, m := range modes {
		out[i] = string(m.Id)
	}
	return out
}

func validMode(id string) bool { return slices.Contains(modeIDs(), id) }

func (s *session) modeState() *sdk.SessionModeState {
	s.mu.Lock()
	defer s.mu.Unlock()
	return &sdk.SessionModeState{AvailableModes: modes, CurrentModeId: sdk.SessionModeId(s.mode)}
}

// modelState lists tack's catalogue, the session's model first.
func (s *session) modelState() *sdk.SessionModelState {
	current := s.client.Info().Model
	var list []sdk.ModelInfo
	for _, m := range agent.Models() {
		info := sdk.ModelInfo{ModelId: sdk.ModelId(m.ID), Name: m.DisplayName}
		if m.ID == current {
			list = append([]sdk.ModelInfo{info}, list...)
		} else {
			list = append(list, info)
		}
	}
	return &sdk.SessionModelState{AvailableModels: list, CurrentModelId: sdk.ModelId(current)}
}
