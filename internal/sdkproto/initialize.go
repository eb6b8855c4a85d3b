package sdkproto

import (
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"

	"github.com/tackcode/tack/agent"
	"github.com/tackcode/tack/internal/version"
)

// defaultSDKPrompt is the system prompt of a session whose host gave an
// empty one (the Agent SDK sends [""] when the app sets none): a short
// statement of the role instead of tack's whole coding prompt.
const defaultSDKPrompt = "You are an agent run through the Agent SDK. Use the tools you are given to carry out the user's request."

// initRequest is an initialize control request: how the SDK passes what
// does not go on the command line.
type initRequest struct {
	Hooks              map[string][]hookMatcher `json:"hooks"`
	SystemPrompt       json.RawMessage          `json:"systemPrompt"`
	AppendSystemPrompt *string                  `json:"appendSystemPrompt"`
	Agents             map[string]sdkAgent      `json:"agents"`
	JSONSchema         json.RawMessage          `json:"jsonSchema"`
	Settings           json.RawMessage          `json:"settings"`
	DisallowedTools    []string                 `json:"disallowedTools"`
	MCPServers         json.RawMessage          `json:"mcpServers"`
	SDKMCPServers      []string                 `json:"sdkMcpServers"`
	SDKMCPManifests    map[string]manifest      `json:"sdkMcpServerManifests"`
	ManagedSettings    json.RawMessage          `json:"managedSettings"`
	Plugins            json.RawMessage          `json:"plugins"`
}

// hookMatcher is one matcher of initialize's hooks: the callbacks the SDK
// holds for the events whose subject fits Matcher.
type hookMatcher struct {
	Matcher         *string  `json:"matcher"`
	HookCallbackIDs []string `json:"hookCallbackIds"`
	Timeout         float64  `json:"timeout"`
	OnFailure       string   `json:"onFailure"`
}

// sdkAgent is the Agent SDK's AgentDefinition.
type sdkAgent struct {
	Description     string   `json:"description"`
	Prompt          string   `json:"prompt"`
	Tools           []string `json:"tools"`
	DisallowedTools []string `json:"disallowedTools"`
	Model           string   `json:"model"`
	PermissionMode  string   `json:"permissionMode"`
	MCPServers      []any    `json:"mcpServers"`
}

// initApplied says which launch fields an initialize request carried, for
// the *_applied flags of the answer.
type initApplied struct {
	settings, disallowedTools, mcpServers, managedSettings, plugins bool
}

// applyInit adds what an initialize request carries to opts. hookFor makes
// the callback that forwards one hook callback id to the SDK.
// sdkServer makes the configuration of one of the SDK's in-process MCP
// servers (m is its manifest, nil when the SDK sent none).
func applyInit(opts *agent.Options, req initRequest, hookFor func(id string) agent.HookCallback,
	sdkServer func(name string, m *manifest) agent.MCPServerConfig, warn func(string, ...any)) (initApplied, error) {
	var applied initApplied
	if len(req.SystemPrompt) > 0 && string(req.SystemPrompt) != "null" {
		prompt, err := systemPrompt(req.SystemPrompt)
		if err != nil {
			return applied, fmt.Errorf("initialize: systemPrompt: %w", err)
		}
		if strings.TrimSpace(prompt) == "" {
			prompt = defaultSDKPrompt
		}
		opts.SystemPrompt = &prompt
	}
	if req.AppendSystemPrompt != nil {
		opts.AppendSystemPrompt = strings.TrimSpace(strings.Join([]string{opts.AppendSystemPrompt, *req.AppendSystemPrompt}, "\n\n"))
	}
	if len(req.Agents) > 0 {
		agents := map[string]agent.AgentDefinition{}
		for name, d := range opts.Agents {
			agents[name] = d
		}
		for _, name := range sortedKeys(req.Agents) {
			a := req.Agents[name]
			if len(a.MCPServers) > 0 {
				warn("agent %s: mcpServers in an SDK agent definition are not supported yet; ignored", name)
			}
			agents[name] = agent.AgentDefinition{Description: a.Description, Prompt: a.Prompt, Tools: a.Tools,
				DisallowedTools: a.DisallowedTools, Model: a.Model, PermissionMode: agent.PermissionMode(a.PermissionMode), Source: "sdk"}
		}
		opts.Agents = agents
	}
	if len(req.Hooks) > 0 {
		hooks := map[agent.HookEvent][]agent.HookMatcher{}
		for ev, ms := range opts.Hooks {
			hooks[ev] = ms
		}
		for _, event := range sortedKeys(req.Hooks) {
			for i, m := range req.Hooks[event] {
				matcher := ""
				if m.Matcher != nil {
					matcher = *m.Matcher
				}
				if err := agent.CheckHookMatcher(matcher); err != nil {
					warn("hooks.%s[%d]: matcher %q: %v; ignored", event, i, matcher, err)
					continue
				}
				switch m.OnFailure {
				case "", "continue", "block":
				default:
					warn("hooks.%s[%d]: onFailure %q is neither continue nor block; continue is used", event, i, m.OnFailure)
					m.OnFailure = ""
				}
				hm := agent.HookMatcher{Matcher: matcher, TimeoutSeconds: m.Timeout, OnFailure: m.OnFailure}
				for _, id := range m.HookCallbackIDs {
					hm.Hooks = append(hm.Hooks, hookFor(id))
				}
				hooks[agent.HookEvent(event)] = append(hooks[agent.HookEvent(event)], hm)
			}
		}
		opts.Hooks = hooks
	}
	if present(req.Settings) {
		var path string
		if json.Unmarshal(req.Settings, &path) == nil {
			opts.Settings = path
		} else {
			opts.Settings = string(req.Settings)
		}
		applied.settings = true
	}
	if req.DisallowedTools != nil {
		opts.DisallowedTools = append(opts.DisallowedTools, req.DisallowedTools...)
		applied.disallowedTools = true
	}
	if present(req.MCPServers) {
		cfg, err := json.Marshal(map[string]json.RawMessage{"mcpServers": req.MCPServers})
		if err != nil {
			return applied, fmt.Errorf("initialize: mcpServers: %w", err)
		}
		opts.MCPConfig = append(opts.MCPConfig, string(cfg))
		applied.mcpServers = true
	}
	if present(req.ManagedSettings) {
		if !strings.HasPrefix(strings.TrimSpace(string(req.ManagedSettings)), "{") {
			return applied, fmt.Errorf("initialize: managedSettings must be a JSON object")
		}
		if opts.ManagedSettings != "" {
			return applied, fmt.Errorf("initialize: managedSettings: the command line gave managed settings already (--managed-settings); give them one way")
		}
		// The session's settings take what restricts and warn of the rest.
		opts.ManagedSettings = string(req.ManagedSettings)
		applied.managedSettings = true
	}
	if present(req.Plugins) {
		var plugins []struct {
			Type string `json:"type"`
			Path string `json:"path"`
		}
		if err := json.Unmarshal(req.Plugins, &plugins); err != nil {
			return applied, fmt.Errorf("initialize: plugins: %w", err)
		}
		for _, p := range plugins {
			if p.Type == "local" && p.Path != "" {
				opts.PluginDirs = append(opts.PluginDirs, p.Path)
			}
		}
		applied.plugins = true
	}
	if len(req.SDKMCPServers) > 0 {
		servers := maps.Clone(opts.MCPServers)
		if servers == nil {
			servers = map[string]agent.MCPServerConfig{}
		}
		for _, name := range req.SDKMCPServers {
			var m *manifest
			if mf, ok := req.SDKMCPManifests[name]; ok {
				m = &mf
			}
			servers[name] = sdkServer(name, m)
		}
		opts.MCPServers = servers
	}
	if present(req.JSONSchema) && len(opts.JSONSchema) == 0 {
		opts.JSONSchema = req.JSONSchema
	}
	return applied, nil
}

// systemPrompt reads initialize's systemPrompt: an array of strings (the
// current SDK) or a string.
func systemPrompt(raw json.RawMessage) (string, error) {
	var parts []string
	if err := json.Unmarshal(raw, &parts); err == nil {
		return strings.Join(parts, "\n\n"), nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return "", fmt.Errorf("want a string or an array of strings")
	}
	return s, nil
}

func present(raw json.RawMessage) bool { return len(raw) > 0 && string(raw) != "null" }

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// initResponse is the answer to initialize.
func initResponse(info agent.ClientInfo, applied initApplied, hooksSent bool) map[string]any {
	out := map[string]any{
		"commands":                slashCommands(info.CommandDetails),
		"agents":                  agentList(info.Agents),
		"models":                  modelList(info.Model),
		"account":                 map[string]any{"apiKeySource": info.APIKeySource},
		"output_style":            "default",
		"available_output_styles": []string{"default"},
		"claude_code_version":     version.Version,
		"pid":                     os.Getpid(),
		"session_id":              info.SessionID,
		"model":                   info.Model,
		"current_permission_mode": string(info.PermissionMode),
		// A matcher's onFailure "block" is honoured.
		"hook_on_failure_supported": true,
	}
	if hooksSent {
		out["hooks_applied"] = true
	}
	if applied.settings {
		out["settings_applied"] = true
	}
	if applied.disallowedTools {
		out["disallowed_tools_applied"] = true
	}
	if applied.mcpServers {
		out["mcp_servers_applied"] = true
	}
	if applied.managedSettings {
		out["managed_settings_applied"] = true
	}
	if applied.plugins {
		out["plugins_applied"] = true
	}
	return out
}

// modelList is initialize's list of models, the session's own first: the
// hosts that pick a model for the user (the ACP adapters) take the first,
// as Claude Code lists its default first.
func modelList(current string) []map[string]any {
	models := []map[string]any{}
	for _, m := range agent.Models() {
		value := m.ID
		if len(m.Aliases) > 0 {
			value = m.Aliases[0]
		}
		e := map[string]any{"value": value, "displayName": m.DisplayName, "description": m.ID}
		if m.ID == current || slices.Contains(m.Aliases, current) {
			models = append([]map[string]any{e}, models...)
			continue
		}
		models = append(models, e)
	}
	return models
}

// slashCommands are commands as the SDK lists them (SlashCommand).
func slashCommands(cmds []agent.CommandInfo) []map[string]any {
	out := []map[string]any{}
	for _, c := range cmds {
		out = append(out, map[string]any{"name": strings.TrimPrefix(c.Name, "/"), "description": c.Description, "argumentHint": c.ArgumentHint})
	}
	return out
}

// agentList are agents as the SDK lists them (AgentInfo).
func agentList(agents []agent.AgentInfo) []map[string]any {
	out := []map[string]any{}
	for _, a := range agents {
		e := map[string]any{"name": a.Name, "description": a.Description}
		if a.Model != "" && a.Model != "inherit" {
			e["model"] = a.Model
		}
		out = append(out, e)
	}
	return out
}
