package runtime

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/tackcode/tack/internal/config"
	"github.com/tackcode/tack/internal/engine"
	"github.com/tackcode/tack/internal/permission"
	"github.com/tackcode/tack/internal/tool"
	"github.com/tackcode/tack/internal/tool/ask"
)

// gate decides a thread's tool calls: its permission checker first, then,
// for calls that need approval, the caller's Approve callback or the
// approver tool.
type gate struct{ t *thread }

// Check applies the rules and the mode. In auto mode, what the mode would
// ask (not what an ask rule or a PreToolUse hook asks) is decided by the
// classifier (classifier.go), so no one is asked and no PermissionRequest
// hook runs for it.
func (g gate) Check(ctx context.Context, c engine.ToolCall) engine.Verdict {
	s, checker := g.t.s, g.t.checker
	call := permission.Call{Tool: c.Name, Input: c.Input, Cwd: g.t.env.Cwd(), ReadOnly: c.ReadOnly}
	d := checker.Check(call)
	switch d.Behavior {
	case permission.Deny:
		return engine.Verdict{Behavior: engine.Deny, Message: d.Reason}
	case permission.Ask:
		switch {
		case d.Rule != nil:
			// An ask rule: the user wants to be asked, in auto mode too.
			return engine.Verdict{Behavior: engine.Ask, Message: d.Reason}
		case g.sparesApproval(c, call):
			return engine.Verdict{Behavior: engine.Allow}
		}
		return g.approval(ctx, c, d.Reason)
	}
	if c.HookDecision == "ask" {
		return engine.Verdict{Behavior: engine.Ask, Message: "a PreToolUse hook asks for approval"}
	}
	// Leaving the sandbox is approved by the user, or by a rule they
	// wrote, or by bypass mode; not by a read-only judgement.
	if sb := s.sandbox; sb != nil && c.Name == "Bash" && d.Rule == nil && checker.Mode() != permission.ModeBypass {
		if in, ok := bashCall(c.Input); ok && in.DangerouslyDisableSandbox && sb.Settings().AllowUnsandboxed() {
			return g.approval(ctx, c, "the command asks to run outside the sandbox (dangerouslyDisableSandbox)")
		}
	}
	return engine.Verdict{Behavior: engine.Allow}
}

// approval is the verdict on a call the mode leaves to approval: asked,
// or in auto mode decided by the classifier instead. AskUserQuestion is
// always asked: no classifier can answer for the user.
func (g gate) approval(ctx context.Context, c engine.ToolCall, reason string) engine.Verdict {
	if g.t.checker.Mode() == permission.ModeAuto && c.Name != ask.Name {
		return g.classify(ctx, c, reason)
	}
	return engine.Verdict{Behavior: engine.Ask, Message: reason}
}

// sparesApproval reports whether a call that needs approval, and that no
// ask rule named, runs without it: a PreToolUse hook allowed it, the
// sandbox holds the command, or an active skill's allowed-tools cover it.
func (g gate) sparesApproval(c engine.ToolCall, call permission.Call) bool {
	s := g.t.s
	if c.HookDecision == "allow" {
		return true
	}
	// Only someone asked can answer questions.
	if c.Name == ask.Name {
		return false
	}
	// A command that runs outside the sandbox (excluded, or
	// dangerouslyDisableSandbox) stays under the rules.
	if sb := s.sandbox; sb != nil && c.Name == "Bash" && sb.Settings().AutoAllow() {
		if in, ok := bashCall(c.Input); ok && sb.RunsInside(in.Command, in.DangerouslyDisableSandbox) {
			return true
		}
	}
	if s.skills != nil {
		if _, ok := s.skills.Allows(call, int(s.turnSeq.Load())); ok {
			return true
		}
	}
	return false
}

// bashInput is what the gate reads of a Bash call.
type bashInput struct {
	Command                   string `json:"command"`
	DangerouslyDisableSandbox bool   `json:"dangerouslyDisableSandbox"`
}

// bashCall reads a Bash call's input.
func bashCall(input json.RawMessage) (bashInput, bool) {
	var in bashInput
	return in, json.Unmarshal(input, &in) == nil
}

// Ask puts a call that needs approval to the Approve callback or the
// approver tool; with neither, the call is denied and the model told how
// the user can allow it.
func (g gate) Ask(ctx context.Context, c engine.ToolCall, reason string) engine.Verdict {
	s := g.t.s
	if c.Name == ask.Name && (s.cfg.Approve == nil && s.cfg.PermissionPromptTool == "" || g.t.checker.Mode() == permission.ModeDontAsk) {
		// Nobody to ask: the call runs unanswered, and its result tells
		// the model to go on without the user.
		return engine.Verdict{Behavior: engine.Allow}
	}
	if g.t.checker.Mode() == permission.ModeDontAsk {
		return engine.Verdict{Behavior: engine.Deny, Unattended: true, Message: reason + " (dontAsk mode denies what it would ask)"}
	}
	if approve := s.cfg.Approve; approve != nil {
		s.notifyWaiting(ctx, c.Name)
		res, err := approve(ctx, ApprovalRequest{ToolName: c.Name, Input: c.Input, ToolUseID: c.ID, Reason: reason, Cwd: g.t.cwd})
		if err != nil && ctx.Err() != nil {
			// An interrupt while the host decided (an ACP client's cancel):
			// what the model reads is that, not the context's error.
			return engine.Verdict{Behavior: engine.Deny, Message: fmt.Sprintf("The user interrupted the turn while %s waited for permission: the call did not run.", c.Name)}
		}
		if err != nil {
			return engine.Verdict{Behavior: engine.Deny, Message: fmt.Sprintf("Permission check for %s failed: %v", c.Name, err)}
		}
		if res.Allow && len(res.UpdatedPermissions) > 0 {
			if err := s.ApplyPermissionUpdates(res.UpdatedPermissions); err != nil {
				s.notify(err.Error())
			}
		}
		return verdictOf(res, c.Name)
	}
	if name := s.cfg.PermissionPromptTool; name != "" {
		s.notifyWaiting(ctx, c.Name)
		return g.askTool(ctx, name, c)
	}
	return engine.Verdict{Behavior: engine.Deny, Unattended: true, Message: fmt.Sprintf(
		"%s: nobody can approve it here. To allow it, add a permission rule (--allowedTools %q, or permissions.allow in .claude/settings.json) or choose a permission mode such as acceptEdits.",
		strings.TrimSuffix(reason, "."), c.Name)}
}

func verdictOf(res Approval, toolName string) engine.Verdict {
	if res.Allow {
		return engine.Verdict{Behavior: engine.Allow, Input: res.UpdatedInput}
	}
	msg := res.Message
	if msg == "" {
		msg = fmt.Sprintf("Permission to use %s was denied.", toolName)
	}
	return engine.Verdict{Behavior: engine.Deny, Message: msg}
}

// askTool asks the approver tool named by PermissionPromptTool. It gets
// {tool_name, input, tool_use_id} and answers with JSON text
// {"behavior":"allow","updatedInput":{…}} or {"behavior":"deny","message":"…"}.
func (g gate) askTool(ctx context.Context, name string, c engine.ToolCall) engine.Verdict {
	s := g.t.s
	approver, ok := s.main.registry.Get(name)
	if !ok {
		approver, ok = s.approvers.Get(name)
	}
	if !ok {
		return engine.Verdict{Behavior: engine.Deny, Message: fmt.Sprintf("the permission prompt tool %s is not available", name)}
	}
	input, _ := json.Marshal(map[string]any{"tool_name": c.Name, "input": c.Input, "tool_use_id": c.ID})
	res, err := approver.Run(tool.WithToolUseID(ctx, c.ID), g.t.env, input)
	if err != nil {
		return engine.Verdict{Behavior: engine.Deny, Message: fmt.Sprintf("the permission prompt tool %s failed: %v", name, err)}
	}
	text := ""
	for _, b := range res.Content {
		text += b.Text
	}
	var answer struct {
		Behavior     string          `json:"behavior"`
		UpdatedInput json.RawMessage `json:"updatedInput"`
		Message      string          `json:"message"`
	}
	if err := json.Unmarshal([]byte(strings.TrimSpace(text)), &answer); err != nil {
		return engine.Verdict{Behavior: engine.Deny, Message: fmt.Sprintf("the permission prompt tool %s answered %q, not a decision", name, text)}
	}
	return verdictOf(Approval{Allow: answer.Behavior == "allow", UpdatedInput: answer.UpdatedInput, Message: answer.Message}, c.Name)
}

// ApplyPermissionUpdates applies ups in order, to the main thread's
// permissions, for the rest of the session; it stops at the first that
// cannot apply.
func (s *Session) ApplyPermissionUpdates(ups []PermissionUpdate) error {
	for i, u := range ups {
		if err := s.applyPermissionUpdate(u); err != nil {
			return fmt.Errorf("permission update %d (%s): %w", i, u.Type, err)
		}
	}
	return nil
}

func (s *Session) applyPermissionUpdate(u PermissionUpdate) error {
	checker := s.main.checker
	switch u.Type {
	case "addRules":
		return s.addRules(u)
	case "setMode":
		return s.SetPermissionMode(u.Mode)
	case "addDirectories":
		for _, d := range u.Directories {
			if err := checker.AddDir(d); err != nil {
				return err
			}
		}
		return nil
	case "":
		return errors.New("no type")
	}
	return fmt.Errorf("unsupported type %q (tack applies addRules, setMode and addDirectories)", u.Type)
}

// addRules adds the rules of an addRules update for the session, and to
// the settings file of its destination.
func (s *Session) addRules(u PermissionUpdate) error {
	b, ok := map[string]permission.Behavior{"allow": permission.Allow, "ask": permission.Ask, "deny": permission.Deny}[u.Behavior]
	if !ok {
		return fmt.Errorf("behavior %q: want allow, ask or deny", u.Behavior)
	}
	rules := make([]permission.Rule, 0, len(u.Rules))
	for _, text := range u.Rules {
		r, err := permission.ParseRule(text)
		if err != nil {
			return err
		}
		r.Origin = "a permission update of the session"
		rules = append(rules, r)
	}
	if err := s.main.checker.AddRules(b, rules...); err != nil {
		return err
	}
	// A settings destination keeps the rules for later sessions too.
	file, err := s.settingsFileOf(u.Destination)
	if err != nil || file.Path == "" {
		return err
	}
	for _, text := range u.Rules {
		// The session's own write: its watcher does not take it for an
		// edit of the settings (ConfigChange).
		if err := s.watching.writes.Do(file.Path, func() error {
			_, err := config.AddPermissionRule(file.Path, u.Behavior, text)
			return err
		}); err != nil {
			return err
		}
		s.metaMu.Lock()
		s.savedRules = append(s.savedRules, savedRule{behavior: b, item: config.Item{Text: text, Source: file}})
		s.metaMu.Unlock()
	}
	return nil
}

// savedRule is a rule a permission update of the session wrote to a
// settings file.
type savedRule struct {
	behavior permission.Behavior
	item     config.Item
}

// settingsFileOf is the settings file of a permission update's
// destination; a zero Source for the session only.
func (s *Session) settingsFileOf(destination string) (config.Source, error) {
	switch destination {
	case "", "session", "cliArg":
		return config.Source{}, nil
	case "localSettings":
		return config.Source{Scope: config.ScopeLocal, Path: filepath.Join(s.root, ".claude", "settings.local.json")}, nil
	case "projectSettings":
		return config.Source{Scope: config.ScopeProject, Path: filepath.Join(s.root, ".claude", "settings.json")}, nil
	case "userSettings":
		return config.Source{Scope: config.ScopeUser, Path: filepath.Join(config.DefaultConfigDir(s.getenv), "settings.json")}, nil
	}
	return config.Source{}, fmt.Errorf("unknown destination %q (want session, localSettings, projectSettings or userSettings)", destination)
}

// Settings are the settings the session runs under, as it read them when
// it started (or again, when they changed: reloadSettings), with the rules
// its permission updates have saved to settings files since: what a host
// shows the user (/permissions, /hooks, the status line).
func (s *Session) Settings() *config.Merged {
	out := *s.currentSettings()
	out.Permissions.Allow = slices.Clone(out.Permissions.Allow)
	out.Permissions.Ask = slices.Clone(out.Permissions.Ask)
	out.Permissions.Deny = slices.Clone(out.Permissions.Deny)
	s.metaMu.Lock()
	defer s.metaMu.Unlock()
	for _, r := range s.savedRules {
		list := map[permission.Behavior]*[]config.Item{permission.Allow: &out.Permissions.Allow,
			permission.Ask: &out.Permissions.Ask, permission.Deny: &out.Permissions.Deny}[r.behavior]
		if !slices.ContainsFunc(*list, func(it config.Item) bool { return it.Text == r.item.Text }) {
			*list = append(*list, r.item)
		}
	}
	return &out
}
