package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/tackcode/tack/internal/config"
	"github.com/tackcode/tack/internal/extension"
	"github.com/tackcode/tack/internal/hook"
	"github.com/tackcode/tack/internal/llm"
	"github.com/tackcode/tack/internal/mcp"
	"github.com/tackcode/tack/internal/mcp/mcpconfig"
	"github.com/tackcode/tack/internal/permission"
	"github.com/tackcode/tack/internal/protocol"
	"github.com/tackcode/tack/internal/sandbox"
	"github.com/tackcode/tack/internal/skill"
	"github.com/tackcode/tack/internal/skill/skilltool"
	"github.com/tackcode/tack/internal/tool"
	"github.com/tackcode/tack/internal/tool/agenttool"
)

// loadExtensions finds the session's custom agents, skills, commands and
// plugins. A definition that does not load is reported through Notify and
// left out; the others load.
func loadExtensions(opts Options, cwd string, settings *config.Merged, getenv func(string) string) (*extension.Set, error) {
	scopes, err := settingScopes(opts)
	if err != nil {
		return nil, err
	}
	var sources []config.Scope // nil: user and project folders both
	if scopes != nil {
		sources = []config.Scope{}
		for _, sc := range scopes {
			switch sc {
			case config.ScopeUser, config.ScopeProject:
				sources = append(sources, sc)
			}
		}
	}
	set := extension.Load(extension.Options{
		Cwd:            cwd,
		ConfigDir:      config.DefaultConfigDir(getenv),
		ManagedDir:     getenv("TACK_MANAGED_DIR"),
		Home:           homeDir(getenv),
		Sources:        sources,
		PluginDirs:     opts.PluginDirs,
		EnabledPlugins: settings.EnabledPlugins,
		AgentsJSON:     opts.AgentsJSON,
		Getenv:         getenv,
	})
	for _, p := range set.Problems() {
		notify(opts, p.Error())
	}
	return set, nil
}

// agentDefinitions are the subagents of a session: the built-in and
// file-defined ones (as trust lets the session use them), then the
// caller's (which win).
func agentDefinitions(set *extension.Set, callers map[string]AgentDefinition, trust workspaceTrust) map[string]AgentDefinition {
	defs := map[string]AgentDefinition{}
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
func fromExtension(a *extension.Agent) AgentDefinition {
	tools := a.Tools
	if len(a.AgentTypes) > 0 {
		// "Agent(worker, researcher)": kept in the form spawnRights reads.
		tools = slices.DeleteFunc(slices.Clone(tools), func(r string) bool { return ruleTool(r) == agenttool.Name || ruleTool(r) == "Task" })
		tools = append(tools, agenttool.Name+"("+strings.Join(a.AgentTypes, ", ")+")")
	}
	return AgentDefinition{
		Description:     a.Description,
		Prompt:          a.Prompt,
		Tools:           tools,
		DisallowedTools: a.DisallowedTools,
		Model:           a.Model,
		PermissionMode:  PermissionMode(a.PermissionMode),
		Isolation:       a.Isolation,
		MCPServers:      mcpNames(a),
		Source:          a.Source.String(),
		fileHooks:       a.Hooks,
		skills:          a.Skills,
		maxTurns:        a.MaxTurns,
		mcpDefs:         a.MCPServers,
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

// slashCommand is a prompt that runs a skill or command ("/commit fix
// typo"): the message the model gets and what the skill asks of the run.
type slashCommand struct {
	content []llm.Block
	inv     *skill.Invocation
}

// expandSlashCommand prepares a prompt naming a user-invocable skill or
// command. ok is false when the prompt names none. The message keeps the
// command as typed (the tags Claude Code's transcripts use, which the
// SDK's session helpers read) followed by the prepared instructions.
func (s *agentSession) expandSlashCommand(ctx context.Context, prompt string) (*slashCommand, bool, error) {
	if s.skills == nil {
		return nil, false, nil
	}
	p := strings.TrimLeft(prompt, " \t\r\n")
	if !strings.HasPrefix(p, "/") {
		return nil, false, nil
	}
	name, args, _ := strings.Cut(p[1:], " ")
	if i := strings.IndexAny(name, "\t\r\n"); i >= 0 {
		name, args = name[:i], name[i:]+" "+args
	}
	sk, ok := s.skills.Skill(name)
	if !ok || !sk.UserInvocable {
		return nil, false, nil
	}
	args = strings.TrimSpace(args)
	inv, err := s.skills.Prepare(ctx, sk, args)
	if err != nil {
		return nil, true, err
	}
	for _, r := range inv.Refused {
		notify(s.opts, fmt.Sprintf("/%s: did not run %s", sk.Name, r))
	}
	body := inv.Content
	if inv.Fork && s.subagents != nil {
		report, err := s.subagents.Fork(ctx, inv.Agent, inv.Content, inv.Model)
		if err != nil {
			return nil, true, fmt.Errorf("/%s: %w", sk.Name, err)
		}
		body = fmt.Sprintf("The /%s skill ran in a subagent. Its report:\n\n%s", sk.Name, report)
	}
	tags := fmt.Sprintf("<command-message>%s is running…</command-message>\n<command-name>/%s</command-name>\n<command-args>%s</command-args>", sk.Name, sk.Name, args)
	return &slashCommand{content: []llm.Block{llm.Text(tags), llm.Text(body)}, inv: inv}, true, nil
}

// retainedSkills are the skill bodies put back after a compaction: the
// latest invocation of each, within the documented budget.
func (s *agentSession) retainedSkills() []llm.Block {
	if s.skills == nil {
		return nil
	}
	var out []llm.Block
	for _, inv := range skill.Retained(s.skills.Loaded()) {
		out = append(out, llm.Reminder("", fmt.Sprintf("The skill %s was loaded earlier in this conversation; its instructions still apply:\n\n%s", inv.Name, inv.Content)))
	}
	return out
}

// Fork runs a skill with context: fork in a subagent and returns its
// report (skilltool.Forker).
func (sa *subagents) Fork(ctx context.Context, agentType, prompt, model string) (string, error) {
	if agentType == "" {
		agentType = "general-purpose"
	}
	res, err := sa.Run(ctx, tool.SubagentRequest{Type: agentType, Prompt: prompt, Model: model,
		Description: "skill", ToolUseID: tool.ToolUseID(ctx)})
	if err != nil {
		return "", err
	}
	return res.Report, nil
}

// skillNames lists the skills for the init message: those the user may
// run as /name, and those the model may run.
func (s *agentSession) skillNames() (commands, skills []string) {
	commands, skills = []string{}, []string{}
	if s.skills == nil {
		return
	}
	for _, sk := range s.skills.Skills() {
		if sk.UserInvocable {
			commands = append(commands, sk.Name)
		}
		if sk.ModelInvocable() {
			skills = append(skills, sk.Name)
		}
	}
	return
}

// pluginList lists the plugins for the init message.
func (s *agentSession) pluginList() []protocol.Plugin {
	out := []protocol.Plugin{}
	if s.ext == nil {
		return out
	}
	for _, p := range s.ext.Plugins() {
		out = append(out, protocol.Plugin{Name: p.Name, Path: p.Root})
	}
	return out
}

// agentHooks is the hook configuration of a subagent: the session's, plus
// the agent's own, whose Stop hooks fire as SubagentStop (the agent's
// stop), as in Claude Code.
func agentHooks(session hook.Config, def AgentDefinition) hook.Config {
	if len(def.fileHooks) == 0 && len(def.Hooks) == 0 {
		return nil
	}
	cfg := hook.Config{}
	for ev, ms := range session {
		cfg[ev] = slices.Clone(ms)
	}
	add := func(ev hook.Event, m hook.Matcher) {
		if ev == hook.Stop {
			ev = hook.SubagentStop
		}
		cfg[ev] = append(cfg[ev], m)
	}
	for ev, ms := range def.fileHooks {
		for _, m := range ms {
			add(ev, m)
		}
	}
	for ev, ms := range def.Hooks {
		for _, hm := range ms {
			m := hook.Matcher{Matcher: hm.Matcher}
			for _, cb := range hm.Hooks {
				m.Hooks = append(m.Hooks, hook.Handler{Type: hook.TypeCallback, Callback: cb, Timeout: hm.TimeoutSeconds, Source: "sdk"})
			}
			add(ev, m)
		}
	}
	return cfg
}

// allows reports whether the definition's tools include the tool name.
func (d AgentDefinition) allows(name string) bool {
	if slices.ContainsFunc(d.DisallowedTools, func(r string) bool { return ruleTool(r) == name }) {
		return false
	}
	return d.Tools == nil || slices.ContainsFunc(d.Tools, func(r string) bool { return r == "*" || ruleTool(r) == name })
}

// skillLoaded applies what an invoked skill asks of the session: its model
// for the rest of the prompt, its hooks for the rest of the session.
func (s *agentSession) skillLoaded(inv skill.Invocation) {
	if m := inv.Model; m != "" && m != "inherit" && s.engine != nil {
		s.skillMu.Lock()
		if s.modelBeforeSkill == nil {
			prev := s.engine.Model()
			s.modelBeforeSkill = &prev
		}
		s.skillMu.Unlock()
		s.engine.SetModel(s.catalog().Resolve(m, s.getenv))
	}
	if len(inv.Hooks) == 0 {
		return
	}
	s.skillMu.Lock()
	done := s.skillHooks[inv.Name]
	if s.skillHooks == nil {
		s.skillHooks = map[string]bool{}
	}
	s.skillHooks[inv.Name] = true
	s.skillMu.Unlock()
	if done {
		return
	}
	if err := s.hooks.Add(inv.Hooks); err != nil {
		notify(s.opts, fmt.Sprintf("skill %s: %v", inv.Name, err))
	}
}

// restoreModel puts back the model a skill replaced.
func (s *agentSession) restoreModel() {
	s.skillMu.Lock()
	prev := s.modelBeforeSkill
	s.modelBeforeSkill = nil
	s.skillMu.Unlock()
	if prev != nil {
		s.engine.SetModel(*prev)
	}
}

// activateSkills announces the skills with paths that reading path makes
// relevant (once each), since the Skill tool's listing, in the cached
// prefix, leaves them out.
func (s *agentSession) activateSkills(path string) []llm.Block {
	if s.skills == nil {
		return nil
	}
	if _, ok := s.registry.Get(skilltool.Name); !ok {
		return nil
	}
	var out []llm.Block
	for _, sk := range s.skills.Activate(path) {
		out = append(out, llm.Reminder("", fmt.Sprintf("The skill %s applies to files like this one: %s\nRun it with the Skill tool when it fits the task.",
			sk.Name, sk.ListingDescription(0))))
	}
	return out
}

// startAgentMCP starts the MCP servers an agent defines inline, for the
// time it runs: their tools join registry (as the session's servers' tools
// join the session's), and the first request waits for them up to the
// session's start-up deadline, reporting those still starting then. The
// caller closes the manager.
func (s *agentSession) startAgentMCP(ctx context.Context, agent string, servers []*mcpconfig.Server, registry *tool.Registry, cwd string) *mcp.Manager {
	m := mcp.New(mcp.Options{
		Registry: registry,
		OnNotice: func(n mcp.Notice) { notify(s.opts, "MCP "+n.Server+" (agent "+agent+"): "+n.Message) },
		Env:      s.procEnv, Dir: cwd, Roots: s.checker.Dirs(), Limits: mcp.LimitsFromEnv(s.getenv),
		ClientName: "tack",
	})
	configs := make([]mcp.ServerConfig, 0, len(servers))
	for _, srv := range servers {
		configs = append(configs, serverConfig(srv))
	}
	m.Start(ctx, configs)
	waitForMCP(ctx, s.opts, m, mcpDeadline(s.getenv), " (agent "+agent+")")
	return m
}

// injectionCheck decides a skill's injected command as a Bash call would
// be: by the rules and the mode, and, in the sandbox, without approval
// (but never past a deny or an ask rule).
func injectionCheck(c *permission.Checker, sb *sandbox.Sandbox) skill.CheckFunc {
	check := skill.CheckerFunc(c)
	if sb == nil || !sb.Settings().AutoAllow() {
		return check
	}
	return func(command string) error {
		err := check(command)
		if !errors.Is(err, skill.ErrNeedsApproval) || !sb.RunsInside(command, false) {
			return err
		}
		in, _ := json.Marshal(map[string]string{"command": command})
		if d := c.Check(permission.Call{Tool: "Bash", Input: in}); d.Rule != nil {
			return err // an ask rule
		}
		return nil
	}
}
