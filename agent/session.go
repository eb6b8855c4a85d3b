package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/tackcode/tack/internal/config"
	"github.com/tackcode/tack/internal/engine"
	"github.com/tackcode/tack/internal/hook"
	"github.com/tackcode/tack/internal/llm"
	"github.com/tackcode/tack/internal/llm/anthropic"
	"github.com/tackcode/tack/internal/permission"
	"github.com/tackcode/tack/internal/prompt"
	"github.com/tackcode/tack/internal/protocol"
	"github.com/tackcode/tack/internal/session"
	"github.com/tackcode/tack/internal/shell"
	"github.com/tackcode/tack/internal/tool"
	"github.com/tackcode/tack/internal/tool/builtin"
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
	recorder  *session.Writer
	engine    *engine.Session
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
	processEnv := func(k string) string {
		if v, ok := opts.Env[k]; ok {
			return v
		}
		return os.Getenv(k)
	}
	settings, err := loadSettings(opts, cwd, processEnv)
	if err != nil {
		return nil, err
	}
	for _, w := range settings.Warnings {
		notify(opts, "settings: "+w.Error())
	}
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

	catalog := llm.Catalogue()
	modelName := opts.Model
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
	registry := tool.NewRegistry(tools...)
	approvers := tool.NewRegistry(all...)
	if name := opts.PermissionPromptTool; name != "" && opts.CanUseTool == nil {
		if _, ok := approvers.Get(name); !ok {
			return nil, fmt.Errorf("--permission-prompt-tool: no tool named %q (it must be an MCP tool, mcp__server__tool)", name)
		}
	}

	sessionID := opts.SessionID
	if sessionID == "" {
		sessionID = uuid.NewString()
	}
	procEnv := append(os.Environ(), settings.EnvList()...)
	for k, v := range opts.Env {
		procEnv = append(procEnv, k+"="+v)
	}
	env := &tool.Env{
		SessionID:  sessionID,
		ProjectDir: cwd,
		Shell:      shell.New(cwd, procEnv),
		Files:      tool.NewFileState(),
		Model:      tool.ModelCaller{Provider: provider, Small: small, Main: model.ID},
		ScratchDir: filepath.Join(os.TempDir(), "tack-"+sessionID),
		Modes:      modes{checker},
	}
	for _, r := range rules.Deny {
		if r.Tool == "Read" && r.Specifier != "" {
			env.ReadDenied = checker.ReadDenied
			break
		}
	}

	s := &agentSession{opts: opts, cwd: cwd, apiKeySource: apiKeySource, registry: registry, approvers: approvers,
		env: env, settings: settings, checker: checker}
	var recorder engine.Recorder
	transcript := ""
	if !opts.NoSessionPersistence {
		entry := opts.Entrypoint
		if entry == "" {
			entry = "sdk-go"
		}
		dir := session.ProjectDir(session.ConfigDir(getenv), cwd, getenv)
		transcript = filepath.Join(dir, sessionID+".jsonl")
		s.recorder = session.NewWriter(transcript, session.Meta{SessionID: sessionID, Cwd: cwd, Version: version.Version, Entrypoint: entry}, "")
		recorder = s.recorder
	}

	hookLog := &engine.HookLog{}
	hookBase := func() hook.Base {
		return hook.Base{SessionID: sessionID, TranscriptPath: transcript, Cwd: env.Cwd(), PermissionMode: string(checker.Mode())}
	}
	s.hookBase = hookBase
	s.hooks, err = hook.New(hook.Options{
		Hooks: hookConfig(settings, opts.Hooks),
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
	})
	if err != nil {
		return nil, err
	}

	// SessionStart hooks may give the model context for the whole session.
	var sessionContext []llm.Block
	start := hookBase()
	start.PermissionMode = ""
	if out := s.hooks.Run(context.Background(), &hook.SessionStartInput{Base: start, Source: "startup", Model: model.ID}); true {
		for _, m := range append(out.SystemMessages, out.Errors...) {
			notify(opts, m)
		}
		if len(out.AdditionalContext) > 0 {
			sessionContext = append(sessionContext, llm.Text("<system-reminder>\nSessionStart hook additional context: "+
				strings.Join(out.AdditionalContext, "\n")+"\n</system-reminder>"))
		}
	}

	penv := prompt.DetectEnv(cwd, time.Now(), getenv)
	penv.Model = model.ID
	penv.ExtraDirs = checker.Dirs()
	popts := prompt.Options{Append: opts.AppendSystemPrompt, Env: penv}
	if opts.SystemPrompt != nil {
		popts.Replace, popts.ReplaceSet = *opts.SystemPrompt, true
	}
	var thinking *llm.Thinking
	if opts.MaxThinkingTokens > 0 {
		thinking = &llm.Thinking{Type: "enabled", BudgetTokens: opts.MaxThinkingTokens}
	}
	eng, err := engine.New(engine.Config{
		SessionID:         sessionID,
		Provider:          provider,
		Catalog:           catalog,
		Model:             model,
		FallbackModel:     fallback,
		System:            prompt.System(popts),
		Context:           sessionContext,
		Tools:             registry,
		Env:               env,
		Gate:              sessionGate{s},
		Hooks:             s.hooks,
		HookBase:          hookBase,
		HookLog:           hookLog,
		IncludeHookEvents: opts.IncludeHookEvents,
		Notify:            opts.Notify,
		MaxTurns:          opts.MaxTurns,
		MaxBudgetUSD:      opts.MaxBudgetUSD,
		Thinking:          thinking,
		CacheTTL:          cacheTTL(getenv),
		DisableCache:      getenv("DISABLE_PROMPT_CACHING") == "1",
		IncludePartial:    opts.IncludePartialMessages,
		Recorder:          recorder,
	})
	if err != nil {
		return nil, err
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
	if opts.Notify != nil && strings.TrimSpace(msg) != "" {
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
	return &protocol.System{
		Subtype:   protocol.SubtypeInit,
		SessionID: s.engine.SessionID(),
		UUID:      uuid.NewString(),
		Init: &protocol.Init{
			Cwd:               s.cwd,
			SessionID:         s.engine.SessionID(),
			Tools:             s.registry.Names(),
			MCPServers:        []protocol.MCPServerStatus{},
			Model:             s.engine.Model().ID,
			PermissionMode:    string(s.checker.Mode()),
			SlashCommands:     []string{},
			APIKeySource:      s.apiKeySource,
			ClaudeCodeVersion: version.Version,
			OutputStyle:       "default",
			Agents:            []string{},
			Skills:            []string{},
			Plugins:           []protocol.Plugin{},
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
	out := s.hooks.Run(context.Background(), &hook.SessionEndInput{Base: base, Reason: "other"})
	for _, m := range append(out.SystemMessages, out.Errors...) {
		notify(s.opts, m)
	}
	s.hooks.Close()
	s.env.Shell.Close()
	if s.recorder != nil {
		_ = s.recorder.Close()
	}
	_ = os.RemoveAll(s.env.ScratchDir)
}
