package cli

import (
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/tackcode/tack/internal/cli/cmdio"
	"github.com/tackcode/tack/internal/sdkproto"
)

// runStream runs print mode with --input-format stream-json: the Agent SDK
// protocol on standard input and output, one session for every user
// message that comes.
func runStream(cmd *cobra.Command, stdio IO, f *printFlags, args []string) error {
	if f.outputFormat != "stream-json" {
		return cmdio.Usagef("--input-format stream-json needs --output-format stream-json")
	}
	// The Agent SDK passes each extra argument with its value, and Zed's ACP
	// adapter gives --replay-user-messages the value "": an empty argument
	// is that, not a prompt.
	if slices.ContainsFunc(args, func(a string) bool { return a != "" }) {
		return cmdio.Usagef("with --input-format stream-json the prompts come on standard input, as user messages, not as an argument")
	}
	opts, err := f.options(cmd)
	if err != nil {
		return err
	}
	opts.Notify = func(msg string) { fmt.Fprintf(stdio.Err, "tack: %s\n", msg) }
	entry := stdio.Getenv("CLAUDE_CODE_ENTRYPOINT")
	if entry == "" {
		entry = "sdk-cli"
	}
	opts.Entrypoint = entry
	// Claude Code's two switches for session_state_changed: the Agent SDK
	// reads them and keeps them to itself (sdk_host_only); an adapter that
	// asks for them to be emitted sees them as ordinary messages.
	emitStates := truthy(stdio.Getenv("CLAUDE_CODE_EMIT_SESSION_STATE_EVENTS"))
	states := emitStates || truthy(stdio.Getenv("CLAUDE_CODE_SDK_READS_SESSION_STATE"))
	code := sdkproto.Serve(cmd.Context(), sdkproto.Config{
		In:             stdio.In,
		Out:            stdio.Out,
		Err:            stdio.Err,
		Options:        opts,
		SessionStates:  states,
		HostOnlyStates: !emitStates,

		ManagedSettingsInInitialize: f.managedInInitialize,
		SessionMirror:               f.sessionMirror,
	})
	if code != 0 {
		return &cmdio.ExitError{Code: code}
	}
	return nil
}

func truthy(v string) bool {
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "1", "true", "yes", "on":
		return true
	}
	return false
}

// tolerateUnknownFlags lets print mode with stream-json input start despite
// flags tack does not know: the Agent SDK, newer versions of it, and its
// extraArgs pass flags tack may not have, and a session that cannot start
// is worse than an option left out. Each one is named in a warning. In
// every other mode an unknown flag stays an error, so that a typo on the
// command line is caught.
func tolerateUnknownFlags(root *cobra.Command, args []string, w io.Writer) {
	if !streamJSONInput(args) {
		return
	}
	root.FParseErrWhitelist.UnknownFlags = true
	fl := root.Flags()
	for _, a := range args {
		if a == "--" {
			return
		}
		switch {
		case strings.HasPrefix(a, "--") && len(a) > 2:
			name, _, _ := strings.Cut(a[2:], "=")
			if fl.Lookup(name) == nil && name != "help" {
				fmt.Fprintf(w, "tack: ignoring unknown flag %s\n", a)
			}
		case strings.HasPrefix(a, "-") && len(a) > 1 && a[1] != '-':
			if fl.ShorthandLookup(a[1:2]) == nil && a[1:2] != "h" {
				fmt.Fprintf(w, "tack: ignoring unknown flag %s\n", a)
			}
		}
	}
}

// streamJSONInput reports whether args ask for stream-json input.
func streamJSONInput(args []string) bool {
	for i, a := range args {
		if a == "--" {
			return false
		}
		if a == "--input-format=stream-json" || (a == "--input-format" && i+1 < len(args) && args[i+1] == "stream-json") {
			return true
		}
	}
	return false
}
