package cli

import "github.com/spf13/pflag"

// sdkFlag is a flag of Claude Code's that its official clients (the Agent
// SDK, and the AI SDK provider and ACP adapters on top of it) pass, and
// that means nothing for tack: tack accepts it, so that the session starts,
// and has nothing to do with it. Reason says why; it is the README's table
// of these flags, which a test holds to this one. A flag that could mean
// something to tack does not belong here: it is implemented in flags.go.
type sdkFlag struct {
	Name string
	// Value: the flag takes a value (--name=v or --name v).
	Value  bool
	Reason string
}

// readmeSection is the README heading of the table of sdkFlags.
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
