package hook

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/tackcode/tack/internal/llm"
)

// Status is how a handler ended.
type Status string

const (
	// StatusSuccess: exit 0, a 2xx answer, a callback without error, a
	// prompt hook's ok:true. The answer (JSON or plain text) is in the Result.
	StatusSuccess Status = "success"
	// StatusBlocking: exit 2, or a prompt/agent hook's ok:false. Message is
	// the reason (stderr, or "No stderr output").
	StatusBlocking Status = "blocking"
	// StatusError: a non-blocking failure (other exit codes, a hook that
	// could not start, an http error, unusable output). Reported, and the
	// run goes on (unless the handler's OnFailure is "block").
	StatusError Status = "error"
	// StatusCancelled: the handler's timeout passed or ctx ended; its
	// process group was killed.
	StatusCancelled Status = "cancelled"
)

// wire is the outcome field of Claude Code's hook_response message, which
// reports an exit-2 block as "error".
func (s Status) wire() string {
	if s == StatusBlocking {
		return string(StatusError)
	}
	return string(s)
}

// Result is what one handler did.
type Result struct {
	HookID   string
	HookName string // "PreToolUse:Bash"
	Event    Event
	Handler  Handler
	Status   Status
	// Stdout and Stderr of a command hook (an http hook's body, a prompt
	// hook's model answer, a callback's output JSON are its Stdout); Output
	// is both streams interleaved as they came.
	Stdout, Stderr, Output string
	// ExitCode is a command hook's exit status (128+N after signal N); nil
	// for other types and for a command that did not start.
	ExitCode *int
	// JSON is the structured answer, when the hook gave one.
	JSON *Output
	// Text is a successful plain-text (non-JSON) answer.
	Text string
	// Message is the blocking reason, or what went wrong.
	Message  string
	TimedOut bool
	Async    bool
	Duration time.Duration
}

// answer is what an executor found; result turns it into a Result.
type answer struct {
	status                 Status
	stdout, stderr, output string
	exitCode               *int
	text                   string  // answer to parse on success (stdout, body, tool text)
	out                    *Output // an answer already structured (callbacks)
	message                string
	timedOut               bool
}

func (a answer) result() Result {
	res := Result{
		Status: a.status, Stdout: a.stdout, Stderr: a.stderr, Output: a.output,
		ExitCode: a.exitCode, JSON: a.out, Message: a.message, TimedOut: a.timedOut,
	}
	if a.status == StatusSuccess && a.out == nil && a.text != "" {
		out, err := parseText(a.text)
		switch {
		case err != nil:
			res.Status, res.Message = StatusError, err.Error()
		case out != nil:
			res.JSON = out
		default:
			res.Text = a.text
		}
	}
	return res
}

// Phase says which end of a handler's run a Record reports.
type Phase string

const (
	PhaseStarted  Phase = "hook_started"
	PhaseResponse Phase = "hook_response"
)

// Record is one hook_started or hook_response event, with the field names
// of Claude Code's stream-json system messages (print-mode.md); a
// hook_started message carries only hook_id, hook_name and hook_event.
type Record struct {
	Phase     Phase  `json:"-"`
	HookID    string `json:"hook_id"`
	HookName  string `json:"hook_name"`
	HookEvent Event  `json:"hook_event"`
	Output    string `json:"output"`
	Stdout    string `json:"stdout"`
	Stderr    string `json:"stderr"`
	ExitCode  *int   `json:"exit_code,omitempty"`
	// Outcome is success, error or cancelled. Like Claude Code, an exit-2
	// block is reported as "error"; Result.Status tells it apart.
	Outcome string `json:"outcome"`
	// StatusMessage is the handler's statusMessage, for a UI spinner.
	StatusMessage string `json:"-"`
	// Result is the whole result, on hook_response.
	Result *Result `json:"-"`
}

// Observer is told when each handler starts and ends. Calls are serialised;
// an Observer must not call back into the Runner.
type Observer func(Record)

// Decision is the hooks' merged permission decision on a tool call
// (PreToolUse, PermissionRequest). Outcome.Permission says what a firing
// site must do with each.
type Decision string

const (
	// DecisionNone: no hook decided.
	DecisionNone Decision = ""
	// DecisionAllow: a hook allowed the call (permissionDecision "allow",
	// decision "approve", a PermissionRequest "allow" behavior).
	DecisionAllow Decision = "allow"
	// DecisionAsk: a hook wants the user asked.
	DecisionAsk Decision = "ask"
	// DecisionDefer: a hook leaves the call to the host, later (Claude
	// Code 2.1.328's "defer"): it does not run now, and the run ends.
	DecisionDefer Decision = "defer"
	// DecisionDeny: a hook refused the call (permissionDecision "deny",
	// decision "block", exit code 2, a PermissionRequest "deny").
	DecisionDeny Decision = "deny"
)

// precedence is Claude Code's order of decisions, weakest first: over any
// number of hooks the strongest one wins, deny > defer > ask > allow, so
// which hook answered first, or was configured first, never matters.
var precedence = []Decision{DecisionNone, DecisionAllow, DecisionAsk, DecisionDefer, DecisionDeny}

// outranks reports whether d wins over e.
func (d Decision) outranks(e Decision) bool {
	return slices.Index(precedence, d) > slices.Index(precedence, e)
}

// Outcome is the merged answer of an event's hooks: what the caller must do.
//
// Merging follows configuration order: all handlers run in parallel but
// their answers are read in the order they were configured.
//
//   - Permission (PreToolUse, PermissionRequest): the strongest decision
//     wins, deny > defer > ask > allow > none, whatever the order the hooks
//     answered in or were configured in: a later allow or defer never
//     overrides an earlier deny. An exit-2 or ok:false counts as deny there,
//     as do the older decision:"block" (and "approve" as allow).
//   - Block: any handler blocked (see CanBlock for what it means per event).
//     On PreToolUse and PermissionRequest, Block is Permission == deny.
//   - Reason: the reasons of the handlers behind the winning decision (or
//     of every block), in configuration order, one per line.
//   - UpdatedInput: the first one in configuration order applies; later ones
//     are ignored (reported in Errors), so one tool input is never a blend.
//   - AdditionalContext and SystemMessages: every value, in order.
//   - Stop: any continue:false stops the session; StopReason is the first
//     one given.
type Outcome struct {
	Event    Event
	HookName string

	// Permission is the merged decision on a tool call. What the firing
	// site must do:
	//
	//	DecisionNone   what it does without hooks: the permission rules and
	//	               mode decide (PermissionRequest: ask the user).
	//	DecisionAllow  PreToolUse: skip the permission prompt; deny and ask
	//	               rules of the settings still apply. PermissionRequest:
	//	               the call is approved. Run it with UpdatedInput, if set.
	//	DecisionAsk    PreToolUse: ask the user even where a rule or the mode
	//	               would allow, showing Reason (with UpdatedInput, if set).
	//	DecisionDefer  PreToolUse: do not run the call and do not ask; end the
	//	               run after this turn with stop_reason "tool_deferred",
	//	               recording no permission denial. Resuming the session
	//	               lets the host or the user decide the deferred call.
	//	DecisionDeny   do not run the call: its tool result is an error
	//	               carrying Reason (the model reads it), the call is a
	//	               permission denial, and the run goes on. PostToolUse
	//	               does not fire. PermissionRequest: Interrupt may also
	//	               stop the turn.
	Permission Decision
	Block      bool
	Reason     string

	// UpdatedInput replaces the tool input (PreToolUse allow/ask,
	// PermissionRequest allow). It is nil when the call is denied or
	// deferred: a call that does not run now has no input to replace.
	UpdatedInput json.RawMessage
	// UpdatedPermissions is a PermissionRequest allow's permission updates.
	UpdatedPermissions json.RawMessage
	// Interrupt: a PermissionRequest deny asked to stop the whole turn.
	Interrupt bool
	// UpdatedToolOutput replaces the tool result the model sees
	// (PostToolUse updatedToolOutput, or updatedMCPToolOutput).
	UpdatedToolOutput json.RawMessage

	// WatchPaths (SessionStart, CwdChanged, FileChanged) are paths every
	// hook asked to watch, in configuration order, each once: the firing
	// site adds them to the FileChanged watcher.
	WatchPaths []string
	// Retry (PermissionDenied): a hook said the model may try the denied
	// call again; the firing site says so in the call's tool result.
	Retry bool
	// ElicitationAction (Elicitation, ElicitationResult) is the hooks'
	// answer in the user's place: accept, decline or cancel, "" when no
	// hook answered. The most refusing answer wins whatever the order
	// (cancel > decline > accept), and a block counts as decline. On
	// Elicitation the firing site sends it to the server without asking
	// the user; on ElicitationResult it replaces the user's answer.
	// ElicitationContent is the first accepting hook's form content, sent
	// with accept.
	ElicitationAction  string
	ElicitationContent json.RawMessage
	// WorktreePath (WorktreeCreate) is the worktree a hook created itself
	// (worktreePath, or a command hook's plain stdout; the first one in
	// configuration order): the firing site uses it instead of running
	// git. Hooks that ran and gave no path block the creation.
	WorktreePath string
	// InitialUserMessage (SessionStart) is the prompt to start with when
	// the session was started without one.
	InitialUserMessage string
	// SessionTitle (SessionStart, UserPromptSubmit) names the session;
	// the first one given, in configuration order, applies.
	SessionTitle string
	// SuppressOriginalPrompt (UserPromptSubmit, UserPromptExpansion): when
	// the prompt is blocked, the message telling the user so leaves the
	// original prompt out (as Claude Code's does).
	SuppressOriginalPrompt bool

	// AdditionalContext goes to the model with the event (hookSpecificOutput
	// additionalContext; plain stdout of Setup, SessionStart,
	// UserPromptSubmit and UserPromptExpansion).
	AdditionalContext []string
	// SystemMessages are shown to the user.
	SystemMessages []string
	// Errors are non-blocking failures, shown to the user
	// ("PreToolUse:Bash hook error: …"); the run goes on.
	Errors []string

	// Stop ends the session after this event (continue:false); StopReason
	// is shown to the user.
	Stop       bool
	StopReason string
	// SuppressOutput: a hook asked that its output stay out of the transcript.
	SuppressOutput bool

	// Results has one entry per handler that ran (async ones included, with
	// Async set and no answer yet), in configuration order.
	Results []Result
}

// Context returns AdditionalContext joined by newlines.
func (o Outcome) Context() string { return strings.Join(o.AdditionalContext, "\n") }

// ContextBlock is hook context as the model reads it: one reminder naming
// where it came from (an event, "Tool" for a tool call's hooks, "Async"
// for hooks that answered later) with the texts, one per line.
func ContextBlock(source string, texts []string) llm.Block {
	return llm.Reminder("", ContextText(source, texts))
}

// ContextText is the text of ContextBlock, for a caller that queues it to
// be wrapped in a reminder later (engine.Session.Announce).
func ContextText(source string, texts []string) string {
	return source + " hook additional context: " + strings.Join(texts, "\n")
}

// blockReason returns a reason, or what Claude Code says when there is none.
func blockReason(s, fallback string) string {
	if s = strings.TrimSpace(s); s != "" {
		return s
	}
	return fallback
}

func errorLine(name, msg string) string { return fmt.Sprintf("%s hook error: %s", name, msg) }
