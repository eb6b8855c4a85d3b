package agent

import (
	"context"

	"github.com/tackcode/tack/internal/config"
	"github.com/tackcode/tack/internal/runtime"
)

// Settings are the settings a session runs under, as it read them when it
// started (managed, --settings, local, project and user files, merged),
// with the rules Client.UpdatePermissions has saved to settings files
// since. In a session of an untrusted folder (Options.Untrusted) the
// folder's own files bring only their deny and ask rules.
type Settings struct {
	// Files are the settings files read, lowest precedence first, each as
	// "scope path" ("user /home/me/.claude/settings.json").
	Files []string
	// Warnings are problems that did not stop the session, each naming its
	// file, line and column.
	Warnings []string
	// Allow, Ask and Deny are the permission rules, each with the scope of
	// the file that sets it.
	Allow, Ask, Deny []SettingsRule
	// Hooks are the hooks of the settings files by event (those of plugins,
	// skills and agents are not listed).
	Hooks map[HookEvent][]SettingsHookGroup
	// StatusLine is the statusLine setting; nil when none is set.
	StatusLine *StatusLineSettings
}

// SettingsRule is one permission rule of the settings: "Bash(npm run *)"
// and the scope of its file ("managed", "user", "project", "local",
// "flag").
type SettingsRule struct {
	Rule  string
	Scope string
}

// SettingsHookGroup is one {"matcher", "hooks"} group of an event in the
// settings: the hooks it runs for the events whose subject fits Matcher
// ("" for all).
type SettingsHookGroup struct {
	Matcher string
	Hooks   []SettingsHook
	// Scope is the scope of the file that sets it.
	Scope string
}

// SettingsHook is one hook of a SettingsHookGroup: its Type ("command",
// "http", "prompt", "agent", "mcp_tool") and what it runs (the command,
// URL, prompt or server tool).
type SettingsHook struct {
	Type string
	Run  string
}

// StatusLineSettings is the statusLine setting: a Command whose output a
// host shows as its status line (Type "command").
type StatusLineSettings struct {
	Type    string
	Command string
	Padding int
}

// Settings returns the settings the session runs under.
func (c *Client) Settings() Settings { return settingsOf(c.s.Settings()) }

func settingsOf(m *config.Merged) Settings {
	rules := func(items []config.Item) []SettingsRule {
		return convert(items, func(it config.Item) SettingsRule { return SettingsRule{Rule: it.Text, Scope: string(it.Source.Scope)} })
	}
	out := Settings{
		Files:    convert(m.Files, config.Source.String),
		Warnings: convert(m.Warnings, func(e *config.Error) string { return e.Error() }),
		Allow:    rules(m.Permissions.Allow), Ask: rules(m.Permissions.Ask), Deny: rules(m.Permissions.Deny),
		Hooks: map[HookEvent][]SettingsHookGroup{},
	}
	for event, groups := range m.Hooks {
		for _, g := range groups {
			sg := SettingsHookGroup{Matcher: g.Matcher, Scope: string(g.Source.Scope)}
			for _, h := range g.Hooks {
				sg.Hooks = append(sg.Hooks, SettingsHook{Type: h.Type, Run: hookRun(h)})
			}
			out.Hooks[HookEvent(event)] = append(out.Hooks[HookEvent(event)], sg)
		}
	}
	if sl := m.StatusLine; sl != nil {
		out.StatusLine = &StatusLineSettings{Type: sl.Type, Command: sl.Command, Padding: sl.Padding}
	}
	return out
}

// hookRun is what a hook of the settings runs.
func hookRun(h config.Hook) string {
	switch h.Type {
	case "http":
		return h.URL
	case "prompt", "agent":
		return h.Prompt
	case "mcp_tool":
		return h.Server + " " + h.Tool
	}
	return h.Command
}

// HookEntry is one hook of a session: the event it fires on, its matcher,
// what it runs, whose it is and where it is defined, and whether it runs.
type HookEntry struct {
	Event   HookEvent
	Matcher string // "" for every subject
	// Type is command, http, prompt, agent, mcp_tool or callback; Run is
	// what it runs (the command, URL, prompt, "server tool", callback id).
	Type, Run string
	// Source is whose hook it is: a settings scope ("user", "project",
	// "local", "managed", "flag"), "plugin:NAME", "skill:NAME",
	// "agent:NAME" or "sdk" (Options.Hooks). Origin is the file and line
	// that define it; "" for callbacks.
	Source, Origin string
	// Runs is false when disableAllHooks or allowManagedHooksOnly keeps the
	// hook from running; Note then names the setting. Note also says when a
	// hook runs only in part of a session ("while skill deploy is active",
	// "in agent reviewer").
	Runs bool
	Note string
}

// Hooks lists the hooks of the session, in the order of HookEvents, with
// the hooks of skills and agents, which run only while those are active.
func (c *Client) Hooks() []HookEntry { return hookEntries(c.s.Hooks()) }

// ListHooks lists the hooks a session started with opts would have,
// without starting one: the settings and extensions are read as a session
// reads them (workspace trust included), and nothing runs — no credentials
// are needed, no MCP server starts, no hook runs. A malformed file is an
// error naming its file, line and column.
func ListHooks(ctx context.Context, opts Options) ([]HookEntry, error) {
	cfg, err := opts.config()
	if err != nil {
		return nil, err
	}
	list, err := runtime.ListHooks(ctx, cfg)
	if err != nil {
		return nil, startError(err)
	}
	return hookEntries(list), nil
}

func hookEntries(list []runtime.HookEntry) []HookEntry {
	return convert(list, func(e runtime.HookEntry) HookEntry {
		return HookEntry{Event: HookEvent(e.Event), Matcher: e.Matcher, Type: e.Type, Run: e.Run,
			Source: e.Source, Origin: e.Origin, Runs: e.Runs, Note: e.Note}
	})
}
