package cli

import (
	"fmt"
	"io"

	"github.com/spf13/pflag"
)

// sdkFlag is a flag of Claude Code's that its official clients (the Agent
// SDK, and the AI SDK provider and ACP adapters on top of it) pass, and
// that tack accepts without acting on it. Reason says why; it is the
// README's table of these flags, which a test holds to this one.
type sdkFlag struct {
	Name string
	// Value: the flag takes a value (--name=v or --name v).
	Value  bool
	Reason string
	// Pending marks a flag that could mean something to tack and does
	// not yet: a run given one says so on stderr. The others need no
	// warning: there is nothing for tack to do.
	Pending bool
}

// readmeSection is the README heading of the table of sdkFlags, which the
// warnings point at.
const readmeSection = "Claude Code flags tack accepts and does not act on"

// sdkFlags is the table: every flag an official client passes that tack
// has no implementation of. The others are registered in flags.go, each
// with what it does.
func sdkFlags() []sdkFlag {
	return []sdkFlag{
		{Name: "await-initialize", Reason: "tack always reads an initialize request that comes first and applies it before the session starts; there is nothing to wait for on request."},
		{Name: "initialize-fields", Value: true, Reason: "tack applies the settings and disallowedTools an initialize request carries whether or not this flag announces them; there is nothing to opt into."},
		{Name: "channels", Value: true, Reason: "tack has no channels: MCP servers cannot push messages into a session, so there are no channel servers to register."},
		{Name: "assistant", Reason: "Claude Code's assistant mode (passed by Agent SDK 0.2.x); tack has no such mode."},
		{Name: "proactive", Reason: "Claude Code's proactive mode (passed by Agent SDK 0.2.x), in which the model acts between prompts on its own; tack has no such mode."},
		{Name: "managed-settings", Value: true, Pending: true, Reason: "not yet: the restrictive policy settings an SDK host passes (managedSettings: deny and ask rules, allowManaged*Only locks, sandbox limits) are not applied; tack enforces the managed-settings.json file only."},
		{Name: "managed-settings-in-initialize", Pending: true, Reason: "not yet: managed settings sent in initialize are not applied (the initialize response says managed_settings_applied: false)."},
		{Name: "resume-drops-turn", Value: true, Pending: true, Reason: "not yet: --resume-session-at truncates as asked, without checking that what it drops belongs to the named turn."},
		{Name: "session-mirror", Pending: true, Reason: "not yet: tack emits no transcript_mirror frames, so an SDK sessionStore receives nothing; tack keeps its transcript on disk as usual."},
	}
}

// ignoredFlags holds the values of the sdkFlags given.
type ignoredFlags struct {
	values map[string]*string
}

func (g *ignoredFlags) register(fl *pflag.FlagSet) {
	g.values = map[string]*string{}
	for _, f := range sdkFlags() {
		g.values[f.Name] = fl.String(f.Name, "", "Claude Code's; "+f.Reason)
		if !f.Value {
			fl.Lookup(f.Name).NoOptDefVal = "true"
		}
		_ = fl.MarkHidden(f.Name)
	}
}

// warn names each pending flag that was given, with the reason and where
// the table is.
func (g *ignoredFlags) warn(fl *pflag.FlagSet, w io.Writer) {
	pending := map[string]string{}
	for _, f := range sdkFlags() {
		if f.Pending {
			pending[f.Name] = f.Reason
		}
	}
	fl.Visit(func(f *pflag.Flag) {
		reason, ok := pending[f.Name]
		if !ok {
			return
		}
		fmt.Fprintf(w, "tack: --%s=%s is accepted and not acted on: %s (README: %q)\n", f.Name, *g.values[f.Name], reason, readmeSection)
	})
}
