package runtime

import (
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"

	"github.com/tackcode/tack/internal/compact"
	"github.com/tackcode/tack/internal/config"
	"github.com/tackcode/tack/internal/extension"
	"github.com/tackcode/tack/internal/llm"
	"github.com/tackcode/tack/internal/mcp"
	"github.com/tackcode/tack/internal/shell"
	"github.com/tackcode/tack/internal/skill/skilltool"
)

// What a host (the Agent SDK's control requests) asks of a running
// session beyond prompts: stopping a task, managing MCP servers, a title,
// the settings layers, reloading skills.

// ErrNoTask is StopTask's error for an id that names no running task.
var ErrNoTask = errors.New("no such task")

// StopTask stops a background task of the session: a background shell
// command (its whole process group) or a background subagent. A task that
// has already ended is left as it is, as Claude Code does; an id that
// names no task of the session is ErrNoTask.
func (s *Session) StopTask(id string) error {
	if job, ok := s.main.env.Shell.Job(id); ok {
		if err := job.Stop(); err != nil && !errors.Is(err, shell.ErrNotRunning) {
			return fmt.Errorf("stop task %s: %w", id, err)
		}
		return nil
	}
	if s.subagents.stop(id) {
		return nil
	}
	return fmt.Errorf("stop task %s: %w", id, ErrNoTask)
}

// ErrNoServer is the error of the MCP controls for a name that is no
// server of the session.
var ErrNoServer = errors.New("no such MCP server")

func (s *Session) mcpServer(name string) error {
	for _, st := range s.MCPStatuses() {
		if st.Name == name {
			return nil
		}
	}
	return fmt.Errorf("%w: %s", ErrNoServer, name)
}

// ReconnectMCP connects to an MCP server of the session again (a stdio
// server is started again), waiting for the outcome.
func (s *Session) ReconnectMCP(ctx context.Context, name string) error {
	if err := s.mcpServer(name); err != nil || s.mcp == nil {
		return err
	}
	return s.mcp.manager.Reconnect(ctx, name)
}

// SetMCPEnabled enables or disables an MCP server for the rest of the
// session: a disabled server stops and its tools leave the next request.
func (s *Session) SetMCPEnabled(ctx context.Context, name string, enabled bool) error {
	if err := s.mcpServer(name); err != nil || s.mcp == nil {
		return err
	}
	return s.mcp.manager.SetEnabled(ctx, name, enabled)
}

// MCPSetResult says what SetDynamicMCP changed.
type MCPSetResult struct {
	Added, Removed []string
	// Errors are the added servers that failed to start, by name.
	Errors map[string]string
}

// SetDynamicMCP replaces the session's dynamic MCP servers (those of
// --mcp-config, the SDK's and those a previous call set) with servers: a
// new name is started, a name no longer given is stopped and removed, a
// changed configuration is restarted, an unchanged one is left running.
// It waits for the added servers up to the start-up deadline.
func (s *Session) SetDynamicMCP(ctx context.Context, servers []mcp.ServerConfig) MCPSetResult {
	st := s.mcp
	res := MCPSetResult{Added: []string{}, Removed: []string{}, Errors: map[string]string{}}
	if st == nil {
		return res
	}
	current := map[string]mcp.ServerConfig{}
	st.mu.Lock()
	if st.dynamic == nil {
		st.dynamic = map[string]mcp.ServerConfig{}
		for _, stat := range st.manager.Statuses() {
			if stat.Scope == "dynamic" || stat.Scope == "sdk" {
				st.dynamic[stat.Name] = mcp.ServerConfig{Name: stat.Name, Scope: stat.Scope, Type: stat.Transport}
			}
		}
	}
	for k, v := range st.dynamic {
		current[k] = v
	}
	next := map[string]mcp.ServerConfig{}
	var start []mcp.ServerConfig
	for _, cfg := range servers {
		next[cfg.Name] = cfg
		old, ok := current[cfg.Name]
		if ok && sameServer(old, cfg) {
			continue
		}
		if !ok {
			res.Added = append(res.Added, cfg.Name)
		}
		start = append(start, cfg)
	}
	for name := range current {
		if _, ok := next[name]; !ok {
			res.Removed = append(res.Removed, name)
		}
	}
	st.dynamic = next
	st.mu.Unlock()
	slices.Sort(res.Added)
	slices.Sort(res.Removed)
	for _, name := range res.Removed {
		st.manager.Remove(name)
	}
	if len(start) > 0 {
		st.manager.Start(context.WithoutCancel(ctx), start)
		st.manager.WaitReady(ctx, st.deadline)
	}
	for _, stat := range st.manager.Statuses() {
		if slices.Contains(res.Added, stat.Name) && stat.Status == mcp.StatusFailed {
			res.Errors[stat.Name] = stat.Error
		}
	}
	return res
}

// sameServer reports whether two configurations start the same server; an
// in-process server of the host is the same by name.
func sameServer(a, b mcp.ServerConfig) bool {
	if a.Type == mcp.TypeSDK || b.Type == mcp.TypeSDK {
		return a.Type == b.Type
	}
	a.Dial, b.Dial, a.Scope, b.Scope = nil, nil, "", ""
	return reflect.DeepEqual(a, b)
}

//go:embed title.md
var titlePrompt string

const titleToolName = "session_title"

var titleTool = llm.ToolSpec{Name: titleToolName, Description: "Give the session its title.",
	InputSchema: json.RawMessage(`{"type":"object","properties":{"title":{"type":"string"}},"required":["title"],"additionalProperties":false}`)}

// GenerateTitle asks the small model for a short title of a session
// described by description (its first prompt, say); with persist the title
// becomes the session's name, as SetName does.
func (s *Session) GenerateTitle(ctx context.Context, description string, persist bool) (string, error) {
	if strings.TrimSpace(description) == "" {
		return "", errors.New("generate title: the description is empty")
	}
	p := s.main.env.Model.Provider
	if p == nil || s.small == "" {
		return "", errors.New("generate title: no model to ask")
	}
	req := &llm.Request{
		Model:      s.small,
		System:     []llm.Block{llm.Text(titlePrompt)},
		Messages:   []llm.Message{{Role: llm.RoleUser, Content: []llm.Block{llm.Text("<session>\n" + description + "\n</session>")}}},
		Tools:      []llm.ToolSpec{titleTool},
		ToolChoice: json.RawMessage(`{"type":"tool","name":"` + titleToolName + `"}`),
		MaxTokens:  200,
	}
	resp, err := p.Stream(ctx, req, llm.Observer{})
	if err != nil {
		return "", fmt.Errorf("generate title: %w", err)
	}
	title := ""
	for _, b := range resp.Content {
		var in struct {
			Title string `json:"title"`
		}
		if b.Type == llm.TypeToolUse && b.Name == titleToolName && json.Unmarshal(b.Input, &in) == nil {
			title = strings.Join(strings.Fields(in.Title), " ")
		}
	}
	if title == "" {
		return "", errors.New("generate title: the model gave no title")
	}
	if persist {
		if err := s.SetName(title); err != nil {
			return "", err
		}
	}
	return title, nil
}

// SettingsLayer is one settings file as written, and the source it is.
type SettingsLayer struct {
	// Source is "user", "project", "local", "flag" or "managed".
	Source   string
	Path     string
	Settings map[string]any
}

// SettingsLayers returns the settings files the session runs under, lowest
// precedence first, each as written (the flag layer with what
// ApplyFlagSettings added), and their merge: objects merged key by key,
// lists joined without repeats, other values from the highest file.
func (s *Session) SettingsLayers() (effective map[string]any, layers []SettingsLayer) {
	effective = map[string]any{}
	flag := false
	for _, src := range s.currentSettings().Files {
		if src.Path == config.HostManagedPath {
			// The host's managed settings, as far as they apply.
			layers = append(layers, SettingsLayer{Source: string(src.Scope), Path: src.Path, Settings: s.currentSettings().HostManaged})
			continue
		}
		var raw []byte
		if src.Scope == config.ScopeFlag {
			flag = true
			raw = []byte(s.flagSettings())
		} else if b, err := os.ReadFile(src.Path); err == nil {
			raw = b
		}
		var m map[string]any
		if json.Unmarshal(raw, &m) != nil || m == nil {
			continue
		}
		layers = append(layers, SettingsLayer{Source: string(src.Scope), Path: src.Path, Settings: m})
	}
	if !flag && len(s.flagOverlay()) > 0 {
		var m map[string]any
		_ = json.Unmarshal([]byte(s.flagSettings()), &m)
		layers = append(layers, SettingsLayer{Source: string(config.ScopeFlag), Path: config.FlagPath, Settings: m})
	}
	for _, l := range layers {
		effective = mergeSettings(effective, l.Settings)
	}
	return effective, layers
}

// mergeSettings lays over on base: objects key by key, lists joined
// without repeats, anything else replaced. base is not changed.
func mergeSettings(base, over map[string]any) map[string]any {
	out := make(map[string]any, len(base)+len(over))
	for k, v := range base {
		out[k] = v
	}
	for k, v := range over {
		switch v := v.(type) {
		case map[string]any:
			if b, ok := out[k].(map[string]any); ok {
				out[k] = mergeSettings(b, v)
				continue
			}
		case []any:
			if b, ok := out[k].([]any); ok {
				joined := slices.Clone(b)
				for _, x := range v {
					if !slices.ContainsFunc(joined, func(y any) bool { return reflect.DeepEqual(x, y) }) {
						joined = append(joined, x)
					}
				}
				out[k] = joined
				continue
			}
		}
		out[k] = v
	}
	return out
}

// ApplyFlagSettings lays settings over the command line's settings layer
// (--settings) for the rest of the session, as one more --settings would:
// a null value removes a key. The settings are read again at once, as when
// a file changes (see reloadSettings); a model key switches the model.
func (s *Session) ApplyFlagSettings(settings map[string]any) error {
	s.current.mu.Lock()
	before := s.flagLayer
	s.flagLayer = applyOverlay(before, settings)
	s.current.mu.Unlock()
	if err := s.reloadSettings(); err != nil {
		// Settings that do not load are not kept: the session goes on
		// under the ones it had.
		s.current.mu.Lock()
		s.flagLayer = before
		s.current.mu.Unlock()
		return fmt.Errorf("apply flag settings: %w", err)
	}
	if m, ok := settings["model"]; ok {
		name, _ := m.(string)
		if _, err := s.SetModel(name); err != nil {
			return fmt.Errorf("apply flag settings: %w", err)
		}
	}
	return nil
}

// applyOverlay merges settings into overlay, a nil value deleting its key.
func applyOverlay(overlay, settings map[string]any) map[string]any {
	out := map[string]any{}
	for k, v := range overlay {
		out[k] = v
	}
	for k, v := range settings {
		if v == nil {
			out[k] = nil
			continue
		}
		if m, ok := v.(map[string]any); ok {
			if b, ok := out[k].(map[string]any); ok {
				out[k] = applyOverlay(b, m)
				continue
			}
		}
		out[k] = v
	}
	return out
}

func (s *Session) flagOverlay() map[string]any {
	s.current.mu.Lock()
	defer s.current.mu.Unlock()
	return s.flagLayer
}

// flagSettings is the --settings layer as JSON: the option's (inline, or
// the file it names) with the overlay of ApplyFlagSettings.
func (s *Session) flagSettings() string {
	overlay := s.flagOverlay()
	value := strings.TrimSpace(s.cfg.Settings)
	if len(overlay) == 0 {
		return value
	}
	base := map[string]any{}
	raw := []byte(value)
	if value != "" && !strings.HasPrefix(value, "{") {
		path := value
		if !filepath.IsAbs(path) {
			path = filepath.Join(s.cwd, path)
		}
		raw, _ = os.ReadFile(path)
	}
	_ = json.Unmarshal(raw, &base)
	merged := dropNulls(applyOverlay(base, overlay))
	b, _ := json.Marshal(merged)
	return string(b)
}

func dropNulls(m map[string]any) map[string]any {
	for k, v := range m {
		switch v := v.(type) {
		case nil:
			delete(m, k)
		case map[string]any:
			m[k] = dropNulls(v)
		}
	}
	return m
}

// Reloaded says what ReloadSkills found.
type Reloaded struct {
	Commands []CommandInfo
	Plugins  []*extension.Plugin
	// Problems are the definitions that did not load.
	Problems []string
}

// ReloadSkills reads the skills, commands and plugins from disk again: a
// skill added or changed since the session started is offered from the
// next request on (the Skill tool's listing is rebuilt), and a removed
// one is no longer. Agents, hooks and MCP servers of plugins stay as the
// session started with them.
func (s *Session) ReloadSkills() (Reloaded, error) {
	opts, err := s.extOptions()
	if err != nil {
		return Reloaded{}, fmt.Errorf("reload: %w", err)
	}
	ext := extension.Load(opts)
	out := Reloaded{Plugins: ext.Plugins()}
	for _, p := range ext.Problems() {
		out.Problems = append(out.Problems, p.Error())
	}
	if s.skills == nil {
		return out, errors.New("reload: the session offers no skills (its tools leave out Skill)")
	}
	s.skills.Reset(s.trust.skills(ext.Skills()))
	if _, ok := s.main.registry.Get(skilltool.Name); ok || (s.skillToolOK && len(s.skills.ModelInvocable()) > 0) {
		s.main.registry.Replace(skilltool.New(skilltool.Options{Runtime: s.skills, Forker: s.subagents}))
	}
	out.Commands = s.Info().Commands
	return out, nil
}

// ContextReport says what fills the context window, as the next request
// would send it. Parts are estimated at four bytes a token; when a
// response has come, the total is what the last request really took
// (its usage), and the conversation is the rest of it.
type ContextReport struct {
	Model llm.Model
	// Parts are the used parts (ID system_prompt, system_tools, mcp_tools,
	// memory_files, skills, messages) and the deferred tools
	// (system_tools_deferred, mcp_tools_deferred), which take no room.
	Parts []ContextPart
	// Total is the tokens used; AutoCompactAt the total at which the
	// conversation is compacted (0: never).
	Total, AutoCompactAt int
	Memory               []ContextItem // Name is the path, Source the kind
	MCPTools             []ContextItem // Source is the server
	Skills               []ContextItem
	Agents               []ContextItem
	// Usage is the last response's (nil before the first).
	Usage *llm.Usage
}

// ContextPart is one part of a ContextReport.
type ContextPart struct {
	ID, Name string
	Tokens   int
	Deferred bool
}

// ContextItem is one file, tool, skill or agent of a ContextReport.
type ContextItem struct {
	Name, Source, Path, Plugin string
	Tokens                     int
	Deferred                   bool
}

func estimate(n int) int { return (n + 3) / 4 }

// ContextReport reports what fills the main thread's context window.
func (s *Session) ContextReport() ContextReport {
	main := s.main
	rep := ContextReport{Model: main.engine.Model(), Usage: main.engine.LastUsage(), Skills: s.contextSkills(), Agents: s.contextAgents()}
	var system int
	for _, b := range main.system {
		system += len(b.Text)
	}
	tools := s.toolSizes(&rep)
	var memory int
	if s.memory != nil {
		for _, f := range s.memory.Files {
			memory += len(f.Content)
			rep.Memory = append(rep.Memory, ContextItem{Name: f.Path, Path: f.Path, Source: string(f.Kind), Tokens: estimate(len(f.Content))})
		}
	}
	conversation := 0
	if history := main.engine.Messages(); len(history) > 0 {
		msgs, _ := json.Marshal(history)
		conversation = estimate(max(0, len(msgs)-memory))
	}
	used := []ContextPart{
		{ID: "system_prompt", Name: "System prompt", Tokens: estimate(system)},
		{ID: "system_tools", Name: "System tools", Tokens: estimate(tools.builtin)},
		{ID: "mcp_tools", Name: "MCP tools", Tokens: estimate(tools.mcp)},
		{ID: "memory_files", Name: "Memory files", Tokens: estimate(memory)},
		{ID: "skills", Name: "Skills", Tokens: estimate(tools.skills)},
	}
	rep.Total, conversation = fitToUsage(used, conversation, rep.Usage)
	used = append(used, ContextPart{ID: "messages", Name: "Messages", Tokens: conversation})
	for _, p := range used {
		if p.Tokens > 0 {
			rep.Parts = append(rep.Parts, p)
		}
	}
	if tools.builtinDeferred > 0 {
		rep.Parts = append(rep.Parts, ContextPart{ID: "system_tools_deferred", Name: "System tools (deferred)", Tokens: estimate(tools.builtinDeferred), Deferred: true})
	}
	if tools.mcpDeferred > 0 {
		rep.Parts = append(rep.Parts, ContextPart{ID: "mcp_tools_deferred", Name: "MCP tools (deferred)", Tokens: estimate(tools.mcpDeferred), Deferred: true})
	}
	if t := s.compactThreshold; t >= 0 {
		if t == 0 {
			t = compact.DefaultThreshold
		}
		rep.AutoCompactAt = int(t * float64(rep.Model.ContextWindow))
	}
	return rep
}

// fitToUsage returns the total and the conversation's share: the
// estimates' sum before any response; after one, what the last request
// really took with its answer, the conversation being the rest (the
// estimated parts scaled down when they overshoot it).
func fitToUsage(used []ContextPart, conversation int, u *llm.Usage) (total, messages int) {
	fixed := 0
	for _, p := range used {
		fixed += p.Tokens
	}
	if u == nil {
		return fixed + conversation, conversation
	}
	total = int(u.InputTokens + u.CacheReadInputTokens + u.CacheCreationInputTokens + u.OutputTokens)
	if fixed > total {
		left := total
		for i := range used {
			used[i].Tokens = used[i].Tokens * total / fixed
			left -= used[i].Tokens
		}
		used[0].Tokens += left
		return total, 0
	}
	return total, total - fixed
}

// toolBytes are the sizes of the tool definitions a request sends, by
// part.
type toolBytes struct{ builtin, builtinDeferred, mcp, mcpDeferred, skills int }

// toolSizes measures the main thread's tool definitions, and lists the MCP
// tools in rep.
func (s *Session) toolSizes(rep *ContextReport) toolBytes {
	var sz toolBytes
	reg := s.main.registry
	for _, spec := range reg.Specs() {
		b, _ := json.Marshal(spec)
		deferred := reg.Deferred(spec.Name)
		switch {
		case strings.HasPrefix(spec.Name, "mcp__"):
			server, _, _ := strings.Cut(strings.TrimPrefix(spec.Name, "mcp__"), "__")
			rep.MCPTools = append(rep.MCPTools, ContextItem{Name: spec.Name, Source: server, Tokens: estimate(len(b)), Deferred: deferred})
			if deferred {
				sz.mcpDeferred += len(b)
			} else {
				sz.mcp += len(b)
			}
		case spec.Name == skilltool.Name:
			sz.skills += len(b)
		case deferred:
			sz.builtinDeferred += len(b)
		default:
			sz.builtin += len(b)
		}
	}
	return sz
}

// contextSkills are the skills the Skill tool lists, each with the room
// its entry takes.
func (s *Session) contextSkills() []ContextItem {
	out := []ContextItem{}
	if s.skills == nil {
		return out
	}
	for _, sk := range s.skills.Listed() {
		out = append(out, ContextItem{Name: sk.Name, Source: string(sk.Source.Scope), Path: sk.Path, Plugin: sk.Source.Plugin,
			Tokens: estimate(len(sk.Name) + len(sk.ListingDescription(0)) + 4)})
	}
	return out
}

// contextAgents are the subagents the Agent tool lists.
func (s *Session) contextAgents() []ContextItem {
	out := []ContextItem{}
	for _, a := range s.subagents.infos() {
		def := s.agents[a.Name]
		out = append(out, ContextItem{Name: a.Name, Source: def.Source, Tokens: estimate(len(a.Name) + len(a.Description) + 4)})
	}
	return out
}
