package agent

import (
	"encoding/json"

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

// System message subtypes (SystemMessage.Subtype). The first three fill
// parts of SystemMessage; the others carry their payload in Fields.
const (
	SubtypeInit             = "init"
	SubtypeAPIRetry         = "api_retry"
	SubtypePermissionDenied = "permission_denied"
	// SubtypeStatus reports what the session is doing ("compacting").
	SubtypeStatus = "status"
	// SubtypeCompactBoundary marks where the conversation was compacted.
	SubtypeCompactBoundary = "compact_boundary"
	// SubtypeModelFallback says the fallback model took over.
	SubtypeModelFallback = "model_fallback"
	// SubtypeTaskStarted and SubtypeTaskNotification report a background
	// subagent starting and ending.
	SubtypeTaskStarted      = "task_started"
	SubtypeTaskNotification = "task_notification"
	// SubtypeHookStarted and SubtypeHookResponse report a hook run, with
	// Options.IncludeHookEvents.
	SubtypeHookStarted  = "hook_started"
	SubtypeHookResponse = "hook_response"
	// SubtypeHookStatus reports that a hook with a statusMessage started
	// or ended, with Options.HookStatusMessages. Its Fields: hook_id,
	// hook_name, hook_event, status_message, and running (true when it
	// starts, false when it ends).
	SubtypeHookStatus = "hook_status"
	// SubtypeSessionStateChanged reports the state of a Client (StateRunning…),
	// with Options.SessionStateMessages.
	SubtypeSessionStateChanged = "session_state_changed"
)

// Result subtypes (ResultMessage.Subtype).
const (
	ResultSuccess                         = "success"
	ResultErrorMaxTurns                   = "error_max_turns"
	ResultErrorDuringExecution            = "error_during_execution"
	ResultErrorMaxBudgetUSD               = "error_max_budget_usd"
	ResultErrorMaxStructuredOutputRetries = "error_max_structured_output_retries"
)

// StopToolDeferred is the StopReason and TerminalReason of a result whose
// run ended because a PreToolUse hook deferred a call (its DeferredToolUse).
const StopToolDeferred = "tool_deferred"

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
	// MaxRetries, after RetryDelayMS; the HTTP status and error kind that
	// failed it, and Cause, the failure in words for people (not encoded).
	Attempt      int
	MaxRetries   int
	RetryDelayMS int64
	ErrorStatus  int
	Error        string
	Cause        string

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
type InitInfo struct {
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
	Plugins           []PluginInfo      `json:"plugins"`
	AdditionalDirs    []string          `json:"additional_directories"`
}

// PluginInfo is a plugin a session loaded: its name and root folder.
type PluginInfo struct {
	Name string `json:"name"`
	Path string `json:"path"`
}

// LanguageServerStatus is the state of one language server of a session:
// State is "not started" (no file of its languages touched yet),
// "running", "crashed" (to be restarted at the next use) or "failed: …";
// Restarts counts its restarts after a crash; Source is where it is
// configured.
type LanguageServerStatus struct {
	Name, Command, Source, State string
	Restarts                     int
	Extensions                   []string
}

// MCPServerStatus is the state of one MCP server of a session.
type MCPServerStatus struct {
	Name string `json:"name"`
	// Status is "connected", "pending", "failed", "needs-auth" or
	// "disabled".
	Status string `json:"status"`
	// Error says why a server failed or needs authentication; Scope where
	// its configuration came from.
	Error string `json:"error,omitempty"`
	Scope string `json:"scope,omitempty"`
	// Tools (how many it offers) and Transport ("stdio", "http"…) are for
	// hosts to show; the init message leaves them out.
	Tools     int    `json:"-"`
	Transport string `json:"-"`
}

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
	// SessionCostUSD is what the session (or the subagent, for a
	// subagent's message) had spent once this response came, as the
	// result's TotalCostUSD counts it: a host that may lose the session
	// before its result knows what it cost. Not part of the JSON.
	SessionCostUSD float64 `json:"-"`
}

// APIMessage is an assistant message as the Messages API returned it: id,
// model, content blocks, stop reason and usage.
type APIMessage struct {
	ID           string         `json:"id"`
	Type         string         `json:"type"` // "message"
	Role         string         `json:"role"`
	Model        string         `json:"model"`
	Content      []ContentBlock `json:"content"`
	StopReason   *string        `json:"stop_reason"`
	StopSequence *string        `json:"stop_sequence"`
	Usage        Usage          `json:"usage"`
}

// Usage is the token accounting of one model response.
type Usage struct {
	InputTokens              int64          `json:"input_tokens"`
	CacheCreationInputTokens int64          `json:"cache_creation_input_tokens"`
	CacheReadInputTokens     int64          `json:"cache_read_input_tokens"`
	OutputTokens             int64          `json:"output_tokens"`
	CacheCreation            *CacheCreation `json:"cache_creation,omitempty"`
	ServerToolUse            *ServerToolUse `json:"server_tool_use,omitempty"`
}

// CacheCreation splits the tokens written to the prompt cache by how long
// they stay there.
type CacheCreation struct {
	Ephemeral5m int64 `json:"ephemeral_5m_input_tokens"`
	Ephemeral1h int64 `json:"ephemeral_1h_input_tokens"`
}

// ServerToolUse counts the server-side tool calls billed per use.
type ServerToolUse struct {
	WebSearchRequests int64 `json:"web_search_requests"`
	WebFetchRequests  int64 `json:"web_fetch_requests"`
}

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
	TotalCostUSD float64 `json:"total_cost_usd"`
	// Usage counts the main agent's requests only, as Claude Code's does;
	// ModelUsage counts every request, its subagents' and tools' included.
	Usage             ResultUsage           `json:"usage"`
	ModelUsage        map[string]ModelUsage `json:"modelUsage"`
	PermissionDenials []PermissionDenial    `json:"permission_denials"`
	StopReason        *string               `json:"stop_reason"`
	TerminalReason    string                `json:"terminal_reason,omitempty"`
	// StructuredOutput is the value matching Options.JSONSchema.
	StructuredOutput any `json:"structured_output,omitempty"`
	// DeferredToolUse is the call a PreToolUse hook deferred (permission
	// decision "defer"), when the run ended for it: StopReason and
	// TerminalReason are then StopToolDeferred. The call did not run and no
	// denial is recorded; resuming the session (Options.Resume or
	// Options.Continue) offers it again to the hooks and the permission
	// check, which run or deny it before the conversation goes on.
	DeferredToolUse *DeferredToolUse `json:"deferred_tool_use,omitempty"`

	last bool
}

// Last reports whether r ends the last prompt Query runs (after a
// SessionStart hook's first user message, the caller's prompt): no other
// message follows, only the end of the session — its records, its
// SessionEnd hooks — so a caller may give the answer at once.
func (r *ResultMessage) Last() bool { return r.last }

// DeferredToolUse is a tool call left for the host to decide: the
// tool_use block's id, the tool's name and its input.
type DeferredToolUse struct {
	ID    string          `json:"id"`
	Name  string          `json:"name"`
	Input json.RawMessage `json:"input"`
}

// ResultUsage is the token usage summed over a prompt's requests (the
// main agent's; a subagent's are in its own result and in ModelUsage).
type ResultUsage struct {
	InputTokens              int64         `json:"input_tokens"`
	CacheCreationInputTokens int64         `json:"cache_creation_input_tokens"`
	CacheReadInputTokens     int64         `json:"cache_read_input_tokens"`
	OutputTokens             int64         `json:"output_tokens"`
	ServerToolUse            ServerToolUse `json:"server_tool_use"`
	CacheCreation            CacheCreation `json:"cache_creation"`
}

// ModelUsage is a result's accounting of one model: tokens, cost, and the
// model's context window and output limit.
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

func (*SystemMessage) MessageType() string    { return "system" }
func (*AssistantMessage) MessageType() string { return "assistant" }
func (*UserMessage) MessageType() string      { return "user" }
func (*StreamEvent) MessageType() string      { return "stream_event" }
func (*ResultMessage) MessageType() string    { return "result" }

// MarshalJSON writes the message flat, as {"type":"system","subtype":…,…}.
func (m *SystemMessage) MarshalJSON() ([]byte, error) {
	rm := protocol.System{Subtype: m.Subtype, SessionID: m.SessionID, UUID: m.UUID,
		Attempt: m.Attempt, MaxRetries: m.MaxRetries, RetryDelayMS: m.RetryDelayMS, ErrorStatus: m.ErrorStatus, Error: m.Error, Cause: m.Cause,
		ToolName: m.ToolName, ToolUseID: m.ToolUseID, Reason: m.Reason, Fields: m.Fields}
	if m.Init != nil {
		rm.Init = m.Init.protocol()
	}
	return rm.MarshalJSON()
}

// Text returns the final text, or "" on error.
func (r *ResultMessage) Text() string {
	if r.Result == nil {
		return ""
	}
	return *r.Result
}

// CostReport renders the spend as a /cost command shows it: total cost,
// durations, and the usage of each model.
func (r *ResultMessage) CostReport() string {
	usage := make(map[string]protocol.ModelUsage, len(r.ModelUsage))
	for model, u := range r.ModelUsage {
		usage[model] = protocol.ModelUsage(u)
	}
	rr := protocol.Result{TotalCostUSD: r.TotalCostUSD, DurationMS: r.DurationMS, DurationAPIMS: r.DurationAPIMS, ModelUsage: usage}
	return rr.CostReport()
}

// publicMessage is a message of the runtime as this package's type: a
// copy, so that what the caller does with it stays out of the session.
func publicMessage(m protocol.Message) Message {
	switch m := m.(type) {
	case *protocol.System:
		out := &SystemMessage{Subtype: m.Subtype, SessionID: m.SessionID, UUID: m.UUID,
			Attempt: m.Attempt, MaxRetries: m.MaxRetries, RetryDelayMS: m.RetryDelayMS, ErrorStatus: m.ErrorStatus, Error: m.Error, Cause: m.Cause,
			ToolName: m.ToolName, ToolUseID: m.ToolUseID, Reason: m.Reason, Fields: m.Fields}
		if m.Init != nil {
			out.Init = initInfoOf(*m.Init)
		}
		return out
	case *protocol.Assistant:
		return &AssistantMessage{Type: m.Type, Message: apiMessageOf(m.Message), ParentToolUseID: m.ParentToolUseID,
			SessionID: m.SessionID, UUID: m.UUID, RequestID: m.RequestID, Error: m.Error, SessionCostUSD: m.SessionCostUSD}
	case *protocol.User:
		return &UserMessage{Type: m.Type, Message: messageOf(m.Message), ParentToolUseID: m.ParentToolUseID,
			SessionID: m.SessionID, UUID: m.UUID, ToolUseResult: m.ToolUseResult, IsSynthetic: m.IsSynthetic, IsReplay: m.IsReplay}
	case *protocol.StreamEvent:
		return (*StreamEvent)(m)
	case *protocol.Result:
		out := &ResultMessage{Type: m.Type, Subtype: m.Subtype, IsError: m.IsError, Result: m.Result, Errors: m.Errors,
			SessionID: m.SessionID, UUID: m.UUID, NumTurns: m.NumTurns, DurationMS: m.DurationMS, DurationAPIMS: m.DurationAPIMS,
			TotalCostUSD: m.TotalCostUSD, Usage: resultUsageOf(m.Usage), PermissionDenials: convert(m.PermissionDenials, func(d protocol.PermissionDenial) PermissionDenial { return PermissionDenial(d) }),
			StopReason: m.StopReason, TerminalReason: m.TerminalReason, StructuredOutput: m.StructuredOutput}
		if d := m.DeferredToolUse; d != nil {
			out.DeferredToolUse = &DeferredToolUse{ID: d.ID, Name: d.Name, Input: d.Input}
		}
		if m.ModelUsage != nil {
			out.ModelUsage = make(map[string]ModelUsage, len(m.ModelUsage))
			for model, u := range m.ModelUsage {
				out.ModelUsage[model] = ModelUsage(u)
			}
		}
		return out
	}
	return m
}

func initInfoOf(in protocol.Init) *InitInfo {
	return &InitInfo{Cwd: in.Cwd, SessionID: in.SessionID, Tools: in.Tools, MCPServers: convert(in.MCPServers, mcpStatusOf),
		Model: in.Model, PermissionMode: in.PermissionMode, SlashCommands: in.SlashCommands, APIKeySource: in.APIKeySource,
		ClaudeCodeVersion: in.ClaudeCodeVersion, OutputStyle: in.OutputStyle, Agents: in.Agents, Skills: in.Skills,
		Plugins: convert(in.Plugins, func(p protocol.Plugin) PluginInfo { return PluginInfo(p) }), AdditionalDirs: in.AdditionalDirs}
}

// protocol is i as the runtime's, for its encoding.
func (i *InitInfo) protocol() *protocol.Init {
	return &protocol.Init{Cwd: i.Cwd, SessionID: i.SessionID, Tools: i.Tools,
		MCPServers: convert(i.MCPServers, func(s MCPServerStatus) protocol.MCPServerStatus { return protocol.MCPServerStatus(s) }),
		Model:      i.Model, PermissionMode: i.PermissionMode, SlashCommands: i.SlashCommands, APIKeySource: i.APIKeySource,
		ClaudeCodeVersion: i.ClaudeCodeVersion, OutputStyle: i.OutputStyle, Agents: i.Agents, Skills: i.Skills,
		Plugins: convert(i.Plugins, func(p PluginInfo) protocol.Plugin { return protocol.Plugin(p) }), AdditionalDirs: i.AdditionalDirs}
}

func mcpStatusOf(s protocol.MCPServerStatus) MCPServerStatus { return MCPServerStatus(s) }

func apiMessageOf(m protocol.APIMessage) APIMessage {
	out := APIMessage{ID: m.ID, Type: m.Type, Role: string(m.Role), Model: m.Model, Content: blocksOf(m.Content),
		StopReason: m.StopReason, StopSequence: m.StopSequence,
		Usage: Usage{InputTokens: m.Usage.InputTokens, CacheCreationInputTokens: m.Usage.CacheCreationInputTokens,
			CacheReadInputTokens: m.Usage.CacheReadInputTokens, OutputTokens: m.Usage.OutputTokens}}
	if c := m.Usage.CacheCreation; c != nil {
		out.Usage.CacheCreation = &CacheCreation{Ephemeral5m: c.Ephemeral5m, Ephemeral1h: c.Ephemeral1h}
	}
	if u := m.Usage.ServerToolUse; u != nil {
		out.Usage.ServerToolUse = &ServerToolUse{WebSearchRequests: u.WebSearchRequests, WebFetchRequests: u.WebFetchRequests}
	}
	return out
}

func resultUsageOf(u protocol.ResultUsage) ResultUsage {
	return ResultUsage{InputTokens: u.InputTokens, CacheCreationInputTokens: u.CacheCreationInputTokens,
		CacheReadInputTokens: u.CacheReadInputTokens, OutputTokens: u.OutputTokens,
		ServerToolUse: ServerToolUse(u.ServerToolUse), CacheCreation: CacheCreation(u.CacheCreation)}
}
