package config

import (
	"encoding/json"
	"fmt"
	"sort"
)

// Merged is what Load returns: the merged settings, where each value came
// from, and which files were read.
type Merged struct {
	Settings
	// Files are the settings files read, lowest precedence first. Inline
	// --settings JSON appears with Path FlagPath.
	Files []Source
	// Warnings are problems that do not stop tack but that a user should
	// hear of: an unknown key that looks like a misspelt known one,
	// allowManagedHooksOnly outside managed settings, hooks a guard dropped.
	Warnings []*Error
	// GuardedHooks are the settings' hooks that disableAllHooks or
	// allowManagedHooksOnly took out of Hooks, by event: they never run,
	// and are kept only so that listings can show them as stopped.
	GuardedHooks map[string][]HookMatcher
	// Ignored are the keys of the project and local files left out because
	// the folder is not trusted (LoadOptions.Untrusted): Text is the key
	// ("hooks", "permissions.allow"), Source where it is written.
	Ignored []Item
	// HostManaged is what applies of the host's managed settings (the
	// keys kept, at the values kept), as JSON values; nil when the host
	// gave none or they were left out.
	HostManaged map[string]any

	origins map[string]Source
}

// Origin returns where the merged value at path was set: a scalar
// ("model", "permissions.defaultMode", "statusLine", "sandbox"), a map entry
// ("env.FOO", "enabledPlugins.name@market") or an unknown top-level key.
// ok is false when no file sets it. List items and hooks carry their own
// Source instead.
func (m *Merged) Origin(path string) (src Source, ok bool) {
	src, ok = m.origins[path]
	return src, ok
}

// EnvList returns Env as sorted NAME=value pairs, ready to append to a
// process's environment.
func (s *Settings) EnvList() []string {
	names := make([]string, 0, len(s.Env))
	for k := range s.Env {
		names = append(names, k)
	}
	sort.Strings(names)
	out := make([]string, len(names))
	for i, k := range names {
		out[i] = k + "=" + s.Env[k]
	}
	return out
}

// dedup appends to lists the items not already in them, by text.
type dedup map[*[]Item]map[string]bool

func (u dedup) add(dst *[]Item, src []Item) {
	seen := u[dst]
	if seen == nil {
		seen = map[string]bool{}
		u[dst] = seen
	}
	for _, it := range src {
		if !seen[it.Text] {
			seen[it.Text] = true
			*dst = append(*dst, it)
		}
	}
}

// merge combines the documents, lowest precedence first, as Load describes.
func merge(docs []*document) *Merged {
	m := &Merged{origins: map[string]Source{}}
	out := &m.Settings
	lists := dedup{}
	for _, doc := range docs {
		s := &doc.settings
		m.Files = append(m.Files, doc.source)
		m.Warnings = append(m.Warnings, doc.warnings...)
		m.Ignored = append(m.Ignored, doc.ignored...)
		if doc.hostView != nil {
			m.HostManaged = doc.hostView
		}
		for k, src := range doc.origins {
			m.origins[k] = src
		}
		has := func(k string) bool { _, ok := doc.origins[k]; return ok }

		for _, f := range []struct {
			key string
			dst *string
			src string
		}{
			{"model", &out.Model, s.Model},
			{"agent", &out.Agent, s.Agent},
			{"outputStyle", &out.OutputStyle, s.OutputStyle},
			{"effortLevel", &out.EffortLevel, s.EffortLevel},
			{"apiKeyHelper", &out.APIKeyHelper, s.APIKeyHelper},
			{"smallModel", &out.SmallModel, s.SmallModel},
			{"permissions.defaultMode", &out.Permissions.DefaultMode, s.Permissions.DefaultMode},
		} {
			if has(f.key) {
				*f.dst = f.src
			}
		}
		for _, f := range []struct{ dst, src **bool }{
			{&out.EnableAllProjectMcpServers, &s.EnableAllProjectMcpServers},
			{&out.DisableAllHooks, &s.DisableAllHooks},
			{&out.AllowManagedHooksOnly, &s.AllowManagedHooksOnly},
			{&out.IncludeCoAuthoredBy, &s.IncludeCoAuthoredBy},
			{&out.IncludeGitInstructions, &s.IncludeGitInstructions},
			{&out.AlwaysThinkingEnabled, &s.AlwaysThinkingEnabled},
		} {
			if *f.src != nil {
				*f.dst = *f.src
			}
		}
		if s.CleanupPeriodDays != nil {
			out.CleanupPeriodDays = s.CleanupPeriodDays
		}
		if s.StatusLine != nil {
			out.StatusLine = s.StatusLine
		}
		if s.LSPServers != nil {
			out.LSPServers, out.LSPServersAt = s.LSPServers, s.LSPServersAt
		}
		switch {
		case s.Sandbox != nil && doc.source.Path == HostManagedPath:
			// A host's limits tighten the files' sandbox rather than
			// replace it. A sandbox below that is no object stays as it
			// is, for the sandbox's own check to refuse.
			if layered, err := layerSandbox(out.Sandbox, s.Sandbox); err == nil {
				out.Sandbox = layered
			}
		case s.Sandbox != nil:
			out.Sandbox = s.Sandbox
		}
		if s.RequireWorkspaceTrust {
			out.RequireWorkspaceTrust = true // like disableBypassPermissionsMode, below
		}
		if s.Permissions.DisableBypassPermissionsMode {
			// "disable" is the only value, so any scope can turn it on and
			// none can turn it off: a restriction always holds.
			out.Permissions.DisableBypassPermissionsMode = true
		}

		lists.add(&out.Permissions.Allow, s.Permissions.Allow)
		lists.add(&out.Permissions.Ask, s.Permissions.Ask)
		lists.add(&out.Permissions.Deny, s.Permissions.Deny)
		lists.add(&out.Permissions.AdditionalDirectories, s.Permissions.AdditionalDirectories)
		lists.add(&out.EnabledMcpjsonServers, s.EnabledMcpjsonServers)
		lists.add(&out.DisabledMcpjsonServers, s.DisabledMcpjsonServers)
		lists.add(&out.ClaudeMdExcludes, s.ClaudeMdExcludes)
		lists.add(&out.AvailableModels, s.AvailableModels)
		lists.add(&out.AllowedHTTPHookURLs, s.AllowedHTTPHookURLs)
		lists.add(&out.HTTPHookAllowedEnvVars, s.HTTPHookAllowedEnvVars)

		for k, v := range s.Env {
			if out.Env == nil {
				out.Env = map[string]string{}
			}
			out.Env[k] = v
		}
		for k, v := range s.Providers {
			// A provider is replaced whole by a later scope's of the same
			// name: half of one endpoint's settings with half of another's
			// would reach neither.
			if out.Providers == nil {
				out.Providers = map[string]Provider{}
			}
			out.Providers[k] = v
		}
		for k, v := range s.EnabledPlugins {
			if out.EnabledPlugins == nil {
				out.EnabledPlugins = map[string]bool{}
			}
			out.EnabledPlugins[k] = v
		}
		for k, v := range s.Unknown {
			if out.Unknown == nil {
				out.Unknown = map[string]json.RawMessage{}
			}
			out.Unknown[k] = v
		}
		for _, ev := range allHookEvents() {
			if hs := s.Hooks[ev]; len(hs) > 0 {
				if out.Hooks == nil {
					out.Hooks = map[string][]HookMatcher{}
				}
				out.Hooks[ev] = append(out.Hooks[ev], hs...)
			}
		}
	}
	m.guardHooks()
	return m
}

// guardHooks applies allowManagedHooksOnly and disableAllHooks to the merged
// hooks, so that callers run exactly what is left.
func (m *Merged) guardHooks() {
	if len(m.Hooks) == 0 {
		return
	}
	if b := m.AllowManagedHooksOnly; b != nil && *b {
		if n := m.keepHooks(func(s Scope) bool { return s == ScopeManaged }); n > 0 {
			src := m.origins["allowManagedHooksOnly"]
			m.Warnings = append(m.Warnings, &Error{Source: src, Key: "allowManagedHooksOnly",
				Msg: fmt.Sprintf("%d hook matcher group(s) outside managed settings are ignored", n)})
		}
	}
	if b := m.DisableAllHooks; b != nil && *b {
		src := m.origins["disableAllHooks"]
		if src.Scope == ScopeManaged {
			m.keepHooks(func(Scope) bool { return false })
			return
		}
		// Only an administrator can switch off an administrator's hooks.
		m.keepHooks(func(s Scope) bool { return s == ScopeManaged })
		if len(m.Hooks) > 0 {
			m.Warnings = append(m.Warnings, &Error{Source: src, Key: "disableAllHooks",
				Msg: "managed hooks still run; only managed settings can disable them"})
		}
	}
}

// keepHooks drops the matcher groups whose scope keep rejects and returns
// how many it dropped.
func (m *Merged) keepHooks(keep func(Scope) bool) int {
	dropped := 0
	for ev, groups := range m.Hooks {
		kept := groups[:0:0]
		for _, g := range groups {
			if keep(g.Source.Scope) {
				kept = append(kept, g)
				continue
			}
			dropped++
			if m.GuardedHooks == nil {
				m.GuardedHooks = map[string][]HookMatcher{}
			}
			m.GuardedHooks[ev] = append(m.GuardedHooks[ev], g)
		}
		if len(kept) == 0 {
			delete(m.Hooks, ev)
		} else {
			m.Hooks[ev] = kept
		}
	}
	if len(m.Hooks) == 0 {
		m.Hooks = nil
	}
	return dropped
}
