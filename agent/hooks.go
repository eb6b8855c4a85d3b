package agent

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/tackcode/tack/internal/hook"
)

// HookEvent names a hook event, as settings files and hook payloads write
// it ("PreToolUse", "Stop"…).
type HookEvent string

// The hook events tack fires. Settings may name other events of Claude
// Code's; they are accepted and never fire.
const (
	// HookSessionStart: the session starts, resumes, or restarts after
	// /clear or a compaction. Payload: SessionStartHookInput.
	HookSessionStart HookEvent = "SessionStart"
	// HookUserPromptSubmit: a prompt is about to run; a hook may refuse it
	// or add context. Payload: UserPromptSubmitHookInput.
	HookUserPromptSubmit HookEvent = "UserPromptSubmit"
	// HookPreToolUse: a tool call is about to run; a hook may allow, deny
	// or change it. Payload: PreToolUseHookInput.
	HookPreToolUse HookEvent = "PreToolUse"
	// HookPermissionRequest: a tool call needs approval; a hook may answer
	// in the user's place. Payload: PermissionRequestHookInput.
	HookPermissionRequest HookEvent = "PermissionRequest"
	// HookPostToolUse: a tool call succeeded. Payload: PostToolUseHookInput.
	HookPostToolUse HookEvent = "PostToolUse"
	// HookPostToolUseFailure: a tool call failed. Payload:
	// PostToolUseFailureHookInput.
	HookPostToolUseFailure HookEvent = "PostToolUseFailure"
	// HookNotification: the session tells its user something (it waits
	// for a permission, it is idle). Payload: NotificationHookInput.
	HookNotification HookEvent = "Notification"
	// HookSubagentStart: a subagent starts. Payload: SubagentStartHookInput.
	HookSubagentStart HookEvent = "SubagentStart"
	// HookSubagentStop: a subagent is about to finish; a hook may make it
	// go on. Payload: SubagentStopHookInput.
	HookSubagentStop HookEvent = "SubagentStop"
	// HookStop: the main agent is about to end its turn; a hook may make
	// it go on. Payload: StopHookInput.
	HookStop HookEvent = "Stop"
	// HookPreCompact: the conversation is about to be compacted; a hook
	// may prevent it. Payload: PreCompactHookInput.
	HookPreCompact HookEvent = "PreCompact"
	// HookPostCompact: the conversation was compacted. Payload:
	// PostCompactHookInput.
	HookPostCompact HookEvent = "PostCompact"
	// HookSessionEnd: the session ends. Payload: SessionEndHookInput.
	HookSessionEnd HookEvent = "SessionEnd"
)

// HookEvents lists the events tack fires, in the order of a session's
// life.
func HookEvents() []HookEvent {
	return []HookEvent{
		HookSessionStart, HookUserPromptSubmit, HookPreToolUse, HookPermissionRequest, HookPostToolUse,
		HookPostToolUseFailure, HookNotification, HookSubagentStart, HookSubagentStop, HookStop,
		HookPreCompact, HookPostCompact, HookSessionEnd,
	}
}

// HookInput is the payload of a hook event: a pointer to one of the
// …HookInput types, the one of its EventName. Its JSON is what a command hook reads
// on its standard input.
type HookInput interface {
	// EventName is the event the payload is for.
	EventName() HookEvent
	// Common returns the fields every payload carries.
	Common() BaseHookInput
}

// BaseHookInput holds the fields every hook payload starts with.
type BaseHookInput struct {
	SessionID      string `json:"session_id"`
	TranscriptPath string `json:"transcript_path"`
	Cwd            string `json:"cwd"`
	// PromptID ties the events that follow a prompt to it; "" before the
	// first prompt.
	PromptID string `json:"prompt_id,omitempty"`
	// PermissionMode is sent with most events (not SessionStart and
	// SessionEnd).
	PermissionMode string `json:"permission_mode,omitempty"`
	// Effort is the reasoning effort of the turn, for models that have one.
	Effort *HookEffort `json:"effort,omitempty"`
	// AgentID is set when the event fires inside a subagent; AgentType
	// then, and on the main thread of a session started with an agent.
	AgentID   string `json:"agent_id,omitempty"`
	AgentType string `json:"agent_type,omitempty"`
	// HookEventName is the event (EventName).
	HookEventName HookEvent `json:"hook_event_name"`
}

// Common returns b.
func (b BaseHookInput) Common() BaseHookInput { return b }

// HookEffort is the reasoning effort of a turn.
type HookEffort struct {
	Level string `json:"level"`
}

// SessionStartHookInput is the payload of HookSessionStart.
type SessionStartHookInput struct {
	BaseHookInput
	// Source is startup, resume, clear, compact or fork; matchers test it.
	Source string `json:"source"`
	Model  string `json:"model,omitempty"`
}

// SessionEndHookInput is the payload of HookSessionEnd.
type SessionEndHookInput struct {
	BaseHookInput
	// Reason is clear, resume, logout, prompt_input_exit or other; matchers
	// test it.
	Reason string `json:"reason"`
}

// UserPromptSubmitHookInput is the payload of HookUserPromptSubmit.
type UserPromptSubmitHookInput struct {
	BaseHookInput
	Prompt string `json:"prompt"`
	// Source says who wrote the prompt (user, sdk, system…), when known.
	Source string `json:"source,omitempty"`
}

// PreToolUseHookInput is the payload of HookPreToolUse.
type PreToolUseHookInput struct {
	BaseHookInput
	ToolName  string          `json:"tool_name"`
	ToolInput json.RawMessage `json:"tool_input"`
	ToolUseID string          `json:"tool_use_id"`
}

// PermissionRequestHookInput is the payload of HookPermissionRequest.
type PermissionRequestHookInput struct {
	BaseHookInput
	ToolName  string          `json:"tool_name"`
	ToolInput json.RawMessage `json:"tool_input"`
	ToolUseID string          `json:"tool_use_id,omitempty"`
	// PermissionSuggestions are the permission updates ("always allow"
	// options) the user would be offered, as a JSON array.
	PermissionSuggestions json.RawMessage `json:"permission_suggestions,omitempty"`
}

// PostToolUseHookInput is the payload of HookPostToolUse.
type PostToolUseHookInput struct {
	BaseHookInput
	ToolName     string          `json:"tool_name"`
	ToolInput    json.RawMessage `json:"tool_input"`
	ToolResponse json.RawMessage `json:"tool_response"`
	ToolUseID    string          `json:"tool_use_id"`
	DurationMS   int64           `json:"duration_ms"`
}

// PostToolUseFailureHookInput is the payload of HookPostToolUseFailure.
type PostToolUseFailureHookInput struct {
	BaseHookInput
	ToolName    string          `json:"tool_name"`
	ToolInput   json.RawMessage `json:"tool_input"`
	ToolUseID   string          `json:"tool_use_id"`
	Error       string          `json:"error"`
	IsInterrupt bool            `json:"is_interrupt"`
	DurationMS  int64           `json:"duration_ms,omitempty"`
}

// NotificationHookInput is the payload of HookNotification.
type NotificationHookInput struct {
	BaseHookInput
	Message string `json:"message"`
	Title   string `json:"title,omitempty"`
	// NotificationType (permission_prompt, idle_prompt…) is what matchers
	// test.
	NotificationType string `json:"notification_type"`
}

// StopHookInput is the payload of HookStop.
type StopHookInput struct {
	BaseHookInput
	// StopHookActive is true when the turn goes on because a Stop hook
	// blocked before: a hook checks it not to loop forever.
	StopHookActive       bool   `json:"stop_hook_active"`
	LastAssistantMessage string `json:"last_assistant_message"`
}

// SubagentStartHookInput is the payload of HookSubagentStart: AgentID and
// AgentType are the subagent's.
type SubagentStartHookInput struct {
	BaseHookInput
	AgentID   string `json:"agent_id"`
	AgentType string `json:"agent_type"`
}

// SubagentStopHookInput is the payload of HookSubagentStop: AgentID and
// AgentType are the subagent's.
type SubagentStopHookInput struct {
	BaseHookInput
	StopHookActive       bool   `json:"stop_hook_active"`
	AgentID              string `json:"agent_id"`
	AgentTranscriptPath  string `json:"agent_transcript_path"`
	AgentType            string `json:"agent_type"`
	LastAssistantMessage string `json:"last_assistant_message"`
}

// PreCompactHookInput is the payload of HookPreCompact.
type PreCompactHookInput struct {
	BaseHookInput
	// Trigger is manual (/compact) or auto; matchers test it.
	Trigger            string `json:"trigger"`
	CustomInstructions string `json:"custom_instructions"`
}

// PostCompactHookInput is the payload of HookPostCompact.
type PostCompactHookInput struct {
	BaseHookInput
	Trigger        string `json:"trigger"`
	CompactSummary string `json:"compact_summary"`
}

func (*SessionStartHookInput) EventName() HookEvent       { return HookSessionStart }
func (*SessionEndHookInput) EventName() HookEvent         { return HookSessionEnd }
func (*UserPromptSubmitHookInput) EventName() HookEvent   { return HookUserPromptSubmit }
func (*PreToolUseHookInput) EventName() HookEvent         { return HookPreToolUse }
func (*PermissionRequestHookInput) EventName() HookEvent  { return HookPermissionRequest }
func (*PostToolUseHookInput) EventName() HookEvent        { return HookPostToolUse }
func (*PostToolUseFailureHookInput) EventName() HookEvent { return HookPostToolUseFailure }
func (*NotificationHookInput) EventName() HookEvent       { return HookNotification }
func (*StopHookInput) EventName() HookEvent               { return HookStop }
func (*SubagentStartHookInput) EventName() HookEvent      { return HookSubagentStart }
func (*SubagentStopHookInput) EventName() HookEvent       { return HookSubagentStop }
func (*PreCompactHookInput) EventName() HookEvent         { return HookPreCompact }
func (*PostCompactHookInput) EventName() HookEvent        { return HookPostCompact }

// hookInputs decode the payload of each event.
var hookInputs = map[HookEvent]func([]byte) (HookInput, error){
	HookSessionStart:       decodeHookInput[SessionStartHookInput],
	HookSessionEnd:         decodeHookInput[SessionEndHookInput],
	HookUserPromptSubmit:   decodeHookInput[UserPromptSubmitHookInput],
	HookPreToolUse:         decodeHookInput[PreToolUseHookInput],
	HookPermissionRequest:  decodeHookInput[PermissionRequestHookInput],
	HookPostToolUse:        decodeHookInput[PostToolUseHookInput],
	HookPostToolUseFailure: decodeHookInput[PostToolUseFailureHookInput],
	HookNotification:       decodeHookInput[NotificationHookInput],
	HookStop:               decodeHookInput[StopHookInput],
	HookSubagentStart:      decodeHookInput[SubagentStartHookInput],
	HookSubagentStop:       decodeHookInput[SubagentStopHookInput],
	HookPreCompact:         decodeHookInput[PreCompactHookInput],
	HookPostCompact:        decodeHookInput[PostCompactHookInput],
}

func decodeHookInput[T any, P interface {
	*T
	HookInput
}](payload []byte) (HookInput, error) {
	in := P(new(T))
	err := json.Unmarshal(payload, in)
	return in, err
}

// ParseHookInput reads a hook payload (what a command hook reads on its
// standard input) as the input type of its hook_event_name.
func ParseHookInput(payload []byte) (HookInput, error) {
	var head struct {
		Event HookEvent `json:"hook_event_name"`
	}
	if err := json.Unmarshal(payload, &head); err != nil {
		return nil, fmt.Errorf("parse hook input: %w", err)
	}
	decode, ok := hookInputs[head.Event]
	if !ok {
		return nil, fmt.Errorf("parse hook input: unknown hook_event_name %q", head.Event)
	}
	in, err := decode(payload)
	if err != nil {
		return nil, fmt.Errorf("parse %s input: %w", head.Event, err)
	}
	return in, nil
}

// HookOutput is what a hook answers: the JSON a command hook prints. Every
// field is optional.
type HookOutput struct {
	// Continue false stops the session after this event, whatever else the
	// hooks decided; StopReason is shown to the user.
	Continue   *bool  `json:"continue,omitempty"`
	StopReason string `json:"stopReason,omitempty"`
	// SuppressOutput hides the hook's output from the transcript view.
	SuppressOutput bool `json:"suppressOutput,omitempty"`
	// SystemMessage is shown to the user.
	SystemMessage string `json:"systemMessage,omitempty"`
	// Decision "block" (with Reason) blocks what the event can block (see
	// HookEvent); on PreToolUse "approve" and "block" also mean allow and
	// deny.
	Decision string `json:"decision,omitempty"`
	Reason   string `json:"reason,omitempty"`
	// HookSpecificOutput is the event's own answer.
	HookSpecificOutput *HookSpecificOutput `json:"hookSpecificOutput,omitempty"`
	// Async answers later ({"async": true}): the hook counts as run,
	// without a decision. AsyncTimeout is in milliseconds.
	Async        bool    `json:"async,omitempty"`
	AsyncTimeout float64 `json:"asyncTimeout,omitempty"`
}

// HookSpecificOutput is HookOutput.HookSpecificOutput. HookEventName must
// be the event the hook ran for; the other fields belong to some events:
//
//	PreToolUse         PermissionDecision, PermissionDecisionReason, UpdatedInput, AdditionalContext
//	PermissionRequest  Decision
//	PostToolUse        AdditionalContext, UpdatedMCPToolOutput, UpdatedToolOutput
//	others             AdditionalContext
type HookSpecificOutput struct {
	HookEventName HookEvent `json:"hookEventName"`

	// PermissionDecision is allow, deny, ask or defer.
	PermissionDecision       string          `json:"permissionDecision,omitempty"`
	PermissionDecisionReason string          `json:"permissionDecisionReason,omitempty"`
	UpdatedInput             json.RawMessage `json:"updatedInput,omitempty"`
	// AdditionalContext is given to the model.
	AdditionalContext string `json:"additionalContext,omitempty"`

	Decision *PermissionRequestDecision `json:"decision,omitempty"`

	UpdatedMCPToolOutput json.RawMessage `json:"updatedMCPToolOutput,omitempty"`
	UpdatedToolOutput    json.RawMessage `json:"updatedToolOutput,omitempty"`
}

// PermissionRequestDecision answers a PermissionRequest in the user's
// place.
type PermissionRequestDecision struct {
	// Behavior is allow or deny.
	Behavior string `json:"behavior"`
	// UpdatedInput and UpdatedPermissions (a JSON array of permission
	// updates) go with allow.
	UpdatedInput       json.RawMessage `json:"updatedInput,omitempty"`
	UpdatedPermissions json.RawMessage `json:"updatedPermissions,omitempty"`
	// Message and Interrupt (stop the whole turn) go with deny.
	Message   string `json:"message,omitempty"`
	Interrupt bool   `json:"interrupt,omitempty"`
}

// hook is o as the hook runner takes it.
func (o *HookOutput) hook() *hook.Output {
	out := &hook.Output{Continue: o.Continue, StopReason: o.StopReason, SuppressOutput: o.SuppressOutput,
		SystemMessage: o.SystemMessage, Decision: o.Decision, Reason: o.Reason, Async: o.Async, AsyncTimeout: o.AsyncTimeout}
	if so := o.HookSpecificOutput; so != nil {
		out.HookSpecificOutput = &hook.SpecificOutput{HookEventName: hook.Event(so.HookEventName),
			PermissionDecision: so.PermissionDecision, PermissionDecisionReason: so.PermissionDecisionReason,
			UpdatedInput: so.UpdatedInput, AdditionalContext: so.AdditionalContext,
			UpdatedMCPToolOutput: so.UpdatedMCPToolOutput, UpdatedToolOutput: so.UpdatedToolOutput}
		if d := so.Decision; d != nil {
			out.HookSpecificOutput.Decision = (*hook.PermissionRequestDecision)(d)
		}
	}
	return out
}

// HookCallback is a hook written in Go. It gets the payload (typed, and as
// the JSON a command hook would read) and answers like a command hook; nil
// means "no opinion". An error is a failure that does not block, unless
// its HookMatcher says OnFailure "block". ctx ends at the timeout.
type HookCallback func(ctx context.Context, in HookInput, payload json.RawMessage) (*HookOutput, error)

// HookMatcher runs Hooks for the events whose subject (the tool name, the
// session start source…) fits Matcher: "" or "*" for all, a name, "A|B", or
// a regular expression (see CheckHookMatcher).
type HookMatcher struct {
	Matcher string
	Hooks   []HookCallback
	// TimeoutSeconds bounds each callback; 0 means the default (60 s).
	TimeoutSeconds float64
	// OnFailure "block" makes a callback that fails (an error, a timeout)
	// block what the event can block; "" or "continue" lets it go on.
	OnFailure string
}

// CheckHookMatcher reports what is wrong with a matcher, as settings files
// write it: an invalid regular expression.
func CheckHookMatcher(matcher string) error {
	_, err := hook.CompilePattern(matcher)
	return err
}

// handler is cb as the hook runner calls it.
func (cb HookCallback) handler() hook.Callback {
	return func(ctx context.Context, _ hook.Input, payload json.RawMessage) (*hook.Output, error) {
		in, err := ParseHookInput(payload)
		if err != nil {
			return nil, err
		}
		out, err := cb(ctx, in, payload)
		if err != nil || out == nil {
			return nil, err
		}
		return out.hook(), nil
	}
}

// callbackHooks turns hook callbacks into the runner's configuration.
func callbackHooks(callbacks map[HookEvent][]HookMatcher) hook.Config {
	cfg := hook.Config{}
	for event, matchers := range callbacks {
		for _, hm := range matchers {
			out := hook.Matcher{Matcher: hm.Matcher}
			for _, cb := range hm.Hooks {
				var fn hook.Callback // nil stays nil: the runner reports it
				if cb != nil {
					fn = cb.handler()
				}
				out.Hooks = append(out.Hooks, hook.Handler{Type: hook.TypeCallback, Callback: fn, Timeout: hm.TimeoutSeconds, OnFailure: hm.OnFailure, Source: "sdk"})
			}
			cfg[hook.Event(event)] = append(cfg[hook.Event(event)], out)
		}
	}
	return cfg
}
