package runtime

import (
	"context"
	"os"
	"path/filepath"

	"github.com/tackcode/tack/internal/engine"
	"github.com/tackcode/tack/internal/extension"
	"github.com/tackcode/tack/internal/hook"
	"github.com/tackcode/tack/internal/llm"
	"github.com/tackcode/tack/internal/mcp"
	"github.com/tackcode/tack/internal/permission"
	"github.com/tackcode/tack/internal/shell"
	"github.com/tackcode/tack/internal/tool"
)

// A session is built in two sequences of named steps. The session steps
// make what the main thread and every subagent share; the thread steps make
// one conversation, the main thread's or a subagent's, from its spec. Each
// step is a function of its own, in the file named for it.

// New builds a session from cfg and starts its main thread. ctx bounds the
// start-up (the SessionStart hooks run under it); the session lives until
// Close.
func New(ctx context.Context, cfg Config) (*Session, error) {
	s := &Session{cfg: cfg}
	s.ctx, s.cancel = context.WithCancel(context.WithoutCancel(ctx))
	// The built-in model catalogue and agents are parsed beside the first
	// steps, on another core: the provider and the extensions need them.
	go Prepare()
	for _, step := range []func(*Session, context.Context) error{
		(*Session).resolveOptions,  // options.go: cwd, session id, resume
		(*Session).loadSettings,    // settings.go
		(*Session).decideTrust,     // trust.go
		(*Session).connectProvider, // provider.go: credentials, catalogue
		(*Session).loadExtensions,  // extensions.go: skills, agents, plugins
		(*Session).chooseMainAgent, // extensions.go: --agent
	} {
		if err := step(s, ctx); err != nil {
			s.abandon()
			return nil, err
		}
	}
	main, err := s.buildThread(ctx, spec{def: s.mainDef(), model: s.cfg.Model})
	if err != nil {
		s.abandon()
		return nil, err
	}
	s.main = main
	if s.named {
		if err := s.saveRecord(nil); err != nil {
			s.notify("session record: " + err.Error())
		}
	}
	s.watching.refresh() // watch.go: FileChanged, ConfigChange
	return s, nil
}

// Prepare parses what every session needs before its provider and
// extensions can be set up: the built-in model catalogue and agents, each
// once per process. New starts it on another goroutine; a program that
// knows early that it will start a session can start it sooner.
func Prepare() {
	llm.Catalogue()
	extension.Prepare()
}

// spec is what makes a thread what it is: the main agent and model of the
// options for the main thread, the definition and the Agent call for a
// subagent.
type spec struct {
	// def is the agent the thread runs as; nil for none.
	def *AgentDef
	// agentID and agentType name a subagent; "" on the main thread.
	agentID, agentType string
	// model is the model asked for (the options', the Agent call's): ""
	// for the definition's.
	model string
	// worktree runs the subagent in a git worktree of its own.
	worktree bool
	// toolUseID is the Agent call that started the subagent.
	toolUseID string
	// hookAgent makes the subagent of an agent hook (hookagent.go): it
	// runs no hooks and brings no nested memory into the session.
	hookAgent bool
}

// thread is one conversation of a session: the main one, or a subagent's.
type thread struct {
	s    *Session
	spec spec
	// parent is the main thread, for a subagent; nil on the main thread.
	parent *thread

	cwd      string
	worktree *isolation
	model    llm.Model
	// fallback, thinking and betas come from the options on the main thread
	// and from the parent in a subagent.
	fallback llm.Model
	thinking *llm.Thinking
	effort   string
	betas    []string
	checker  *permission.Checker
	wrap     shell.Wrapper
	registry *tool.Registry
	env      *tool.Env
	hooks    *hook.Runner
	ownHooks bool         // hooks is the thread's own runner, closed with it
	agentMCP *mcp.Manager // the servers a subagent defines inline
	// context opens the first user message (memory, hook context, skills);
	// autoMemory goes into the system prompt. resumeNotes are what start
	// hooks said in a resumed conversation, for its next prompt.
	context     []llm.Block
	resumeNotes []string
	autoMemory  string
	// gitStatus delivers the main thread's git status snapshot, taken
	// while the steps before the prompt run (nil: the prompt has none).
	gitStatus <-chan string
	system    []llm.Block
	// recordedTools is a resumed session's tools array, re-sent while it
	// offers the same tools.
	recordedTools []llm.ToolSpec
	recorder      engine.Recorder
	closeRecorder func() error
	transcript    string
	engine        *engine.Session
}

// buildThread runs the thread steps for sp.
func (s *Session) buildThread(ctx context.Context, sp spec) (*thread, error) {
	t := &thread{s: s, spec: sp}
	if sp.agentID != "" {
		t.parent = s.main
	}
	for _, step := range []func(*thread, context.Context) error{
		(*thread).chooseWorkdir,  // workdir.go: the session's, or a worktree
		(*thread).chooseModel,    // model.go
		(*thread).buildPolicy,    // policy.go: rules, mode, checker, sandbox
		(*thread).offerTools,     // tools.go: registry and environment
		(*thread).configureHooks, // hooks.go
		(*thread).startMCP,       // mcp.go
		(*thread).loadMemory,     // memory.go: CLAUDE.md, nested memory
		(*thread).fireStart,      // lifecycle.go: Setup, SessionStart, InstructionsLoaded / SubagentStart
		(*thread).preloadSkills,  // skills.go: a subagent's preloaded skills
		(*thread).buildPrompt,    // prompt.go
		(*thread).openTranscript, // transcript.go
		(*thread).startEngine,    // below
		(*thread).watchFiles,     // watch.go: files read, CwdChanged
	} {
		if err := step(t, ctx); err != nil {
			t.close()
			if t.worktree != nil {
				_, _ = t.releaseWorktree(ctx)
			}
			return nil, err
		}
	}
	return t, nil
}

// startEngine is the one builder of engine.Config: every thread, main or
// subagent, gets its session from here.
func (t *thread) startEngine(context.Context) error {
	s := t.s
	eng, err := engine.New(engine.Config{
		SessionID:         s.sessionID,
		Provider:          t.provider(),
		Catalog:           s.catalog,
		Model:             t.model,
		FallbackModel:     t.fallback,
		System:            t.system,
		ToolSpecs:         t.recordedTools,
		Context:           t.context,
		Tools:             t.registry,
		Env:               t.env,
		Gate:              s.logGate(gate{t}),
		Hooks:             t.hooks,
		HookBase:          t.hookBase,
		HookLog:           s.hookLog,
		IncludeHookEvents: s.cfg.IncludeHookEvents,
		Notify:            s.cfg.Notify,
		MaxTurns:          t.maxTurns(),
		MaxBudgetUSD:      t.budget(),
		Thinking:          t.thinking,
		Effort:            t.effort,
		TaskBudget:        t.taskBudget(),
		Betas:             t.betas,
		CacheTTL:          cacheTTL(s.getenv),
		DisableCache:      s.getenv("DISABLE_PROMPT_CACHING") == "1",
		IncludePartial:    t.parent == nil && s.cfg.IncludePartialMessages,
		Recorder:          t.recorder,
		OnToolDecision:    t.onToolDecision(),
		OnRequest:         t.onRequest(),
		TranscriptPath:    t.transcript,
		ParentToolUseID:   t.spec.toolUseID,
		Compaction:        t.compaction(),
	})
	if err != nil {
		return err
	}
	if t.parent == nil && s.resumed != nil {
		eng.Restore(s.resumed.transcript.Messages)
		for _, n := range t.resumeNotes {
			eng.Announce(n)
		}
		// A call a hook deferred is decided now, before the next prompt.
		if w := s.resumed.launch; w != nil && w.DeferredToolUse != nil && !eng.ResumeDeferred(w.DeferredToolUse.ID) {
			s.notify("the deferred " + w.DeferredToolUse.Name + " call " + w.DeferredToolUse.ID + " is not among the last calls of the resumed conversation: it stays unanswered")
		}
	}
	t.engine = eng
	return nil
}

// provider is what the thread calls the model through: a subagent calls
// through its parent's metered provider, so that its spending counts in the
// session's.
func (t *thread) provider() llm.Provider {
	if t.parent != nil {
		return t.parent.env.Model.Provider
	}
	return t.s.provider
}

// maxTurns bounds the thread's turns per prompt: the options' on the main
// thread, the definition's in a subagent.
func (t *thread) maxTurns() int {
	if t.parent != nil {
		return t.spec.def.MaxTurns
	}
	return t.s.cfg.MaxTurns
}

// budget is the spending limit the thread checks: the session's, on the
// main thread, whose spending includes every subagent's.
func (t *thread) budget() float64 {
	if t.parent != nil {
		return 0
	}
	return t.s.cfg.MaxBudgetUSD
}

// taskBudget is the task budget the thread's requests carry: the main
// thread's only, as in Claude Code.
func (t *thread) taskBudget() int {
	if t.parent != nil {
		return 0
	}
	return t.s.cfg.TaskBudget
}

// close releases what the thread owns (a subagent's worktree is closed by
// its run, which reports what became of it).
func (t *thread) close() {
	if t.parent == nil {
		t.s.watching.close()
	} else {
		_ = t.s.running(t, false)
	}
	if t.agentMCP != nil {
		_ = t.agentMCP.Close()
	}
	if t.ownHooks && t.hooks != nil {
		t.hooks.Close()
	}
	if t.env != nil && t.env.Shell != nil {
		t.env.Shell.Close()
	}
	if t.closeRecorder != nil {
		_ = t.closeRecorder()
	}
}

// scratchDir holds the files the thread makes for itself.
func (t *thread) scratchDir() string {
	if t.parent != nil {
		return filepath.Join(t.parent.env.ScratchDir, t.spec.agentID)
	}
	return filepath.Join(os.TempDir(), "tack-"+t.s.sessionID)
}
