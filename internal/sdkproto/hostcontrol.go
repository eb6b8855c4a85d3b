package sdkproto

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"

	"github.com/tackcode/tack/agent"
)

// The control requests that reach into the running session: its context,
// title, settings, skills, MCP servers and background tasks. Each answers
// with the shape of the Agent SDK's types (sdk.d.ts).

// slowControl are the requests that wait on the model or on MCP servers;
// they are answered when done, without holding up the lines after them.
var slowControl = map[string]bool{"generate_session_title": true, "mcp_set_servers": true, "mcp_reconnect": true, "mcp_toggle": true}

// hostControl returns the handler of subtype, if it is one of these.
func (s *server) hostControl(subtype string) (func(context.Context, json.RawMessage) (any, error), bool) {
	h, ok := map[string]func(context.Context, json.RawMessage) (any, error){
		"get_context_usage":      s.contextUsage,
		"generate_session_title": s.sessionTitle,
		"get_settings":           s.getSettings,
		"apply_flag_settings":    s.applyFlagSettings,
		"reload_plugins":         s.reloadPlugins,
		"mcp_set_servers":        s.mcpSetServers,
		"mcp_reconnect":          s.mcpReconnect,
		"mcp_toggle":             s.mcpToggle,
		"stop_task":              s.stopTask,
	}[subtype]
	if !ok {
		return nil, false
	}
	return func(ctx context.Context, raw json.RawMessage) (any, error) {
		if err := s.start(ctx); err != nil {
			return nil, err
		}
		out, err := h(ctx, raw)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", subtype, err)
		}
		return out, nil
	}, true
}

// decode reads a request's fields into v.
func decode(raw json.RawMessage, v any) error {
	if err := json.Unmarshal(raw, v); err != nil {
		return fmt.Errorf("malformed request: %w", err)
	}
	return nil
}

func (s *server) stopTask(_ context.Context, raw json.RawMessage) (any, error) {
	var req struct {
		TaskID string `json:"task_id"`
	}
	if err := decode(raw, &req); err != nil {
		return nil, err
	}
	if req.TaskID == "" {
		return nil, errors.New("task_id is required")
	}
	return map[string]any{}, s.client.StopTask(req.TaskID)
}

func (s *server) mcpReconnect(ctx context.Context, raw json.RawMessage) (any, error) {
	var req struct {
		ServerName string `json:"serverName"`
	}
	if err := decode(raw, &req); err != nil {
		return nil, err
	}
	return map[string]any{}, s.client.ReconnectMCPServer(ctx, req.ServerName)
}

func (s *server) mcpToggle(ctx context.Context, raw json.RawMessage) (any, error) {
	var req struct {
		ServerName string `json:"serverName"`
		Enabled    *bool  `json:"enabled"`
	}
	if err := decode(raw, &req); err != nil {
		return nil, err
	}
	if req.Enabled == nil {
		return nil, errors.New("enabled is required")
	}
	return map[string]any{}, s.client.ToggleMCPServer(ctx, req.ServerName, *req.Enabled)
}

// setServer is one entry of mcp_set_servers: a process, a remote server,
// or one of the SDK's in-process servers (type sdk).
type setServer struct {
	Type    string            `json:"type"`
	Command string            `json:"command"`
	Args    []string          `json:"args"`
	Env     map[string]string `json:"env"`
	URL     string            `json:"url"`
	Headers map[string]string `json:"headers"`
}

func (s *server) mcpSetServers(ctx context.Context, raw json.RawMessage) (any, error) {
	var req struct {
		Servers map[string]setServer `json:"servers"`
	}
	if err := decode(raw, &req); err != nil {
		return nil, err
	}
	servers := map[string]agent.MCPServerConfig{}
	for _, name := range slices.Sorted(maps.Keys(req.Servers)) {
		srv := req.Servers[name]
		switch srv.Type {
		case "", "stdio":
			servers[name] = agent.MCPStdioServer{Command: srv.Command, Args: srv.Args, Env: srv.Env}
		case "http":
			servers[name] = agent.MCPHTTPServer{URL: srv.URL, Headers: srv.Headers}
		case "sse":
			servers[name] = agent.MCPSSEServer{URL: srv.URL, Headers: srv.Headers}
		case "sdk":
			servers[name] = s.sdkServer(name, nil)
		default:
			return nil, fmt.Errorf("server %q: unknown type %q (want stdio, http, sse or sdk)", name, srv.Type)
		}
	}
	return s.client.SetMCPServers(ctx, servers)
}

func (s *server) sessionTitle(ctx context.Context, raw json.RawMessage) (any, error) {
	var req struct {
		Description string `json:"description"`
		Persist     bool   `json:"persist"`
	}
	if err := decode(raw, &req); err != nil {
		return nil, err
	}
	title, err := s.client.GenerateTitle(ctx, req.Description, req.Persist)
	if err != nil {
		// As Claude Code answers a title it could not make.
		s.warn("%v", err)
		return map[string]any{"title": nil}, nil
	}
	return map[string]any{"title": title}, nil
}

// settingsSources are the names the SDK gives tack's settings scopes.
var settingsSources = map[string]string{
	"user": "userSettings", "project": "projectSettings", "local": "localSettings",
	"flag": "flagSettings", "managed": "policySettings",
}

func (s *server) getSettings(context.Context, json.RawMessage) (any, error) {
	effective, layers := s.client.SettingsLayers()
	sources := []map[string]any{}
	for _, l := range layers {
		sources = append(sources, map[string]any{"source": settingsSources[l.Source], "path": l.Path, "settings": l.Settings})
	}
	info := s.client.Info()
	return map[string]any{"effective": effective, "sources": sources,
		"applied": map[string]any{"model": info.Model, "permissionMode": info.PermissionMode}}, nil
}

func (s *server) applyFlagSettings(_ context.Context, raw json.RawMessage) (any, error) {
	var req struct {
		Settings map[string]any `json:"settings"`
	}
	if err := decode(raw, &req); err != nil {
		return nil, err
	}
	if req.Settings == nil {
		return nil, errors.New("settings is required (an object)")
	}
	return map[string]any{}, s.client.ApplyFlagSettings(req.Settings)
}

func (s *server) reloadPlugins(context.Context, json.RawMessage) (any, error) {
	r, err := s.client.ReloadSkills()
	if err != nil {
		return nil, err
	}
	for _, p := range r.Problems {
		s.warn("%s", p)
	}
	info := s.client.Info()
	plugins := []map[string]any{}
	for _, p := range r.Plugins {
		plugins = append(plugins, map[string]any{"name": p.Name, "path": p.Path})
	}
	return map[string]any{"commands": slashCommands(r.Commands), "agents": agentList(info.Agents), "plugins": plugins,
		"mcpServers": s.client.MCPServers(), "error_count": len(r.Problems)}, nil
}

// contextColors are the colours Claude Code's /context grid gives each
// part, which hosts that draw it read.
var contextColors = map[string]string{
	"system_prompt": "promptBorder", "system_tools": "inactive", "system_tools_deferred": "inactive",
	"mcp_tools": "cyan_FOR_SUBAGENTS_ONLY", "mcp_tools_deferred": "cyan_FOR_SUBAGENTS_ONLY",
	"memory_files": "claude", "skills": "warning", "messages": "purple_FOR_SUBAGENTS_ONLY",
	"autocompact_buffer": "inactive", "free_space": "promptBorder",
}

// contextCategory is one row of get_context_usage's categories.
type contextCategory struct {
	ID         string `json:"id"`
	Name       string `json:"name"`
	Tokens     int    `json:"tokens"`
	Color      string `json:"color"`
	IsDeferred bool   `json:"isDeferred,omitempty"`
	Kind       string `json:"kind"`
}

func (s *server) contextUsage(context.Context, json.RawMessage) (any, error) {
	r := s.client.ContextReport()
	var cats []contextCategory
	for _, p := range r.Parts {
		kind := "used"
		if p.Deferred {
			kind = "deferred"
		}
		cats = append(cats, contextCategory{ID: p.ID, Name: p.Name, Tokens: p.Tokens, Color: contextColors[p.ID], IsDeferred: p.Deferred, Kind: kind})
	}
	buffer := 0
	if r.AutoCompact > 0 {
		buffer = max(0, r.Window-r.AutoCompact)
		cats = append(cats, contextCategory{ID: "autocompact_buffer", Name: "Autocompact buffer", Tokens: buffer, Color: contextColors["autocompact_buffer"], Kind: "buffer"})
	}
	free := max(0, r.Window-r.Total-buffer)
	cats = append(cats, contextCategory{ID: "free_space", Name: "Free space", Tokens: free, Color: contextColors["free_space"], Kind: "free"})
	out := map[string]any{
		"categories": cats, "totalTokens": r.Total, "maxTokens": r.Window, "rawMaxTokens": r.Window,
		"percentage": percent(r.Total, r.Window), "gridRows": contextGrid(cats, r.Window), "model": r.Model,
		"memoryFiles": contextFiles(r.Memory), "mcpTools": contextTools(r.MCPTools), "agents": contextAgents(r.Agents),
		"skills": contextSkills(r.Skills), "isAutoCompactEnabled": r.AutoCompact > 0, "apiUsage": nil,
	}
	if r.AutoCompact > 0 {
		out["autoCompactThreshold"] = r.AutoCompact
	}
	cmds := s.client.Info().CommandDetails
	size := 0
	for _, c := range cmds {
		size += len(c.Name) + len(c.Description) + len(c.ArgumentHint)
	}
	out["slashCommands"] = map[string]any{"totalCommands": len(cmds), "includedCommands": len(cmds), "tokens": (size + 3) / 4}
	if u := r.Usage; u != nil {
		out["apiUsage"] = map[string]any{"input_tokens": u.InputTokens, "output_tokens": u.OutputTokens,
			"cache_creation_input_tokens": u.CacheCreationInputTokens, "cache_read_input_tokens": u.CacheReadInputTokens}
	}
	return out, nil
}

func percent(n, of int) int {
	if of <= 0 {
		return 0
	}
	return int(math.Round(float64(n) * 100 / float64(of)))
}

// contextGrid lays the categories out on a 10×10 grid of squares, each a
// hundredth of the window, as /context draws it: used parts first, then
// free space, then the buffer at the end; deferred parts take none.
func contextGrid(cats []contextCategory, window int) [][]map[string]any {
	const side = 10
	per := float64(max(window, 1)) / (side * side)
	var squares []map[string]any
	add := func(c contextCategory) {
		n := float64(c.Tokens) / per
		for n > 0 && len(squares) < side*side {
			squares = append(squares, map[string]any{"color": c.Color, "isFilled": true, "categoryName": c.Name,
				"tokens": c.Tokens, "percentage": percent(c.Tokens, window), "squareFullness": math.Round(min(n, 1)*10000) / 10000})
			n--
		}
	}
	var buffer, free *contextCategory
	for i, c := range cats {
		switch c.Kind {
		case "used":
			add(c)
		case "buffer":
			buffer = &cats[i]
		case "free":
			free = &cats[i]
		}
	}
	if free != nil && buffer != nil {
		free.Tokens = max(0, free.Tokens)
		rest := side*side - len(squares) - int(math.Ceil(float64(buffer.Tokens)/per))
		for i := 0; i < rest; i++ {
			squares = append(squares, map[string]any{"color": free.Color, "isFilled": false, "categoryName": free.Name,
				"tokens": free.Tokens, "percentage": percent(free.Tokens, window), "squareFullness": 1})
		}
		add(*buffer)
	}
	for len(squares) < side*side && free != nil {
		squares = append(squares, map[string]any{"color": free.Color, "isFilled": false, "categoryName": free.Name,
			"tokens": free.Tokens, "percentage": percent(free.Tokens, window), "squareFullness": 1})
	}
	rows := [][]map[string]any{}
	for i := 0; i < len(squares); i += side {
		rows = append(rows, squares[i:min(i+side, len(squares))])
	}
	return rows
}

func contextFiles(items []agent.ContextItem) []map[string]any {
	out := []map[string]any{}
	for _, it := range items {
		out = append(out, map[string]any{"path": it.Path, "type": it.Source, "tokens": it.Tokens})
	}
	return out
}

func contextTools(items []agent.ContextItem) []map[string]any {
	out := []map[string]any{}
	for _, it := range items {
		out = append(out, map[string]any{"name": it.Name, "serverName": it.Source, "tokens": it.Tokens, "isLoaded": !it.Deferred})
	}
	return out
}

func contextAgents(items []agent.ContextItem) []map[string]any {
	out := []map[string]any{}
	for _, it := range items {
		a := map[string]any{"agentType": it.Name, "source": it.Source, "tokens": it.Tokens}
		if it.Path != "" {
			a["path"] = it.Path
		}
		out = append(out, a)
	}
	return out
}

// skillSources are the names the SDK gives the places skills come from.
var skillSources = map[string]string{"user": "userSettings", "project": "projectSettings", "plugin": "plugin", "managed": "policySettings"}

func contextSkills(items []agent.ContextItem) map[string]any {
	front := []map[string]any{}
	total := 0
	for _, it := range items {
		source := skillSources[it.Source]
		if source == "" {
			source = it.Source
		}
		sk := map[string]any{"name": it.Name, "source": source, "tokens": it.Tokens}
		if it.Path != "" {
			sk["path"] = it.Path
		}
		if it.Plugin != "" {
			sk["pluginName"] = it.Plugin
		}
		front = append(front, sk)
		total += it.Tokens
	}
	return map[string]any{"totalSkills": len(items), "includedSkills": len(items), "tokens": total, "skillFrontmatter": front}
}
