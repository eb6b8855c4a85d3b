package cli

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/tackcode/tack/agent"
	"github.com/tackcode/tack/internal/cli/cmdio"
)

// trustOptions are what `tack trust` acts on.
type trustOptions struct {
	// Dir is the folder; "" means the working directory.
	Dir string
	// Status reports the folder's trust instead of recording it.
	Status bool
}

// newTrustCmd is `tack trust [DIR]`: record that the user trusts a folder,
// as answering yes in the UI does, for CI and for users of
// requireWorkspaceTrust; --status says whether it is trusted.
func newTrustCmd(stdio IO) *cobra.Command {
	var o trustOptions
	cmd := &cobra.Command{
		Use:   "trust [DIR]",
		Short: "Trust a folder, so that its hooks, MCP servers and other code run",
		Long: `Records that you trust the folder DIR (default: the working directory), as
answering "Yes, trust this folder" in tack's UI does: its hooks, MCP servers,
env, status line, allow rules and plugins then run, in tack and in Claude Code.
Trust is kept in ~/.claude.json ($CLAUDE_CONFIG_DIR/.claude.json when set),
under the root of the git repository that holds DIR, else under DIR.

Print mode trusts every folder unless the managed or user settings set
"requireWorkspaceTrust": true; tack trust is how such a folder is trusted
without the UI.

With --status, nothing is recorded: tack says whether DIR is trusted and what
it brings, and exits with status 0 when it is trusted, 1 when it is not.`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 1 {
				o.Dir = args[0]
			}
			return trustRun(stdio, o)
		},
	}
	cmd.Flags().BoolVar(&o.Status, "status", false, "say whether the folder is trusted (exit 1 when not) and record nothing")
	return cmd
}

func trustRun(stdio IO, o trustOptions) error {
	opts := agent.Options{Cwd: o.Dir, Env: stdio.AgentEnv()}
	if o.Status {
		ws, err := agent.CheckWorkspace(opts)
		if err != nil {
			return err
		}
		switch {
		case !ws.Trusted:
			fmt.Fprintf(stdio.Out, "%s is not trusted.\n", ws.Dir)
		case ws.TrustedBy != ws.Dir:
			fmt.Fprintf(stdio.Out, "%s is trusted, through %s (%s).\n", ws.Dir, ws.TrustedBy, ws.ConfigFile)
		default:
			fmt.Fprintf(stdio.Out, "%s is trusted (%s).\n", ws.Dir, ws.ConfigFile)
		}
		writeBrings(stdio, ws)
		if !ws.Trusted {
			fmt.Fprintf(stdio.Out, "Trust it with: tack trust %s\n", ws.Dir)
			return &cmdio.ExitError{Code: 1}
		}
		return nil
	}
	ws, err := agent.TrustWorkspace(opts)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdio.Out, "Trusted %s (recorded in %s).\n", ws.Dir, ws.ConfigFile)
	writeBrings(stdio, ws)
	return nil
}

// writeBrings lists what the folder brings of its own.
func writeBrings(stdio IO, ws agent.Workspace) {
	if len(ws.Brings) == 0 {
		fmt.Fprintln(stdio.Out, "It brings no code of its own.")
		return
	}
	fmt.Fprintln(stdio.Out, "What it brings, which runs only when it is trusted:")
	for _, b := range ws.Brings {
		fmt.Fprintf(stdio.Out, "  - %s\n", b)
	}
}
