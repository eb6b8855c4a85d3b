package agent

import (
	"context"

	"github.com/tackcode/tack/internal/llm"
	"github.com/tackcode/tack/internal/runtime"
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
	// APIKeySource says where the credentials came from: one of the
	// AuthSource constants ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN",
	// "apiKeyHelper", "/login managed key").
	APIKeySource string
	MCPServers   []MCPServerStatus
	// TranscriptPath is the session's transcript file ("" when it keeps
	// none); OutputStyle the name of its output style.
	TranscriptPath string
	OutputStyle    string
	// PromptID is the id of the latest prompt ("" before the first): the
	// prompt_id its hook payloads carry.
	PromptID string
	// Effort is the reasoning effort the session's requests work at (the
	// one asked for, else the API's default, "high"); "" when the model
	// takes none. Thinking says whether the requests ask for thinking.
	Effort   string
	Thinking bool
	// Provider is where the main thread's requests go.
	Provider ProviderInfo
}

// ProviderInfo describes the service a session's requests go to.
type ProviderInfo struct {
	// ID is Claude Code's apiProvider value ("firstParty", "bedrock",
	// "vertex", "foundry"), or "openai" for a provider of the settings.
	ID string
	// Name is the provider in words ("Amazon Bedrock", "providers.local").
	Name    string
	BaseURL string
	// Region is where the model runs and RegionFrom what said so (a
	// variable's name); both "" where the provider has no regions.
	Region, RegionFrom string
	// Project is the Vertex AI project, and ProjectFrom what set it.
	Project, ProjectFrom string
	// Credential names where the credential comes from ("AWS profile
	// dev", "ANTHROPIC_API_KEY"); "none" when none is sent.
	Credential string
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

// infoOf is the runtime's description of a session, as ClientInfo.
func infoOf(in runtime.Info) ClientInfo {
	init := in.Init
	out := ClientInfo{
		SessionID:      init.SessionID,
		Model:          init.Model,
		PermissionMode: PermissionMode(init.PermissionMode),
		Commands:       append([]string{}, init.SlashCommands...),
		Agents:         []AgentInfo{},
		APIKeySource:   init.APIKeySource,
		MCPServers:     convert(init.MCPServers, mcpStatusOf),
		TranscriptPath: in.TranscriptPath,
		OutputStyle:    init.OutputStyle,
		PromptID:       in.PromptID,
		Effort:         in.Effort,
		Thinking:       in.Thinking,
		Provider: ProviderInfo{ID: in.Provider.ID, Name: in.Provider.Name, BaseURL: in.Provider.BaseURL,
			Region: in.Provider.Region, RegionFrom: in.Provider.RegionFrom,
			Project: in.Provider.Project, ProjectFrom: in.Provider.ProjectFrom, Credential: in.Provider.Credential},
	}
	for _, c := range in.Commands {
		out.CommandDetails = append(out.CommandDetails, CommandInfo(c))
	}
	for _, a := range in.Agents {
		out.Agents = append(out.Agents, AgentInfo(a))
	}
	return out
}

// SetName names the session: --resume NAME (and the SDK's listings) find
// it by that name from now on.
func (c *Client) SetName(name string) error { return c.s.SetName(name) }

// AddDir adds a working directory for the rest of the session (as
// --add-dir does); it is recorded, so a resume keeps it.
func (c *Client) AddDir(dir string) error { return c.s.AddDir(dir) }

// Notify runs the Notification hooks, as a host does when the session
// waits for its user ("idle_prompt" after a while at the prompt…), and
// returns what they asked to show.
func (c *Client) Notify(ctx context.Context, notificationType, title, message string) []string {
	return c.s.Notify(ctx, notificationType, title, message)
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
	model, parts := c.s.ContextUsage()
	out := ContextUsage{Model: model.ID, Window: model.ContextWindow}
	for _, p := range parts {
		out.Categories = append(out.Categories, ContextCategory(p))
	}
	return out
}

// ModelInfo is a model of tack's catalogue.
type ModelInfo struct {
	ID string
	// Aliases name it in Options.Model ("opus", "sonnet"…), the first one
	// the most common.
	Aliases       []string
	DisplayName   string
	ContextWindow int
	// MaxOutputTokens bounds one response.
	MaxOutputTokens int
}

// Models lists the models of tack's catalogue, the ones Options.Model may
// name by alias.
func Models() []ModelInfo {
	return convert(llm.Catalogue().Models, func(m llm.Model) ModelInfo {
		return ModelInfo{ID: m.ID, Aliases: m.Aliases, DisplayName: m.DisplayName, ContextWindow: m.ContextWindow, MaxOutputTokens: m.MaxOutput}
	})
}
