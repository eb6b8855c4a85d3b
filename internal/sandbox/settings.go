package sandbox

import (
	"encoding/json"
	"fmt"
	"strings"
)

// Settings is the settings' "sandbox" object, with Claude Code's keys.
type Settings struct {
	Enabled bool `json:"enabled"`
	// AutoAllowBashIfSandboxed (default true) runs sandboxed commands
	// without asking; deny and ask rules still hold.
	AutoAllowBashIfSandboxed *bool `json:"autoAllowBashIfSandboxed,omitempty"`
	// ExcludedCommands run outside the sandbox, under the permission
	// rules: "docker", "git push". A command line runs outside only when
	// every simple command in it is one of them (see Sandbox.RunsInside).
	ExcludedCommands []string `json:"excludedCommands,omitempty"`
	// AllowUnsandboxedCommands (default true) lets a Bash call with
	// dangerouslyDisableSandbox run outside the sandbox, with approval;
	// false ignores that flag and every command runs inside.
	AllowUnsandboxedCommands *bool `json:"allowUnsandboxedCommands,omitempty"`
	// Network is what sandboxed commands may reach.
	Network Network `json:"network"`
}

// Network is the settings' "sandbox.network".
type Network struct {
	// AllowedDomains are the hosts sandboxed commands may reach, through
	// a filtering proxy outside the sandbox: "example.com",
	// "*.example.com". None: no network at all.
	AllowedDomains []string `json:"allowedDomains,omitempty"`
	// DeniedDomains win over AllowedDomains.
	DeniedDomains []string `json:"deniedDomains,omitempty"`
	// AllowUnixSockets are the paths of unix sockets commands may
	// connect to. Linux cannot filter connect(2) by path without a
	// supervisor, so any entry lifts the unix socket filter entirely
	// (the session says so once).
	AllowUnixSockets []string `json:"allowUnixSockets,omitempty"`
	// AllowAllUnixSockets lifts the unix socket filter.
	AllowAllUnixSockets bool `json:"allowAllUnixSockets,omitempty"`
	// AllowLocalBinding lets commands listen on TCP ports. It matters
	// only on the Landlock backend: with bubblewrap, commands have a
	// network namespace of their own where listening is harmless.
	AllowLocalBinding bool `json:"allowLocalBinding,omitempty"`
	// HTTPProxyPort and SOCKSProxyPort name the user's own proxy on the
	// host's 127.0.0.1, used instead of tack's filtering one.
	HTTPProxyPort  int `json:"httpProxyPort,omitempty"`
	SOCKSProxyPort int `json:"socksProxyPort,omitempty"`
}

// Parse reads a "sandbox" value; an absent one is a disabled sandbox.
func Parse(raw json.RawMessage) (Settings, error) {
	var s Settings
	if len(raw) == 0 || string(raw) == "null" {
		return s, nil
	}
	if err := json.Unmarshal(raw, &s); err != nil {
		return s, fmt.Errorf("sandbox settings: %w", err)
	}
	for _, p := range []struct {
		name string
		port int
	}{{"httpProxyPort", s.Network.HTTPProxyPort}, {"socksProxyPort", s.Network.SOCKSProxyPort}} {
		if p.port < 0 || p.port > 65535 {
			return s, fmt.Errorf("sandbox settings: network.%s %d is not a port", p.name, p.port)
		}
	}
	return s, nil
}

// AutoAllow reports whether sandboxed commands run without asking.
func (s Settings) AutoAllow() bool {
	return s.AutoAllowBashIfSandboxed == nil || *s.AutoAllowBashIfSandboxed
}

// AllowUnsandboxed reports whether dangerouslyDisableSandbox is honoured.
func (s Settings) AllowUnsandboxed() bool {
	return s.AllowUnsandboxedCommands == nil || *s.AllowUnsandboxedCommands
}

// networked reports whether commands get a network, through the proxy.
func (n Network) networked() bool {
	return len(n.AllowedDomains) > 0 || n.HTTPProxyPort != 0 || n.SOCKSProxyPort != 0
}

// unixAllowed reports whether commands may create unix sockets.
func (n Network) unixAllowed() bool {
	return n.AllowAllUnixSockets || len(n.AllowUnixSockets) > 0
}

// excludedPatterns turns excludedCommands into Bash rule specifiers: an
// entry written as a rule ("npm run *", "git:*") is kept, a bare one
// ("docker") stands for the command alone and with any arguments.
func excludedPatterns(entries []string) []string {
	var out []string
	for _, e := range entries {
		e = strings.TrimSpace(e)
		switch {
		case e == "":
		case strings.Contains(e, "*"):
			out = append(out, e)
		default:
			out = append(out, e, e+" *")
		}
	}
	return out
}
