package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"strings"

	"github.com/tackcode/tack/internal/runtime"
)

// PermissionMode says how tool calls that no rule decides are treated.
type PermissionMode string

const (
	// PermissionDefault runs read-only tools and asks for the rest.
	PermissionDefault PermissionMode = "default"
	// PermissionAcceptEdits also accepts file edits.
	PermissionAcceptEdits PermissionMode = "acceptEdits"
	// PermissionPlan allows read-only tools only.
	PermissionPlan PermissionMode = "plan"
	// PermissionBypass allows everything that no deny rule forbids.
	PermissionBypass PermissionMode = "bypassPermissions"
	// PermissionDontAsk denies whatever would be asked.
	PermissionDontAsk PermissionMode = "dontAsk"
	// PermissionAuto accepts edits inside the working directories and has
	// the small model decide, allow or block, what would be asked; a block
	// is a denial, with the classifier's reason.
	PermissionAuto PermissionMode = "auto"
)

// Valid reports whether m is a known mode.
func (m PermissionMode) Valid() bool {
	switch m {
	case PermissionDefault, PermissionAcceptEdits, PermissionPlan, PermissionAuto, PermissionBypass, PermissionDontAsk:
		return true
	}
	return false
}

// Options configure a session. The zero value is a default session in the
// process's working directory, reading credentials from the environment.
type Options struct {
	// Cwd is the working directory; "" means the process's.
	Cwd string
	// ProjectConfigRoot is the trusted checkout Cwd is a worktree of
	// (--project-config-root): the project and local settings (rules,
	// hooks, env), .mcp.json, the .claude folders of skills, commands and
	// agents, CLAUDE_PROJECT_DIR and workspace trust come from it, not from
	// Cwd, while the tools work in Cwd. It must be an absolute path to a
	// directory; "" means Cwd.
	ProjectConfigRoot string
	// Model is an alias (opus, sonnet, haiku) or a model id; "" means
	// $ANTHROPIC_MODEL or the catalogue's default.
	Model string
	// FallbackModel takes over when Model stays overloaded through every
	// retry; it must differ from Model.
	FallbackModel string
	// SystemPrompt replaces tack's main system prompt when non-nil.
	SystemPrompt *string
	// AppendSystemPrompt is added after the system prompt.
	AppendSystemPrompt string
	// MaxTurns bounds model round trips per prompt (0: no limit).
	MaxTurns int
	// MaxBudgetUSD stops the run once the session has spent this much (0: no limit).
	MaxBudgetUSD float64
	// MaxThinkingTokens enables extended thinking with this budget (0: off).
	MaxThinkingTokens int
	// Thinking is the thinking mode: "adaptive" ("enabled" is the same:
	// the model decides how much to think), "disabled", or "" for the
	// settings' alwaysThinkingEnabled (off when unset). ThinkingDisplay is
	// how thinking comes back: "summarized" or "omitted" ("" for the API's
	// default).
	Thinking        string
	ThinkingDisplay string
	// Effort is the reasoning effort asked of models that take one: low,
	// medium, high, xhigh or max; "" for the settings' effortLevel, else
	// the API's default (high).
	Effort string
	// TaskBudget is the tokens the whole task may take: the main thread's
	// requests tell the model, which paces itself by it (0: none).
	TaskBudget int
	// Tools is the set of built-in tools offered: nil for the default set,
	// an empty non-nil slice for none.
	Tools []string
	// AllowedTools run without asking; DisallowedTools are neither offered
	// nor run.
	AllowedTools    []string
	DisallowedTools []string
	// PermissionMode is the mode for calls no rule decides ("" = default).
	PermissionMode PermissionMode
	// CanUseTool is asked about calls that would need the user's approval.
	// Without it (and without PermissionPromptTool) such calls are denied
	// and reported.
	CanUseTool CanUseTool
	// PermissionPromptTool names a tool (usually an MCP tool) that approves
	// calls needing approval (--permission-prompt-tool).
	PermissionPromptTool string
	// Settings is a settings file, or inline JSON, read above the user,
	// project and local settings (--settings).
	Settings string
	// SettingSources limits which of the user, project and local settings
	// files are read ("user", "project", "local", or comma lists of them):
	// nil reads all three, an empty non-nil slice none. Settings and the
	// managed settings are always read.
	SettingSources []string
	// ManagedSettings are policy settings the host imposes, as a JSON
	// object (--managed-settings, the Agent SDK's managedSettings). Only
	// what restricts applies — permissions.deny, ask, allow and
	// additionalDirectories, disableBypassPermissionsMode, disableAllHooks
	// and allowManagedHooksOnly (both as allowManagedHooksOnly),
	// availableModels, the sandbox's strict values — as managed settings,
	// under the administrator's managed-settings.json; every other key is
	// dropped with a notice naming it. With a managed-settings.json present
	// they apply only if it sets "parentSettingsBehavior": "merge".
	ManagedSettings string
	// Untrusted runs the session in a folder the user has not trusted (see
	// CheckWorkspace): the folder's own code stays off. The zero value
	// trusts the folder, as print mode and Claude Code's SDKs do, unless
	// the settings set requireWorkspaceTrust: the session is then refused
	// (*UntrustedWorkspaceError) until TrustWorkspace records trust. While
	// trust is only implied so (not recorded), the folder cannot approve
	// its own commands, as in Claude Code: the permissions.allow rules,
	// additionalDirectories and a bypassPermissions defaultMode of its
	// .claude/settings.json are withheld, each with a notice (Notify).
	//
	// Off, in an untrusted session:
	//   - of the project and local settings (.claude/settings.json and
	//     .claude/settings.local.json) everything but permissions.deny,
	//     permissions.ask and permissions.disableBypassPermissionsMode, which
	//     only restrict: hooks, env, statusLine, apiKeyHelper,
	//     otelHeadersHelper, awsAuthRefresh, awsCredentialExport,
	//     enabledPlugins (plugins enabled only there do not load),
	//     permissions.allow, defaultMode and additionalDirectories,
	//     enableAllProjectMcpServers, enabledMcpjsonServers,
	//     disabledMcpjsonServers, sandbox (excludedCommands and every other
	//     sandbox key), model, agent, outputStyle, and every other key;
	//   - the MCP servers of the project's .mcp.json, which do not start;
	//   - of the project's skills, commands and agents (.claude/skills,
	//     .claude/commands, .claude/agents), which still load as prompts:
	//     their !`command` injections, frontmatter hooks and allowed-tools,
	//     and agents' inline mcpServers and permissionMode.
	//
	// Still on: CLAUDE.md memory (text), the user's and the administrator's
	// settings, skills, agents, plugins and MCP servers (including the local
	// scope's, kept in ~/.claude.json), and what the caller gives: Settings,
	// MCPConfig, MCPServers, PluginDirs, Agents, AgentsJSON, Hooks. One
	// notice (Notify) says what was off and how to trust the folder.
	Untrusted bool
	// AddDirs are more working directories (--add-dir).
	AddDirs []string
	// Hooks are Go callbacks run at hook events, beside the hooks of the
	// settings, plugins, skills and agents. They are the program's own
	// code, not files a folder brings: the settings' disableAllHooks and
	// allowManagedHooksOnly, which stop the hooks from files (all of them,
	// or all but the administrator's), leave them running.
	Hooks map[HookEvent][]HookMatcher
	// IncludeHookEvents yields hook_started / hook_response system messages.
	IncludeHookEvents bool
	// HookStatusMessages yields a system message of subtype
	// SubtypeHookStatus when a hook with a statusMessage starts, and
	// another when it ends, so that a UI can show the message while the
	// hook runs (the terminal UI shows it by its spinner). Claude Code has
	// no such message, so print mode and stream-json never ask for it.
	HookStatusMessages bool
	// OnElicitation answers an MCP server that asks the user for input,
	// unless a HookElicitation hook answered first; HookElicitationResult
	// hooks see its answer and may change it. Nil declines every request
	// no hook answered (and says so through Notify).
	OnElicitation func(ctx context.Context, e Elicitation) (ElicitationAnswer, error)
	// OnMCPProgress receives the progress notifications of MCP tool calls.
	OnMCPProgress func(p MCPProgress)
	// Notify receives messages meant for the user: hook errors and hook
	// system messages, settings warnings. Nil discards them.
	Notify func(msg string)
	// IncludePartialMessages yields every streaming event as a StreamEvent.
	IncludePartialMessages bool
	// SessionID pins the session id (a UUID); "" makes a new one.
	SessionID string
	// Continue resumes the most recent session of the working directory.
	Continue bool
	// Resume resumes the session with this id or name.
	Resume string
	// ForkSession continues a resumed session under a new id, leaving the
	// original as it was.
	ForkSession bool
	// ResumeSessionAt resumes from the message with this uuid, dropping
	// what came after it.
	ResumeSessionAt string
	// ResumeDropsTurn, with ResumeSessionAt, names the prompt (the uuid
	// of its user message, Prompt.ID) of the one turn the truncation is
	// meant to discard. When anything else would be discarded (a message
	// queued during that turn, the kept turn's own tool results) the
	// session does not start and the error is a *ResumeRejectedError.
	ResumeDropsTurn string
	// OnTranscriptWrite, when set, receives what the session appends to
	// its transcripts, once the file has it: path is the file (the main
	// transcript, or a subagent's under <session>/subagents/), lines are
	// its new JSONL records without newlines, in file order. A forked
	// session's copied records come first, in one call. It runs on the
	// writing goroutine with that transcript locked: keep it short. The
	// Agent SDK's sessionStore is fed from it (--session-mirror).
	OnTranscriptWrite func(path string, lines []json.RawMessage)
	// Name names the session, so that Resume finds it by name.
	Name string
	// Agents are more subagents the model may start with the Agent tool,
	// by name (they replace built-in or file-defined ones of that name).
	Agents map[string]AgentDefinition
	// AgentsJSON defines more subagents as the --agents flag does: a JSON
	// object of name → {description, prompt, tools, disallowedTools, model,
	// permissionMode, …}. Agents wins over it for a name in both.
	AgentsJSON string
	// JSONSchema asks for the final answer of each prompt as JSON matching
	// this schema (--json-schema): the model is given a StructuredOutput
	// tool whose input schema it is, and the result carries the value in
	// StructuredOutput. The schema's root must be an object.
	JSONSchema json.RawMessage
	// MCPConfig, StrictMCPConfig, Agent and PluginDirs are the launch
	// options of the MCP, agent and plugin work; they are recorded with the
	// session and restored on resume.
	MCPConfig       []string
	StrictMCPConfig bool
	// Betas are API beta features every request asks for (--betas), e.g.
	// "context-1m-2025-08-07".
	Betas []string
	// MaxToolResultSize bounds the text of the tool results in the messages
	// yielded to the caller (characters; 0: no bound), for hosts that show
	// or forward them. The model always gets them whole.
	MaxToolResultSize int
	// Sandbox, when set, replaces the settings' "sandbox": with Enabled,
	// shell commands run inside bubblewrap (or Landlock where bubblewrap
	// cannot make its namespaces; the session's Notify says what that
	// cannot enforce): read-only filesystem but for the working
	// directories, minus the files that run code later (git hooks and
	// configuration, .claude/, .mcp.json…), a private /tmp, no view of
	// other processes, no unix sockets, and no network but the hosts of
	// Network.AllowedDomains through a filtering proxy. They run without
	// asking unless AutoAllowBashIfSandboxed is false. The in-sandbox
	// stage is this program run again (os.Executable), recognised by an
	// init of the sandbox package, so a program embedding tack needs
	// nothing more.
	Sandbox *SandboxSettings
	// FileCheckpointing keeps each file an Edit, Write or NotebookEdit is
	// about to change, so that Client.RewindFiles can put the files back
	// as they were before a given prompt.
	FileCheckpointing bool
	// MCPServers are more MCP servers by name: processes, remote servers,
	// and servers running in this program (MCPSDKServer, e.g. from
	// NewSDKServer). They load like --mcp-config's, and are not recorded
	// with the session: give them again on resume.
	MCPServers map[string]MCPServerConfig
	Agent      string
	PluginDirs []string
	// PluginDirsWithoutMCP are plugin folders loaded like PluginDirs but
	// without the MCP servers they declare, for a host that runs those
	// itself (the Agent SDK's skipMcpDiscovery).
	PluginDirsWithoutMCP []string
	// NoSessionPersistence writes no transcript.
	NoSessionPersistence bool
	// Env adds environment variables for tool processes and overrides the
	// process environment for tack's own settings (ANTHROPIC_API_KEY…).
	Env map[string]string
	// HTTPClient is used for API requests; nil means the default.
	HTTPClient *http.Client
	// WrapTransport, when set, wraps the transport of the model requests
	// (HTTPClient's, or the default one with the proxies and certificate
	// authorities of the environment and settings): a host that shares an
	// API's rate limit between processes waits and learns there.
	WrapTransport func(http.RoundTripper) http.RoundTripper
	// TextFiles, when set, is where Read, Write, Edit and NotebookEdit read
	// and write the text of files, instead of the disk: a host that is an
	// editor gives its buffers, so that the model sees and changes what the
	// user sees, unsaved changes included (tack acp does, over the
	// client's fs/read_text_file and fs/write_text_file). Everything else is
	// as with the disk: the permission rules, hooks and sandbox decide the
	// call first, Read still looks on disk for whether the file exists and
	// is text, and the writing tools still refuse a file not read first.
	// Bash, Glob and Grep see the disk.
	TextFiles TextFiles
	// Terminal, when set, runs Bash's foreground commands in a host's
	// terminal instead of as tack's children, so that the user watches them
	// where they work (tack acp does, over the client's terminal/*
	// methods). The permission rules, hooks and sandbox decide first, and a
	// command the sandbox wraps still runs here, inside it; background
	// commands (run_in_background) too.
	Terminal Terminal
	// Logger receives diagnostics (what Notify receives, as warnings); nil
	// discards them.
	Logger *slog.Logger
	// Entrypoint is recorded in transcripts ("cli", "sdk-go"…); "" means "sdk-go".
	Entrypoint string
	// Bare starts a minimal session, as tack --bare: no CLAUDE.md or auto
	// memory (the administrator's memory still loads), no hooks from
	// settings files, no skills, commands or agents from folders, no
	// plugins but PluginDirs', no MCP servers from files but MCPConfig's
	// and MCPServers. What the caller gives (Settings, MCPConfig,
	// AgentsJSON, PluginDirs, Hooks, AppendSystemPrompt) still applies. It
	// is not recorded: give it again on resume.
	Bare bool
	// WithoutCredentials lets the session start when no API key or token
	// is set, for a session that makes no request, as tack --init-only:
	// a request it makes (a prompt, a prompt hook) fails with
	// ErrNoCredentials.
	WithoutCredentials bool

	// Setup runs the Setup hooks with this trigger as the session starts,
	// before its SessionStart hooks, as tack's --init and --init-only
	// (SetupInit) and --maintenance (SetupMaintenance) do; the context
	// they give the model (additionalContext, plain stdout) opens the
	// first message. "" runs none.
	Setup SetupTrigger
	// Restart says how the session follows the one its host has just
	// ended in its place (Client.CloseFor): RestartClear after the user
	// cleared the conversation, RestartReopen for the same conversation
	// opened again to apply changed options. "" for neither.
	Restart Restart

	// SessionStateMessages makes a Client yield system messages of subtype
	// session_state_changed: "running" when it starts on queued prompts,
	// "idle" after the result of the last one (the stream-json protocol's
	// run boundaries), and "requires_action" while CanUseTool decides a
	// call ("running" again once it has).
	SessionStateMessages bool
	// ReplayUserMessages makes a Client yield each prompt back, as a user
	// message with the prompt's ID and IsReplay, right after the system
	// init of its run (the stream-json --replay-user-messages).
	ReplayUserMessages bool
}

// SetupTrigger is what asked for a session's Setup hooks, as they are told
// (their payload's trigger, which their matchers test).
type SetupTrigger string

const (
	// SetupInit is tack --init and --init-only: setting a repository up.
	SetupInit SetupTrigger = runtime.SetupInit
	// SetupMaintenance is tack --maintenance.
	SetupMaintenance SetupTrigger = runtime.SetupMaintenance
)

// Restart says how a session a host starts follows the one it has just
// ended in its place (Options.Restart).
type Restart string

const (
	// RestartClear: the user cleared the conversation (/clear) and the new
	// session starts empty in its place; its SessionStart hooks are told
	// source "clear". End the old one with EndClear.
	RestartClear Restart = runtime.RestartClear
	// RestartReopen: the same conversation (Options.Resume names it),
	// opened again to apply changed options — a name, more directories,
	// reloaded plugins — goes on: no SessionStart or InstructionsLoaded
	// hooks run. End the old one with EndReopen, which runs no SessionEnd
	// hooks: for the hooks the conversation never stopped.
	RestartReopen Restart = runtime.RestartReopen
)

// EndReason is why a session ends, as its SessionEnd hooks are told
// (Client.CloseFor; their payload's reason, which their matchers test).
type EndReason string

const (
	// EndClear: the user cleared the conversation (/clear).
	EndClear EndReason = runtime.EndClear
	// EndResume: the user switched to another conversation (/resume).
	EndResume EndReason = runtime.EndResume
	// EndLogout: the user logged out.
	EndLogout EndReason = runtime.EndLogout
	// EndPromptInputExit: the user left at the prompt of an interactive
	// UI (an exit command, Ctrl-D, Ctrl-C twice).
	EndPromptInputExit EndReason = runtime.EndPromptInputExit
	// EndOther: anything else, as when a print-mode run or an SDK host is
	// done (what Close says).
	EndOther EndReason = runtime.EndOther
	// EndReopen: the host opens the same conversation again at once
	// (RestartReopen); no SessionEnd hooks run.
	EndReopen EndReason = runtime.EndReopen
)

// MaxStructuredOutputRetries is how many times a model that ends its turn
// without giving the structured output (Options.JSONSchema) is reminded;
// after that the result's subtype is error_max_structured_output_retries.
const MaxStructuredOutputRetries = 5

// CanUseTool decides a tool call that would need approval.
type CanUseTool func(ctx context.Context, toolName string, input json.RawMessage, info ToolPermissionContext) (PermissionResult, error)

// ToolPermissionContext describes the call being decided.
type ToolPermissionContext struct {
	ToolUseID string
	// Reason says why approval is needed.
	Reason string
	// Suggestions are the "always allow" answers a host may offer
	// (SuggestPermissions); one of them given back in
	// PermissionResult.UpdatedPermissions applies it.
	Suggestions []PermissionUpdate
	// BlockedPath is the file outside the working directory a file tool's
	// call would reach; "" otherwise.
	BlockedPath string
}

// PermissionResult is the answer of a CanUseTool callback.
type PermissionResult struct {
	// Allow runs the call; otherwise it is denied with Message.
	Allow   bool
	Message string
	// UpdatedInput, when set, replaces the call's input.
	UpdatedInput json.RawMessage
	// UpdatedPermissions, with Allow, change the session's permissions
	// before the call runs ("always allow this").
	UpdatedPermissions []PermissionUpdate
}

// config resolves the options into the runtime's configuration.
func (o Options) config() (runtime.Config, error) {
	switch o.Setup {
	case "", SetupInit, SetupMaintenance:
	default:
		return runtime.Config{}, fmt.Errorf("options: unknown Setup trigger %q (want %q or %q)", o.Setup, SetupInit, SetupMaintenance)
	}
	if err := o.checkReasoning(); err != nil {
		return runtime.Config{}, err
	}
	if o.TaskBudget < 0 {
		return runtime.Config{}, fmt.Errorf("options: TaskBudget %d must not be negative", o.TaskBudget)
	}
	switch o.Restart {
	case "", RestartClear, RestartReopen:
	default:
		return runtime.Config{}, fmt.Errorf("options: unknown Restart %q (want %q or %q)", o.Restart, RestartClear, RestartReopen)
	}
	mcpServers, err := mcpConfigJSON(o.MCPServers)
	if err != nil {
		return runtime.Config{}, err
	}
	inProcess, err := sdkServerConfigs(o.MCPServers)
	if err != nil {
		return runtime.Config{}, err
	}
	cfg := runtime.Config{
		Launch: runtime.Launch{
			Name: o.Name, Model: o.Model, FallbackModel: o.FallbackModel, PermissionMode: string(o.PermissionMode),
			Settings: o.Settings, SettingSources: o.SettingSources, MCPConfig: o.MCPConfig, StrictMCPConfig: o.StrictMCPConfig,
			AddDirs: o.AddDirs, Agent: o.Agent, AgentsJSON: o.AgentsJSON, PluginDirs: o.PluginDirs, Tools: o.Tools,
			AllowedTools: o.AllowedTools, DisallowedTools: o.DisallowedTools, PermissionPromptTool: o.PermissionPromptTool,
			MaxThinkingTokens: o.MaxThinkingTokens, SystemPrompt: o.SystemPrompt, AppendSystemPrompt: o.AppendSystemPrompt,
			Thinking: o.Thinking, ThinkingDisplay: o.ThinkingDisplay, Effort: o.Effort, TaskBudget: o.TaskBudget,
		},
		Cwd: o.Cwd, ProjectConfigRoot: o.ProjectConfigRoot, SessionID: o.SessionID,
		Continue: o.Continue, Resume: o.Resume, ForkSession: o.ForkSession, ResumeSessionAt: o.ResumeSessionAt,
		ResumeDropsTurn: o.ResumeDropsTurn, OnTranscriptWrite: transcriptMirror(o.OnTranscriptWrite),
		MaxTurns: o.MaxTurns, MaxBudgetUSD: o.MaxBudgetUSD, Betas: o.Betas, Untrusted: o.Untrusted,
		ManagedSettings:      o.ManagedSettings,
		PluginDirsWithoutMCP: o.PluginDirsWithoutMCP,
		Hooks:                callbackHooks(o.Hooks), IncludeHookEvents: o.IncludeHookEvents, HookStatus: o.HookStatusMessages,
		Agents: agentDefs(o.Agents), JSONSchema: o.JSONSchema,
		MCPServers: mcpServers, InProcessMCP: inProcess, Sandbox: o.Sandbox.sandbox(), FileCheckpointing: o.FileCheckpointing,
		Approve:       o.CanUseTool.approve(),
		OnElicitation: elicit(o.OnElicitation), OnMCPProgress: progress(o.OnMCPProgress),
		Notify: o.Notify, Logger: o.Logger, IncludePartialMessages: o.IncludePartialMessages,
		NoSessionPersistence: o.NoSessionPersistence, Env: o.Env, HTTPClient: o.HTTPClient, WrapTransport: o.WrapTransport, TextFiles: o.TextFiles, Terminal: o.Terminal,
		Entrypoint: o.Entrypoint, Setup: string(o.Setup), Restart: string(o.Restart), WithoutCredentials: o.WithoutCredentials, Bare: o.Bare,
	}
	return cfg, nil
}

// checkReasoning refuses a thinking mode, display or effort the API does
// not know, naming the option.
func (o Options) checkReasoning() error {
	for _, c := range []struct {
		name, value string
		want        []string
	}{
		{"Thinking", o.Thinking, []string{"adaptive", "enabled", "disabled"}},
		{"ThinkingDisplay", o.ThinkingDisplay, []string{"summarized", "omitted"}},
		{"Effort", o.Effort, EffortLevels()},
	} {
		if c.value != "" && !slices.Contains(c.want, c.value) {
			return fmt.Errorf("options: unknown %s %q (want %s)", c.name, c.value, strings.Join(c.want, ", "))
		}
	}
	return nil
}

// EffortLevels are the efforts Options.Effort takes, lowest first.
func EffortLevels() []string { return []string{"low", "medium", "high", "xhigh", "max"} }

// approve is the callback as the runtime asks it; nil for none.
func (cb CanUseTool) approve() func(context.Context, runtime.ApprovalRequest) (runtime.Approval, error) {
	if cb == nil {
		return nil
	}
	return func(ctx context.Context, req runtime.ApprovalRequest) (runtime.Approval, error) {
		res, err := cb(ctx, req.ToolName, req.Input, ToolPermissionContext{ToolUseID: req.ToolUseID, Reason: req.Reason,
			Suggestions: SuggestPermissions(req.ToolName, req.Input, req.Cwd), BlockedPath: blockedPath(req.ToolName, req.Input, req.Cwd)})
		return runtime.Approval{Allow: res.Allow, Message: res.Message, UpdatedInput: res.UpdatedInput,
			UpdatedPermissions: permissionUpdates(res.UpdatedPermissions)}, err
	}
}

// configOf is the runtime's configuration for the functions that look at a
// folder without starting a session.
func configOf(opts Options) runtime.Config {
	return runtime.Config{Launch: runtime.Launch{Settings: opts.Settings, SettingSources: opts.SettingSources},
		Cwd: opts.Cwd, ProjectConfigRoot: opts.ProjectConfigRoot, Env: opts.Env, Untrusted: opts.Untrusted, ManagedSettings: opts.ManagedSettings}
}

// TextFiles holds the text of files for a session's file tools
// (Options.TextFiles). Paths are absolute; an error fails the tool call
// with it.
type TextFiles interface {
	ReadTextFile(ctx context.Context, path string) (string, error)
	WriteTextFile(ctx context.Context, path, content string) error
}

// Terminal runs a command for Bash (Options.Terminal): args are the
// program and its arguments (the shell, "-c" and a script that also keeps
// the working directory for the next command), to run in dir with exactly
// env. Run returns once the command has ended, with what it printed
// (stdout and stderr as the terminal showed them) and its exit status
// (128+N for signal N); when ctx ends first (an interrupt, Bash's timeout)
// it stops the command and returns what it had. An error is a command that
// could not be run.
type Terminal interface {
	Run(ctx context.Context, args []string, dir string, env []string) (output string, exitCode int, err error)
}
