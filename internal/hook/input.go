package hook

import (
	"encoding/json"
	"fmt"

	"github.com/tackcode/tack/internal/jsonx"
)

// Input is the payload of one event: what a command hook reads on stdin, what
// an http hook receives as its POST body, what a callback is given. The
// concrete types are the *Input structs of this file (values or pointers);
// their MarshalJSON is byte-compatible with Claude Code's payloads, key order
// included, and validates against the event's schema in the schema package.
// Call MarshalJSON (or jsonx.Marshal) for the exact bytes: encoding/json's
// Marshal escapes <, > and & again.
type Input interface {
	json.Marshaler
	// EventName is the event this payload is for.
	EventName() Event
	// Common returns the fields every event carries.
	Common() Base
	// MatchValue is what matchers are tested against (the tool name, the
	// SessionStart source, …); ok is false for events that ignore matchers.
	MatchValue() (value string, ok bool)
}

// Base holds the fields every payload starts with.
type Base struct {
	SessionID      string `json:"session_id"`
	TranscriptPath string `json:"transcript_path"`
	Cwd            string `json:"cwd"`
	// PromptID correlates a user prompt with the events that follow it, until
	// the next prompt; absent before the first prompt.
	PromptID string `json:"prompt_id,omitempty"`
	// PermissionMode is sent with most events (not SessionStart/SessionEnd).
	PermissionMode string `json:"permission_mode,omitempty"`
	// Effort is the reasoning effort of the current turn, when the model has one.
	Effort *Effort `json:"effort,omitempty"`
	// AgentID is set only when the hook fires inside a subagent.
	AgentID string `json:"agent_id,omitempty"`
	// AgentType is set inside a subagent (with AgentID) and on the main thread
	// of a session started with --agent (without AgentID).
	AgentType string `json:"agent_type,omitempty"`
	// HookEventName is always written by MarshalJSON from the payload type;
	// the value set here is ignored.
	HookEventName Event `json:"hook_event_name"`
}

// Common returns b; it makes every payload type that embeds Base satisfy
// that part of Input.
func (b Base) Common() Base { return b }

// Effort is the reasoning effort applied to a turn.
type Effort struct {
	Level string `json:"level"`
}

// SessionStartInput is sent when a session starts or restarts.
type SessionStartInput struct {
	Base
	// Source is startup, resume, clear, compact or fork; matchers test it.
	Source string `json:"source"`
	Model  string `json:"model,omitempty"`
}

// SessionEndInput is sent when a session ends.
type SessionEndInput struct {
	Base
	// Reason is clear, resume, logout, prompt_input_exit or other; matchers
	// test it (Claude Code 2.1.328 does).
	Reason string `json:"reason"`
}

// UserPromptSubmitInput is sent before a user prompt is processed.
type UserPromptSubmitInput struct {
	Base
	Prompt string `json:"prompt"`
	// Source says who authored the prompt (user, sdk, system, …); optional.
	Source string `json:"source,omitempty"`
}

// PreToolUseInput is sent before a tool call runs.
type PreToolUseInput struct {
	Base
	ToolName  string          `json:"tool_name"`
	ToolInput json.RawMessage `json:"tool_input"` // nil is sent as {}
	ToolUseID string          `json:"tool_use_id"`
}

// PermissionRequestInput is sent when a tool call needs the user's approval.
type PermissionRequestInput struct {
	Base
	ToolName  string          `json:"tool_name"`
	ToolInput json.RawMessage `json:"tool_input"` // nil is sent as {}
	ToolUseID string          `json:"tool_use_id,omitempty"`
	// PermissionSuggestions is the array of permission updates ("always
	// allow" options) the prompt would offer, verbatim.
	PermissionSuggestions json.RawMessage `json:"permission_suggestions,omitempty"`
}

// PostToolUseInput is sent after a tool call succeeded.
type PostToolUseInput struct {
	Base
	ToolName     string          `json:"tool_name"`
	ToolInput    json.RawMessage `json:"tool_input"`    // nil is sent as {}
	ToolResponse json.RawMessage `json:"tool_response"` // nil is sent as null
	ToolUseID    string          `json:"tool_use_id"`
	DurationMS   int64           `json:"duration_ms"`
}

// PostToolUseFailureInput is sent after a tool call failed.
type PostToolUseFailureInput struct {
	Base
	ToolName    string          `json:"tool_name"`
	ToolInput   json.RawMessage `json:"tool_input"` // nil is sent as {}
	ToolUseID   string          `json:"tool_use_id"`
	Error       string          `json:"error"`
	IsInterrupt bool            `json:"is_interrupt"`
	DurationMS  int64           `json:"duration_ms,omitempty"`
}

// NotificationInput is sent when tack shows the user a notification.
type NotificationInput struct {
	Base
	Message string `json:"message"`
	Title   string `json:"title,omitempty"`
	// NotificationType (permission_prompt, idle_prompt, …) is what matchers test.
	NotificationType string `json:"notification_type"`
}

// StopInput is sent when the main agent is about to end its turn.
type StopInput struct {
	Base
	// StopHookActive is true when the turn goes on because a Stop hook
	// blocked before; hooks check it to avoid looping forever.
	StopHookActive       bool   `json:"stop_hook_active"`
	LastAssistantMessage string `json:"last_assistant_message"`
}

// SubagentStartInput is sent when a subagent starts. Its AgentID and
// AgentType are the subagent's and take the place of Base's.
type SubagentStartInput struct {
	Base
	AgentID   string `json:"agent_id"`
	AgentType string `json:"agent_type"`
}

// SubagentStopInput is sent when a subagent is about to finish. Its AgentID
// and AgentType are the subagent's and take the place of Base's.
type SubagentStopInput struct {
	Base
	StopHookActive       bool   `json:"stop_hook_active"`
	AgentID              string `json:"agent_id"`
	AgentTranscriptPath  string `json:"agent_transcript_path"`
	AgentType            string `json:"agent_type"`
	LastAssistantMessage string `json:"last_assistant_message"`
}

// PreCompactInput is sent before the conversation is compacted.
type PreCompactInput struct {
	Base
	// Trigger is manual (/compact) or auto; matchers test it.
	Trigger            string `json:"trigger"`
	CustomInstructions string `json:"custom_instructions"`
}

// PostCompactInput is sent after the conversation was compacted.
type PostCompactInput struct {
	Base
	Trigger        string `json:"trigger"`
	CompactSummary string `json:"compact_summary"`
}

// EventName implementations.

func (SessionStartInput) EventName() Event       { return SessionStart }
func (SessionEndInput) EventName() Event         { return SessionEnd }
func (UserPromptSubmitInput) EventName() Event   { return UserPromptSubmit }
func (PreToolUseInput) EventName() Event         { return PreToolUse }
func (PermissionRequestInput) EventName() Event  { return PermissionRequest }
func (PostToolUseInput) EventName() Event        { return PostToolUse }
func (PostToolUseFailureInput) EventName() Event { return PostToolUseFailure }
func (NotificationInput) EventName() Event       { return Notification }
func (StopInput) EventName() Event               { return Stop }
func (SubagentStartInput) EventName() Event      { return SubagentStart }
func (SubagentStopInput) EventName() Event       { return SubagentStop }
func (PreCompactInput) EventName() Event         { return PreCompact }
func (PostCompactInput) EventName() Event        { return PostCompact }

// MatchValue implementations: tool events match the tool name, lifecycle
// events their own field, the rest nothing (every matcher fits).

func (in SessionStartInput) MatchValue() (string, bool)       { return in.Source, true }
func (in SessionEndInput) MatchValue() (string, bool)         { return in.Reason, true }
func (UserPromptSubmitInput) MatchValue() (string, bool)      { return "", false }
func (in PreToolUseInput) MatchValue() (string, bool)         { return in.ToolName, true }
func (in PermissionRequestInput) MatchValue() (string, bool)  { return in.ToolName, true }
func (in PostToolUseInput) MatchValue() (string, bool)        { return in.ToolName, true }
func (in PostToolUseFailureInput) MatchValue() (string, bool) { return in.ToolName, true }
func (in NotificationInput) MatchValue() (string, bool)       { return in.NotificationType, true }
func (StopInput) MatchValue() (string, bool)                  { return "", false }
func (in SubagentStartInput) MatchValue() (string, bool)      { return in.AgentType, true }
func (in SubagentStopInput) MatchValue() (string, bool)       { return in.AgentType, true }
func (in PreCompactInput) MatchValue() (string, bool)         { return in.Trigger, true }
func (in PostCompactInput) MatchValue() (string, bool)        { return in.Trigger, true }

// MarshalJSON implementations. Each sets hook_event_name from the type and
// fills required JSON values a zero field would leave invalid, so any value
// of these types encodes to a payload that validates against its schema.
// The local "wire" types drop the methods, so encoding does not recurse.

func (in SessionStartInput) MarshalJSON() ([]byte, error) {
	type wire SessionStartInput
	in.HookEventName = SessionStart
	return jsonx.Marshal(wire(in))
}

func (in SessionEndInput) MarshalJSON() ([]byte, error) {
	type wire SessionEndInput
	in.HookEventName = SessionEnd
	return jsonx.Marshal(wire(in))
}

func (in UserPromptSubmitInput) MarshalJSON() ([]byte, error) {
	type wire UserPromptSubmitInput
	in.HookEventName = UserPromptSubmit
	return jsonx.Marshal(wire(in))
}

func (in PreToolUseInput) MarshalJSON() ([]byte, error) {
	type wire PreToolUseInput
	in.HookEventName = PreToolUse
	in.ToolInput = orEmptyObject(in.ToolInput)
	return jsonx.Marshal(wire(in))
}

func (in PermissionRequestInput) MarshalJSON() ([]byte, error) {
	type wire PermissionRequestInput
	in.HookEventName = PermissionRequest
	in.ToolInput = orEmptyObject(in.ToolInput)
	return jsonx.Marshal(wire(in))
}

func (in PostToolUseInput) MarshalJSON() ([]byte, error) {
	type wire PostToolUseInput
	in.HookEventName = PostToolUse
	in.ToolInput = orEmptyObject(in.ToolInput)
	if len(in.ToolResponse) == 0 {
		in.ToolResponse = json.RawMessage("null")
	}
	return jsonx.Marshal(wire(in))
}

func (in PostToolUseFailureInput) MarshalJSON() ([]byte, error) {
	type wire PostToolUseFailureInput
	in.HookEventName = PostToolUseFailure
	in.ToolInput = orEmptyObject(in.ToolInput)
	return jsonx.Marshal(wire(in))
}

func (in NotificationInput) MarshalJSON() ([]byte, error) {
	type wire NotificationInput
	in.HookEventName = Notification
	return jsonx.Marshal(wire(in))
}

func (in StopInput) MarshalJSON() ([]byte, error) {
	type wire StopInput
	in.HookEventName = Stop
	return jsonx.Marshal(wire(in))
}

func (in SubagentStartInput) MarshalJSON() ([]byte, error) {
	type wire SubagentStartInput
	in.HookEventName = SubagentStart
	return jsonx.Marshal(wire(in))
}

func (in SubagentStopInput) MarshalJSON() ([]byte, error) {
	type wire SubagentStopInput
	in.HookEventName = SubagentStop
	return jsonx.Marshal(wire(in))
}

func (in PreCompactInput) MarshalJSON() ([]byte, error) {
	type wire PreCompactInput
	in.HookEventName = PreCompact
	return jsonx.Marshal(wire(in))
}

func (in PostCompactInput) MarshalJSON() ([]byte, error) {
	type wire PostCompactInput
	in.HookEventName = PostCompact
	return jsonx.Marshal(wire(in))
}

func orEmptyObject(v json.RawMessage) json.RawMessage {
	if len(v) == 0 {
		return json.RawMessage("{}")
	}
	return v
}

// ParseInput decodes a payload by its hook_event_name, for callers that get
// payloads as JSON (SDK hook callbacks, tests). Unknown keys are ignored.
func ParseInput(payload []byte) (Input, error) {
	var head struct {
		Event Event `json:"hook_event_name"`
	}
	if err := json.Unmarshal(payload, &head); err != nil {
		return nil, fmt.Errorf("parse hook input: %w", err)
	}
	var in Input
	var err error
	switch head.Event {
	case SessionStart:
		in, err = decodeAs[SessionStartInput](payload)
	case SessionEnd:
		in, err = decodeAs[SessionEndInput](payload)
	case UserPromptSubmit:
		in, err = decodeAs[UserPromptSubmitInput](payload)
	case PreToolUse:
		in, err = decodeAs[PreToolUseInput](payload)
	case PermissionRequest:
		in, err = decodeAs[PermissionRequestInput](payload)
	case PostToolUse:
		in, err = decodeAs[PostToolUseInput](payload)
	case PostToolUseFailure:
		in, err = decodeAs[PostToolUseFailureInput](payload)
	case Notification:
		in, err = decodeAs[NotificationInput](payload)
	case Stop:
		in, err = decodeAs[StopInput](payload)
	case SubagentStart:
		in, err = decodeAs[SubagentStartInput](payload)
	case SubagentStop:
		in, err = decodeAs[SubagentStopInput](payload)
	case PreCompact:
		in, err = decodeAs[PreCompactInput](payload)
	case PostCompact:
		in, err = decodeAs[PostCompactInput](payload)
	default:
		return nil, fmt.Errorf("parse hook input: unknown hook_event_name %q", head.Event)
	}
	if err != nil {
		return nil, fmt.Errorf("parse %s input: %w", head.Event, err)
	}
	return in, nil
}

func decodeAs[T Input](payload []byte) (Input, error) {
	var v T
	err := json.Unmarshal(payload, &v)
	return v, err
}

// toolCall returns the tool name and input of a tool event's payload.
func toolCall(in Input) (name string, input json.RawMessage, ok bool) {
	switch v := in.(type) {
	case PreToolUseInput:
		return v.ToolName, v.ToolInput, true
	case *PreToolUseInput:
		return v.ToolName, v.ToolInput, true
	case PermissionRequestInput:
		return v.ToolName, v.ToolInput, true
	case *PermissionRequestInput:
		return v.ToolName, v.ToolInput, true
	case PostToolUseInput:
		return v.ToolName, v.ToolInput, true
	case *PostToolUseInput:
		return v.ToolName, v.ToolInput, true
	case PostToolUseFailureInput:
		return v.ToolName, v.ToolInput, true
	case *PostToolUseFailureInput:
		return v.ToolName, v.ToolInput, true
	}
	return "", nil, false
}
