package runtime

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"sync"

	"github.com/tackcode/tack/internal/config"
	"github.com/tackcode/tack/internal/hook"
	"github.com/tackcode/tack/internal/permission"
)

// loadSettings reads the settings files, reports their warnings, and makes
// the session's environment lookup: the options' Env, then the settings'
// env (ANTHROPIC_MODEL…), then the process's.
func (s *Session) loadSettings(context.Context) error {
	settings, err := readSettings(s.cfg, s.place(), optionsEnv(s.cfg.Env))
	if err != nil {
		return err
	}
	for _, w := range settings.Warnings {
		s.notify("settings: " + w.Error())
	}
	s.settings = settings
	s.getenv = sessionGetenv(s.cfg, settings)
	return nil
}

// readSettings reads the settings files for pl (the project's from its
// root), checking every permission rule and hook filter with the
// permission grammar.
func readSettings(cfg Config, pl place, getenv func(string) string) (*config.Merged, error) {
	opts, err := loadOptions(cfg, pl, getenv)
	if err != nil {
		return nil, err
	}
	return config.Load(opts)
}

// loadOptions say which settings files the session reads, and how.
func loadOptions(cfg Config, pl place, getenv func(string) string) (config.LoadOptions, error) {
	return settingsLoad(pl, cfg.Settings, cfg, getenv)
}

// settingsLoad is loadOptions with the --settings layer given: the
// project and local files from pl.root, a relative --settings path from
// pl.cwd, and the host's managed settings.
func settingsLoad(pl place, flagSettings string, cfg Config, getenv func(string) string) (config.LoadOptions, error) {
	opts, err := config.SessionLoad(pl.cwd, flagSettings, cfg.SettingSources, cfg.Untrusted, getenv, permission.CheckRule)
	opts.ProjectDir = pl.root
	opts.HostManaged = cfg.ManagedSettings
	return opts, err
}

// optionalTexts keeps the difference between an unset list (nil: no
// restriction) and an empty one.
func optionalTexts(items []config.Item) []string {
	if items == nil {
		return nil
	}
	return config.Texts(items)
}

// What a running session takes of its settings files when they change
// (reloadSettings, on a ConfigChange no hook blocked):
//
//   - the permission rules (allow, ask, deny) of the files, for the calls
//     checked from then on, in the main thread and every subagent; the
//     rules the session added itself stay, and additionalDirectories that
//     were not working directories become some;
//   - the hooks of the files, with disableAllHooks and
//     allowManagedHooksOnly; the hooks skills brought stay;
//   - the env of the files, for the commands run from then on (Bash, the
//     shells of subagents started later).
//
// The rest keeps what the session started with, as Claude Code does not
// reload everything live either: the model, the permission mode and
// disableBypassPermissionsMode, the sandbox, the MCP servers, plugins,
// the tools offered (a deny rule naming a whole tool denies its calls, the
// tool stays in the list the model sees), and the environment of hook
// commands and of tack itself (variables read at start).

// current is what the settings files say now, once they changed during the
// session; before, the values the session started with hold.
type current struct {
	mu       sync.Mutex
	settings *config.Merged // nil until a reload
	rules    permission.RuleSet
	hooks    hook.Config
	procEnv  []string
	// threads are the subagents running, whose checkers, hooks and shells
	// a reload reaches too.
	threads map[*thread]bool
}

// reloadSettings reads the settings files again, as loadSettings did, and
// applies what a running session can take of them (see above). A file
// that does not hold valid settings is an error naming it, line and
// column, and the session keeps the settings it had.
func (s *Session) reloadSettings() error {
	// The --settings layer with what ApplyFlagSettings laid over it.
	opts, err := settingsLoad(s.place(), s.flagSettings(), s.cfg, optionsEnv(s.cfg.Env))
	if err != nil {
		return err
	}
	settings, err := config.Load(opts)
	if err != nil {
		return err
	}
	for _, w := range settings.Warnings {
		s.notify("settings: " + w.Error())
	}
	if !s.cfg.Untrusted {
		// A reload reads the project's file again: what it grants itself
		// stays withheld until the folder is trusted, as at the start.
		for _, msg := range withholdWidening(s.cfg, s.root, settings) {
			s.notify(msg)
		}
	}
	rules, err := ruleSet(settings, s.cfg, s.cwd)
	if err != nil {
		return err
	}
	hooks := s.hooksUnder(settings)
	guard := newHookGuard(settings, s.ext, s.agents)
	procEnv := s.processEnv(settings)

	c := &s.current
	c.mu.Lock()
	defer c.mu.Unlock()
	oldRules, oldHooks, oldGuard := s.sessionRulesLocked(), s.sessionHooksLocked(), s.hookGuard.swap(guard)
	if err := s.applySettings(rules, hooks, procEnv, settings); err != nil {
		// Back to what held: every part takes what it had again.
		s.hookGuard.swap(oldGuard)
		_ = s.applySettings(oldRules, oldHooks, s.sessionEnvLocked(), nil)
		return err
	}
	c.settings, c.rules, c.hooks, c.procEnv = settings, rules, hooks, procEnv
	return nil
}

// applySettings gives rules, hooks and env to the main thread and the
// running subagents; settings, when set, brings its additionalDirectories.
// Callers hold s.current.mu.
func (s *Session) applySettings(rules permission.RuleSet, hooks hook.Config, procEnv []string, settings *config.Merged) error {
	threads := append([]*thread{s.main}, slices.Collect(maps.Keys(s.current.threads))...)
	for _, t := range threads {
		if err := t.applySettings(rules, hooks, procEnv); err != nil {
			return err
		}
	}
	if settings != nil {
		for _, d := range config.Texts(settings.Permissions.AdditionalDirectories) {
			if err := s.main.checker.AddDir(d); err != nil {
				return err
			}
		}
	}
	return nil
}

// applySettings gives the thread rules, hooks (a subagent's own runner
// adds its definition's; an agent hook's runs none) and env.
func (t *thread) applySettings(rules permission.RuleSet, hooks hook.Config, procEnv []string) error {
	if err := t.checker.SetRules(rules); err != nil {
		return err
	}
	switch {
	case t.spec.hookAgent:
		// An agent hook's subagent runs no hooks, whatever the settings.
	case t.parent == nil:
		if err := t.hooks.Replace(hooks); err != nil {
			return err
		}
	case t.ownHooks:
		if err := t.hooks.Replace(agentHooks(hooks, *t.spec.def)); err != nil {
			return fmt.Errorf("hooks of agent %s: %w", t.spec.agentType, err)
		}
	}
	t.env.Shell.SetEnv(procEnv)
	return nil
}

// currentSettings are the settings the session runs under now.
func (s *Session) currentSettings() *config.Merged {
	s.current.mu.Lock()
	defer s.current.mu.Unlock()
	if s.current.settings != nil {
		return s.current.settings
	}
	return s.settings
}

// sessionRules are the settings' and options' permission rules now: what
// a subagent's checker starts from.
func (s *Session) sessionRules() permission.RuleSet {
	s.current.mu.Lock()
	defer s.current.mu.Unlock()
	return s.sessionRulesLocked()
}

func (s *Session) sessionRulesLocked() permission.RuleSet {
	if s.current.settings != nil {
		return s.current.rules
	}
	return s.rules
}

// sessionHooks is the session's hook configuration now: what a subagent
// with hooks of its own adds them to.
func (s *Session) sessionHooks() hook.Config {
	s.current.mu.Lock()
	defer s.current.mu.Unlock()
	return s.sessionHooksLocked()
}

func (s *Session) sessionHooksLocked() hook.Config {
	if s.current.settings != nil {
		return s.current.hooks
	}
	return s.hookOpts.Hooks
}

// sessionEnv is the environment of the processes the session starts now.
func (s *Session) sessionEnv() []string {
	s.current.mu.Lock()
	defer s.current.mu.Unlock()
	return s.sessionEnvLocked()
}

func (s *Session) sessionEnvLocked() []string {
	if s.current.settings != nil {
		return s.current.procEnv
	}
	return s.procEnv
}

// running notes that the subagent t runs (or, with false, no longer), so
// that a reload reaches it. One that came while t was being built is
// given to it now.
func (s *Session) running(t *thread, on bool) error {
	c := &s.current
	c.mu.Lock()
	defer c.mu.Unlock()
	if !on {
		delete(c.threads, t)
		return nil
	}
	if c.threads == nil {
		c.threads = map[*thread]bool{}
	}
	c.threads[t] = true
	if c.settings != nil {
		return t.applySettings(c.rules, c.hooks, c.procEnv)
	}
	return nil
}
