// Package runtime is tack's composition root: it turns the resolved options
// of a session (Config) into a running Session, in the small named steps
// that build.go lists top to bottom — settings, workspace trust, provider,
// extensions, then the main thread's model, policy, tools, hooks, MCP
// servers, memory, prompt, transcript and engine.
//
// A subagent is a thread of the same session built by the same thread steps
// with its own overrides (prompt, tools, model, mode, hooks, MCP servers,
// worktree), so there is one builder of engine.Config: a field added there
// reaches the main thread and every subagent alike. The lifecycle hook
// events that are not part of a turn (Setup, SessionStart,
// InstructionsLoaded, SessionEnd, SubagentStart, Notification) are fired
// from lifecycle.go only, and a typed command's UserPromptExpansion from
// expansion.go.
//
// The public Go SDK (package agent) is a thin adapter over this package: it
// validates its Options into a Config and renders the Session's messages as
// its own.
package runtime

import (
	"context"
	"encoding/json"
	"github.com/tackcode/tack/internal/lsp"
	"log/slog"
	"net/http"
	"sync"
	"sync/atomic"

	"github.com/tackcode/tack/internal/config"
	"github.com/tackcode/tack/internal/engine"
	"github.com/tackcode/tack/internal/extension"
	"github.com/tackcode/tack/internal/hook"
	"github.com/tackcode/tack/internal/llm"
	"github.com/tackcode/tack/internal/mcp"
	"github.com/tackcode/tack/internal/mcp/mcpconfig"
	"github.com/tackcode/tack/internal/memory"
	"github.com/tackcode/tack/internal/permission"
	"github.com/tackcode/tack/internal/protocol"
	"github.com/tackcode/tack/internal/sandbox"
	"github.com/tackcode/tack/internal/session"
	"github.com/tackcode/tack/internal/shell"
	"github.com/tackcode/tack/internal/skill"
	"github.com/tackcode/tack/internal/tool"
)

// Config is what a session is built from: the SDK's options, resolved to
// tack's own types. The zero value is a default session in the process's
// working directory. The fields a session records (Launch) come back on
// resume wherever the new launch leaves them unset.
type Config struct {
	Launch

	// Cwd is the working directory; "" means the process's.
	Cwd string
	// ProjectConfigRoot is the trusted checkout Cwd is a worktree of: the
	// project scope (settings, .mcp.json, .claude/ skills, commands,
	// agents, CLAUDE_PROJECT_DIR, workspace trust) comes from it instead
	// of Cwd (projectroot.go). An absolute path; "" means Cwd.
	ProjectConfigRoot string
	// SessionID pins the session id (a UUID); "" makes a new one.
	SessionID string
	// Continue, Resume, ForkSession and ResumeSessionAt pick a stored
	// session to go on with (see findResumed).
	Continue        bool
	Resume          string
	ForkSession     bool
	ResumeSessionAt string
	// ResumeDropsTurn, with ResumeSessionAt, is the prompt uuid of the one
	// turn the truncation may discard (session.CheckDrops).
	ResumeDropsTurn string
	// OnTranscriptWrite receives the lines each write adds to the
	// session's transcripts, the main one's and the subagents' (see
	// session.Writer.SetMirror); a fork's first lines too.
	OnTranscriptWrite func(path string, lines [][]byte)

	MaxTurns     int
	MaxBudgetUSD float64
	Betas        []string
	// PluginDirsWithoutMCP are plugin folders loaded without their MCP
	// servers, which the caller runs itself (--plugin-dir-no-mcp).
	PluginDirsWithoutMCP []string
	// Untrusted leaves the folder's own code off (see workspaceTrust).
	Untrusted bool
	// ManagedSettings are the host's policy settings, a JSON object (see
	// config.LoadOptions.HostManaged). Not part of Launch: a host passes
	// them again at every start, and a resumed session must not keep a
	// policy its host no longer gives.
	ManagedSettings string
	// Hooks are the caller's hook callbacks (code, not files: the settings'
	// hook guards leave them running).
	Hooks             hook.Config
	IncludeHookEvents bool
	// HookStatus emits a protocol.SubtypeHookStatus message when a hook
	// with a statusMessage starts and when it ends, for a UI to show.
	HookStatus bool
	// Agents are the caller's subagent definitions; they win over files.
	Agents     map[string]AgentDef
	JSONSchema json.RawMessage
	// MCPServers is more MCP configuration in --mcp-config form, not
	// recorded with the session; InProcessMCP are servers reached through
	// the caller's transports.
	MCPServers   string
	InProcessMCP []mcp.ServerConfig
	Sandbox      *sandbox.Settings
	// FileCheckpointing keeps files before the file tools change them.
	FileCheckpointing bool
	// Setup runs the Setup hooks with this trigger (SetupInit for --init
	// and --init-only, SetupMaintenance for --maintenance) as the session
	// starts, before SessionStart; what they give the model opens its
	// first message. "" runs none.
	Setup string
	// Restart says how the session follows the one its host has just
	// ended in its place: "" (none), RestartClear or RestartReopen.
	Restart string

	// Approve decides calls that need approval; nil leaves them to
	// PermissionPromptTool, or denies them.
	Approve                func(ctx context.Context, req ApprovalRequest) (Approval, error)
	OnElicitation          func(ctx context.Context, e mcp.ElicitationRequest) (mcp.ElicitationResult, error)
	OnMCPProgress          func(p mcp.Progress)
	Notify                 func(msg string)
	Logger                 *slog.Logger
	IncludePartialMessages bool
	NoSessionPersistence   bool
	Env                    map[string]string
	HTTPClient             *http.Client
	// WrapTransport wraps the transport of the model requests (see
	// modelClient).
	WrapTransport func(http.RoundTripper) http.RoundTripper
	// TextFiles, when set, is where the file tools of every thread read
	// and write text (tool.Env.TextFiles).
	TextFiles tool.TextFiles
	// Terminal, when set, runs the foreground commands of every thread's
	// shell that the sandbox leaves alone (shell.SetRunner).
	Terminal shell.Runner
	// Entrypoint is recorded in transcripts; "" means "sdk-go".
	Entrypoint string
	// Bare starts a minimal session (--bare): no memory (CLAUDE.md, auto
	// memory) but the administrator's, no hooks from settings files, no
	// skills, commands or agents from folders, no plugins but PluginDirs',
	// no MCP servers from files but MCPConfig's. Not recorded.
	Bare bool
	// WithoutCredentials starts the session when no credentials are set,
	// for a session that makes no request (--init-only); a request it
	// makes fails with ErrNoCredentials.
	WithoutCredentials bool
}

// The triggers of Config.Setup, as Setup hooks are told.
const (
	SetupInit        = "init"
	SetupMaintenance = "maintenance"
)

// The values of Config.Restart.
const (
	// RestartClear: the user cleared the conversation (/clear) and this
	// session starts anew in its place; its SessionStart hooks are told
	// source "clear".
	RestartClear = "clear"
	// RestartReopen: the same conversation, opened again by its host to
	// apply changed options (a name, directories, reloaded plugins), goes
	// on: no SessionStart or InstructionsLoaded hooks run, as none ran for
	// the conversation's end (EndReopen).
	RestartReopen = "reopen"
)

// Why a session ends (Close): the reason SessionEnd hooks are told.
const (
	// EndClear: the user cleared the conversation (/clear).
	EndClear = "clear"
	// EndResume: the user switched to another conversation (/resume).
	EndResume = "resume"
	// EndLogout: the user logged out.
	EndLogout = "logout"
	// EndPromptInputExit: the user left at the prompt (/exit, Ctrl-D,
	// Ctrl-C twice).
	EndPromptInputExit = "prompt_input_exit"
	// EndOther: anything else — print mode done, the SDK's host closing.
	EndOther = "other"
	// EndReopen: the host reopens the same conversation at once (see
	// RestartReopen); no SessionEnd hooks run.
	EndReopen = "reopen"
)

// Launch are the options a session records and a resume restores.
type Launch struct {
	Name                 string
	Model                string
	FallbackModel        string
	PermissionMode       string
	Settings             string
	SettingSources       []string
	MCPConfig            []string
	StrictMCPConfig      bool
	AddDirs              []string
	Agent                string
	AgentsJSON           string
	PluginDirs           []string
	Tools                []string
	AllowedTools         []string
	DisallowedTools      []string
	PermissionPromptTool string
	MaxThinkingTokens    int
	// Thinking is the thinking mode: "adaptive" (or "enabled", the same),
	// "disabled", or "" for the settings' alwaysThinkingEnabled (off when
	// unset); MaxThinkingTokens, when set, asks for a fixed budget instead.
	// ThinkingDisplay is how thinking comes back ("summarized", "omitted";
	// "" for the API's default).
	Thinking, ThinkingDisplay string
	// Effort is the reasoning effort asked of models that take one; ""
	// for the settings' effortLevel, else none (the API's default, high).
	Effort string
	// TaskBudget is the tokens the main thread's task may take, told to the
	// model with every request (0: none).
	TaskBudget         int
	SystemPrompt       *string
	AppendSystemPrompt string
}

// AgentDef is a subagent the model may start: the caller's definition, or
// one read from a file (which also brings hooks, preloaded skills, a bound
// on its turns and inline MCP servers).
type AgentDef struct {
	Description     string
	Prompt          string
	Tools           []string
	DisallowedTools []string
	Model           string
	PermissionMode  string
	Isolation       string
	MCPServers      []string
	// Hooks run only for this agent's events; its Stop hooks fire as
	// SubagentStop.
	Hooks  hook.Config
	Source string

	// Skills are preloaded into its context; MaxTurns bounds its turns.
	Skills   []string
	MaxTurns int
	// MCPDefs are servers it defines inline, started while it runs (and
	// for the session when it is the main thread's agent).
	MCPDefs []*mcpconfig.Server
	// managed is set for a definition of the administrator's directory:
	// its hooks are managed ones.
	managed bool
}

// ApprovalRequest is a call that needs approval.
type ApprovalRequest struct {
	ToolName  string
	Input     json.RawMessage
	ToolUseID string
	// Reason says why approval is needed.
	Reason string
	// Cwd is the working directory of the thread that asks.
	Cwd string
}

// Approval answers an ApprovalRequest.
type Approval struct {
	Allow              bool
	Message            string
	UpdatedInput       json.RawMessage
	UpdatedPermissions []PermissionUpdate
}

// PermissionUpdate changes the session's permissions: "addRules" (Rules,
// as settings write them, with Behavior), "setMode" (Mode) or
// "addDirectories" (Directories); Destination names a settings file that
// keeps added rules.
type PermissionUpdate struct {
	Type        string
	Rules       []string
	Behavior    string
	Destination string
	Mode        string
	Directories []string
}

// Prompt is one user message.
type Prompt struct {
	Text string
	// ID is the user message's uuid; "" makes one.
	ID string
	// Content, when set, is the whole message instead of Text.
	Content []llm.Block
}

// Session is a running session: what New built, and the state that
// changes while it runs.
type Session struct {
	cfg Config
	// ctx is the session's own: background subagents run under it, and
	// Close ends it.
	ctx    context.Context
	cancel context.CancelFunc

	// Shared by the main thread and every subagent.
	cwd        string
	root       string // the project root (projectroot.go)
	sessionID  string
	getenv     func(string) string
	procEnv    []string
	projectDir string // "" when the session is not persisted
	resumed    *resumed
	// askedModel is the model this launch asks for, before a resume fills
	// in the recorded one: a recorded model availableModels now blocks
	// gives way to the default, a model asked for now is refused.
	askedModel string
	// hookTimes times hook handlers for the debug log.
	hookTimes hookTimer
	costBase  float64 // what the session spent before this process resumed it
	named     bool    // this launch named the session: its record is written at once
	// mainSync is the main thread's recorder (nil when not persisted).
	mainSync *syncBeside
	recordMu sync.Mutex // one writer of the records at a time, each from the state it read
	recorded onDisk     // what the records on disk hold; under recordMu
	tools    toolRecords
	// prefixWrite is closed once the request prefix written while the
	// first request is on its way (see thread.onRequest) is on disk; nil
	// until that request.
	prefixWrite atomic.Pointer[chan struct{}]
	prefixMu    sync.Mutex
	// prefix is what prefix.json holds: saved once it is written, or once
	// the resumed one stands; tools are the tools array this process wrote
	// into it (nil for a resumed one, which is not written again). Under
	// prefixMu.
	prefix struct {
		saved bool
		tools []llm.ToolSpec
	}
	settings     *config.Merged
	trust        workspaceTrust
	provider     llm.Provider
	apiKeySource string
	providerInfo ProviderInfo            // zero for the Anthropic API
	extraInfo    map[string]ProviderInfo // the settings' providers, by name
	catalog      *llm.Catalog
	small        string
	ext          *extension.Set
	lsp          *lsp.Manager // nil when no language server is configured
	agents       map[string]AgentDef
	mainAgent    string
	skills       *skill.Runtime
	// skillToolOK: the main thread's tools may include Skill (ReloadSkills
	// adds it when skills appear).
	skillToolOK bool
	// flagLayer is what ApplyFlagSettings laid over --settings (under
	// current.mu).
	flagLayer map[string]any
	rules     permission.RuleSet
	sandbox   *sandbox.Sandbox
	// approvers are the tools PermissionPromptTool may name: every tool,
	// offered or not.
	approvers *tool.Registry
	hookOpts  hook.Options
	hookGuard *hookGuard
	hookLog   *engine.HookLog
	// current is what the settings files say since they changed, and
	// watching what the session watches on disk.
	current  current
	watching *watching
	// compactThreshold is when conversations are compacted (a share of the
	// window; negative: never).
	compactThreshold float64
	checkpoints      *checkpoints
	memory           *memory.Set
	mcp              *mcpState
	recorder         *session.Writer
	subagents        *subagents

	main *thread

	// turnSeq is the skill invocation count when the running prompt began:
	// skills loaded after it are active (their allowed-tools hold).
	turnSeq atomic.Int64
	// skillMu guards what skills changed: the model a skill replaced for
	// the running prompt, and the skills whose hooks were added.
	skillMu          sync.Mutex
	modelBeforeSkill *llm.Model
	skillHooks       map[string]bool
	// metaMu guards what a host may change mid-session: Name, AddDirs,
	// the rules saved to settings files.
	metaMu     sync.Mutex
	savedRules []savedRule
	// structured is the last StructuredOutput value of the running prompt.
	structuredMu sync.Mutex
	structured   json.RawMessage
	// emit is where the running prompt sends its messages (subagents' too).
	emitMu sync.Mutex
	emit   engine.Emit
	// promptID is the prompt_id of the latest prompt, which hook payloads
	// carry from that prompt on ("" before the first).
	promptID atomic.Pointer[string]
	// initialPrompt is the first user message a SessionStart hook gave
	// (initialUserMessage).
	initialPrompt string
}

// SessionID is the session's id.
func (s *Session) SessionID() string { return s.sessionID }

// InitialUserMessage is the first user message a SessionStart hook gave
// (initialUserMessage), to run before any prompt in print mode; "" when
// none did.
func (s *Session) InitialUserMessage() string { return s.initialPrompt }

// currentPromptID is the prompt_id of the latest prompt ("" before the
// first).
func (s *Session) currentPromptID() string {
	if p := s.promptID.Load(); p != nil {
		return *p
	}
	return ""
}

// emitter is where the running prompt's messages go; it drops them between
// prompts.
func (s *Session) emitter() engine.Emit {
	s.emitMu.Lock()
	defer s.emitMu.Unlock()
	if s.emit == nil {
		return func(protocol.Message) {}
	}
	return s.emit
}

func (s *Session) setEmitter(e engine.Emit) {
	s.emitMu.Lock()
	defer s.emitMu.Unlock()
	s.emit = e
}

// notify shows msg to the user (Notify, and the Logger as a warning).
func (s *Session) notify(msg string) { notify(s.cfg, msg) }
