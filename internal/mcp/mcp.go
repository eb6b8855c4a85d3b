// Package mcp is tack's client of Model Context Protocol servers, built on the
// official Go SDK (github.com/modelcontextprotocol/go-sdk). A Manager starts
// every configured server at once, over stdio, Streamable HTTP or legacy SSE;
// bridges each server tool to a tool.Tool named mcp__<server>__<tool>; offers
// the servers' resources through ListMcpResourcesTool and ReadMcpResourceTool
// and their prompts as renderable templates; keeps the catalogue current when
// a server joins late or changes its lists; restarts crashed stdio servers
// and reconnects remote ones; and answers what servers ask of the client
// (sampling, elicitation, roots).
package mcp

import (
	"context"
	"log/slog"
	"net/http"
	"strconv"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tackcode/tack/internal/llm"
	"github.com/tackcode/tack/internal/tool"
)

// Transport types of ServerConfig.Type.
const (
	TypeStdio = "stdio"
	TypeHTTP  = "http"
	TypeSSE   = "sse"
	// TypeSDK is a server in the host program: Go tools given to the SDK,
	// or an Agent SDK's in-process server reached over its control channel.
	// ServerConfig.Dial connects to it.
	TypeSDK = "sdk"
)

// ServerConfig is one MCP server to connect to. Values are final: any
// ${VAR} expansion has been done by whoever read the configuration.
type ServerConfig struct {
	// Name is the server's name in the configuration; tools are named
	// mcp__<Name>__<tool> (sanitised).
	Name string
	// Type is TypeStdio (the default when empty), TypeHTTP or TypeSSE.
	Type string
	// Command, Args and Env start a stdio server. Env is laid over the
	// session's environment (Options.Env).
	Command string
	Args    []string
	Env     map[string]string
	// URL and Headers reach a remote server; the headers go on every request.
	URL     string
	Headers map[string]string
	// Scope is where the configuration came from (local, project, user,
	// dynamic…); it is only reported back in Status.
	Scope string
	// Disabled servers are not started and report StatusDisabled.
	Disabled bool
	// Dial returns a new client transport to a TypeSDK server, for each
	// connection; ctx lives as long as the connection may.
	Dial func(ctx context.Context) (mcp.Transport, error)
}

func (c ServerConfig) transport() string {
	if c.Type == "" {
		return TypeStdio
	}
	return c.Type
}

// Server statuses, as init's mcp_servers and mcp_status report them.
const (
	StatusConnected = "connected"
	StatusPending   = "pending"
	StatusFailed    = "failed"
	StatusNeedsAuth = "needs-auth"
	StatusDisabled  = "disabled"
)

// Status is the state of one server.
type Status struct {
	Name string `json:"name"`
	// Status is one of the Status* constants.
	Status string `json:"status"`
	// Error says why a server failed, needs authentication or is
	// reconnecting.
	Error string `json:"error,omitempty"`
	// Tools is the number of tools the server offers.
	Tools     int    `json:"tools"`
	Transport string `json:"transport"`
	Scope     string `json:"scope,omitempty"`
	// Overdue is set on a pending server that Manager.Overdue found still
	// starting: Error says what it has not answered, after how long.
	Overdue bool `json:"-"`
}

// Limits are the time and size bounds of MCP traffic.
type Limits struct {
	// StartTimeout bounds starting a server and its handshake (MCP_TIMEOUT).
	StartTimeout time.Duration
	// ToolTimeout bounds one tool call (MCP_TOOL_TIMEOUT).
	ToolTimeout time.Duration
	// MaxOutputTokens bounds what one tool call or resource read returns to
	// the model (MAX_MCP_OUTPUT_TOKENS); a token is taken as 4 bytes.
	MaxOutputTokens int
	// ReconnectDelay is the first pause before reconnecting a remote server
	// whose connection dropped; it doubles on each of ReconnectTries tries.
	ReconnectDelay time.Duration
	ReconnectTries int
}

// Default limits.
const (
	DefaultStartTimeout    = 30 * time.Second
	DefaultToolTimeout     = 10 * time.Minute
	DefaultMaxOutputTokens = 25_000
	DefaultReconnectDelay  = time.Second
	DefaultReconnectTries  = 5
)

// LimitsFromEnv reads MCP_TIMEOUT and MCP_TOOL_TIMEOUT (milliseconds) and
// MAX_MCP_OUTPUT_TOKENS through getenv; a missing or invalid value keeps
// its default.
func LimitsFromEnv(getenv func(string) string) Limits {
	l := Limits{}.withDefaults()
	if d, ok := StartTimeoutFromEnv(getenv); ok {
		l.StartTimeout = d
	}
	if ms := positive(getenv("MCP_TOOL_TIMEOUT")); ms > 0 {
		l.ToolTimeout = time.Duration(ms) * time.Millisecond
	}
	if n := positive(getenv("MAX_MCP_OUTPUT_TOKENS")); n > 0 {
		l.MaxOutputTokens = int(n)
	}
	return l
}

// StartTimeoutFromEnv reads MCP_TIMEOUT (milliseconds), and reports
// whether it is set to a valid value.
func StartTimeoutFromEnv(getenv func(string) string) (time.Duration, bool) {
	ms := positive(getenv("MCP_TIMEOUT"))
	return time.Duration(ms) * time.Millisecond, ms > 0
}

// waitLonger is what every message about a server too slow to answer ends
// with.
const waitLonger = "set MCP_TIMEOUT (milliseconds) to wait longer"

func positive(s string) int64 {
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n <= 0 {
		return 0
	}
	return n
}

func (l Limits) withDefaults() Limits {
	if l.StartTimeout <= 0 {
		l.StartTimeout = DefaultStartTimeout
	}
	if l.ToolTimeout <= 0 {
		l.ToolTimeout = DefaultToolTimeout
	}
	if l.MaxOutputTokens <= 0 {
		l.MaxOutputTokens = DefaultMaxOutputTokens
	}
	if l.ReconnectDelay <= 0 {
		l.ReconnectDelay = DefaultReconnectDelay
	}
	if l.ReconnectTries <= 0 {
		l.ReconnectTries = DefaultReconnectTries
	}
	return l
}

// Options configure a Manager. Every field is optional. Callbacks may be
// called from any goroutine, concurrently; they must not block for long nor
// call the Manager's Reconnect, SetEnabled or Close (which wait for them).
type Options struct {
	// Registry, when set, receives each server's tools as the group
	// GroupPrefix+<server> (Registry.SetGroup) whenever they change, and the
	// two resource tools as the group ResourceGroup while a connected
	// server offers resources.
	Registry *tool.Registry
	// OnChange is told after a server's catalogue changed: it joined late,
	// its lists changed, it left. The engine uses it to tell the model of
	// new or removed tools.
	OnChange func(Change)
	// OnNotice reports what the user should know: a server that failed,
	// crashed, reconnected, or an elicitation declined for want of a user.
	OnNotice func(Notice)
	// OnProgress receives notifications/progress of tool calls. The SDK
	// delivers notifications asynchronously: the last ones of a call may
	// arrive shortly (up to ProgressGrace) after the call returned.
	OnProgress func(Progress)

	// Sample answers sampling/createMessage; nil: the client does not offer
	// sampling.
	Sample func(ctx context.Context, req SamplingRequest) (SamplingResult, error)
	// Elicit answers elicitation/create; nil (print mode): every request is
	// declined and a notice says so.
	Elicit func(ctx context.Context, req ElicitationRequest) (ElicitationResult, error)
	// BeforeElicit, when set, is asked first and may answer a request in
	// the user's place (answered true: Elicit is not asked). AfterElicit,
	// when set, sees every answer, whoever gave it, and returns the one
	// that goes to the server. The session's Elicitation and
	// ElicitationResult hooks plug in here.
	BeforeElicit func(ctx context.Context, req ElicitationRequest) (res ElicitationResult, answered bool)
	AfterElicit  func(ctx context.Context, req ElicitationRequest, res ElicitationResult) ElicitationResult

	// HTTPTransport returns the round tripper for a remote server's
	// requests (the OAuth seam: it may add Authorization and refresh
	// tokens). Nil, or a nil result, means http.DefaultTransport. The
	// configured headers are set before it runs.
	HTTPTransport func(server string) http.RoundTripper

	// Env is the session environment stdio servers start with (nil: the
	// process's own); a server's Env is laid over it.
	Env []string
	// Dir is the working directory of stdio servers ("": the process's).
	Dir string
	// Roots are the session's working directories, offered to servers as
	// roots (file:// URIs).
	Roots []string

	Limits Limits

	// ClientName and ClientVersion identify tack in the handshake.
	ClientName    string
	ClientVersion string

	// Logger, when set, gets a debug line when each server starts,
	// connects (with its tools) or fails.
	Logger *slog.Logger
}

// Group names in the tool registry.
const (
	// GroupPrefix+<server name> holds a server's tools.
	GroupPrefix = "mcp:"
	// ResourceGroup holds ListMcpResourcesTool and ReadMcpResourceTool.
	ResourceGroup = "mcp:resources"
)

// ProgressGrace is how long a call's progress token is kept after the call
// returned, for notifications still in flight.
const ProgressGrace = 2 * time.Second

// ChangeKind says which list of a server changed.
type ChangeKind string

const (
	ChangeTools     ChangeKind = "tools"
	ChangeResources ChangeKind = "resources"
	ChangePrompts   ChangeKind = "prompts"
)

// Change is a change of one server's catalogue.
type Change struct {
	Server string
	Kind   ChangeKind
	// Added and Removed are tool names (for ChangeTools) or prompt command
	// names (ChangePrompts) or resource URIs (ChangeResources). A tool
	// whose description or schema changed is in both.
	Added, Removed []string
}

// Notice levels.
const (
	NoticeInfo    = "info"
	NoticeWarning = "warning"
	NoticeError   = "error"
)

// Notice is a message for the user about a server.
type Notice struct {
	Server  string
	Level   string
	Message string
}

// Progress is one progress notification of a tool call.
type Progress struct {
	Server string
	// Tool is the server's own name of the tool; Name is tack's.
	Tool, Name string
	// ToolUseID is the model's id of the call, when the call's context had it.
	ToolUseID string
	Progress  float64
	// Total is 0 when unknown.
	Total   float64
	Message string
}

// SamplingRequest is a server asking the client's model for a completion.
type SamplingRequest struct {
	Server        string
	Messages      []llm.Message
	System        string
	MaxTokens     int
	Temperature   float64 // 0: unset
	StopSequences []string
	// ModelHints are the server's model name hints, in preference order.
	ModelHints []string
}

// SamplingResult is the model's answer to a SamplingRequest.
type SamplingResult struct {
	// Content is one text or image block.
	Content    llm.Block
	Model      string
	StopReason string
}

// Elicitation actions.
const (
	ElicitAccept  = "accept"
	ElicitDecline = "decline"
	ElicitCancel  = "cancel"
)

// ElicitationRequest is a server asking the user for input.
type ElicitationRequest struct {
	Server  string
	Message string
	// Mode is "form" (answer Content matching Schema) or "url" (the user
	// visits URL).
	Mode          string
	Schema        map[string]any
	URL           string
	ElicitationID string
}

// ElicitationResult is the user's answer.
type ElicitationResult struct {
	// Action is ElicitAccept, ElicitDecline or ElicitCancel.
	Action  string
	Content map[string]any
}

// PromptInfo is one prompt a server offers.
type PromptInfo struct {
	Server string
	Name   string
	// Command is the slash command name without the slash:
	// mcp__<server>__<prompt>, sanitised like tool names.
	Command     string
	Title       string
	Description string
	Arguments   []PromptArgument
}

// PromptArgument is one argument of a prompt.
type PromptArgument struct {
	Name        string
	Description string
	Required    bool
}

// ResourceInfo is one resource a server offers.
type ResourceInfo struct {
	Server      string `json:"server"`
	URI         string `json:"uri"`
	Name        string `json:"name"`
	Title       string `json:"title,omitempty"`
	Description string `json:"description,omitempty"`
	MIMEType    string `json:"mimeType,omitempty"`
}
