package config

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/tackcode/tack/internal/jsonx"
)

// Render prints the merged settings for a human (`tack config`): the files
// read, then every value that is set with the file, line and column it came
// from, then the warnings. The order is fixed, maps are sorted, so the output
// is stable.
func (m *Merged) Render(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	row := func(key, value string, src Source) {
		fmt.Fprintf(tw, "%s\t%s\t%s\n", key, value, src)
	}

	fmt.Fprintln(tw, "settings files, lowest precedence first:")
	if len(m.Files) == 0 {
		fmt.Fprintln(tw, "  (none)")
	}
	for _, f := range m.Files {
		fmt.Fprintf(tw, "  %s\t%s\n", f.Scope, f.Path)
	}
	fmt.Fprintln(tw)

	s := &m.Settings
	scalar := func(key, value string) {
		if src, ok := m.origins[key]; ok {
			row(key, value, src)
		}
	}
	scalar("model", quote(s.Model))
	scalar("agent", quote(s.Agent))
	scalar("outputStyle", quote(s.OutputStyle))
	scalar("effortLevel", quote(s.EffortLevel))
	scalar("apiKeyHelper", quote(s.APIKeyHelper))
	scalar("permissions.defaultMode", quote(s.Permissions.DefaultMode))
	scalar("permissions.disableBypassPermissionsMode", quote("disable"))
	if sl := s.StatusLine; sl != nil {
		scalar("statusLine", fmt.Sprintf("type=%s command=%s padding=%d", quote(sl.Type), quote(sl.Command), sl.Padding))
	}
	scalar("enableAllProjectMcpServers", boolText(s.EnableAllProjectMcpServers))
	scalar("disableAllHooks", boolText(s.DisableAllHooks))
	scalar("allowManagedHooksOnly", boolText(s.AllowManagedHooksOnly))
	scalar("requireWorkspaceTrust", "true")
	if s.CleanupPeriodDays != nil {
		scalar("cleanupPeriodDays", strconv.Itoa(*s.CleanupPeriodDays))
	}
	scalar("includeCoAuthoredBy", boolText(s.IncludeCoAuthoredBy))
	scalar("includeGitInstructions", boolText(s.IncludeGitInstructions))
	scalar("alwaysThinkingEnabled", boolText(s.AlwaysThinkingEnabled))
	scalar("sandbox", compact(s.Sandbox))

	for _, l := range []struct {
		key   string
		items []Item
	}{
		{"permissions.allow", s.Permissions.Allow},
		{"permissions.ask", s.Permissions.Ask},
		{"permissions.deny", s.Permissions.Deny},
		{"permissions.additionalDirectories", s.Permissions.AdditionalDirectories},
		{"enabledMcpjsonServers", s.EnabledMcpjsonServers},
		{"disabledMcpjsonServers", s.DisabledMcpjsonServers},
		{"claudeMdExcludes", s.ClaudeMdExcludes},
		{"availableModels", s.AvailableModels},
		{"allowedHttpHookUrls", s.AllowedHTTPHookURLs},
		{"httpHookAllowedEnvVars", s.HTTPHookAllowedEnvVars},
	} {
		for _, it := range l.items {
			row(l.key+"[]", quote(it.Text), it.Source)
		}
	}

	for _, k := range sortedKeys(s.Env) {
		scalar("env."+k, quote(s.Env[k]))
	}
	for _, k := range sortedKeys(s.EnabledPlugins) {
		scalar("enabledPlugins."+k, strconv.FormatBool(s.EnabledPlugins[k]))
	}

	for _, ev := range allHookEvents() {
		for _, g := range s.Hooks[ev] {
			for _, h := range g.Hooks {
				row("hooks."+ev, "matcher "+quote(g.Matcher)+": "+describeHook(h), h.Source)
			}
		}
	}

	for _, k := range sortedKeys(s.Unknown) {
		scalar(k, compact(s.Unknown[k])+" (not used by tack)")
	}

	if len(m.Warnings) > 0 {
		fmt.Fprintln(tw, "\nwarnings:")
		for _, e := range m.Warnings {
			fmt.Fprintf(tw, "  %s\n", e)
		}
	}
	return tw.Flush()
}

func describeHook(h Hook) string {
	var b strings.Builder
	b.WriteString(h.Type)
	switch h.Type {
	case "command":
		b.WriteString(" " + quote(h.Command))
	case "http":
		b.WriteString(" " + quote(h.URL))
	case "prompt", "agent":
		b.WriteString(" " + quote(h.Prompt))
	case "mcp_tool":
		b.WriteString(" server=" + quote(h.Server) + " tool=" + quote(h.Tool))
	}
	if h.If != "" {
		b.WriteString(" if=" + quote(h.If))
	}
	if h.Timeout > 0 {
		b.WriteString(" timeout=" + h.Timeout.String())
	}
	if h.Async {
		b.WriteString(" async")
	}
	if h.Once {
		b.WriteString(" once")
	}
	return b.String()
}

func quote(s string) string { return string(jsonx.AppendString(nil, s)) }

func boolText(b *bool) string {
	if b == nil {
		return ""
	}
	return strconv.FormatBool(*b)
}

// compact renders raw JSON on one line.
func compact(raw json.RawMessage) string {
	var buf bytes.Buffer
	if err := json.Compact(&buf, raw); err != nil {
		return string(raw)
	}
	return buf.String()
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
