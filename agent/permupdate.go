package agent

import (
	"fmt"

	"github.com/tackcode/tack/internal/permission"
	"github.com/tackcode/tack/internal/runtime"
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
