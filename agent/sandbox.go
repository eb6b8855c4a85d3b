package agent

import "github.com/tackcode/tack/internal/sandbox"

// SandboxSettings is the settings' "sandbox" object, with Claude Code's
// keys (Options.Sandbox).
type SandboxSettings struct {
	Enabled bool `json:"enabled"`
	// AutoAllowBashIfSandboxed (default true) runs sandboxed commands
	// without asking; deny and ask rules still hold.
	AutoAllowBashIfSandboxed *bool `json:"autoAllowBashIfSandboxed,omitempty"`
	// ExcludedCommands run outside the sandbox, under the permission
	// rules: "docker", "git push". A command line runs outside only when
	// every simple command in it is one of them.
	ExcludedCommands []string `json:"excludedCommands,omitempty"`
	// AllowUnsandboxedCommands (default true) lets a Bash call with
	// dangerouslyDisableSandbox run outside the sandbox, with approval;
	// false ignores that flag and every command runs inside.
	AllowUnsandboxedCommands *bool `json:"allowUnsandboxedCommands,omitempty"`
	// Network is what sandboxed commands may reach.
	Network SandboxNetwork `json:"network"`
}

// SandboxNetwork is the settings' "sandbox.network".
type SandboxNetwork struct {
	// AllowedDomains are the hosts sandboxed commands may reach, through
	// a filtering proxy outside the sandbox: "example.com",
	// "*.example.com". None: no network at all.
	AllowedDomains []string `json:"allowedDomains,omitempty"`
	// DeniedDomains win over AllowedDomains.
	DeniedDomains []string `json:"deniedDomains,omitempty"`
	// AllowUnixSockets are the paths of unix sockets commands may connect
	// to. Linux cannot filter connect(2) by path, so any entry lifts the
	// unix socket filter entirely (the session says so once).
	AllowUnixSockets []string `json:"allowUnixSockets,omitempty"`
	// AllowAllUnixSockets lifts the unix socket filter.
	AllowAllUnixSockets bool `json:"allowAllUnixSockets,omitempty"`
	// AllowLocalBinding lets commands listen on TCP ports. It matters only
	// on the Landlock backend: with bubblewrap, commands have a network
	// namespace of their own where listening is harmless.
	AllowLocalBinding bool `json:"allowLocalBinding,omitempty"`
	// HTTPProxyPort and SOCKSProxyPort name the user's own proxy on the
	// host's 127.0.0.1, used instead of tack's filtering one.
	HTTPProxyPort  int `json:"httpProxyPort,omitempty"`
	SOCKSProxyPort int `json:"socksProxyPort,omitempty"`
}

// sandbox is s as the runtime takes it; nil for none.
func (s *SandboxSettings) sandbox() *sandbox.Settings {
	if s == nil {
		return nil
	}
	return &sandbox.Settings{Enabled: s.Enabled, AutoAllowBashIfSandboxed: s.AutoAllowBashIfSandboxed,
		ExcludedCommands: s.ExcludedCommands, AllowUnsandboxedCommands: s.AllowUnsandboxedCommands,
		Network: sandbox.Network(s.Network)}
}
