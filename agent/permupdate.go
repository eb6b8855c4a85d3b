package agent

import (
	"fmt"

	"github.com/tackcode/tack/internal/permission"
	"github.com/tackcode/tack/internal/runtime"
	"github.com/tackcode/tack/internal/sandbox"
)

// PermissionUpdate changes the session's permissions: a CanUseTool answer
// may carry some (PermissionResult.UpdatedPermissions, the Agent SDK's
// updatedPermissions), and Client.UpdatePermissions applies them. Types:
// "addRules" (Rules with Behavior allow, deny or ask), "setMode" (Mode),
// "addDirectories" (Directories). They hold for the rest of the session;
// rules whose Destination is "localSettings", "projectSettings" or
// "userSettings" are also written to that settings file, in place.
type PermissionUpdate struct {
	Type        string                `json:"type"`
	Rules       []PermissionRuleValue `json:"rules,omitempty"`
	Behavior    string                `json:"behavior,omitempty"`
	Destination string                `json:"destination,omitempty"`
	Mode        PermissionMode        `json:"mode,omitempty"`
	Directories []string              `json:"directories,omitempty"`
}

// PermissionRuleValue is one rule of a PermissionUpdate: Bash with
// "git push:*" is the rule Bash(git push:*); an empty RuleContent is the
// whole tool.
type PermissionRuleValue struct {
	ToolName    string `json:"toolName"`
	RuleContent string `json:"ruleContent,omitempty"`
}

// String renders the rule as settings files write it.
func (r PermissionRuleValue) String() string {
	if r.RuleContent == "" {
		return r.ToolName
	}
	return r.ToolName + "(" + r.RuleContent + ")"
}

// ParsePermissionRule reads a rule as settings files write it
// ("Bash(git push:*)", "Read", "mcp__github"), checking it against the
// rule grammar.
func ParsePermissionRule(text string) (PermissionRuleValue, error) {
	r, err := permission.ParseRule(text)
	if err != nil {
		return PermissionRuleValue{}, fmt.Errorf("rule %q: %w", text, err)
	}
	return PermissionRuleValue{ToolName: r.Tool, RuleContent: r.Specifier}, nil
}

// UpdatePermissions changes the session's permissions for the rest of it.
func (c *Client) UpdatePermissions(ups ...PermissionUpdate) error {
	return c.s.ApplyPermissionUpdates(permissionUpdates(ups))
}

// permissionUpdates are ups as the runtime applies them.
func permissionUpdates(ups []PermissionUpdate) []runtime.PermissionUpdate {
	if ups == nil {
		return nil
	}
	out := make([]runtime.PermissionUpdate, len(ups))
	for i, u := range ups {
		rules := make([]string, len(u.Rules))
		for j, r := range u.Rules {
			rules[j] = r.String()
		}
		out[i] = runtime.PermissionUpdate{Type: u.Type, Rules: rules, Behavior: u.Behavior, Destination: u.Destination,
			Mode: string(u.Mode), Directories: u.Directories}
	}
	return out
}

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
