package cli

import (
	"bufio"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/tackcode/tack/agent"
	"github.com/tackcode/tack/internal/cli/cmdio"
)

// purgeOptions are what `tack project purge` acts on.
type purgeOptions struct {
	// Dir is the project; "" means the working directory.
	Dir    string
	DryRun bool
	Yes    bool
}

// newProjectCmd is `tack project`, which holds purge.
func newProjectCmd(stdio IO) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "project",
		Short: "Manage what tack keeps about a project",
		Args:  cobra.NoArgs,
	}
	cmd.AddCommand(newPurgeCmd(stdio, "purge"))
	return cmd
}

// newPurgeCmd is `tack project purge [PATH]`, also mounted as `tack purge`
// (Claude Code's newer name for it).
func newPurgeCmd(stdio IO, use string) *cobra.Command {
	var o purgeOptions
	cmd := &cobra.Command{
		Use:   use + " [PATH]",
		Short: "Delete everything tack keeps about a project (default: this directory)",
		Long: `Deletes, on this computer, what tack keeps about the project at PATH (default:
the working directory; it need not exist any more): its folder under
~/.claude/projects (transcripts, workflow records, prompt history, auto memory),
its entry in ~/.claude.json (trust, allowed tools, MCP servers) and its prompts
in ~/.claude/history.jsonl. It lists them first and asks before deleting, on
standard input: anything but "y" (or no answer, as when input is not a
terminal) deletes nothing and exits 1. --yes deletes without asking;
--dry-run only lists. To delete only old transcripts, see tack sessions purge.`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 1 {
				o.Dir = args[0]
			}
			return purgeRun(stdio, o)
		},
	}
	cmd.Flags().BoolVar(&o.DryRun, "dry-run", false, "list what would be deleted, and delete nothing")
	cmd.Flags().BoolVarP(&o.Yes, "yes", "y", false, "delete without asking")
	return cmd
}

func purgeRun(stdio IO, o purgeOptions) error {
	opts := agent.Options{Cwd: o.Dir, Env: stdio.AgentEnv()}
	project, items, err := agent.PurgeProject(opts, true)
	if err != nil {
		return err
	}
	if len(items) == 0 {
		fmt.Fprintf(stdio.Out, "tack keeps nothing about %s.\n", project)
		return nil
	}
	fmt.Fprintf(stdio.Out, "What tack keeps about %s:\n", project)
	writePurgeItems(stdio, items)
	if o.DryRun {
		fmt.Fprintf(stdio.Out, "Dry run: %d items would be deleted; nothing was.\n", len(items))
		return nil
	}
	if !o.Yes && !confirm(stdio, fmt.Sprintf("Delete these %d items for good? [y/N] ", len(items))) {
		fmt.Fprintln(stdio.Out, "Nothing was deleted.")
		return &cmdio.ExitError{Code: 1}
	}
	_, items, err = agent.PurgeProject(opts, false)
	if err != nil {
		return fmt.Errorf("purge %s: %w (deleted before the failure: %d items)", project, err, len(items))
	}
	fmt.Fprintf(stdio.Out, "Deleted %d items about %s.\n", len(items), project)
	return nil
}

func writePurgeItems(stdio IO, items []agent.PurgeItem) {
	for _, it := range items {
		where := it.Path
		if it.Key != "" {
			where += " projects: " + it.Key
		}
		fmt.Fprintf(stdio.Out, "  %-6s  %s\n          %s\n", it.Kind, where, it.What)
	}
}

// confirm asks question and reads one line of standard input: true for
// "y" or "yes".
func confirm(stdio IO, question string) bool {
	fmt.Fprint(stdio.Out, question)
	line, _ := bufio.NewReader(stdio.In).ReadString('\n')
	if !strings.HasSuffix(line, "\n") {
		fmt.Fprintln(stdio.Out)
	}
	switch strings.ToLower(strings.TrimSpace(line)) {
	case "y", "yes":
		return true
	}
	return false
}
