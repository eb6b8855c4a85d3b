package agent

import (
	"github.com/tackcode/tack/internal/hook"
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

// callbackHooks turns hook callbacks into the runner's configuration.
func callbackHooks(callbacks map[HookEvent][]HookMatcher) hook.Config {
	cfg := hook.Config{}
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
