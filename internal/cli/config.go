package cli

import (
	"strings"

	"github.com/spf13/cobra"

	"github.com/tackcode/tack/agent"
)

// newConfigCmd is `tack config`: the merged settings and where each value
// came from.
func newConfigCmd(stdio IO) *cobra.Command {
	var settings, sources string
	cmd := &cobra.Command{
		Use:   "config",
		Short: "Show the merged settings and the file each value comes from",
		Long: `Reads the settings files tack would read here — managed, --settings, local
(.claude/settings.local.json), project (.claude/settings.json) and user
(~/.claude/settings.json) — checks them, and prints every value with the file
it came from. A malformed file is reported with its line and column.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			opts := agent.Options{Settings: settings}
			if cmd.Flags().Changed("setting-sources") {
				opts.SettingSources = []string{}
				if strings.TrimSpace(sources) != "" {
					opts.SettingSources = []string{sources}
				}
			}
			return agent.ExplainSettings(stdio.Out, opts)
		},
	}
	cmd.Flags().StringVar(&settings, "settings", "", "a settings file, or inline JSON, read above the others")
	cmd.Flags().StringVar(&sources, "setting-sources", "", "which settings files to read: user,project,local")
	return cmd
}
