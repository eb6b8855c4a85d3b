// Package hook runs the hooks a user configured in Claude Code's settings
// format ("hooks" in settings.json, plugins, skills, agents) and the hook
// callbacks registered through the SDKs, exactly as Claude Code does, so that
// a team's existing hook scripts govern tack unchanged.
//
// The pieces:
//
//   - Input types, one per event (PreToolUseInput, StopInput, …), whose JSON is
//     the payload a hook reads on stdin (shared/compat/hooks.md and the samples
//     captured from Claude Code 2.1.328).
//   - Output, the JSON a hook answers with (exit-0 stdout, an http hook's 2xx
//     body, a callback's return value).
//   - Runner, which picks the handlers whose matcher and "if" condition fit an
//     event, runs them in parallel (command, http, prompt, callback; agent and
//     mcp_tool through pluggable seams), and merges their answers into one
//     Outcome in configuration order.
//   - JSON Schemas (draft 2020-12) of every input and of the output, published
//     in the schema sub-package.
package hook

// Event is the name of a hook event, as it appears in settings ("PreToolUse")
// and in the payload's hook_event_name.
type Event string

// The events tack fires. Claude Code knows more (Setup, FileChanged, …); a
// configuration may name them and is accepted, but no payload type exists for
// them yet, so they never fire.
const (
	SessionStart       Event = "SessionStart"
	SessionEnd         Event = "SessionEnd"
	UserPromptSubmit   Event = "UserPromptSubmit"
	PreToolUse         Event = "PreToolUse"
	PermissionRequest  Event = "PermissionRequest"
	PostToolUse        Event = "PostToolUse"
	PostToolUseFailure Event = "PostToolUseFailure"
	Notification       Event = "Notification"
	Stop               Event = "Stop"
	SubagentStart      Event = "SubagentStart"
	SubagentStop       Event = "SubagentStop"
	PreCompact         Event = "PreCompact"
	PostCompact        Event = "PostCompact"
)

// Events lists the events tack fires, in the order of a session's life.
func Events() []Event {
	return []Event{
		SessionStart, UserPromptSubmit, PreToolUse, PermissionRequest, PostToolUse,
		PostToolUseFailure, Notification, SubagentStart, SubagentStop, Stop,
		PreCompact, PostCompact, SessionEnd,
	}
}

// IsToolEvent reports whether ev is about one tool call. Only tool events
// evaluate a handler's "if" condition; on other events a handler with an "if"
// never runs, as in Claude Code.
func IsToolEvent(ev Event) bool {
	switch ev {
	case PreToolUse, PermissionRequest, PostToolUse, PostToolUseFailure:
		return true
	}
	return false
}

// CanBlock reports whether a blocking result (exit code 2, decision "block",
// a prompt hook's ok:false) changes what happens after ev. What the block
// means depends on the event:
//
//	PreToolUse          the call does not run; the reason goes to the model
//	PermissionRequest   the permission is denied; the reason goes to the model
//	PostToolUse(Failure) the reason goes to the model as feedback
//	UserPromptSubmit    the prompt is refused; the reason is shown to the user
//	Stop, SubagentStop  the model must go on; the reason goes to the model
//	PreCompact          compaction does not happen
//
// On the other events (SessionStart, SessionEnd, Notification, SubagentStart,
// PostCompact) exit code 2 only shows stderr to the user, as a non-blocking
// error.
func CanBlock(ev Event) bool {
	switch ev {
	case PreToolUse, PermissionRequest, PostToolUse, PostToolUseFailure,
		UserPromptSubmit, Stop, SubagentStop, PreCompact:
		return true
	}
	return false
}

// plainTextIsContext reports whether ev takes a hook's plain (non-JSON)
// exit-0 stdout as additional context for the model.
func plainTextIsContext(ev Event) bool {
	return ev == UserPromptSubmit || ev == SessionStart
}
