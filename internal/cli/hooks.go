package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/tackcode/tack/agent"
	"github.com/tackcode/tack/internal/cli/cmdio"
)

// newHooksCmd is `tack hooks`: the hooks a session started here would run,
// by event, with where each is defined.
func newHooksCmd(stdio IO) *cobra.Command {
	var settings, sources, agentsJSON string
	var pluginDirs []string
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "hooks",
		Short: "List the hooks a session started here would run, by event, with the file that defines each",
		Long: `List the hooks a session started in this directory would run, in the order
of a session's life: those of the settings files, of enabled plugins and
--plugin-dir plugins, and those of skills and agents (which run only while the
skill or agent is active). Each line gives the matcher, the type, what the hook
runs and the file and line that define it. Hooks that disableAllHooks or
allowManagedHooksOnly keep from running are listed as not run. Nothing is run
and no credentials are needed.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			opts := agent.Options{Settings: settings, AgentsJSON: agentsJSON, PluginDirs: pluginDirs,
				SettingSources: settingSources(cmd, sources)}
			list, err := agent.ListHooks(cmd.Context(), opts)
			if err != nil {
				return err
			}
			if asJSON {
				enc := json.NewEncoder(stdio.Out)
				enc.SetIndent("", "  ")
				if list == nil {
					list = []agent.HookEntry{}
				}
				return enc.Encode(list)
			}
			return writeHooks(stdio.Out, list)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&settings, "settings", "", "a settings file, or inline JSON, read above the user, project and local settings")
	fl.StringVar(&sources, "setting-sources", "", "which settings files to read: user,project,local")
	fl.StringVar(&agentsJSON, "agents", "", `more subagents, as JSON: {"name": {"description": …, "prompt": …}}`)
	fl.StringArrayVar(&pluginDirs, "plugin-dir", nil, "load a plugin from this folder (repeatable)")
	fl.BoolVar(&asJSON, "json", false, "print the list as JSON")
	return cmd
}

// writeHooks prints the hooks grouped by event.
func writeHooks(w io.Writer, list []agent.HookEntry) error {
	if len(list) == 0 {
		_, err := fmt.Fprintln(w, "No hooks are configured.")
		return err
	}
	var b strings.Builder
	var event agent.HookEvent
	for _, e := range list {
		if e.Event != event {
			if event != "" {
				b.WriteByte('\n')
			}
			event = e.Event
			fmt.Fprintf(&b, "%s\n", event)
		}
		matcher := e.Matcher
		if matcher == "" {
			matcher = "*"
		}
		fmt.Fprintf(&b, "  [%s] %s: %s\n", matcher, e.Type, cmdio.OneLine(e.Run, 80))
		where := e.Source
		if e.Origin != "" {
			where += "  " + e.Origin
		}
		if e.Note != "" {
			where += "  (" + e.Note + ")"
		}
		fmt.Fprintf(&b, "      %s\n", where)
	}
	_, err := io.WriteString(w, b.String())
	return err
}
