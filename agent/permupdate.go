package agent

import (
	"errors"
	"fmt"
	"path/filepath"

	"github.com/tackcode/tack/internal/config"
	"github.com/tackcode/tack/internal/permission"
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

// applyPermissionUpdates applies ups in order; it stops at the first that
// cannot apply.
func (s *agentSession) applyPermissionUpdates(ups []PermissionUpdate) error {
	for i, u := range ups {
		if err := s.applyPermissionUpdate(u); err != nil {
			return fmt.Errorf("permission update %d (%s): %w", i, u.Type, err)
		}
	}
	return nil
}

func (s *agentSession) applyPermissionUpdate(u PermissionUpdate) error {
	switch u.Type {
	case "addRules":
		var b permission.Behavior
		switch u.Behavior {
		case "allow":
			b = permission.Allow
		case "ask":
			b = permission.Ask
		case "deny":
			b = permission.Deny
		default:
			return fmt.Errorf("behavior %q: want allow, ask or deny", u.Behavior)
		}
		rules := make([]permission.Rule, 0, len(u.Rules))
		for _, rv := range u.Rules {
			r, err := permission.ParseRule(rv.String())
			if err != nil {
				return err
			}
			r.Origin = "a permission update of the session"
			rules = append(rules, r)
		}
		if err := s.checker.AddRules(b, rules...); err != nil {
			return err
		}
		// A settings destination keeps the rules for later sessions too.
		path, err := s.settingsFileOf(u.Destination)
		if err != nil || path == "" {
			return err
		}
		for _, rv := range u.Rules {
			if _, err := config.AddPermissionRule(path, u.Behavior, rv.String()); err != nil {
				return err
			}
		}
		return nil
	case "setMode":
		return s.setPermissionMode(u.Mode)
	case "addDirectories":
		for _, d := range u.Directories {
			if err := s.checker.AddDir(d); err != nil {
				return err
			}
		}
		return nil
	case "":
		return errors.New("no type")
	}
	return fmt.Errorf("unsupported type %q (tack applies addRules, setMode and addDirectories)", u.Type)
}

// UpdatePermissions changes the session's permissions for the rest of it.
func (c *Client) UpdatePermissions(ups ...PermissionUpdate) error {
	return c.s.applyPermissionUpdates(ups)
}

// SandboxSettings is the settings' "sandbox" (Claude Code's keys).
type SandboxSettings = sandbox.Settings

// newSandbox makes the session's sandbox from the options or the settings;
// nil when it is off. Its notice (a weaker backend, unix sockets allowed)
// and the destinations its proxy refuses go to the session's notices.
func newSandbox(opts Options, settings *config.Merged, checker *permission.Checker, getenv func(string) string) (*sandbox.Sandbox, error) {
	s := opts.Sandbox
	if s == nil {
		parsed, err := sandbox.Parse(settings.Sandbox)
		if err != nil {
			return nil, err
		}
		s = &parsed
	}
	return sandbox.New(*s, sandbox.Options{Writable: checker.Dirs, Getenv: getenv,
		Notify: func(msg string) { notify(opts, msg) }})
}

// settingsFileOf is the settings file of a permission update's
// destination; "" for the session only.
func (s *agentSession) settingsFileOf(destination string) (string, error) {
	switch destination {
	case "", "session", "cliArg":
		return "", nil
	case "localSettings":
		return filepath.Join(s.cwd, ".claude", "settings.local.json"), nil
	case "projectSettings":
		return filepath.Join(s.cwd, ".claude", "settings.json"), nil
	case "userSettings":
		return filepath.Join(config.DefaultConfigDir(s.getenv), "settings.json"), nil
	}
	return "", fmt.Errorf("unknown destination %q (want session, localSettings, projectSettings or userSettings)", destination)
}
