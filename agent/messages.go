package agent

import (
	"encoding/json"

	"github.com/tackcode/tack/internal/llm"
	"github.com/tackcode/tack/internal/protocol"
)

// Message is one message of a session: a *SystemMessage, *AssistantMessage,
// *UserMessage, *StreamEvent or *ResultMessage. Its JSON form is the line
// `tack -p --output-format stream-json` prints for it, which the Claude
// Agent SDKs read.
type Message interface {
	// MessageType is the value of the JSON "type" field.
	MessageType() string
}

// System message subtypes (SystemMessage.Subtype). Others carry their
// payload in Fields: "task_started", "task_notification", "status",
// "hook_started", "hook_response", "compact_boundary",
// SubtypeSessionStateChanged…
const (
	SubtypeInit             = protocol.SubtypeInit
	SubtypeAPIRetry         = protocol.SubtypeAPIRetry
	SubtypePermissionDenied = protocol.SubtypePermissionDenied
	SubtypeStatus           = protocol.SubtypeStatus
)

// Result subtypes (ResultMessage.Subtype).
const (
	ResultSuccess                         = protocol.ResultSuccess
	ResultErrorMaxTurns                   = protocol.ResultMaxTurns
	ResultErrorDuringExecution            = protocol.ResultDuringExecution
	ResultErrorMaxBudgetUSD               = protocol.ResultMaxBudget
	ResultErrorMaxStructuredOutputRetries = protocol.ResultMaxStructuredOut
)

// SystemMessage is a type "system" message. Subtype says which of the
// optional parts is set; the fields of other subtypes stay empty and are
// not encoded.
type SystemMessage struct {
	Subtype   string
	SessionID string
	UUID      string

	// Init describes the session (SubtypeInit): it opens every prompt's
	// messages.
	Init *InitInfo

	// A request being retried (SubtypeAPIRetry): the attempt, out of
	// MaxRetries, after RetryDelayMS; the HTTP status and error that
	// failed it.
	Attempt      int
	MaxRetries   int
	RetryDelayMS int64
	ErrorStatus  int
	Error        string

	// A tool call that was denied (SubtypePermissionDenied).
	ToolName  string
	ToolUseID string
	Reason    string

	// Fields carries the payload of any other subtype.
	Fields map[string]any
}

// InitInfo is the description of a session in its init message: working
// directory, tools, MCP servers and their status, model, permission mode,
// slash commands, agents, skills, plugins.
type InitInfo = protocol.Init

// AssistantMessage carries one content block of a model response (the
// blocks of one response share Message.ID), or a message tack wrote in the
// assistant's place (Error says why).
type AssistantMessage struct {
	Type    string     `json:"type"` // "assistant"
	Message APIMessage `json:"message"`
	// ParentToolUseID is the Agent call of the subagent that said it; nil
	// for the session's own.
	ParentToolUseID *string `json:"parent_tool_use_id"`
	SessionID       string  `json:"session_id"`
	UUID            string  `json:"uuid"`
	RequestID       string  `json:"request_id,omitempty"`
	Error           string  `json:"error,omitempty"`
}

// APIMessage is an assistant message as the Messages API returned it: id,
// model, content blocks, stop reason and usage.
type APIMessage = protocol.APIMessage

// MessageParam is a user message as the Messages API takes it: a role and
// content blocks.
type MessageParam = llm.Message

// UserMessage is a user message: the results of tool calls, or a prompt.
type UserMessage struct {
	Type    string       `json:"type"` // "user"
	Message MessageParam `json:"message"`
	// ParentToolUseID is the Agent call of the subagent it belongs to; nil
	// for the session's own.
	ParentToolUseID *string `json:"parent_tool_use_id"`
	SessionID       string  `json:"session_id"`
	UUID            string  `json:"uuid"`
	// ToolUseResult is the structured result of the tool whose tool_result
	// this message carries (Bash {stdout, stderr, interrupted}, Read
	// {file…}…).
	ToolUseResult any  `json:"tool_use_result,omitempty"`
	IsSynthetic   bool `json:"isSynthetic,omitempty"`
	IsReplay      bool `json:"isReplay,omitempty"`
}

// StreamEvent is a raw server-sent event of a model response, yielded with
// Options.IncludePartialMessages.
type StreamEvent struct {
	Type            string          `json:"type"` // "stream_event"
	Event           json.RawMessage `json:"event"`
	ParentToolUseID *string         `json:"parent_tool_use_id"`
	SessionID       string          `json:"session_id"`
	UUID            string          `json:"uuid"`
}

// ResultMessage ends the messages of every prompt: how it ended (Subtype,
// IsError, the final text in Result), what it cost and used, and the calls
// that were denied.
type ResultMessage struct {
	Type    string `json:"type"` // "result"
	Subtype string `json:"subtype"`
	IsError bool   `json:"is_error"`
	// Result is the final text; nil when the prompt failed (see Errors).
	Result        *string  `json:"result,omitempty"`
	Errors        []string `json:"errors,omitempty"`
	SessionID     string   `json:"session_id"`
	UUID          string   `json:"uuid"`
	NumTurns      int      `json:"num_turns"`
	DurationMS    int64    `json:"duration_ms"`
	DurationAPIMS int64    `json:"duration_api_ms"`
	// TotalCostUSD is what the session has spent so far, its subagents'
	// included.
	TotalCostUSD      float64               `json:"total_cost_usd"`
	Usage             ResultUsage           `json:"usage"`
	ModelUsage        map[string]ModelUsage `json:"modelUsage"`
	PermissionDenials []PermissionDenial    `json:"permission_denials"`
	StopReason        *string               `json:"stop_reason"`
	TerminalReason    string                `json:"terminal_reason,omitempty"`
	// StructuredOutput is the value matching Options.JSONSchema.
	StructuredOutput any `json:"structured_output,omitempty"`
}

// ResultUsage is the token usage summed over a prompt's requests.
type ResultUsage = protocol.ResultUsage

// ModelUsage is a result's accounting of one model: tokens, cost, window.
type ModelUsage = protocol.ModelUsage

// PermissionDenial is one tool call that was not allowed to run.
type PermissionDenial = protocol.PermissionDenial

func (*SystemMessage) MessageType() string    { return "system" }
func (*AssistantMessage) MessageType() string { return "assistant" }
func (*UserMessage) MessageType() string      { return "user" }
func (*StreamEvent) MessageType() string      { return "stream_event" }
func (*ResultMessage) MessageType() string    { return "result" }

// MarshalJSON writes the message flat, as {"type":"system","subtype":…,…}.
func (m *SystemMessage) MarshalJSON() ([]byte, error) { return (*protocol.System)(m).MarshalJSON() }

// Text returns the final text, or "" on error.
func (r *ResultMessage) Text() string { return (*protocol.Result)(r).Text() }

// CostReport renders the spend as a /cost command shows it: total cost,
// durations, and the usage of each model.
func (r *ResultMessage) CostReport() string { return (*protocol.Result)(r).CostReport() }

// publicMessage is a message of the runtime as this package's type (the
// same value: the types share their layout).
func publicMessage(m protocol.Message) Message {
	switch m := m.(type) {
	case *protocol.System:
		return (*SystemMessage)(m)
	case *protocol.Assistant:
		return (*AssistantMessage)(m)
	case *protocol.User:
		return (*UserMessage)(m)
	case *protocol.StreamEvent:
		return (*StreamEvent)(m)
	case *protocol.Result:
		return (*ResultMessage)(m)
	}
	return m
}
