package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/uuid"

	"github.com/tackcode/tack/internal/compact"
	"github.com/tackcode/tack/internal/config"
	"github.com/tackcode/tack/internal/engine"
	"github.com/tackcode/tack/internal/extension"
	"github.com/tackcode/tack/internal/hook"
	"github.com/tackcode/tack/internal/llm"
	"github.com/tackcode/tack/internal/llm/anthropic"
	"github.com/tackcode/tack/internal/mcp/mcpconfig"
	"github.com/tackcode/tack/internal/memory"
	"github.com/tackcode/tack/internal/permission"
	"github.com/tackcode/tack/internal/prompt"
	"github.com/tackcode/tack/internal/protocol"
	"github.com/tackcode/tack/internal/sandbox"
	"github.com/tackcode/tack/internal/session"
	"github.com/tackcode/tack/internal/shell"
	"github.com/tackcode/tack/internal/skill"
	"github.com/tackcode/tack/internal/skill/skilltool"
	"github.com/tackcode/tack/internal/tool"
	"github.com/tackcode/tack/internal/tool/agenttool"
	"github.com/tackcode/tack/internal/tool/builtin"
	"github.com/tackcode/tack/internal/tool/structured"
	"github.com/tackcode/tack/internal/version"
)

// agentSession is a configured engine session and what it owns.
type agentSession struct {
	opts         Options
	cwd          string
	apiKeySource string
	registry     *tool.Registry
	// approvers are the tools --permission-prompt-tool may name: every
	// tool, offered or not.
	approvers *tool.Registry
	env       *tool.Env
	settings  *config.Merged
	checker   *permission.Checker
	hooks     *hook.Runner
	hookBase  func() hook.Base
	memory    *memory.Set
	// projectDir holds the session's transcript and records; "" when the
	// session is not persisted.
	projectDir string
	// system and toolSpecs are the prefix of every request.
	system    []llm.Block
	toolSpecs []llm.ToolSpec
	// costBase is what the session spent before this process resumed it.
	costBase float64
	mcp      *mcpState

	// What subagents inherit.
	getenv           func(string) string
	procEnv          []string
	rules            permission.RuleSet
	hookLog          *engine.HookLog
	compactThreshold float64
	subagents        *subagents
	// hookOpts build the hook runners of subagents with hooks of their own.
	hookOpts hook.Options

	// ext is what .claude/ folders, plugins and --agents define; skills
	// runs its skills and commands (nil when there are none).
	ext    *extension.Set
	skills *skill.Runtime
	// sandbox wraps the shell commands; nil when it is off.
	sandbox *sandbox.Sandbox
	// trust says whether the folder's own code runs.
	trust workspaceTrust
	// checkpoints keep files before the prompts change them; nil without
	// file checkpointing.
	checkpoints *checkpoints
	// agentMCP are the servers the main-thread agent defines inline.
	agentMCP []*mcpconfig.Server
	// turnSeq is the skill invocation count when the running prompt began:
	// skills loaded after it are active (their allowed-tools hold).
	turnSeq atomic.Int64
	// skillMu guards what skills changed: the model a skill replaced for
	// the running prompt, and the skills whose hooks were added.
	skillMu          sync.Mutex
	modelBeforeSkill *llm.Model
	skillHooks       map[string]bool

	// metaMu guards what a host may change mid-session in opts: Name,
	// AddDirs.
	metaMu sync.Mutex

	// structured is the last StructuredOutput value of the running prompt.
	structuredMu sync.Mutex
	structured   json.RawMessage

	outMu    sync.Mutex
	out      *outbox // where the prompt being run sends its messages
	recorder *session.Writer
	engine   *engine.Session
}

// newSession turns options into a ready engine session: settings, policy,
// provider, tools, prompt and transcript.
func newSession(opts Options) (*agentSession, error) {
	cwd, err := workingDir(opts.Cwd)
	if err != nil {
		return nil, err
	}
	if opts.SessionID != "" {
		if _, err := uuid.Parse(opts.SessionID); err != nil {
			return nil, fmt.Errorf("session id %q is not a UUID", opts.SessionID)
		}
	}
	processEnv := optionsEnv(opts)
	projectDir := session.ProjectDir(session.ConfigDir(processEnv), cwd, processEnv)
	// A resumed session brings back the options it was launched with.
	res, opts, err := findResumed(opts, projectDir)
	if err != nil {
		return nil, err
	}
	settings, err := loadSettings(opts, cwd, processEnv)
	if err != nil {
		return nil, err
	}
	for _, w := range settings.Warnings {
		notify(opts, "settings: "+w.Error())
	}
	// Whether the folder's own code runs is decided here, once; the steps
	// below that load project-scoped code ask trust.
	trust, err := decideTrust(opts, cwd, processEnv, settings)
	if err != nil {
		return nil, err
	}
	notify(opts, trust.notice())
	// The settings' env applies to tack itself (ANTHROPIC_MODEL…) and to
	// every tool and hook process; options override it.
	getenv := func(k string) string {
		if v, ok := opts.Env[k]; ok {
			return v
		}
		if v, ok := settings.Env[k]; ok {
			return v
		}
		return os.Getenv(k)
	}

	apiCfg := anthropic.ConfigFromEnv(getenv)
	if !apiCfg.HasCredentials() {
		return nil, ErrNoCredentials
	}
	apiCfg.HTTPClient = opts.HTTPClient
	apiCfg.UserAgent = "tack/" + version.Version
	provider := anthropic.New(apiCfg)
	apiKeySource := "ANTHROPIC_API_KEY"
	if apiCfg.APIKey == "" {
		apiKeySource = "ANTHROPIC_AUTH_TOKEN"
	}

	// Skills, commands, custom agents and plugins.
	ext, err := loadExtensions(opts, cwd, settings, getenv)
	if err != nil {
		return nil, err
	}
	// Subagents: the built-in and file-defined agents, then the caller's
	// (which win).
	defs := agentDefinitions(ext, opts.Agents, trust)
	// The session itself may run as one of them (--agent, "agent" in the
	// settings or a plugin's settings): its prompt, tools, model and mode.
	mainAgent := opts.Agent
	if mainAgent == "" {
		mainAgent = settings.Agent
	}
	if mainAgent == "" {
		mainAgent = pluginAgent(ext)
	}
	var mainDef *AgentDefinition
	if mainAgent != "" {
		d, ok := defs[mainAgent]
		if !ok {
			return nil, fmt.Errorf("--agent: no agent named %q (available: %s)", mainAgent, strings.Join(slices.Sorted(maps.Keys(defs)), ", "))
		}
		mainDef = &d
	}

	catalog := llm.Catalogue()
	modelName := opts.Model
	if modelName == "" && mainDef != nil && mainDef.Model != "inherit" {
		modelName = mainDef.Model
	}
	if modelName == "" {
		modelName = getenv("ANTHROPIC_MODEL")
	}
	if modelName == "" {
		modelName = settings.Model
	}
	model := catalog.Resolve(modelName, getenv)
	var fallback llm.Model
	if opts.FallbackModel != "" {
		fallback = catalog.Resolve(opts.FallbackModel, getenv)
		if fallback.ID == model.ID {
			return nil, fmt.Errorf("the fallback model %s is the main model", fallback.ID)
		}
	}
	small := getenv("ANTHROPIC_SMALL_FAST_MODEL")
	if small == "" {
		small = catalog.Resolve(catalog.Small, getenv).ID
	}

	if opts.PermissionMode == "" && mainDef != nil {
		opts.PermissionMode = mainDef.PermissionMode
	}
	mode, err := permissionMode(opts, settings)
	if err != nil {
		return nil, err
	}
	rules, err := ruleSet(settings, opts, cwd)
	if err != nil {
		return nil, err
	}
	dirs := append(config.Texts(settings.Permissions.AdditionalDirectories), opts.AddDirs...)
	checker, err := permission.NewChecker(permission.Config{Rules: rules, Mode: permission.Mode(mode), Cwd: cwd, Dirs: dirs, Home: homeDir(getenv)})
	if err != nil {
		return nil, err
	}

	// The sandbox, when the settings (or the options) enable it: commands
	// (the tools', the skills' injections) run inside bubblewrap.
	sb, err := newSandbox(opts, settings, checker, getenv)
	if err != nil {
		return nil, err
	}
	var wrap shell.Wrapper // not a nil *Sandbox in an interface
	if sb != nil {
		wrap = sb
	}

	all := append(builtin.All(), opts.extraTools...)
	offered, err := builtin.Select(opts.Tools)
	if err != nil {
		return nil, err
	}
	offered = append(offered, opts.extraTools...)
	removed := removedTools(rules)
	var tools []tool.Tool
	for _, t := range offered {
		if !removed[t.Name()] {
			tools = append(tools, t)
		}
	}
	var spawnable []string // nil: any agent
	offeredTool := func(name string) bool {
		return !removed[name] && (opts.Tools == nil || slices.Contains(opts.Tools, name) || slices.Contains(opts.Tools, "default"))
	}
	offerAgent := offeredTool(agenttool.Name)
	if mainDef != nil {
		tools = agentTools(tools, *mainDef)
		offerAgent, spawnable = spawnRights(*mainDef, offerAgent)
	}
	// Structured output: the caller's schema is a tool's input schema.
	var structuredOut func(json.RawMessage) // set once the session exists
	if len(opts.JSONSchema) > 0 {
		t, err := structured.New(opts.JSONSchema, func(v json.RawMessage) { structuredOut(v) })
		if err != nil {
			return nil, fmt.Errorf("--json-schema: %w", err)
		}
		tools = append(tools, t)
	}
	// Subagents also run the skills that fork, with or without the Agent tool.
	sa := newSubagents(nil, defs)
	if offerAgent {
		tools = append(tools, agenttool.New(sa.infos(), spawnable))
	}
	sessionID := opts.SessionID
	if sessionID == "" {
		sessionID = uuid.NewString()
	}
	procEnv := append(os.Environ(), settings.EnvList()...)
	for k, v := range opts.Env {
		procEnv = append(procEnv, k+"="+v)
	}
	// A plugin's bin/ folder is on PATH while it is enabled.
	procEnv = withPluginBins(procEnv, ext, getenv)
	var skills *skill.Runtime
	var loaded func(skill.Invocation) // set once the session exists
	if all := ext.Skills(); len(all) > 0 {
		skills = skill.New(skill.Options{Skills: trust.skills(all), SessionID: sessionID, Cwd: cwd,
			Run: skill.ShellRunnerWith(cwd, procEnv, wrap), Check: injectionCheck(checker, sb), Untrusted: trust.skillGuard(),
			OnLoad: func(inv skill.Invocation) { loaded(inv) }})
		if len(skills.ModelInvocable()) > 0 && offeredTool(skilltool.Name) && (mainDef == nil || mainDef.allows(skilltool.Name)) {
			tools = append(tools, skilltool.New(skilltool.Options{Runtime: skills, Forker: sa}))
		}
	}
	// File checkpoints, for RewindFiles.
	var cps *checkpoints
	if opts.FileCheckpointing || truthy(getenv("CLAUDE_CODE_ENABLE_SDK_FILE_CHECKPOINTING")) {
		cps = &checkpoints{}
		tools = withCheckpoints(tools, cps)
	}
	registry := tool.NewRegistry(tools...)
	approvers := tool.NewRegistry(all...)
	if name := opts.PermissionPromptTool; name != "" && opts.CanUseTool == nil && !strings.HasPrefix(name, "mcp__") {
		if _, ok := approvers.Get(name); !ok {
			return nil, fmt.Errorf("--permission-prompt-tool: no tool named %q (it must be an MCP tool, mcp__server__tool)", name)
		}
	}

	env := &tool.Env{
		SessionID:  sessionID,
		ProjectDir: cwd,
		Shell:      shell.New(cwd, procEnv),
		Files:      tool.NewFileState(),
		Model:      tool.ModelCaller{Provider: provider, Small: small, Main: model.ID},
		ScratchDir: filepath.Join(os.TempDir(), "tack-"+sessionID),
		Modes:      modes{checker},
		Tools:      registry,
	}
	if sb != nil {
		env.Shell.SetWrapper(sb)
	}
	for _, r := range rules.Deny {
		if r.Tool == "Read" && r.Specifier != "" {
			env.ReadDenied = checker.ReadDenied
			break
		}
	}

	s := &agentSession{opts: opts, cwd: cwd, apiKeySource: apiKeySource, registry: registry, approvers: approvers,
		env: env, settings: settings, checker: checker, getenv: getenv, procEnv: procEnv, rules: rules,
		ext: ext, skills: skills, subagents: sa, checkpoints: cps, sandbox: sb, trust: trust}
	sa.s = s
	env.Subagents = sa
	loaded = s.skillLoaded
	structuredOut = s.setStructured
	if mainDef != nil {
		s.agentMCP = mainDef.mcpDefs
	}
	var recorder engine.Recorder
	transcript := ""
	if !opts.NoSessionPersistence {
		entry := opts.Entrypoint
		if entry == "" {
			entry = "sdk-go"
		}
		s.projectDir = projectDir
		transcript = filepath.Join(projectDir, sessionID+".jsonl")
		parent := ""
		if res != nil {
			parent = res.transcript.Leaf
		}
		s.recorder = session.NewWriter(transcript, session.Meta{SessionID: sessionID, Cwd: cwd, Version: version.Version, Entrypoint: entry}, parent)
		recorder = s.recorder
		if opts.Name != "" && (res == nil || res.transcript.Meta.Name != opts.Name) {
			if err := s.recorder.SetTitle(opts.Name); err != nil {
				return nil, err
			}
		}
	}
	if res != nil && res.workflow != nil {
		s.costBase = res.workflow.CostUSD
	}

	hookLog := &engine.HookLog{}
	s.hookLog = hookLog
	hookBase := func() hook.Base {
		return hook.Base{SessionID: sessionID, TranscriptPath: transcript, Cwd: env.Cwd(), PermissionMode: string(checker.Mode()), AgentType: mainAgent}
	}
	s.hookBase = hookBase
	hookCfg := hookConfig(settings, opts.Hooks)
	for ev, ms := range ext.Hooks() {
		hookCfg[ev] = append(hookCfg[ev], ms...)
	}
	s.hookOpts = hook.Options{
		Hooks: hookCfg,
		Settings: hook.Settings{Env: settings.Env, AllowedHTTPHookURLs: optionalTexts(settings.AllowedHTTPHookURLs),
			HTTPHookAllowedEnvVars: optionalTexts(settings.HTTPHookAllowedEnvVars)},
		ProjectDir: cwd,
		Env:        append(os.Environ(), envList(opts.Env)...),
		IfMatcher: func(rule, toolName string, input json.RawMessage) (bool, error) {
			return permission.MatchRule(rule, permission.Call{Tool: toolName, Input: input, Cwd: env.Cwd()}, cwd)
		},
		// Through env, whose provider the engine meters: what prompt hooks
		// spend is counted with the rest.
		Provider:   envProvider{env},
		SmallModel: small,
		Observer:   hookLog.Observe,
	}
	s.hooks, err = hook.New(s.hookOpts)
	if err != nil {
		return nil, err
	}

	// MCP servers start now, all at once; the first request waits for them
	// only up to a deadline.
	if err := s.startMCP(opts, settings, getenv, procEnv, provider, small); err != nil {
		return nil, err
	}

	// Project memory (CLAUDE.md and friends) opens the first message; the
	// auto memory goes into the system prompt.
	memOpts := memory.DefaultOptions(cwd, getenv)
	memOpts.Excludes = config.Texts(settings.ClaudeMdExcludes)
	memOpts.AutoMemoryPath = filepath.Join(session.ProjectDir(session.ConfigDir(getenv), cwd, getenv), "memory", "MEMORY.md")
	mem, err := memory.Load(memOpts)
	if err != nil {
		return nil, err
	}
	for _, p := range mem.Problems {
		notify(opts, "memory: "+p)
	}
	s.memory = mem
	tracker := mem.Tracker()
	env.NestedMemory = func(path string) []llm.Block {
		var out []llm.Block
		for _, f := range tracker.OnRead(path) {
			out = append(out, memory.Render(f))
		}
		// Skills meant for files like this one are announced now.
		return append(out, s.activateSkills(path)...)
	}
	sessionContext := mem.Blocks()
	autoMemory := ""
	if b, ok := mem.AutoBlock(); ok {
		autoMemory = b.Text
	}

	// SessionStart hooks may give the model context for the whole session.
	start := hookBase()
	start.PermissionMode = ""
	source := "startup"
	if res != nil {
		source = "resume"
	}
	if out := s.hooks.Run(context.Background(), &hook.SessionStartInput{Base: start, Source: source, Model: model.ID}); true {
		for _, m := range append(out.SystemMessages, out.Errors...) {
			notify(opts, m)
		}
		if len(out.AdditionalContext) > 0 {
			sessionContext = append(sessionContext, hook.ContextBlock("SessionStart", out.AdditionalContext))
		}
	}

	penv := prompt.DetectEnv(cwd, time.Now(), getenv)
	penv.Model = model.ID
	penv.ExtraDirs = checker.Dirs()
	popts := prompt.Options{Append: opts.AppendSystemPrompt, Env: penv, AutoMemory: autoMemory}
	switch {
	case opts.SystemPrompt != nil:
		popts.Replace, popts.ReplaceSet = *opts.SystemPrompt, true
	case mainDef != nil:
		popts.Replace, popts.ReplaceSet = mainDef.Prompt+"\n\n"+penv.Describe(), true
	}
	// A resumed session re-sends the system prompt and tools of its first
	// request byte for byte, so the prompt cache still holds.
	s.system, s.toolSpecs = prompt.System(popts), registry.Specs()
	var toolSpecs []llm.ToolSpec
	if res != nil && res.prefix != nil {
		if blocks, err := res.prefix.SystemBlocks(); err == nil {
			s.system = blocks
		}
		if specs, err := res.prefix.ToolSpecs(); err == nil && sameTools(specs, s.toolSpecs) {
			toolSpecs, s.toolSpecs = specs, specs
		}
	}
	var thinking *llm.Thinking
	if opts.MaxThinkingTokens > 0 {
		thinking = &llm.Thinking{Type: "enabled", BudgetTokens: opts.MaxThinkingTokens}
	}
	threshold, terr := compact.Threshold(getenv, 0)
	if terr != nil {
		notify(opts, "compaction: "+terr.Error())
	}
	if getenv("DISABLE_AUTO_COMPACT") == "1" {
		threshold = -1
	}
	s.compactThreshold = threshold
	eng, err := engine.New(engine.Config{
		SessionID:         sessionID,
		Provider:          provider,
		Catalog:           catalog,
		Model:             model,
		FallbackModel:     fallback,
		System:            s.system,
		ToolSpecs:         toolSpecs,
		Context:           sessionContext,
		Tools:             registry,
		Env:               env,
		Gate:              sessionGate{s: s, checker: checker, env: env},
		Hooks:             s.hooks,
		HookBase:          hookBase,
		HookLog:           hookLog,
		IncludeHookEvents: opts.IncludeHookEvents,
		Notify:            opts.Notify,
		MaxTurns:          opts.MaxTurns,
		MaxBudgetUSD:      opts.MaxBudgetUSD,
		Thinking:          thinking,
		Betas:             opts.Betas,
		CacheTTL:          cacheTTL(getenv),
		DisableCache:      getenv("DISABLE_PROMPT_CACHING") == "1",
		IncludePartial:    opts.IncludePartialMessages,
		Recorder:          recorder,
		Compaction: engine.Compaction{Threshold: threshold, KeepMessages: 4, Memory: func() []llm.Block {
			// Root memory is re-read from disk: edits made during the
			// session count; nested memory is not brought back.
			fresh, err := s.memory.Reload()
			if err != nil {
				notify(opts, "memory: "+err.Error())
				return append(s.memory.Blocks(), s.retainedSkills()...)
			}
			// The latest invocation of each skill comes back too.
			return append(fresh.Blocks(), s.retainedSkills()...)
		}},
	})
	if err != nil {
		return nil, err
	}
	if res != nil {
		eng.Restore(res.transcript.Messages)
	}
	s.engine = eng
	return s, nil
}

// envProvider calls the model through the session's tool environment.
type envProvider struct{ env *tool.Env }

func (p envProvider) Stream(ctx context.Context, req *llm.Request, obs llm.Observer) (*llm.Response, error) {
	return p.env.Model.Provider.Stream(ctx, req, obs)
}

func notify(opts Options, msg string) {
	if strings.TrimSpace(msg) == "" {
		return
	}
	if opts.Logger != nil {
		opts.Logger.Warn(msg)
	}
	if opts.Notify != nil {
		opts.Notify(msg)
	}
}

func envList(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for k, v := range m {
		out = append(out, k+"="+v)
	}
	return out
}

func workingDir(dir string) (string, error) {
	if dir == "" {
		wd, err := os.Getwd()
		if err != nil {
			return "", fmt.Errorf("working directory: %w", err)
		}
		dir = wd
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", fmt.Errorf("working directory %s: %w", dir, err)
	}
	info, err := os.Stat(abs)
	if err != nil {
		return "", fmt.Errorf("working directory: %w", err)
	}
	if !info.IsDir() {
		return "", fmt.Errorf("working directory %s is not a directory", abs)
	}
	return abs, nil
}

// cacheTTL is "1h" when ENABLE_PROMPT_CACHING_1H (or the shorter
// TACK_CACHE_TTL=1h) asks for it.
func cacheTTL(getenv func(string) string) string {
	if getenv("ENABLE_PROMPT_CACHING_1H") == "1" || strings.EqualFold(getenv("TACK_CACHE_TTL"), "1h") {
		return "1h"
	}
	return ""
}

// initMessage describes the session, first in every turn.
func (s *agentSession) initMessage() *protocol.System {
	commands, skills := s.skillNames()
	return &protocol.System{
		Subtype:   protocol.SubtypeInit,
		SessionID: s.engine.SessionID(),
		UUID:      uuid.NewString(),
		Init: &protocol.Init{
			Cwd:               s.cwd,
			SessionID:         s.engine.SessionID(),
			Tools:             s.registry.Names(),
			MCPServers:        s.initMCPStatuses(),
			Model:             s.engine.Model().ID,
			PermissionMode:    string(s.checker.Mode()),
			SlashCommands:     commands,
			APIKeySource:      s.apiKeySource,
			ClaudeCodeVersion: version.Version,
			OutputStyle:       "default",
			Agents:            s.agentNames(),
			Skills:            skills,
			Plugins:           s.pluginList(),
			AdditionalDirs:    s.checker.Dirs(),
		},
	}
}

// close ends the session: SessionEnd hooks run, background jobs stop, the
// transcript is closed.
func (s *agentSession) close() {
	base := hook.Base{SessionID: s.engine.SessionID(), Cwd: s.env.Cwd()}
	if s.recorder != nil {
		base.TranscriptPath = s.recorder.Path()
	}
	if s.subagents != nil {
		s.subagents.close()
	}
	if s.mcp != nil {
		_ = s.mcp.manager.Close()
	}
	out := s.hooks.Run(context.Background(), &hook.SessionEndInput{Base: base, Reason: "other"})
	for _, m := range append(out.SystemMessages, out.Errors...) {
		notify(s.opts, m)
	}
	s.hooks.Close()
	s.env.Shell.Close()
	if s.sandbox != nil {
		_ = s.sandbox.Close()
	}
	if s.recorder != nil {
		_ = s.recorder.Close()
	}
	_ = os.RemoveAll(s.env.ScratchDir)
}

// agentNames are the agents the model may start, for the init message.
func (s *agentSession) agentNames() []string {
	out := []string{}
	if s.subagents != nil {
		for _, a := range s.subagents.infos() {
			out = append(out, a.Name)
		}
	}
	return out
}

// catalog is the model catalogue.
func (s *agentSession) catalog() *llm.Catalog { return llm.Catalogue() }

// currentOutbox is where the prompt being run sends its messages.
func (s *agentSession) currentOutbox() *outbox {
	s.outMu.Lock()
	defer s.outMu.Unlock()
	return s.out
}

func (s *agentSession) setOutbox(o *outbox) {
	s.outMu.Lock()
	defer s.outMu.Unlock()
	s.out = o
}
