package cli

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/tackcode/tack/agent"
	"github.com/tackcode/tack/internal/cli/cmdio"
)

// runInitOnly is tack --init-only: the session starts, which runs its
// Setup hooks (trigger init) and its SessionStart hooks, and ends at once,
// without a conversation or a request to the model, as Claude Code's does.
// It prints nothing when all went well and exits 0 whatever the hooks did:
// Setup hooks cannot stop anything. What went wrong in them is said on
// stderr; a session that cannot start exits 1.
func runInitOnly(cmd *cobra.Command, stdio IO, f *printFlags, args []string) error {
	if len(args) > 0 {
		return cmdio.Usagef("--init-only runs the Setup hooks and exits: it takes no prompt")
	}
	opts, err := f.options(cmd)
	if err != nil {
		return err
	}
	opts.Notify = func(msg string) { fmt.Fprintf(stdio.Err, "tack: %s\n", msg) }
	// No request is made, so no key is needed; a prompt hook that asks
	// the model fails, and says so.
	opts.WithoutCredentials = true
	c, err := agent.NewClient(cmd.Context(), opts)
	if err != nil {
		return err
	}
	return c.Close()
}
