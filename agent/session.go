package agent

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/tackcode/tack/internal/engine"
	"github.com/tackcode/tack/internal/llm"
	"github.com/tackcode/tack/internal/llm/anthropic"
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
	mode         PermissionMode
	model        llm.Model
	apiKeySource string
	registry     *tool.Registry
	env          *tool.Env
	recorder     *session.Writer
	engine       *engine.Session
}

// newSession turns options into a ready engine session.
func newSession(opts Options) (*agentSession, error) {
	getenv := func(k string) string {
		if v, ok := opts.Env[k]; ok {
			return v
		}
		return os.Getenv(k)
	}
	cwd, err := workingDir(opts.Cwd)
	if err != nil {
		return nil, err
	}
	mode := opts.PermissionMode
	if mode == "" {
		mode = PermissionDefault
	}
	if !mode.Valid() {
		return nil, fmt.Errorf("unknown permission mode %q (want default, acceptEdits, plan, bypassPermissions or dontAsk)", mode)
	}
	if opts.SessionID != "" {
		if _, err := uuid.Parse(opts.SessionID); err != nil {
			return nil, fmt.Errorf("session id %q is not a UUID", opts.SessionID)
		}
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

	tools, err := builtin.Select(opts.Tools)
	if err != nil {
		return nil, err
	}
	tools = slices.DeleteFunc(tools, func(t tool.Tool) bool { return slices.Contains(opts.DisallowedTools, t.Name()) })
	registry := tool.NewRegistry(tools...)

	sessionID := opts.SessionID
	if sessionID == "" {
		sessionID = uuid.NewString()
	}
	procEnv := os.Environ()
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
	}

	now := time.Now()
	penv := prompt.DetectEnv(cwd, now, getenv)
	penv.Model = model.ID
	popts := prompt.Options{Append: opts.AppendSystemPrompt, Env: penv}
	if opts.SystemPrompt != nil {
		popts.Replace, popts.ReplaceSet = *opts.SystemPrompt, true
	}

	s := &agentSession{opts: opts, cwd: cwd, mode: mode, model: model, apiKeySource: apiKeySource, registry: registry, env: env}
	var recorder engine.Recorder
	if !opts.NoSessionPersistence {
		entry := opts.Entrypoint
		if entry == "" {
			entry = "sdk-go"
		}
		dir := session.ProjectDir(session.ConfigDir(getenv), cwd, getenv)
		s.recorder = session.NewWriter(filepath.Join(dir, sessionID+".jsonl"),
			session.Meta{SessionID: sessionID, Cwd: cwd, Version: version.Version, Entrypoint: entry}, "")
		recorder = s.recorder
	}
	var thinking *llm.Thinking
	if opts.MaxThinkingTokens > 0 {
		thinking = &llm.Thinking{Type: "enabled", BudgetTokens: opts.MaxThinkingTokens}
	}
	eng, err := engine.New(engine.Config{
		SessionID:      sessionID,
		Provider:       provider,
		Catalog:        catalog,
		Model:          model,
		FallbackModel:  fallback,
		System:         prompt.System(popts),
		Tools:          registry,
		Env:            env,
		Gate:           s.gate(),
		MaxTurns:       opts.MaxTurns,
		MaxBudgetUSD:   opts.MaxBudgetUSD,
		Thinking:       thinking,
		CacheTTL:       cacheTTL(getenv),
		DisableCache:   getenv("DISABLE_PROMPT_CACHING") == "1",
		IncludePartial: opts.IncludePartialMessages,
		Recorder:       recorder,
	})
	if err != nil {
		return nil, err
	}
	s.engine = eng
	return s, nil
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
			PermissionMode:    string(s.mode),
			SlashCommands:     []string{},
			APIKeySource:      s.apiKeySource,
			ClaudeCodeVersion: version.Version,
			OutputStyle:       "default",
			Agents:            []string{},
			Skills:            []string{},
			Plugins:           []protocol.Plugin{},
			AdditionalDirs:    []string{},
		},
	}
}

// close ends the session: background jobs stop, the transcript is closed.
func (s *agentSession) close() {
	s.env.Shell.Close()
	if s.recorder != nil {
		_ = s.recorder.Close()
	}
	_ = os.RemoveAll(s.env.ScratchDir)
}

// gate is the permission check for this session.
func (s *agentSession) gate() engine.Gate { return sessionGate{s} }

type sessionGate struct{ s *agentSession }

// Check knows plain tool names, the modes and read-only calls; the full
// rule grammar comes with the policy layer.
func (g sessionGate) Check(ctx context.Context, c engine.ToolCall) engine.Verdict {
	s := g.s
	if slices.Contains(s.opts.DisallowedTools, c.Name) {
		return engine.Verdict{Behavior: engine.Deny, Message: fmt.Sprintf("Permission to use %s has been denied (disallowed tool).", c.Name)}
	}
	switch {
	case s.mode == PermissionBypass,
		slices.Contains(s.opts.AllowedTools, c.Name),
		c.ReadOnly,
		s.mode == PermissionAcceptEdits && isEditTool(c.Name):
		return engine.Verdict{Behavior: engine.Allow}
	case s.mode == PermissionPlan:
		return engine.Verdict{Behavior: engine.Deny, Message: fmt.Sprintf("%s is not available in plan mode, which allows read-only tools only.", c.Name)}
	}
	return engine.Verdict{Behavior: engine.Ask, Message: "no rule allows " + c.Name}
}

// Ask puts the call to the CanUseTool callback, or denies it when there is none.
func (g sessionGate) Ask(ctx context.Context, c engine.ToolCall, reason string) engine.Verdict {
	s := g.s
	if cb := s.opts.CanUseTool; cb != nil && s.mode != PermissionDontAsk {
		res, err := cb(ctx, c.Name, c.Input, ToolPermissionContext{ToolUseID: c.ID, Reason: reason})
		if err != nil {
			return engine.Verdict{Behavior: engine.Deny, Message: fmt.Sprintf("Permission check for %s failed: %v", c.Name, err)}
		}
		if res.Allow {
			return engine.Verdict{Behavior: engine.Allow, Input: res.UpdatedInput}
		}
		msg := res.Message
		if msg == "" {
			msg = fmt.Sprintf("Permission to use %s was denied.", c.Name)
		}
		return engine.Verdict{Behavior: engine.Deny, Message: msg}
	}
	return engine.Verdict{Behavior: engine.Deny, Unattended: true, Message: fmt.Sprintf(
		"tack needs permission to use %s, but it was not granted and nobody can be asked here. "+
			"Allow it with --allowedTools %s, a permission mode such as acceptEdits, or --dangerously-skip-permissions.",
		c.Name, c.Name)}
}

func isEditTool(name string) bool {
	switch name {
	case "Edit", "Write", "NotebookEdit":
		return true
	}
	return false
}
