package runtime

import (
	"context"
	"encoding/json"
	"fmt"
	"github.com/tackcode/tack/internal/lsp"
	"maps"
	"os"
	"slices"
	"strings"

	"github.com/tackcode/tack/internal/config"
	"github.com/tackcode/tack/internal/extension"
	"github.com/tackcode/tack/internal/tool/agenttool"
)

// loadExtensions finds the session's custom agents, skills, commands and
// plugins (a definition that does not load is reported and left out), the
// subagents the session may start, and the environment of every process
// the session runs: the process's, the settings' env, the options' Env,
// and the enabled plugins' bin/ folders first on PATH.
func (s *Session) loadExtensions(context.Context) error {
	opts, err := s.extOptions()
	if err != nil {
		return err
	}
	s.ext = extension.Load(opts)
	for _, p := range s.ext.Problems() {
		s.notify(p.Error())
	}
	s.agents = agentDefinitions(s.ext, s.cfg.Agents, s.trust)
	s.subagents = newSubagents(s)
	s.procEnv = s.processEnv(s.settings)
	// Only the configuration: a server starts when a file of its language
	// is first touched.
	if cfgs := s.lspConfigs(); len(cfgs) > 0 {
		s.lsp = lsp.NewManager(s.cwd, cfgs, s.notify)
	}
	return nil
}

// extOptions say where the session's extensions are.
func (s *Session) extOptions() (extension.Options, error) {
	scopes, err := config.SourceList(s.cfg.SettingSources)
	if err != nil {
		return extension.Options{}, err
	}
	var sources []config.Scope // nil: user and project folders both
	enabled := s.settings.EnabledPlugins
	if s.cfg.Bare {
		scopes, enabled = []config.Scope{}, nil
	}
	if scopes != nil {
		sources = []config.Scope{}
		for _, sc := range scopes {
			switch sc {
			case config.ScopeUser, config.ScopeProject:
				sources = append(sources, sc)
			}
		}
	}
	return extension.Options{
		Cwd:                  s.cwd,
		ProjectDir:           s.root,
		ConfigDir:            config.DefaultConfigDir(s.getenv),
		ManagedDir:           s.getenv("TACK_MANAGED_DIR"),
		Home:                 homeDir(s.getenv),
		Sources:              sources,
		PluginDirs:           s.cfg.PluginDirs,
		PluginDirsWithoutMCP: s.cfg.PluginDirsWithoutMCP,
		EnabledPlugins:       enabled,
		AgentsJSON:           s.cfg.AgentsJSON,
		Getenv:               s.getenv,
	}, nil
}

// processEnv is the environment of the processes the session runs under
// settings: the process's, the settings' env, the options' Env, and the
// enabled plugins' bin/ folders first on PATH.
func (s *Session) processEnv(settings *config.Merged) []string {
	env := append(os.Environ(), settings.EnvList()...)
	env = append(env, envList(s.cfg.Env)...)
	return withPluginBins(env, s.ext, s.getenv)
}

// chooseMainAgent picks the agent the session itself runs as (--agent,
// "agent" in the settings or a plugin's settings): its prompt, tools, model
// and mode.
func (s *Session) chooseMainAgent(context.Context) error {
	name := firstNonEmpty(s.cfg.Agent, s.settings.Agent, pluginAgent(s.ext))
	if name == "" {
		return nil
	}
	if _, ok := s.agents[name]; !ok {
		if s.resumed != nil && s.resumed.agentRestored && name == s.cfg.Agent {
			// Its file is gone since the session ran: the conversation
			// still resumes, as Claude Code's does.
			s.notify(fmt.Sprintf("the session ran as agent %q, which is no longer defined (neither a user nor a project agent): resuming with the default tools and prompt", name))
			s.cfg.Agent = ""
			s.resumed.prefix = nil // its prompt was the agent's
			return nil
		}
		return fmt.Errorf("--agent: no agent named %q (available: %s)", name, strings.Join(slices.Sorted(maps.Keys(s.agents)), ", "))
	}
	s.mainAgent = name
	return nil
}

// mainDef is the main thread's agent definition; nil for none.
func (s *Session) mainDef() *AgentDef {
	if s.mainAgent == "" {
		return nil
	}
	d := s.agents[s.mainAgent]
	return &d
}

// agentDefinitions are the subagents of a session: the built-in and
// file-defined ones (as trust lets the session use them), then the
// caller's (which win).
func agentDefinitions(set *extension.Set, callers map[string]AgentDef, trust workspaceTrust) map[string]AgentDef {
	defs := map[string]AgentDef{}
	for _, a := range set.Agents() {
		defs[a.Name] = trust.agent(a, fromExtension(a))
	}
	for name, d := range callers {
		if d.Source == "" {
			d.Source = "--agents"
		}
		defs[name] = d
	}
	return defs
}

// fromExtension turns an agent read from a file (or --agents) into a
// definition.
func fromExtension(a *extension.Agent) AgentDef {
	tools := a.Tools
	if len(a.AgentTypes) > 0 {
		// "Agent(worker, researcher)": kept in the form spawnRights reads.
		tools = slices.DeleteFunc(slices.Clone(tools), func(r string) bool { return ruleTool(r) == agenttool.Name || ruleTool(r) == "Task" })
		tools = append(tools, agenttool.Name+"("+strings.Join(a.AgentTypes, ", ")+")")
	}
	return AgentDef{
		Description:     a.Description,
		Prompt:          a.Prompt,
		Tools:           tools,
		DisallowedTools: a.DisallowedTools,
		Model:           a.Model,
		PermissionMode:  a.PermissionMode,
		Isolation:       a.Isolation,
		MCPServers:      mcpNames(a),
		Source:          a.Source.String(),
		Hooks:           a.Hooks,
		Skills:          a.Skills,
		MaxTurns:        a.MaxTurns,
		MCPDefs:         a.MCPServers,
		managed:         a.Source.Scope == extension.ScopeManaged,
	}
}

// mcpNames are the servers whose tools an agent gets: those it names and
// those it defines.
func mcpNames(a *extension.Agent) []string {
	names := slices.Clone(a.MCPServerNames)
	for _, srv := range a.MCPServers {
		names = append(names, srv.Name)
	}
	return names
}

// pluginAgent is the agent a plugin's settings.json names ("agent"), the
// only plugin setting Claude Code applies: the first enabled plugin that
// sets one.
func pluginAgent(set *extension.Set) string {
	for _, p := range set.Plugins() {
		if len(p.Settings) == 0 {
			continue
		}
		var s struct {
			Agent string `json:"agent"`
		}
		if err := json.Unmarshal(p.Settings, &s); err == nil && s.Agent != "" {
			return s.Agent
		}
	}
	return ""
}

// withPluginBins puts the plugins' bin/ folders first on PATH in env (a
// process environment, where the last PATH entry wins).
func withPluginBins(env []string, set *extension.Set, getenv func(string) string) []string {
	bins := set.BinDirs()
	if len(bins) == 0 {
		return env
	}
	path := getenv("PATH")
	if path == "" {
		path = os.Getenv("PATH")
	}
	return append(env, "PATH="+strings.Join(bins, string(os.PathListSeparator))+string(os.PathListSeparator)+path)
}

// allows reports whether the definition's tools include the tool name.
func (d AgentDef) allows(name string) bool {
	if slices.ContainsFunc(d.DisallowedTools, func(r string) bool { return ruleTool(r) == name }) {
		return false
	}
	return d.Tools == nil || slices.ContainsFunc(d.Tools, func(r string) bool { return r == "*" || ruleTool(r) == name })
}
