package agent

import (
	"github.com/tackcode/tack/internal/config"
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
