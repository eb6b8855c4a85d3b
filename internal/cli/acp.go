package cli

import (
	"log/slog"

	"github.com/spf13/cobra"

	"github.com/tackcode/tack/agent"
	"github.com/tackcode/tack/internal/acp"
	"github.com/tackcode/tack/internal/version"
)

// acpOptions are the options of `tack acp`: what every session it opens
// starts with.
type acpOptions struct {
	Model           string
	PermissionMode  string
	Settings        string
	AllowedTools    []string
	DisallowedTools []string
	MaxTurns        int
	Debug           bool
}

// newACPCmd is `tack acp`, the Agent Client Protocol agent on stdio.
func newACPCmd(stdio IO) *cobra.Command {
	var o acpOptions
	cmd := &cobra.Command{
		Use:   "acp",
		Short: "Run as an Agent Client Protocol agent on stdin/stdout (for Zed, JetBrains, Neovim, Emacs)",
		Long: `Speaks the Agent Client Protocol (JSON-RPC on stdin and stdout) to an editor
that started tack as its agent. Each ACP session is a tack session in the
folder the editor names; tack's sessions can be loaded again (session/load).
Calls that need approval are asked in the editor; "always allow" saves the
rule to .claude/settings.local.json as the terminal UI does. When the editor
offers fs/read_text_file and fs/write_text_file, Read, Write and Edit work on
its buffers. Credentials come from the environment or tack auth login, as in
a terminal. Diagnostics go to stderr with --debug.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return acpRun(cmd, stdio, o)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.Model, "model", "", "model of new sessions (alias or id)")
	f.StringVar(&o.PermissionMode, "permission-mode", "", "permission mode sessions start in (default, acceptEdits, plan, auto, dontAsk, bypassPermissions)")
	f.StringVar(&o.Settings, "settings", "", "settings file or JSON read above the user, project and local settings")
	f.StringSliceVar(&o.AllowedTools, "allowedTools", nil, "tools (rules) that run without asking")
	f.StringSliceVar(&o.DisallowedTools, "disallowedTools", nil, "tools (rules) that are never run")
	f.IntVar(&o.MaxTurns, "max-turns", 0, "model round trips per prompt (0: no limit); a prompt that reaches it stops with max_turn_requests")
	f.BoolVar(&o.Debug, "debug", false, "write the connection's diagnostics to stderr")
	return cmd
}

func acpRun(cmd *cobra.Command, stdio IO, o acpOptions) error {
	base := agent.Options{Model: o.Model, PermissionMode: agent.PermissionMode(o.PermissionMode), Settings: o.Settings,
		AllowedTools: o.AllowedTools, DisallowedTools: o.DisallowedTools, MaxTurns: o.MaxTurns, Env: stdio.AgentEnv(), Entrypoint: "acp"}
	var logger *slog.Logger
	if o.Debug {
		logger = slog.New(slog.NewTextHandler(stdio.Err, nil))
		base.Logger = logger
	}
	return acp.Serve(cmd.Context(), stdio.In, stdio.Out, acp.Options{Base: base, Version: version.Version, Logger: logger})
}
