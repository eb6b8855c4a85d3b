package agent

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"

	"github.com/tackcode/tack/internal/mcp"
	"github.com/tackcode/tack/internal/runtime"
)

// ErrNoTask is the error of StopTask for an id that names no running
// background task.
var ErrNoTask = runtime.ErrNoTask

// ErrNoMCPServer is the error of the MCP server controls for a name that
// is no server of the session.
var ErrNoMCPServer = runtime.ErrNoServer

// StopTask stops a background task: a shell command started in the
// background (its whole process group), or a background subagent, by the
// id its start reported. One that has already ended is no error; an id
// that names no task is ErrNoTask.
func (c *Client) StopTask(id string) error { return c.s.StopTask(id) }

// ReconnectMCPServer connects to an MCP server again (a stdio server is
// started again) and waits for the outcome.
func (c *Client) ReconnectMCPServer(ctx context.Context, name string) error {
	return c.s.ReconnectMCP(ctx, name)
}

// ToggleMCPServer enables or disables an MCP server for the rest of the
// session: a disabled server stops, and its tools are not offered from the
// next request on; enabling starts it again and waits for the outcome.
func (c *Client) ToggleMCPServer(ctx context.Context, name string, enabled bool) error {
	return c.s.SetMCPEnabled(ctx, name, enabled)
}

// MCPSetServersResult says what SetMCPServers changed.
type MCPSetServersResult struct {
	Added   []string          `json:"added"`
	Removed []string          `json:"removed"`
	Errors  map[string]string `json:"errors"`
}

// SetMCPServers replaces the session's dynamic MCP servers — those of
// Options.MCPServers and MCPConfig, and those an earlier call set — with
// servers: new names start, names left out stop, changed ones restart.
// It waits for the new servers up to the start-up deadline; those that
// failed are in Errors.
func (c *Client) SetMCPServers(ctx context.Context, servers map[string]MCPServerConfig) (MCPSetServersResult, error) {
	configs, err := dynamicConfigs(servers)
	if err != nil {
		return MCPSetServersResult{}, err
	}
	r := c.s.SetDynamicMCP(ctx, configs)
	return MCPSetServersResult(r), nil
}

// dynamicConfigs are servers as the MCP manager starts them.
func dynamicConfigs(servers map[string]MCPServerConfig) ([]mcp.ServerConfig, error) {
	inProcess, err := sdkServerConfigs(servers)
	if err != nil {
		return nil, err
	}
	out := inProcess
	for _, name := range slices.Sorted(maps.Keys(servers)) {
		cfg := mcp.ServerConfig{Name: name, Scope: "dynamic"}
		switch srv := servers[name].(type) {
		case MCPStdioServer:
			if srv.Command == "" {
				return nil, fmt.Errorf("MCP server %q: no command", name)
			}
			cfg.Type, cfg.Command, cfg.Args, cfg.Env = mcp.TypeStdio, srv.Command, srv.Args, srv.Env
		case MCPHTTPServer:
			cfg.Type, cfg.URL, cfg.Headers = mcp.TypeHTTP, srv.URL, srv.Headers
		case MCPSSEServer:
			cfg.Type, cfg.URL, cfg.Headers = mcp.TypeSSE, srv.URL, srv.Headers
		case MCPSDKServer, MCPTransportServer:
			continue
		case nil:
			return nil, fmt.Errorf("MCP server %q: no configuration", name)
		default:
			return nil, fmt.Errorf("MCP server %q: unknown configuration type %T", name, srv)
		}
		if cfg.Type != mcp.TypeStdio && cfg.URL == "" {
			return nil, fmt.Errorf("MCP server %q: no url", name)
		}
		out = append(out, cfg)
	}
	return out, nil
}

// GenerateTitle asks the small model for a short title of a session
// described by description (its first prompt, say); with persist it also
// becomes the session's name, as SetName makes it.
func (c *Client) GenerateTitle(ctx context.Context, description string, persist bool) (string, error) {
	return c.s.GenerateTitle(ctx, description, persist)
}

// SettingsLayer is one settings file of the session as written: its
// source ("user", "project", "local", "flag", "managed") and content.
type SettingsLayer struct {
	Source   string
	Path     string
	Settings map[string]any
}

// SettingsLayers returns the settings files the session runs under, lowest
// precedence first, as written (the flag layer with ApplyFlagSettings'
// additions), and their merge: objects key by key, lists joined, other
// values from the highest file.
func (c *Client) SettingsLayers() (effective map[string]any, layers []SettingsLayer) {
	eff, ls := c.s.SettingsLayers()
	return eff, convert(ls, func(l runtime.SettingsLayer) SettingsLayer { return SettingsLayer(l) })
}

// ApplyFlagSettings lays settings over the command line's settings layer
// (Options.Settings) for the rest of the session; a nil value removes a
// key. The settings are read again at once: permission rules, hooks and
// env take effect for what follows, and a "model" switches the model.
func (c *Client) ApplyFlagSettings(settings map[string]any) error {
	if settings == nil {
		return errors.New("apply flag settings: no settings")
	}
	return c.s.ApplyFlagSettings(settings)
}

// ReloadResult says what ReloadSkills found.
type ReloadResult struct {
	Commands []CommandInfo
	// Plugins are the plugins by name and folder.
	Plugins []PluginInfo
	// Problems are the definitions that did not load.
	Problems []string
}

// ReloadSkills reads the skills, commands and plugins from disk again: a
// skill added or changed since the session started is offered from the
// next request on, a removed one no longer. Agents, hooks and the MCP
// servers of plugins stay as the session started with them.
func (c *Client) ReloadSkills() (ReloadResult, error) {
	r, err := c.s.ReloadSkills()
	out := ReloadResult{Problems: r.Problems}
	for _, cmd := range r.Commands {
		out.Commands = append(out.Commands, CommandInfo(cmd))
	}
	for _, p := range r.Plugins {
		out.Plugins = append(out.Plugins, PluginInfo{Name: p.Name, Path: p.Root})
	}
	return out, err
}

// ContextReport says what fills the context window, as the next request
// would send it: parts estimated at four bytes a token; once a response
// has come, Total is what the last request really took (its usage) and
// the messages are the rest of it.
type ContextReport struct {
	Model       string
	Window      int
	MaxOutput   int
	Parts       []ContextPart
	Total       int
	AutoCompact int // the total at which the conversation is compacted; 0 never
	Memory      []ContextItem
	MCPTools    []ContextItem
	Skills      []ContextItem
	Agents      []ContextItem
	Usage       *Usage // the last response's; nil before the first
}

// ContextPart is one part of a ContextReport: ID system_prompt,
// system_tools, mcp_tools, memory_files, skills, messages, or a deferred
// one (system_tools_deferred, mcp_tools_deferred), which takes no room.
type ContextPart struct {
	ID, Name string
	Tokens   int
	Deferred bool
}

// ContextItem is one memory file (Source its kind), MCP tool (Source its
// server), skill or agent of a ContextReport.
type ContextItem struct {
	Name, Source, Path, Plugin string
	Tokens                     int
	Deferred                   bool
}

// ContextReport reports what fills the main thread's context window.
func (c *Client) ContextReport() ContextReport {
	r := c.s.ContextReport()
	item := func(i runtime.ContextItem) ContextItem { return ContextItem(i) }
	out := ContextReport{Model: r.Model.ID, Window: r.Model.ContextWindow, MaxOutput: r.Model.MaxOutput, Total: r.Total, AutoCompact: r.AutoCompactAt,
		Parts:  convert(r.Parts, func(p runtime.ContextPart) ContextPart { return ContextPart(p) }),
		Memory: convert(r.Memory, item), MCPTools: convert(r.MCPTools, item), Skills: convert(r.Skills, item), Agents: convert(r.Agents, item)}
	if u := r.Usage; u != nil {
		out.Usage = &Usage{InputTokens: u.InputTokens, OutputTokens: u.OutputTokens,
			CacheCreationInputTokens: u.CacheCreationInputTokens, CacheReadInputTokens: u.CacheReadInputTokens}
	}
	return out
}
