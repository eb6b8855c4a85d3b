package runtime

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"

	"github.com/google/uuid"

	"github.com/tackcode/tack/internal/config"
	"github.com/tackcode/tack/internal/engine"
	"github.com/tackcode/tack/internal/extension"
	"github.com/tackcode/tack/internal/hook"
	"github.com/tackcode/tack/internal/llm"
	"github.com/tackcode/tack/internal/permission"
	"github.com/tackcode/tack/internal/protocol"
	"github.com/tackcode/tack/internal/tool"
)

// configureHooks makes the thread's hook runner. The main thread's runs the
// settings' hooks, the caller's callbacks and the plugins' hooks (skills
// add theirs when invoked); a subagent with hooks of its own runs those
// beside the session's, in a runner of its own, and shares the main
// thread's otherwise. Every runner is built from the session's hook
// options, so the settings' hook guards (hookGuard) hold for every hook
// whatever brought it. The subagent of an agent hook runs none (see
// hookagent.go).
func (t *thread) configureHooks(context.Context) error {
	s := t.s
	if t.spec.hookAgent {
		r, err := hook.New(hook.Options{})
		if err != nil {
			return err
		}
		t.hooks, t.ownHooks = r, true
		return nil
	}
	if t.parent == nil {
		s.hookLog = &engine.HookLog{}
		s.hookOpts = s.hookOptions(t.env)
		s.noticeUnfiredHooks(s.hookOpts.Hooks)
		r, err := hook.New(s.hookOpts)
		if err != nil {
			return err
		}
		t.hooks, t.ownHooks = r, true
		return nil
	}
	cfg := agentHooks(s.sessionHooks(), *t.spec.def)
	if cfg == nil {
		t.hooks = t.parent.hooks
		return nil
	}
	o := s.hookOpts
	o.Hooks = cfg
	r, err := hook.New(o)
	if err != nil {
		return fmt.Errorf("hooks of agent %s: %w", t.spec.agentType, err)
	}
	t.hooks, t.ownHooks = r, true
	return nil
}

// hookOptions are what every hook runner of the session is built from; env
// is the main thread's.
func (s *Session) hookOptions(env *tool.Env) hook.Options {
	guard := newHookGuard(s.settings, s.ext, s.agents)
	s.hookGuard = guard
	var ran []string
	if r := s.resumed; r != nil && r.launch != nil {
		ran = r.launch.HooksOnce
	}
	return hook.Options{
		Hooks: s.fileHooks(),
		Settings: hook.Settings{Env: s.settings.Env, AllowedHTTPHookURLs: optionalTexts(s.settings.AllowedHTTPHookURLs),
			HTTPHookAllowedEnvVars: optionalTexts(s.settings.HTTPHookAllowedEnvVars)},
		ProjectDir: s.root,
		Dir:        s.namedRoot(),
		Env:        append(os.Environ(), envList(s.cfg.Env)...),
		IfMatcher: func(rule, toolName string, input json.RawMessage) (bool, error) {
			return permission.MatchRule(rule, permission.Call{Tool: toolName, Input: input, Cwd: env.Cwd()}, s.cwd)
		},
		// Through env, whose provider the engine meters: what prompt hooks
		// spend is counted with the rest.
		Provider:   envProvider{env},
		SmallModel: s.small,
		Agent:      hookAgents{s},
		MCP:        hookTools{s},
		Once:       hook.NewOnceLog(ran...),
		Observer:   s.observeHook,
		Admit:      guard.admit,
		Skipped:    guard.skipped(s.notify),
	}
}

// observeHook is told when each handler starts and ends (hook.Observer):
// the records go to the engine's hook log, and a handler's statusMessage
// to whoever asked for it (Config.HookStatus) while the handler runs.
func (s *Session) observeHook(rec hook.Record) {
	s.hookLog.Observe(rec)
	s.hookTimes.log(s.debugLog("hooks"), rec)
	if !s.cfg.HookStatus || rec.StatusMessage == "" {
		return
	}
	s.emitter()(&protocol.System{Subtype: protocol.SubtypeHookStatus, SessionID: s.sessionID, UUID: uuid.NewString(), Fields: map[string]any{
		"hook_id": rec.HookID, "hook_name": rec.HookName, "hook_event": string(rec.HookEvent),
		"status_message": rec.StatusMessage, "running": rec.Phase == hook.PhaseStarted}})
}

// fileHooks are the hooks every thread of the session starts with: the
// settings' (as they are now: read again when they changed), the caller's
// callbacks and the plugins'.
func (s *Session) fileHooks() hook.Config { return s.hooksUnder(s.currentSettings()) }

// hooksUnder are the session's hooks under settings.
func (s *Session) hooksUnder(settings *config.Merged) hook.Config {
	cfg := settingsHooks(settings)
	if s.cfg.Bare {
		cfg = hook.Config{}
	}
	for _, more := range []hook.Config{s.cfg.Hooks, s.ext.Hooks()} {
		for ev, ms := range more {
			cfg[ev] = append(cfg[ev], ms...)
		}
	}
	return cfg
}

// settingsHooks turns the settings' hooks into the runner's configuration.
func settingsHooks(m *config.Merged) hook.Config {
	return hookConfig(m.Hooks)
}

// hookConfig turns hooks of the settings into a runner's configuration.
func hookConfig(hooks map[string][]config.HookMatcher) hook.Config {
	cfg := hook.Config{}
	for event, matchers := range hooks {
		for _, hm := range matchers {
			out := hook.Matcher{Matcher: hm.Matcher}
			for _, h := range hm.Hooks {
				out.Hooks = append(out.Hooks, hook.Handler{
					Type: h.Type, Command: h.Command, Timeout: h.Timeout.Seconds(), StatusMessage: h.StatusMessage,
					Once: h.Once, Async: h.Async, If: h.If, URL: h.URL, Headers: h.Headers, AllowedEnvVars: h.AllowedEnvVars,
					Prompt: h.Prompt, Model: h.Model, Server: h.Server, Tool: h.Tool, Input: h.Input,
					// Identical hooks of one scope run once; the scope, not
					// the file position, keys that.
					Source: string(hm.Source.Scope), Origin: origin(h.Source),
				})
			}
			cfg[hook.Event(event)] = append(cfg[hook.Event(event)], out)
		}
	}
	return cfg
}

// agentHooks is the hook configuration of a subagent: the session's, plus
// the agent's own, whose Stop hooks fire as SubagentStop (the agent's
// stop), as in Claude Code. Nil when the agent has none.
func agentHooks(session hook.Config, def AgentDef) hook.Config {
	if len(def.Hooks) == 0 {
		return nil
	}
	cfg := hook.Config{}
	for ev, ms := range session {
		cfg[ev] = slices.Clone(ms)
	}
	for ev, ms := range def.Hooks {
		if ev == hook.Stop {
			ev = hook.SubagentStop
		}
		cfg[ev] = append(cfg[ev], ms...)
	}
	return cfg
}

// hookGuard applies the settings' disableAllHooks and allowManagedHooksOnly
// to every hook from files — the settings', the plugins', the skills' and
// the agents' — as the runners admit them: disableAllHooks in the managed
// settings stops them all; set elsewhere, or with allowManagedHooksOnly,
// only managed ones run (the managed settings', and those of the skills and
// agents of the administrator's directory). The caller's callbacks are code
// the program gave, not files a folder brings: they keep running.
type hookGuard struct {
	mu               sync.Mutex
	off, managedOnly bool
	// setting names the key that decided, with the file that set it.
	setting string
	// managed are the sources (Handler.Source) of managed hooks beyond the
	// managed settings'.
	managed map[string]bool

	reported map[string]bool
}

func newHookGuard(m *config.Merged, ext *extension.Set, agents map[string]AgentDef) *hookGuard {
	g := &hookGuard{managed: map[string]bool{}, reported: map[string]bool{}}
	switch {
	case m.DisableAllHooks != nil && *m.DisableAllHooks:
		src, _ := m.Origin("disableAllHooks")
		g.setting = "disableAllHooks (" + src.String() + ")"
		// Only an administrator can switch off an administrator's hooks.
		g.off, g.managedOnly = src.Scope == config.ScopeManaged, src.Scope != config.ScopeManaged
	case m.AllowManagedHooksOnly != nil && *m.AllowManagedHooksOnly:
		src, _ := m.Origin("allowManagedHooksOnly")
		g.setting, g.managedOnly = "allowManagedHooksOnly ("+src.String()+")", true
	}
	for _, sk := range ext.Skills() {
		if sk.Source.Scope == extension.ScopeManaged {
			g.managed["skill:"+sk.Name] = true
		}
	}
	for name, d := range agents {
		if d.managed {
			g.managed["agent:"+name] = true
		}
	}
	return g
}

// swap makes the guard decide as next does (the settings were read
// again), and returns a guard that decides as it did.
func (g *hookGuard) swap(next *hookGuard) *hookGuard {
	g.mu.Lock()
	defer g.mu.Unlock()
	old := &hookGuard{off: g.off, managedOnly: g.managedOnly, setting: g.setting, managed: g.managed}
	g.off, g.managedOnly, g.setting, g.managed = next.off, next.managedOnly, next.setting, next.managed
	return old
}

// admit reports whether a handler runs (hook.Options.Admit).
func (g *hookGuard) admit(h hook.Handler) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	switch {
	case h.Type == hook.TypeCallback:
		return true
	case g.off:
		return false
	case g.managedOnly:
		return h.Source == string(config.ScopeManaged) || g.managed[h.Source]
	}
	return true
}

// skipped tells the user, once per source, whose hooks the guard kept from
// running (hook.Options.Skipped).
func (g *hookGuard) skipped(notify func(string)) func([]string) {
	return func(sources []string) {
		g.mu.Lock()
		setting := g.setting
		var fresh []string
		for _, src := range sources {
			if !g.reported[src] {
				g.reported[src] = true
				fresh = append(fresh, src)
			}
		}
		g.mu.Unlock()
		if len(fresh) > 0 {
			notify(fmt.Sprintf("hooks: %s is set, so the hooks of %s do not run", setting, strings.Join(fresh, ", ")))
		}
	}
}

// envProvider calls the model through the session's tool environment.
type envProvider struct{ env *tool.Env }

func (p envProvider) Stream(ctx context.Context, req *llm.Request, obs llm.Observer) (*llm.Response, error) {
	return p.env.Model.Provider.Stream(ctx, req, obs)
}
