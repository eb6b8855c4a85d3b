// Package hook runs the hooks a user configured in Claude Code's settings
// format ("hooks" in settings.json, plugins, skills, agents) and the hook
// callbacks registered through the SDKs, exactly as Claude Code does, so that
// a team's existing hook scripts govern tack unchanged.
//
// The pieces:
//
//   - Input types, one per event (PreToolUseInput, StopInput, …), whose JSON is
//     the payload a hook reads on stdin (shared/compat/hooks.md, the samples
//     captured from Claude Code 2.1.328 and its Agent SDK's type definitions).
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

// The 29 events of Claude Code 2.1.328. Events lists them in the order of a
// session's life; the doc comment of each payload type says when it fires.
//
// Claude Code's SDK names four more that tack knows of and does not fire:
// PreModelSwitch and PostModelSwitch (about prompt-cache costs of switching
// models mid-session, which tack's /model does not price yet), DirectoryAdded
// (tack has no /add-dir registry of extra roots to report) and MessageDisplay
// (streams every displayed text delta through hooks, a UI hook tack's
// surfaces do not offer). Settings may name them, so that a file written
// for Claude Code loads, and the session says that those hooks never run.
//
// TeammateIdle is one of the 29 and never fires either: it is sent when a
// teammate of an agent team (Claude Code's agents that share a task list
// and message each other) is about to go idle, and tack has no agent teams.
// Its payload type is here so that settings and SDK callbacks written for
// Claude Code read unchanged; the session tells the user, naming where they
// are configured, that its hooks never run, as for the four events above:
// a policy that cannot hold is not left looking as if it held.
const (
	Setup               Event = "Setup"
	SessionStart        Event = "SessionStart"
	InstructionsLoaded  Event = "InstructionsLoaded"
	UserPromptSubmit    Event = "UserPromptSubmit"
	UserPromptExpansion Event = "UserPromptExpansion"
	PreToolUse          Event = "PreToolUse"
	PermissionRequest   Event = "PermissionRequest"
	PermissionDenied    Event = "PermissionDenied"
	PostToolUse         Event = "PostToolUse"
	PostToolUseFailure  Event = "PostToolUseFailure"
	PostToolBatch       Event = "PostToolBatch"
	Notification        Event = "Notification"
	Elicitation         Event = "Elicitation"
	ElicitationResult   Event = "ElicitationResult"
	SubagentStart       Event = "SubagentStart"
	SubagentStop        Event = "SubagentStop"
	TaskCreated         Event = "TaskCreated"
	TaskCompleted       Event = "TaskCompleted"
	TeammateIdle        Event = "TeammateIdle"
	Stop                Event = "Stop"
	StopFailure         Event = "StopFailure"
	PreCompact          Event = "PreCompact"
	PostCompact         Event = "PostCompact"
	ConfigChange        Event = "ConfigChange"
	FileChanged         Event = "FileChanged"
	CwdChanged          Event = "CwdChanged"
	WorktreeCreate      Event = "WorktreeCreate"
	WorktreeRemove      Event = "WorktreeRemove"
	SessionEnd          Event = "SessionEnd"
)

// eventSpec is what the package knows of one event: how to read its payload
// and how its hooks' answers are taken. events holds one per event, in the
// order of a session's life; everything per event is looked up there.
type eventSpec struct {
	event  Event
	decode func(payload []byte) (Input, error)
	// tool: the payload is about one tool call (IsToolEvent).
	tool bool
	// blocks: a blocking result changes what happens (CanBlock).
	blocks bool
	// plainContext: plain exit-0 stdout is context for the model.
	plainContext bool
}

var events = []eventSpec{
	{event: Setup, decode: decodeAs[SetupInput], plainContext: true},
	{event: SessionStart, decode: decodeAs[SessionStartInput], plainContext: true},
	{event: InstructionsLoaded, decode: decodeAs[InstructionsLoadedInput]},
	{event: UserPromptSubmit, decode: decodeAs[UserPromptSubmitInput], blocks: true, plainContext: true},
	{event: UserPromptExpansion, decode: decodeAs[UserPromptExpansionInput], blocks: true, plainContext: true},
	{event: PreToolUse, decode: decodeAs[PreToolUseInput], tool: true, blocks: true},
	{event: PermissionRequest, decode: decodeAs[PermissionRequestInput], tool: true, blocks: true},
	{event: PermissionDenied, decode: decodeAs[PermissionDeniedInput], tool: true},
	{event: PostToolUse, decode: decodeAs[PostToolUseInput], tool: true, blocks: true},
	{event: PostToolUseFailure, decode: decodeAs[PostToolUseFailureInput], tool: true, blocks: true},
	{event: PostToolBatch, decode: decodeAs[PostToolBatchInput], blocks: true},
	{event: Notification, decode: decodeAs[NotificationInput]},
	{event: Elicitation, decode: decodeAs[ElicitationInput], blocks: true},
	{event: ElicitationResult, decode: decodeAs[ElicitationResultInput], blocks: true},
	{event: SubagentStart, decode: decodeAs[SubagentStartInput]},
	{event: SubagentStop, decode: decodeAs[SubagentStopInput], blocks: true},
	{event: TaskCreated, decode: decodeAs[TaskCreatedInput], blocks: true},
	{event: TaskCompleted, decode: decodeAs[TaskCompletedInput], blocks: true},
	{event: TeammateIdle, decode: decodeAs[TeammateIdleInput], blocks: true},
	{event: Stop, decode: decodeAs[StopInput], blocks: true},
	{event: StopFailure, decode: decodeAs[StopFailureInput]},
	{event: PreCompact, decode: decodeAs[PreCompactInput], blocks: true},
	{event: PostCompact, decode: decodeAs[PostCompactInput]},
	{event: ConfigChange, decode: decodeAs[ConfigChangeInput], blocks: true},
	{event: FileChanged, decode: decodeAs[FileChangedInput]},
	{event: CwdChanged, decode: decodeAs[CwdChangedInput]},
	{event: WorktreeCreate, decode: decodeAs[WorktreeCreateInput], blocks: true},
	{event: WorktreeRemove, decode: decodeAs[WorktreeRemoveInput]},
	{event: SessionEnd, decode: decodeAs[SessionEndInput]},
}

// spec returns ev's entry of events.
func spec(ev Event) (eventSpec, bool) {
	for _, s := range events {
		if s.event == ev {
			return s, true
		}
	}
	return eventSpec{}, false
}

// Events lists every event, in the order of a session's life.
func Events() []Event {
	out := make([]Event, len(events))
	for i, s := range events {
		out[i] = s.event
	}
	return out
}

// IsToolEvent reports whether ev is about one tool call (PreToolUse,
// PermissionRequest, PermissionDenied, PostToolUse, PostToolUseFailure).
// Only tool events evaluate a handler's "if" condition; on other events a
// handler with an "if" never runs, as in Claude Code.
func IsToolEvent(ev Event) bool {
	s, _ := spec(ev)
	return s.tool
}

// CanBlock reports whether a blocking result (exit code 2, decision "block",
// a prompt or agent hook's ok:false) changes what happens after ev. What the
// block means depends on the event:
//
//	PreToolUse           the call does not run; the reason goes to the model
//	PermissionRequest    the permission is denied; the reason goes to the model
//	PostToolUse(Failure) the call already ran; the reason goes to the model as feedback
//	PostToolBatch        the batch already ran; the reason goes to the model as
//	                     feedback with the batch's results
//	UserPromptSubmit     the prompt is refused and dropped; the reason is shown to the user
//	UserPromptExpansion  the command or skill is not expanded and nothing is sent;
//	                     the reason is shown to the user
//	Stop, SubagentStop   the (sub)agent must go on; the reason goes to the model
//	TeammateIdle         the teammate does not go idle; the reason is its feedback
//	TaskCreated          the task is not created; the reason goes to the model
//	TaskCompleted        the task is not marked completed; the reason goes to the model
//	PreCompact           compaction does not happen
//	ConfigChange         the changed file is not applied: the session keeps its
//	                     old settings (a policy_settings change always applies)
//	Elicitation          the MCP server's request is declined without asking the user
//	ElicitationResult    the user's answer is not sent; the server gets decline
//	WorktreeCreate       the worktree is not created; any failure of a hook
//	                     (not only exit 2) fails the creation
//
// On the other events (Setup, SessionStart, InstructionsLoaded,
// PermissionDenied, Notification, SubagentStart, StopFailure, PostCompact,
// FileChanged, CwdChanged, WorktreeRemove, SessionEnd) what happened has
// happened: exit code 2 only shows stderr to the user, as a non-blocking
// error. (PermissionDenied answers with retry instead.)
func CanBlock(ev Event) bool {
	s, _ := spec(ev)
	return s.blocks
}

// plainTextIsContext reports whether ev takes a hook's plain (non-JSON)
// exit-0 stdout as additional context for the model.
func plainTextIsContext(ev Event) bool {
	s, _ := spec(ev)
	return s.plainContext
}
