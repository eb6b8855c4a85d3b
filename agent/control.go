package agent

import (
	"errors"
	"fmt"

	"github.com/tackcode/tack/internal/permission"
	"github.com/tackcode/tack/internal/protocol"
)

// ClientInfo describes a running session to a host: what an Agent SDK's
// initialize request is answered with.
type ClientInfo struct {
	SessionID      string
	Model          string
	PermissionMode PermissionMode
	// Commands are the slash commands a prompt may start with;
	// CommandDetails describes each (same order).
	Commands       []string
	CommandDetails []CommandInfo
	// Agents are the subagents the model may start, by name.
	Agents []AgentInfo
	// APIKeySource says where the credentials came from
	// ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN").
	APIKeySource string
	MCPServers   []MCPServerStatus
}

// CommandInfo describes a slash command: a skill or command the user may
// run as /Name.
type CommandInfo struct {
	Name         string
	Description  string
	ArgumentHint string
}

// AgentInfo is one subagent of a session.
type AgentInfo struct {
	Name        string
	Description string
	// Model is the agent's own model ("" or "inherit": the session's).
	Model string
}

// MCPServerStatus is the state of one MCP server of a session.
type MCPServerStatus = protocol.MCPServerStatus

// info describes the session.
func (s *agentSession) info() ClientInfo {
	init := s.initMessage().Init
	out := ClientInfo{
		SessionID:      init.SessionID,
		Model:          init.Model,
		PermissionMode: PermissionMode(init.PermissionMode),
		Commands:       append([]string{}, init.SlashCommands...),
		Agents:         []AgentInfo{},
		APIKeySource:   init.APIKeySource,
		MCPServers:     init.MCPServers,
	}
	for _, name := range out.Commands {
		ci := CommandInfo{Name: name}
		if s.skills != nil {
			if sk, ok := s.skills.Skill(name); ok {
				ci.Description, ci.ArgumentHint = sk.ListingDescription(0), sk.ArgumentHint
			}
		}
		out.CommandDetails = append(out.CommandDetails, ci)
	}
	if s.subagents != nil {
		for _, a := range s.subagents.infos() {
			out.Agents = append(out.Agents, AgentInfo{Name: a.Name, Description: a.Description, Model: s.subagents.defs[a.Name].Model})
		}
	}
	return out
}

// setModel switches the model of the following requests; "" means the
// default model.
func (s *agentSession) setModel(name string) string {
	m := s.catalog().Resolve(name, s.getenv)
	s.engine.SetModel(m)
	return m.ID
}

// setPermissionMode changes the mode of the calls checked from now on.
func (s *agentSession) setPermissionMode(mode PermissionMode) error {
	if mode == "" {
		mode = PermissionDefault
	}
	if !mode.Valid() {
		return fmt.Errorf("unknown permission mode %q (want default, acceptEdits, plan, bypassPermissions or dontAsk)", mode)
	}
	if mode == PermissionBypass && s.settings != nil && s.settings.Permissions.DisableBypassPermissionsMode {
		return errors.New("bypassPermissions mode is disabled by the settings (permissions.disableBypassPermissionsMode)")
	}
	return s.checker.SetMode(permission.Mode(mode))
}
