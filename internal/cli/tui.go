package cli

import (
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/tackcode/tack/agent"
	"github.com/tackcode/tack/internal/cli/cmdio"
	"github.com/tackcode/tack/internal/tui"
)

// runTUI opens the interactive terminal UI, with the prompt argument as its
// first prompt when there is one. The session flags (-c, -r, --model,
// --permission-mode…) apply as in print mode.
func runTUI(cmd *cobra.Command, stdio IO, f *printFlags, args []string) error {
	if !stdio.StdinIsTerminal {
		return cmdio.Usagef("the interactive UI needs a terminal on standard input: use -p \"prompt\" for print mode")
	}
	opts, err := f.options(cmd)
	if err != nil {
		return err
	}
	prompt := ""
	if len(args) > 0 {
		prompt = args[0]
	}
	cfg := tui.Config{Options: opts, Prompt: prompt, In: stdio.In, Out: stdio.Out, Getenv: stdio.Getenv,
		PickSession: f.resume == pickSession}
	if opts.Resume != "" && !sessionExists(opts) {
		// As in Claude Code, a word that names no session is a search
		// term for the picker.
		cfg.Options.Resume, cfg.PickSession, cfg.PickSearch = "", true, opts.Resume
	}
	err = tui.Run(cmd.Context(), cfg)
	if errors.Is(err, agent.ErrNoCredentials) {
		fmt.Fprintf(stdio.Err, "tack: %v\n", agent.ErrNoCredentials)
		return &cmdio.ExitError{Code: 1}
	}
	return err
}

// sessionExists reports whether opts.Resume names a stored session of the
// directory, by id or name.
func sessionExists(opts agent.Options) bool {
	list, err := agent.ListSessions(opts)
	if err != nil {
		return true // the session's start says what is wrong
	}
	for _, s := range list {
		if s.ID == opts.Resume || s.Name == opts.Resume {
			return true
		}
	}
	return false
}
