package cli

import (
	"fmt"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/tackcode/tack/agent"
	"github.com/tackcode/tack/internal/cli/cmdio"
)

// newSessionsCmd is `tack sessions`: the sessions of this directory, and
// `tack sessions show`, `tack sessions purge`.
func newSessionsCmd(stdio IO) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "sessions",
		Short: "List the sessions of this directory (resume one with tack -r ID|NAME)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			list, err := agent.ListSessions(agent.Options{})
			if err != nil {
				return err
			}
			if len(list) == 0 {
				fmt.Fprintln(stdio.Out, "No sessions in this directory.")
				return nil
			}
			tw := tabwriter.NewWriter(stdio.Out, 0, 0, 2, ' ', 0)
			fmt.Fprintln(tw, "ID\tNAME\tMODIFIED\tCOST\tMESSAGES\tLAST PROMPT")
			for _, s := range list {
				msgs := fmt.Sprint(s.Messages)
				if s.MessagesEstimated {
					msgs = "~" + msgs
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t$%.4f\t%s\t%s\n", s.ID, cmdio.Dash(s.Name), s.Modified.Local().Format("2006-01-02 15:04"),
					s.CostUSD, msgs, cmdio.OneLine(s.LastPrompt, 60))
			}
			if err := tw.Flush(); err != nil {
				return err
			}
			if cwd := list[0].Cwd; cwd != "" {
				fmt.Fprintf(stdio.Out, "\n%d sessions of %s\n", len(list), cwd)
			}
			return nil
		},
	}
	var olderThan time.Duration
	var yes bool
	purge := &cobra.Command{
		Use:   "purge",
		Short: "Delete the stored sessions of this directory",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if !yes {
				return cmdio.Usagef("purge deletes transcripts for good: add --yes (and --older-than to keep recent ones)")
			}
			var cutoff time.Time
			if olderThan > 0 {
				cutoff = time.Now().Add(-olderThan)
			}
			ids, err := agent.PurgeSessions(agent.Options{}, cutoff)
			if err != nil {
				return err
			}
			fmt.Fprintf(stdio.Out, "Deleted %d sessions.\n", len(ids))
			return nil
		},
	}
	purge.Flags().DurationVar(&olderThan, "older-than", 0, "only sessions last changed longer ago than this (e.g. 720h)")
	purge.Flags().BoolVar(&yes, "yes", false, "confirm the deletion")
	cmd.AddCommand(purge, newSessionsShowCmd(stdio))
	return cmd
}

// newSessionsShowCmd is `tack sessions show NAME|ID`: the workflow record
// of a session (seed 001), checked against its schema.
func newSessionsShowCmd(stdio IO) *cobra.Command {
	return &cobra.Command{
		Use:   "show NAME|ID",
		Short: "Print the workflow record of a session (name, cwd, mode, settings, MCP file, resume arguments, last tool)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			data, err := agent.SessionWorkflow(agent.Options{}, args[0])
			if err != nil {
				return err
			}
			_, err = stdio.Out.Write(data)
			return err
		},
	}
}
