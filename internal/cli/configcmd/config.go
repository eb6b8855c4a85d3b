package configcmd

import (
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/tackcode/tack/internal/cli/cmdio"
	"github.com/tackcode/tack/internal/config"
	"github.com/tackcode/tack/internal/permission"
)

// newConfigCmd is `tack config`: the merged settings and where each value
// came from.
func newConfigCmd(stdio cmdio.IO) *cobra.Command {
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
			var list []string // nil: every settings file
			if cmd.Flags().Changed("setting-sources") {
				list = []string{}
				if strings.TrimSpace(sources) != "" {
					list = []string{sources}
				}
			}
			return explainSettings(stdio, settings, list)
		},
	}
	cmd.Flags().StringVar(&settings, "settings", "", "a settings file, or inline JSON, read above the others")
	cmd.Flags().StringVar(&sources, "setting-sources", "", "which settings files to read: user,project,local")
	return cmd
}

// explainSettings writes the settings a session started here would run
// under — read as it reads them — with the file each value came from, and
// the warnings. A malformed settings file is an error naming its file,
// line and column.
func explainSettings(stdio cmdio.IO, flagSettings string, sources []string) error {
	cwd, err := os.Getwd()
	if err != nil {
		return fmt.Errorf("working directory: %w", err)
	}
	opts, err := config.SessionLoad(cwd, flagSettings, sources, false, stdio.Env(), permission.CheckRule)
	if err != nil {
		return err
	}
	m, err := config.Load(opts)
	if err != nil {
		return err
	}
	return m.Render(stdio.Out)
}
