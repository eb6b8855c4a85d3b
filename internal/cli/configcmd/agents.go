package configcmd

import (
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/tackcode/tack/internal/cli/cmdio"

	"github.com/tackcode/tack/internal/config"
	"github.com/tackcode/tack/internal/extension"
)

// newAgentsCmd is `tack agents`: the custom agents (subagent types) a
// session started here would have, where each comes from, the definitions
// others override, and the files that could not be loaded.
func newAgentsCmd(stdio cmdio.IO) *cobra.Command {
	var pluginDirs []string
	var agentsJSON, sources, settings string
	cmd := &cobra.Command{
		Use:   "agents",
		Short: "List the agents in effect here, where each comes from, and problems",
		Long: `List the agents (subagent types) a session started here would have, by
name, each with where it is defined, its description and, when set, its model
and tools. Definitions come, highest precedence first, from --agents, managed
settings, the project's .claude/agents, <config>/agents, enabled plugins and
--plugin-dir plugins, then the built-in agents; a definition that one of the
same name overrides is listed under "Overridden". Files that could not be
loaded are reported on standard error as FILE:LINE:COL: message; the command
still succeeds.`,
		Args: cobra.NoArgs,
	}
	fl := cmd.Flags()
	fl.StringArrayVar(&pluginDirs, "plugin-dir", nil, "load a plugin from this folder (repeatable)")
	fl.StringVar(&agentsJSON, "agents", "", `agents as JSON: {"name": {"description": …, "prompt": …}}`)
	fl.StringVar(&sources, "setting-sources", "", "which settings and definitions to read: user,project,local")
	fl.StringVar(&settings, "settings", "", "a settings file, or inline JSON, read above the others")
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		wd, err := os.Getwd()
		if err != nil {
			return fmt.Errorf("working directory: %w", err)
		}
		getenv := stdio.Env()
		var scopes []config.Scope
		if cmd.Flags().Changed("setting-sources") {
			if scopes, err = config.ParseSources(sources); err != nil {
				return cmdio.Usagef("--setting-sources: %v", err)
			}
		}
		configDir := config.DefaultConfigDir(getenv)
		opts := extension.Options{
			Cwd: wd, ConfigDir: configDir, Sources: scopes,
			PluginDirs: pluginDirs, AgentsJSON: agentsJSON, Getenv: getenv,
		}
		merged, err := config.Load(config.LoadOptions{ConfigDir: configDir, Cwd: wd, Sources: scopes, FlagSettings: settings})
		if err != nil {
			fmt.Fprintf(stdio.Err, "tack: warning: settings not read, so no installed plugin is loaded: %v\n", err)
		} else {
			opts.EnabledPlugins = merged.EnabledPlugins
		}
		set := extension.Load(opts)
		if err := writeAgents(stdio.Out, set); err != nil {
			return err
		}
		for _, p := range set.Problems() {
			fmt.Fprintln(stdio.Err, p.Error())
		}
		return nil
	}
	return cmd
}

// writeAgents prints the agents in effect, then the overridden ones.
func writeAgents(w io.Writer, set *extension.Set) error {
	agents := set.Agents()
	shadowed := set.ShadowedAgents()
	// Same name: keep the order found, which is precedence order.
	slices.SortStableFunc(shadowed, func(a, b *extension.Agent) int { return strings.Compare(a.Name, b.Name) })

	var b strings.Builder
	fmt.Fprintf(&b, "%s:\n", countOf(len(agents), "agent"))
	for _, a := range agents {
		writeAgent(&b, a)
	}
	if len(shadowed) > 0 {
		fmt.Fprintf(&b, "\nOverridden (%d):\n", len(shadowed))
		for _, a := range shadowed {
			writeAgent(&b, a)
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func writeAgent(b *strings.Builder, a *extension.Agent) {
	fmt.Fprintf(b, "\n  %s · %s\n", a.Name, a.Source)
	if d := cmdio.OneLine(a.Description, 200); d != "" {
		fmt.Fprintf(b, "    %s\n", d)
	}
	var attrs []string
	if a.Model != "" {
		attrs = append(attrs, "model: "+a.Model)
	}
	switch {
	case a.Tools == nil: // every tool of the session
	case len(a.Tools) == 0:
		attrs = append(attrs, "tools: none")
	default:
		attrs = append(attrs, "tools: "+strings.Join(a.Tools, ", "))
	}
	if len(a.DisallowedTools) > 0 {
		attrs = append(attrs, "disallowed tools: "+strings.Join(a.DisallowedTools, ", "))
	}
	if a.PermissionMode != "" {
		attrs = append(attrs, "permission mode: "+a.PermissionMode)
	}
	if a.Isolation != "" {
		attrs = append(attrs, "isolation: "+a.Isolation)
	}
	if len(attrs) > 0 {
		fmt.Fprintf(b, "    %s\n", strings.Join(attrs, " · "))
	}
	if a.ShadowedBy != nil {
		fmt.Fprintf(b, "    overridden by %s\n", a.ShadowedBy.Source)
	}
}
