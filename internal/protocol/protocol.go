// Package protocol defines the typed messages a tack session emits: what
// stream-json prints one per line, what the Go SDK yields and what the
// terminal UI renders. They are defined here once; the JSON form of each is
// the one the Claude Agent SDK reads (see shared/compat/print-mode.md and
// sdk-protocol.md).
package protocol

import (
	"encoding/json"

	"github.com/tackcode/tack/internal/jsonx"
	"github.com/tackcode/tack/internal/llm"
)

// Message is one emitted message: *System, *Assistant, *User, *StreamEvent or
// *Result.
type Message interface {
	// MessageType is the value of the JSON "type" field.
	MessageType() string
}

// System subtypes. Init, APIRetry and PermissionDenied fill fields of
// System; the others carry their payload in Fields.
const (
	SubtypeInit             = "init"
	SubtypeAPIRetry         = "api_retry"
	SubtypePermissionDenied = "permission_denied"
	SubtypeStatus           = "status"
	SubtypeCompactBoundary  = "compact_boundary"
	SubtypeModelFallback    = "model_fallback"
	SubtypeTaskStarted      = "task_started"
	SubtypeTaskNotification = "task_notification"
	SubtypeHookStarted      = "hook_started"  // hook.PhaseStarted
	SubtypeHookResponse     = "hook_response" // hook.PhaseResponse
	// SubtypeHookStatus says a hook with a statusMessage started or ended
	// (a tack message, for UIs; only when the host asks for it).
	SubtypeHookStatus = "hook_status"
)

// Result subtypes.
const (
	ResultSuccess          = "success"
	ResultMaxTurns         = "error_max_turns"
	ResultDuringExecution  = "error_during_execution"
	ResultMaxBudget        = "error_max_budget_usd"
	ResultMaxStructuredOut = "error_max_structured_output_retries"
)

// MCPServerStatus is one entry of init's mcp_servers.
type MCPServerStatus struct {
	Name   string `json:"name"`
	Status string `json:"status"`
	// Error says why a server failed or needs authentication; Scope where
	// its configuration came from.
	Error string `json:"error,omitempty"`
	Scope string `json:"scope,omitempty"`
	// Tools and Transport are for hosts (the UI), not the wire.
	Tools     int    `json:"-"`
	Transport string `json:"-"`
}

// Plugin is one entry of init's plugins.
type Plugin struct {
	Name string `json:"name"`
	Path string `json:"path"`
}

// Init is the system/init message that opens every turn of a session.
type Init struct {
	Cwd               string            `json:"cwd"`
	SessionID         string            `json:"session_id"`
	Tools             []string          `json:"tools"`
	MCPServers        []MCPServerStatus `json:"mcp_servers"`
	Model             string            `json:"model"`
	PermissionMode    string            `json:"permissionMode"`
	SlashCommands     []string          `json:"slash_commands"`
	APIKeySource      string            `json:"apiKeySource"`
	ClaudeCodeVersion string            `json:"claude_code_version"`
	OutputStyle       string            `json:"output_style"`
	Agents            []string          `json:"agents"`
	Skills            []string          `json:"skills"`
	Plugins           []Plugin          `json:"plugins"`
	AdditionalDirs    []string          `json:"additional_directories"`
}

// System is a type:"system" message. Subtype says which of the optional
// parts is set; fields of other subtypes stay empty and are not encoded.
type System struct {
	Subtype   string
	SessionID string
	UUID      string

	Init *Init // init

	// api_retry
	Attempt      int
	MaxRetries   int
	RetryDelayMS int64
	ErrorStatus  int
	Error        string
	// Cause is the failure in words, for people; it is not encoded (the
	// wire's error is the short kind).
	Cause string

	// permission_denied
	ToolName  string
	ToolUseID string
	Reason    string

	// Fields carries the payload of any other subtype (status, task_started…).
	Fields map[string]any
}

func (*System) MessageType() string { return "system" }

// MarshalJSON writes the message flat, as {"type":"system","subtype":…,…}.
func (m *System) MarshalJSON() ([]byte, error) {
	out := map[string]any{}
	switch m.Subtype {
	case SubtypeInit:
		if m.Init != nil {
			raw, err := jsonx.Marshal(m.Init)
			if err != nil {
				return nil, err
			}
			if err := json.Unmarshal(raw, &out); err != nil {
				return nil, err
			}
		}
	case SubtypeAPIRetry:
		out["attempt"] = m.Attempt
		out["max_retries"] = m.MaxRetries
		out["retry_delay_ms"] = m.RetryDelayMS
		if m.ErrorStatus != 0 {
			out["error_status"] = m.ErrorStatus
		} else {
			out["error_status"] = nil
		}
		out["error"] = m.Error
	case SubtypePermissionDenied:
		out["tool_name"] = m.ToolName
		out["tool_use_id"] = m.ToolUseID
		out["message"] = m.Reason
	}
	for k, v := range m.Fields {
		out[k] = v
	}
	out["type"] = "system"
	out["subtype"] = m.Subtype
	out["session_id"] = m.SessionID
	out["uuid"] = m.UUID
	return jsonx.Marshal(out)
}

// APIMessage is an assistant message as the API returned it.
type APIMessage struct {
	ID           string      `json:"id"`
	Type         string      `json:"type"` // "message"
	Role         llm.Role    `json:"role"`
	Model        string      `json:"model"`
	Content      []llm.Block `json:"content"`
	StopReason   *string     `json:"stop_reason"`
	StopSequence *string     `json:"stop_sequence"`
	Usage        llm.Usage   `json:"usage"`
}

// Assistant carries one content block of a model response (the blocks of one
// response share Message.ID), or a synthetic assistant message tack wrote.
type Assistant struct {
	Type            string     `json:"type"` // "assistant"
	Message         APIMessage `json:"message"`
	ParentToolUseID *string    `json:"parent_tool_use_id"`
	SessionID       string     `json:"session_id"`
	UUID            string     `json:"uuid"`
	RequestID       string     `json:"request_id,omitempty"`
	Error           string     `json:"error,omitempty"`
	// SessionCostUSD is what the session had spent once this response
	// came, as its result's TotalCostUSD counts it; not on the wire.
	SessionCostUSD float64 `json:"-"`
}

func (*Assistant) MessageType() string { return "assistant" }

// User is a user message: tool results, or a prompt echoed back.
type User struct {
	Type            string      `json:"type"` // "user"
	Message         llm.Message `json:"message"`
	ParentToolUseID *string     `json:"parent_tool_use_id"`
	SessionID       string      `json:"session_id"`
	UUID            string      `json:"uuid"`
	// ToolUseResult is the structured result of the tool whose tool_result
	// this message carries (Bash {stdout, stderr, interrupted}, Read {file…}…).
	ToolUseResult any  `json:"tool_use_result,omitempty"`
	IsSynthetic   bool `json:"isSynthetic,omitempty"`
	IsReplay      bool `json:"isReplay,omitempty"`
	// PromptID is set on a prompt's own message: the prompt_id its hooks
	// and the status line see, which the transcript records as promptId.
	// It is not part of the stream.
	PromptID string `json:"-"`
}

func (*User) MessageType() string { return "user" }

// StreamEvent is a raw SSE event, sent with --include-partial-messages.
type StreamEvent struct {
	Type            string          `json:"type"` // "stream_event"
	Event           json.RawMessage `json:"event"`
	ParentToolUseID *string         `json:"parent_tool_use_id"`
	SessionID       string          `json:"session_id"`
	UUID            string          `json:"uuid"`
}

func (*StreamEvent) MessageType() string { return "stream_event" }

// ModelUsage is the per-model accounting in a result.
type ModelUsage struct {
	InputTokens              int64   `json:"inputTokens"`
	OutputTokens             int64   `json:"outputTokens"`
	CacheReadInputTokens     int64   `json:"cacheReadInputTokens"`
	CacheCreationInputTokens int64   `json:"cacheCreationInputTokens"`
	WebSearchRequests        int64   `json:"webSearchRequests"`
	CostUSD                  float64 `json:"costUSD"`
	ContextWindow            int     `json:"contextWindow"`
	MaxOutputTokens          int     `json:"maxOutputTokens"`
}

// PermissionDenial is one tool call that was not allowed to run.
type PermissionDenial struct {
	ToolName  string          `json:"tool_name"`
	ToolUseID string          `json:"tool_use_id"`
	ToolInput json.RawMessage `json:"tool_input"`
}

// ResultUsage is the usage summed over a run.
type ResultUsage struct {
	InputTokens              int64             `json:"input_tokens"`
	CacheCreationInputTokens int64             `json:"cache_creation_input_tokens"`
	CacheReadInputTokens     int64             `json:"cache_read_input_tokens"`
	OutputTokens             int64             `json:"output_tokens"`
	ServerToolUse            llm.ServerToolUse `json:"server_tool_use"`
	CacheCreation            llm.CacheCreation `json:"cache_creation"`
}

// Result ends every run of a prompt.
type Result struct {
	Type              string                `json:"type"` // "result"
	Subtype           string                `json:"subtype"`
	IsError           bool                  `json:"is_error"`
	Result            *string               `json:"result,omitempty"`
	Errors            []string              `json:"errors,omitempty"`
	SessionID         string                `json:"session_id"`
	UUID              string                `json:"uuid"`
	NumTurns          int                   `json:"num_turns"`
	DurationMS        int64                 `json:"duration_ms"`
	DurationAPIMS     int64                 `json:"duration_api_ms"`
	TotalCostUSD      float64               `json:"total_cost_usd"`
	Usage             ResultUsage           `json:"usage"`
	ModelUsage        map[string]ModelUsage `json:"modelUsage"`
	PermissionDenials []PermissionDenial    `json:"permission_denials"`
	StopReason        *string               `json:"stop_reason"`
	TerminalReason    string                `json:"terminal_reason,omitempty"`
	StructuredOutput  any                   `json:"structured_output,omitempty"`
	// DeferredToolUse is the call a PreToolUse hook deferred, on a result
	// with stop_reason and terminal_reason "tool_deferred": the call did
	// not run, and resuming the session decides it.
	DeferredToolUse *DeferredToolUse `json:"deferred_tool_use,omitempty"`
}

// DeferredToolUse is a tool call left for the host to decide.
type DeferredToolUse struct {
	ID    string          `json:"id"`
	Name  string          `json:"name"`
	Input json.RawMessage `json:"input"`
}

// StopToolDeferred is the stop_reason and terminal_reason of a run that
// ended because a PreToolUse hook deferred a call.
const StopToolDeferred = "tool_deferred"

func (*Result) MessageType() string { return "result" }

// Text returns the final text, or "" on error.
func (r *Result) Text() string {
	if r.Result == nil {
		return ""
	}
	return *r.Result
}
