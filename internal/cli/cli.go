// Package cli is the tack command line: cobra commands and flags that become
// agent.Options, and the print-mode renderers; the terminal UI (tui) and
// the Agent SDKs' stream-json protocol (sdkproto) are started from here. It
// is written against the public SDK (package agent) only; the commands that
// edit configuration files without running a session live in configcmd.
// Commands talk to the world only through IO, so every one of them runs in
// tests without a terminal.
package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/tackcode/tack/agent"
	"github.com/tackcode/tack/internal/cli/cmdio"
	"github.com/tackcode/tack/internal/cli/configcmd"
	"github.com/tackcode/tack/internal/version"
)

// IO is the I/O seam of a command: commands talk to the world only
// through it.
type IO = cmdio.IO

// Main runs tack with args (without the program name) and returns the exit code.
func Main(ctx context.Context, args []string, stdio IO) int {
	if stdio.Getenv == nil {
		stdio.Getenv = os.Getenv
	}
	if len(args) == 1 && (args[0] == "--version" || args[0] == "-v") {
		// The version alone needs no command tree, whose building is most
		// of what tack does after its package initialisers; the SDKs and
		// status lines ask for it often.
		printVersion(stdio)
		return 0
	}
	// Most runs start a session: what its start parses first is parsed
	// on another core while the command line is.
	go agent.Prepare()
	root := newRootCmd(stdio)
	tolerateUnknownFlags(root, args, stdio.Err)
	root.SetArgs(joinOptionalValues(root, args))
	root.SetIn(stdio.In)
	root.SetOut(stdio.Out)
	root.SetErr(stdio.Err)
	err := root.ExecuteContext(ctx)
	if err == nil {
		return 0
	}
	var ee *cmdio.ExitError
	if errors.As(err, &ee) {
		return ee.Code
	}
	var ue *cmdio.UsageError
	if errors.As(err, &ue) || isFlagError(err) {
		fmt.Fprintf(stdio.Err, "tack: %v\nRun 'tack --help' for usage.\n", err)
		return 1
	}
	fmt.Fprintf(stdio.Err, "tack: %v\n", err)
	return 1
}

// printVersion prints the version line, in Claude Code's form
// ("2.1.0 (Claude Code)") with tack's name.
func printVersion(stdio IO) { fmt.Fprintf(stdio.Out, "%s (tack)\n", version.Version) }

// isFlagError recognises cobra/pflag's parse errors, which are plain errors.
func isFlagError(err error) bool {
	msg := err.Error()
	for _, p := range []string{"unknown flag", "unknown shorthand flag", "flag needs an argument", "invalid argument", "bad flag syntax", "unknown command", "accepts "} {
		if strings.Contains(msg, p) {
			return true
		}
	}
	return false
}

func newRootCmd(stdio IO) *cobra.Command {
	f := &printFlags{}
	var showVersion bool
	cmd := &cobra.Command{
		Use:   "tack [prompt]",
		Short: "tack is an agentic coding tool for your terminal",
		Long: `tack reads your code, edits files and runs commands, driven by a model.

In print mode (-p) it runs one prompt non-interactively and prints the
result: plain text, one JSON result object, or a JSON stream of every message.
The prompt is the argument, standard input, or both (input first).`,
		Example: `  tack -p "explain what main.go does"
  git diff | tack -p "review this change"
  tack -p --output-format stream-json --verbose "fix the failing test"`,
		Args:          cobra.MaximumNArgs(1),
		SilenceUsage:  true,
		SilenceErrors: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			if showVersion {
				printVersion(stdio)
				return nil
			}
			ui := !f.print && f.inputFormat != "stream-json" && !f.initOnly
			logger, closeLog, err := f.debugLog(cmd, stdio, ui)
			if err != nil {
				return err
			}
			defer closeLog()
			f.logger = logger
			if f.initOnly {
				return runInitOnly(cmd, stdio, f, args)
			}
			if f.resume == pickSession && (f.print || f.inputFormat == "stream-json") {
				// Print mode has nobody to pick: it lists what -r can take.
				return newSessionsCmd(stdio).RunE(cmd, nil)
			}
			// The Agent SDK runs tack with stream-json input and no -p.
			if !f.print && f.inputFormat != "stream-json" {
				return runTUI(cmd, stdio, f, args)
			}
			return runPrint(cmd, stdio, f, args)
		},
	}
	// --version is a plain flag: cobra's version template would link
	// text/template, whose reflection keeps every method of every type in
	// the binary (tens of megabytes more to page in at start-up).
	cmd.Flags().BoolVarP(&showVersion, "version", "v", false, "print the version and exit")
	f.register(cmd)
	cmd.AddCommand(newSessionsCmd(stdio), newTrustCmd(stdio), newHooksCmd(stdio), newDoctorCmd(stdio), newAuthCmd(stdio), newProjectCmd(stdio), newPurgeCmd(stdio, "purge"), newACPCmd(stdio))
	cmd.AddCommand(configcmd.Commands(stdio, serveMCP)...)
	return cmd
}
