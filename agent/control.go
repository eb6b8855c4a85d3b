package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/tackcode/tack/internal/hook"
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

// SetName names the session: --resume NAME (and the SDK's listings) find
// it by that name from now on.
func (c *Client) SetName(name string) error {
	s := c.s
	if strings.TrimSpace(name) == "" {
		return errors.New("set name: the name is empty")
	}
	s.metaMu.Lock()
	s.opts.Name = name
	s.metaMu.Unlock()
	if s.recorder != nil {
		if err := s.recorder.SetTitle(name); err != nil {
			return fmt.Errorf("set name: %w", err)
		}
	}
	return s.saveRecord(nil)
}

// AddDir adds a working directory for the rest of the session (as
// --add-dir does); it is recorded, so a resume keeps it.
func (c *Client) AddDir(dir string) error {
	s := c.s
	if !filepath.IsAbs(dir) {
		dir = filepath.Join(s.cwd, dir)
	}
	if fi, err := os.Stat(dir); err != nil {
		return fmt.Errorf("add directory: %w", err)
	} else if !fi.IsDir() {
		return fmt.Errorf("add directory: %s is not a directory", dir)
	}
	if err := s.checker.AddDir(dir); err != nil {
		return fmt.Errorf("add directory: %w", err)
	}
	s.metaMu.Lock()
	s.opts.AddDirs = append(slices.Clone(s.opts.AddDirs), dir)
	s.metaMu.Unlock()
	return s.saveRecord(nil)
}

// Notify runs the Notification hooks, as a host does when the session
// waits for its user ("idle_prompt" after a while at the prompt…), and
// returns what they asked to show.
func (c *Client) Notify(ctx context.Context, notificationType, title, message string) []string {
	s := c.s
	if !s.hooks.Has(hook.Notification) {
		return nil
	}
	out := s.hooks.Run(ctx, &hook.NotificationInput{Base: s.hookBase(), NotificationType: notificationType, Title: title, Message: message})
	return append(out.SystemMessages, out.Errors...)
}

// ContextCategory is one part of what fills the context window.
type ContextCategory struct {
	Name string
	// Tokens is an estimate (four bytes a token) of the part as the next
	// request would send it.
	Tokens int
}

// ContextUsage says what fills the context window (/context).
type ContextUsage struct {
	Model      string
	Window     int
	Categories []ContextCategory
}

// ContextUsage estimates what the next request would send, by part: the
// system prompt, the built-in and MCP tools, the memory files, and the
// conversation.
func (c *Client) ContextUsage() ContextUsage {
	s := c.s
	model := s.engine.Model()
	est := func(n int) int { return (n + 3) / 4 }
	var system int
	for _, b := range s.system {
		system += len(b.Text)
	}
	var builtin, mcpTools int
	for _, spec := range s.registry.Specs() {
		b, _ := json.Marshal(spec)
		if strings.HasPrefix(spec.Name, "mcp__") {
			mcpTools += len(b)
		} else {
			builtin += len(b)
		}
	}
	var memory int
	if s.memory != nil {
		for _, b := range s.memory.Blocks() {
			memory += len(b.Text)
		}
	}
	msgs, _ := json.Marshal(s.engine.Messages())
	conversation := max(0, len(msgs)-memory)
	return ContextUsage{Model: model.ID, Window: model.ContextWindow, Categories: []ContextCategory{
		{"System prompt", est(system)}, {"Built-in tools", est(builtin)}, {"MCP tools", est(mcpTools)},
		{"Memory files", est(memory)}, {"Conversation", est(conversation)},
	}}
}
