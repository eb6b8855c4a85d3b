package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/tackcode/tack/internal/config"
	"github.com/tackcode/tack/internal/engine"
	"github.com/tackcode/tack/internal/hook"
	"github.com/tackcode/tack/internal/permission"
	"github.com/tackcode/tack/internal/tool"
)

// HookEvent names a hook event ("PreToolUse", "Stop"…).
type HookEvent = hook.Event

// The hook events, as constants.
const (
	HookPreToolUse         = hook.PreToolUse
	HookPostToolUse        = hook.PostToolUse
	HookPostToolUseFailure = hook.PostToolUseFailure
	HookPermissionRequest  = hook.PermissionRequest
	HookUserPromptSubmit   = hook.UserPromptSubmit
	HookStop               = hook.Stop
	HookSessionStart       = hook.SessionStart
	HookSessionEnd         = hook.SessionEnd
	HookNotification       = hook.Notification
	HookSubagentStart      = hook.SubagentStart
	HookSubagentStop       = hook.SubagentStop
	HookPreCompact         = hook.PreCompact
)

// HookInput is a hook payload: one of the *…Input types of the event.
type HookInput = hook.Input

// HookOutput is what a hook answers: the same JSON a command hook prints.
type HookOutput = hook.Output

// HookSpecificOutput is HookOutput.HookSpecificOutput: an event's own
// answer (a PreToolUse permission decision, added context…).
type HookSpecificOutput = hook.SpecificOutput

// The payloads of the hook events, which a HookCallback's HookInput is one
// of.
type (
	PreToolUseHookInput       = hook.PreToolUseInput
	PostToolUseHookInput      = hook.PostToolUseInput
	UserPromptSubmitHookInput = hook.UserPromptSubmitInput
	StopHookInput             = hook.StopInput
	SubagentStopHookInput     = hook.SubagentStopInput
	SessionStartHookInput     = hook.SessionStartInput
	NotificationHookInput     = hook.NotificationInput
)

// HookCallback is a hook written in Go. It gets the payload (typed, and as
// the JSON a command hook would read) and answers like a command hook; nil
// means "no opinion".
type HookCallback = hook.Callback

// HookMatcher runs Hooks for the events whose subject (the tool name, the
// session start source…) fits Matcher: "" or "*" for all, a name, "A|B", or
// a regular expression.
type HookMatcher struct {
	Matcher string
	Hooks   []HookCallback
	// TimeoutSeconds bounds each callback; 0 means the default (60 s).
	TimeoutSeconds float64
	// OnFailure "block" makes a callback that fails (an error, a timeout)
	// block what the event can block; "" or "continue" lets it go on.
	OnFailure string
}

// loadSettings reads the settings files for cwd, checking every permission
// rule and hook filter with the permission grammar.
func loadSettings(opts Options, cwd string, getenv func(string) string) (*config.Merged, error) {
	sources, err := settingScopes(opts)
	if err != nil {
		return nil, err
	}
	managed := getenv("TACK_MANAGED_SETTINGS")
	if managed == "" {
		managed = config.DefaultManagedPath()
	}
	validate := func(rule string) error {
		_, err := permission.ParseRule(rule)
		return err
	}
	return config.Load(config.LoadOptions{
		ConfigDir:    config.DefaultConfigDir(getenv),
		ProjectDir:   cwd,
		Cwd:          cwd,
		ManagedPath:  managed,
		FlagSettings: opts.Settings,
		Sources:      sources,
		ValidateRule: validate,
		ValidateIf:   validate,
		Untrusted:    opts.Untrusted,
	})
}

// ruleBase is the directory a settings file's "/path" rules are relative
// to: the project holding its .claude folder, or the file's own folder.
func ruleBase(src config.Source, cwd string) string {
	if src.Path == "" || src.Path == config.FlagPath {
		return cwd
	}
	dir := filepath.Dir(src.Path)
	if filepath.Base(dir) == ".claude" {
		return filepath.Dir(dir)
	}
	return dir
}

// ruleSet gathers the permission rules of the settings and the options.
func ruleSet(m *config.Merged, opts Options, cwd string) (permission.RuleSet, error) {
	var rs permission.RuleSet
	add := func(dst *[]permission.Rule, items []config.Item) error {
		for _, it := range items {
			r, err := permission.ParseRule(it.Text)
			if err != nil {
				return fmt.Errorf("%s: %w", it.Source, err)
			}
			r.Origin, r.Base = it.Source.String(), ruleBase(it.Source, cwd)
			*dst = append(*dst, r)
		}
		return nil
	}
	addFlag := func(dst *[]permission.Rule, texts []string, origin string) error {
		for _, t := range texts {
			r, err := permission.ParseRule(t)
			if err != nil {
				return fmt.Errorf("%s %q: %w", origin, t, err)
			}
			r.Origin, r.Base = origin, cwd
			*dst = append(*dst, r)
		}
		return nil
	}
	if err := errors.Join(
		add(&rs.Allow, m.Permissions.Allow), add(&rs.Ask, m.Permissions.Ask), add(&rs.Deny, m.Permissions.Deny),
		addFlag(&rs.Allow, opts.AllowedTools, "--allowedTools"),
		addFlag(&rs.Deny, opts.DisallowedTools, "--disallowedTools"),
	); err != nil {
		return rs, err
	}
	return rs, nil
}

// removedTools are the tools a deny rule without specifier names: they are
// not offered at all.
func removedTools(rs permission.RuleSet) map[string]bool {
	out := map[string]bool{}
	for _, r := range rs.Deny {
		if r.Specifier == "" {
			out[r.Tool] = true
		}
	}
	return out
}

// permissionMode picks the starting mode: the option, else the settings'
// defaultMode, else default; bypass may be disabled by the settings.
func permissionMode(opts Options, m *config.Merged) (PermissionMode, error) {
	mode := opts.PermissionMode
	if mode == "" {
		mode = PermissionMode(m.Permissions.DefaultMode)
	}
	if mode == "" {
		mode = PermissionDefault
	}
	if !mode.Valid() {
		return "", fmt.Errorf("unknown permission mode %q (want default, acceptEdits, plan, bypassPermissions or dontAsk)", mode)
	}
	if mode == PermissionBypass && m.Permissions.DisableBypassPermissionsMode {
		return "", errors.New("bypassPermissions mode is disabled by the settings (permissions.disableBypassPermissionsMode)")
	}
	return mode, nil
}

// hookConfig turns the settings' hooks and the option callbacks into the
// runner's configuration.
func hookConfig(m *config.Merged, callbacks map[HookEvent][]HookMatcher) hook.Config {
	cfg := hook.Config{}
	for event, matchers := range m.Hooks {
		for _, hm := range matchers {
			out := hook.Matcher{Matcher: hm.Matcher}
			for _, h := range hm.Hooks {
				out.Hooks = append(out.Hooks, hook.Handler{
					Type: h.Type, Command: h.Command, Timeout: h.Timeout.Seconds(), StatusMessage: h.StatusMessage,
					Once: h.Once, Async: h.Async, If: h.If, URL: h.URL, Headers: h.Headers, AllowedEnvVars: h.AllowedEnvVars,
					Prompt: h.Prompt, Model: h.Model, Server: h.Server, Tool: h.Tool, Input: h.Input,
					// Identical hooks of one scope run once; the scope, not
					// the file position, keys that.
					Source: string(hm.Source.Scope),
				})
			}
			cfg[hook.Event(event)] = append(cfg[hook.Event(event)], out)
		}
	}
	for event, matchers := range callbacks {
		for _, hm := range matchers {
			out := hook.Matcher{Matcher: hm.Matcher}
			for _, cb := range hm.Hooks {
				out.Hooks = append(out.Hooks, hook.Handler{Type: hook.TypeCallback, Callback: cb, Timeout: hm.TimeoutSeconds, OnFailure: hm.OnFailure, Source: "sdk"})
			}
			cfg[event] = append(cfg[event], out)
		}
	}
	return cfg
}

// settingScopes are the settings sources opts limits reading to; nil
// means all of them.
func settingScopes(opts Options) ([]config.Scope, error) {
	if opts.SettingSources == nil {
		return nil, nil
	}
	sources := []config.Scope{}
	for _, s := range opts.SettingSources {
		parsed, err := config.ParseSources(s)
		if err != nil {
			return nil, err
		}
		sources = append(sources, parsed...)
	}
	return sources, nil
}

// optionalTexts keeps the difference between an unset list (nil: no
// restriction) and an empty one.
func optionalTexts(items []config.Item) []string {
	if items == nil {
		return nil
	}
	return config.Texts(items)
}

// sessionGate decides tool calls: the permission checker first, then, for
// calls that need approval, the CanUseTool callback or the approver tool.
type sessionGate struct {
	s *agentSession
	// checker and env are the session's, or a subagent's own.
	checker *permission.Checker
	env     *tool.Env
}

// Check applies the rules and the mode.
func (g sessionGate) Check(ctx context.Context, c engine.ToolCall) engine.Verdict {
	d := g.checker.Check(permission.Call{Tool: c.Name, Input: c.Input, Cwd: g.env.Cwd(), ReadOnly: c.ReadOnly})
	switch d.Behavior {
	case permission.Deny:
		return engine.Verdict{Behavior: engine.Deny, Message: d.Reason}
	case permission.Ask:
		// A PreToolUse hook's allow spares the prompt, not an ask rule.
		if c.HookDecision == "allow" && d.Rule == nil {
			return engine.Verdict{Behavior: engine.Allow}
		}
		// A sandboxed command runs without asking (not past an ask rule);
		// one that runs outside (excluded, or dangerouslyDisableSandbox)
		// stays under the rules.
		if sb := g.s.sandbox; sb != nil && d.Rule == nil && c.Name == "Bash" && sb.Settings().AutoAllow() {
			if in, ok := bashCall(c.Input); ok && sb.RunsInside(in.Command, in.DangerouslyDisableSandbox) {
				return engine.Verdict{Behavior: engine.Allow}
			}
		}
		// An active skill's allowed-tools spare the approval (not an ask
		// rule's).
		if s := g.s.skills; s != nil && d.Rule == nil {
			if _, ok := s.Allows(permission.Call{Tool: c.Name, Input: c.Input, Cwd: g.env.Cwd(), ReadOnly: c.ReadOnly}, int(g.s.turnSeq.Load())); ok {
				return engine.Verdict{Behavior: engine.Allow}
			}
		}
		return engine.Verdict{Behavior: engine.Ask, Message: d.Reason}
	}
	if c.HookDecision == "ask" {
		return engine.Verdict{Behavior: engine.Ask, Message: "a PreToolUse hook asks for approval"}
	}
	// Leaving the sandbox is approved by the user, or by a rule they
	// wrote, or by bypass mode; not by a read-only judgement.
	if sb := g.s.sandbox; sb != nil && c.Name == "Bash" && d.Rule == nil && g.checker.Mode() != permission.ModeBypass {
		if in, ok := bashCall(c.Input); ok && in.DangerouslyDisableSandbox && sb.Settings().AllowUnsandboxed() {
			return engine.Verdict{Behavior: engine.Ask, Message: "the command asks to run outside the sandbox (dangerouslyDisableSandbox)"}
		}
	}
	return engine.Verdict{Behavior: engine.Allow}
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

// Ask puts a call that needs approval to the CanUseTool callback or the
// approver tool; with neither, the call is denied and the model told how
// the user can allow it.
func (g sessionGate) Ask(ctx context.Context, c engine.ToolCall, reason string) engine.Verdict {
	s := g.s
	if g.checker.Mode() == permission.ModeDontAsk {
		return engine.Verdict{Behavior: engine.Deny, Unattended: true, Message: reason + " (dontAsk mode denies what it would ask)"}
	}
	if cb := s.opts.CanUseTool; cb != nil {
		g.notifyWaiting(ctx, c)
		res, err := cb(ctx, c.Name, c.Input, ToolPermissionContext{ToolUseID: c.ID, Reason: reason})
		if err != nil {
			return engine.Verdict{Behavior: engine.Deny, Message: fmt.Sprintf("Permission check for %s failed: %v", c.Name, err)}
		}
		if res.Allow && len(res.UpdatedPermissions) > 0 {
			if err := s.applyPermissionUpdates(res.UpdatedPermissions); err != nil {
				notify(s.opts, err.Error())
			}
		}
		return verdictOf(res, c.Name)
	}
	if name := s.opts.PermissionPromptTool; name != "" {
		g.notifyWaiting(ctx, c)
		return g.askTool(ctx, name, c)
	}
	return engine.Verdict{Behavior: engine.Deny, Unattended: true, Message: fmt.Sprintf(
		"%s: nobody can approve it here. To allow it, add a permission rule (--allowedTools %q, or permissions.allow in .claude/settings.json) or choose a permission mode such as acceptEdits.",
		strings.TrimSuffix(reason, "."), c.Name)}
}

// notifyWaiting fires the Notification hooks: someone is being asked for
// permission (a desktop notifier can tell the user tack is waiting).
func (g sessionGate) notifyWaiting(ctx context.Context, c engine.ToolCall) {
	s := g.s
	if !s.hooks.Has(hook.Notification) {
		return
	}
	out := s.hooks.Run(ctx, &hook.NotificationInput{Base: s.hookBase(), NotificationType: "permission_prompt",
		Title: "Permission needed", Message: fmt.Sprintf("tack needs your permission to use %s", c.Name)})
	for _, m := range append(out.SystemMessages, out.Errors...) {
		notify(s.opts, m)
	}
}

func verdictOf(res PermissionResult, toolName string) engine.Verdict {
	if res.Allow {
		return engine.Verdict{Behavior: engine.Allow, Input: res.UpdatedInput}
	}
	msg := res.Message
	if msg == "" {
		msg = fmt.Sprintf("Permission to use %s was denied.", toolName)
	}
	return engine.Verdict{Behavior: engine.Deny, Message: msg}
}

// askTool asks the approver tool named by --permission-prompt-tool. It gets
// {tool_name, input, tool_use_id} and answers with JSON text
// {"behavior":"allow","updatedInput":{…}} or {"behavior":"deny","message":"…"}.
func (g sessionGate) askTool(ctx context.Context, name string, c engine.ToolCall) engine.Verdict {
	s := g.s
	approver, ok := s.registry.Get(name)
	if !ok {
		approver, ok = s.approvers.Get(name)
	}
	if !ok {
		return engine.Verdict{Behavior: engine.Deny, Message: fmt.Sprintf("the permission prompt tool %s is not available", name)}
	}
	input, _ := json.Marshal(map[string]any{"tool_name": c.Name, "input": c.Input, "tool_use_id": c.ID})
	res, err := approver.Run(tool.WithToolUseID(ctx, c.ID), g.env, input)
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
	return verdictOf(PermissionResult{Allow: answer.Behavior == "allow", UpdatedInput: answer.UpdatedInput, Message: answer.Message}, c.Name)
}

// modes lets tools (ExitPlanMode) read and change the session's mode.
type modes struct{ c *permission.Checker }

func (m modes) Mode() string { return string(m.c.Mode()) }

func (m modes) SetMode(mode string) error {
	pm, err := permission.ParseMode(mode)
	if err != nil {
		return err
	}
	return m.c.SetMode(pm)
}

// homeDir is $HOME from the session's environment.
func homeDir(getenv func(string) string) string {
	if h := getenv("HOME"); h != "" {
		return h
	}
	h, _ := os.UserHomeDir()
	return h
}

// ExplainSettings writes the settings a session with opts would run under:
// the files read, each value with the file it came from, and warnings. A
// malformed settings file is an error naming its file, line and column.
func ExplainSettings(w io.Writer, opts Options) error {
	cwd, err := workingDir(opts.Cwd)
	if err != nil {
		return err
	}
	m, err := loadSettings(opts, cwd, optionsEnv(opts))
	if err != nil {
		return err
	}
	return m.Render(w)
}
