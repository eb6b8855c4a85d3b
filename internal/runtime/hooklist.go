package runtime

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/tackcode/tack/internal/config"
	"github.com/tackcode/tack/internal/hook"
)

// HookEntry is one hook of a session, as `tack hooks` and /hooks list it.
type HookEntry struct {
	Event   hook.Event
	Matcher string // "" for every subject
	// Type is command, http, prompt, agent, mcp_tool or callback; Run is
	// what it runs (the command, URL, prompt, "server tool", callback id).
	Type, Run string
	// Source is whose hook it is ("project", "plugin:lint",
	// "skill:deploy", "agent:reviewer", "sdk"); Origin the file and line
	// that define it ("" for callbacks).
	Source, Origin string
	// Runs is false when the settings' hook guards keep it from running;
	// Note then says which setting, or when a hook runs only in part of a
	// session (a skill's, an agent's).
	Runs bool
	Note string
}

// Hooks lists the hooks of the session: those of the settings, the
// caller's callbacks, the plugins', and those of skills and agents (which
// run only while that skill or agent is active), each with whether the
// hook guards let it run.
func (s *Session) Hooks() []HookEntry {
	return s.hookEntries()
}

// ListHooks lists the hooks a session started with cfg would have, without
// starting one: it reads the settings and extensions as New does (trust
// included) and runs nothing — no credentials are needed, no server starts,
// no hook runs.
func ListHooks(ctx context.Context, cfg Config) ([]HookEntry, error) {
	s := &Session{cfg: cfg}
	s.ctx, s.cancel = context.WithCancel(context.WithoutCancel(ctx))
	defer s.abandon()
	for _, step := range []func(*Session, context.Context) error{
		(*Session).resolveOptions,
		(*Session).loadSettings,
		(*Session).decideTrust,
		(*Session).loadExtensions,
		(*Session).chooseMainAgent,
	} {
		if err := step(s, ctx); err != nil {
			return nil, err
		}
	}
	return s.hookEntries(), nil
}

// hookEntries lists s's hooks in the order of hook.Events, then of
// configuration.
func (s *Session) hookEntries() []HookEntry {
	guard := newHookGuard(s.settings, s.ext, s.agents)
	list := func(cfg hook.Config, note string) []HookEntry { return entries(cfg, guard.admit, note, guard.setting) }
	out := list(s.fileHooks(), "")
	// The settings' guards took these out of the settings as they merged.
	never := func(hook.Handler) bool { return false }
	out = append(out, entries(hookConfig(s.settings.GuardedHooks), never, "", guard.setting)...)
	for _, sk := range s.ext.Skills() {
		out = append(out, list(sk.Hooks, "while skill "+sk.Name+" is active")...)
	}
	for _, name := range slices.Sorted(maps.Keys(s.agents)) {
		// An agent's Stop hooks fire as SubagentStop, as they run.
		out = append(out, list(agentHooks(hook.Config{}, s.agents[name]), "in agent "+name)...)
	}
	order := map[hook.Event]int{}
	for i, ev := range listedEvents() {
		order[ev] = i
	}
	slices.SortStableFunc(out, func(a, b HookEntry) int { return order[a.Event] - order[b.Event] })
	return out
}

// entries lists the handlers of cfg with note, each with whether admit lets
// it run; those it stops are noted as stopped by guardSetting.
func entries(cfg hook.Config, admit func(hook.Handler) bool, note, guardSetting string) []HookEntry {
	var out []HookEntry
	for _, ev := range listedEvents() {
		why := neverRun(ev)
		fired := why == ""
		for _, m := range cfg[ev] {
			for _, h := range m.Hooks {
				e := HookEntry{Event: ev, Matcher: m.Matcher, Type: h.Type, Run: handlerRun(h),
					Source: h.Source, Origin: h.Origin, Runs: fired && admit(h), Note: note}
				if h.Type == hook.TypeCallback {
					e.Source = "sdk"
				}
				switch {
				case !fired:
					e.Note = "never run: " + why
				case !e.Runs:
					e.Note = "not run: " + guardSetting + " is set"
				}
				out = append(out, e)
			}
		}
	}
	return out
}

// listedEvents are the events hooks may be configured for: those tack
// fires, in the order of a session's life, then those it does not.
func listedEvents() []hook.Event {
	out := hook.Events()
	for _, ev := range config.UnfiredHookEvents() {
		out = append(out, hook.Event(ev))
	}
	return out
}

// handlerRun is what a handler runs, in a few words.
func handlerRun(h hook.Handler) string {
	switch h.Type {
	case hook.TypeHTTP:
		return h.URL
	case hook.TypePrompt, hook.TypeAgent:
		return h.Prompt
	case hook.TypeMCPTool:
		return h.Server + " " + h.Tool
	case hook.TypeCallback:
		return h.CallbackID
	}
	return h.Command
}

// origin is where a settings hook is defined, as "path:line".
func origin(src config.Source) string {
	if src.Line == 0 {
		return src.Path
	}
	return fmt.Sprintf("%s:%d", src.Path, src.Line)
}

// neverRun says why the hooks of ev never run, "" when they may: the
// events Claude Code knows and tack does not fire, and TeammateIdle, one of
// the events tack knows, which fires when a teammate of an agent team is
// about to go idle: tack has no agent teams.
func neverRun(ev hook.Event) string {
	switch {
	case ev == hook.TeammateIdle:
		return "tack has no agent teams and never fires " + string(ev)
	case !slices.Contains(hook.Events(), ev):
		return "tack does not fire " + string(ev)
	}
	return ""
}

// noticeUnfiredHooks tells the user, for each event that never fires in
// tack (neverRun), whose hooks configure it — among the session's hooks
// (files: the settings', the callbacks', the plugins') and its skills' and
// agents' — that they never run. A policy written for Claude Code then does
// not silently not hold.
func (s *Session) noticeUnfiredHooks(files hook.Config) {
	cfgs := []hook.Config{files}
	for _, sk := range s.ext.Skills() {
		cfgs = append(cfgs, sk.Hooks)
	}
	for _, name := range slices.Sorted(maps.Keys(s.agents)) {
		cfgs = append(cfgs, s.agents[name].Hooks)
	}
	for _, ev := range listedEvents() {
		why := neverRun(ev)
		if why == "" {
			continue
		}
		var whose []string
		for _, cfg := range cfgs {
			for _, m := range cfg[ev] {
				for _, h := range m.Hooks {
					if w := cmp.Or(h.Origin, h.Source); !slices.Contains(whose, w) {
						whose = append(whose, w)
					}
				}
			}
		}
		if len(whose) > 0 {
			s.notify(fmt.Sprintf("hooks: %s, so the hooks configured for it never run (%s)", why, strings.Join(whose, ", ")))
		}
	}
}
