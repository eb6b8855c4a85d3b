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

// The hook events: the 29 of Claude Code 2.1.328, which tack fires with
// Claude Code's payloads. (Claude Code's SDK names four more, PreModelSwitch,
// PostModelSwitch, DirectoryAdded and MessageDisplay, that tack does not
// fire.)
const (
	// HookSetup: the session is set up for a repository (--init,
	// --init-only, --maintenance). Payload: SetupHookInput.
	HookSetup HookEvent = "Setup"
	// HookSessionStart: the session starts, resumes, or restarts after
	// /clear or a compaction. Payload: SessionStartHookInput.
	HookSessionStart HookEvent = "SessionStart"
	// HookInstructionsLoaded: an instructions file (CLAUDE.md, a rules
	// file) was put into the context. Payload: InstructionsLoadedHookInput.
	HookInstructionsLoaded HookEvent = "InstructionsLoaded"
	// HookUserPromptSubmit: a prompt is about to run; a hook may refuse it
	// or add context. Payload: UserPromptSubmitHookInput.
	HookUserPromptSubmit HookEvent = "UserPromptSubmit"
	// HookUserPromptExpansion: a slash command or skill expands into a
	// prompt; a hook may stop it or add context. Payload:
	// UserPromptExpansionHookInput.
	HookUserPromptExpansion HookEvent = "UserPromptExpansion"
	// HookPreToolUse: a tool call is about to run; a hook may allow, deny,
	// defer or change it. Payload: PreToolUseHookInput.
	HookPreToolUse HookEvent = "PreToolUse"
	// HookPermissionRequest: a tool call needs approval; a hook may answer
	// in the user's place. Payload: PermissionRequestHookInput.
	HookPermissionRequest HookEvent = "PermissionRequest"
	// HookPermissionDenied: a tool call was refused; a hook may let the
	// model retry it. Payload: PermissionDeniedHookInput.
	HookPermissionDenied HookEvent = "PermissionDenied"
	// HookPostToolUse: a tool call succeeded. Payload: PostToolUseHookInput.
	HookPostToolUse HookEvent = "PostToolUse"
	// HookPostToolUseFailure: a tool call failed. Payload:
	// PostToolUseFailureHookInput.
	HookPostToolUseFailure HookEvent = "PostToolUseFailure"
	// HookPostToolBatch: all the tool calls of a model turn ran. Payload:
	// PostToolBatchHookInput.
	HookPostToolBatch HookEvent = "PostToolBatch"
	// HookNotification: the session tells its user something (it waits
	// for a permission, it is idle). Payload: NotificationHookInput.
	HookNotification HookEvent = "Notification"
	// HookElicitation: an MCP server asks the user for input; a hook may
	// answer in the user's place. Payload: ElicitationHookInput.
	HookElicitation HookEvent = "Elicitation"
	// HookElicitationResult: an elicitation was answered; a hook may
	// change the answer. Payload: ElicitationResultHookInput.
	HookElicitationResult HookEvent = "ElicitationResult"
	// HookSubagentStart: a subagent starts. Payload: SubagentStartHookInput.
	HookSubagentStart HookEvent = "SubagentStart"
	// HookSubagentStop: a subagent is about to finish; a hook may make it
	// go on. Payload: SubagentStopHookInput.
	HookSubagentStop HookEvent = "SubagentStop"
	// HookTaskCreated: a task is about to be added to the task list; a
	// hook may refuse it. Payload: TaskCreatedHookInput.
	HookTaskCreated HookEvent = "TaskCreated"
	// HookTaskCompleted: a task is about to be marked completed; a hook
	// may keep it open. Payload: TaskCompletedHookInput.
	HookTaskCompleted HookEvent = "TaskCompleted"
	// HookTeammateIdle: a teammate of an agent team is about to go idle
	// (tack has no agent teams: it never fires). Payload:
	// TeammateIdleHookInput.
	HookTeammateIdle HookEvent = "TeammateIdle"
	// HookStop: the main agent is about to end its turn; a hook may make
	// it go on. Payload: StopHookInput.
	HookStop HookEvent = "Stop"
	// HookStopFailure: the turn ended on an API error. Payload:
	// StopFailureHookInput.
	HookStopFailure HookEvent = "StopFailure"
	// HookPreCompact: the conversation is about to be compacted; a hook
	// may prevent it. Payload: PreCompactHookInput.
	HookPreCompact HookEvent = "PreCompact"
	// HookPostCompact: the conversation was compacted. Payload:
	// PostCompactHookInput.
	HookPostCompact HookEvent = "PostCompact"
	// HookConfigChange: a settings file changed during the session; a hook
	// may keep the old settings. Payload: ConfigChangeHookInput.
	HookConfigChange HookEvent = "ConfigChange"
	// HookFileChanged: a watched file changed on disk outside tack.
	// Payload: FileChangedHookInput.
	HookFileChanged HookEvent = "FileChanged"
	// HookCwdChanged: the working directory moved. Payload:
	// CwdChangedHookInput.
	HookCwdChanged HookEvent = "CwdChanged"
	// HookWorktreeCreate: a git worktree is about to be created; a hook
	// may create it itself. Payload: WorktreeCreateHookInput.
	HookWorktreeCreate HookEvent = "WorktreeCreate"
	// HookWorktreeRemove: a worktree the session created is removed.
	// Payload: WorktreeRemoveHookInput.
	HookWorktreeRemove HookEvent = "WorktreeRemove"
	// HookSessionEnd: the session ends. Payload: SessionEndHookInput.
	HookSessionEnd HookEvent = "SessionEnd"
)

// HookEvents lists every hook event, in the order of a session's life.
func HookEvents() []HookEvent {
	return []HookEvent{
		HookSetup, HookSessionStart, HookInstructionsLoaded, HookUserPromptSubmit, HookUserPromptExpansion,
		HookPreToolUse, HookPermissionRequest, HookPermissionDenied, HookPostToolUse, HookPostToolUseFailure,
		HookPostToolBatch, HookNotification, HookElicitation, HookElicitationResult, HookSubagentStart,
		HookSubagentStop, HookTaskCreated, HookTaskCompleted, HookTeammateIdle, HookStop, HookStopFailure,
		HookPreCompact, HookPostCompact, HookConfigChange, HookFileChanged, HookCwdChanged, HookWorktreeCreate,
		HookWorktreeRemove, HookSessionEnd,
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

// HookMCPServer says which MCP server a tool comes from, on the payloads
// of calls of MCP tools.
type HookMCPServer struct {
	Name string `json:"name"`
	// Source is the scope that configured the server (project, user,
	// plugin:NAME, sdk…).
	Source string `json:"source"`
}

// SetupHookInput is the payload of HookSetup.
type SetupHookInput struct {
	BaseHookInput
	// Trigger is init (--init, --init-only) or maintenance
	// (--maintenance); matchers test it.
	Trigger string `json:"trigger"`
}

// SessionStartHookInput is the payload of HookSessionStart.
type SessionStartHookInput struct {
	BaseHookInput
	// Source is startup, resume, clear, compact or fork; matchers test it.
	Source string `json:"source"`
	Model  string `json:"model,omitempty"`
	// SessionTitle is the session's title, when it has one.
	SessionTitle string `json:"session_title,omitempty"`
}

// InstructionsLoadedHookInput is the payload of HookInstructionsLoaded.
type InstructionsLoadedHookInput struct {
	BaseHookInput
	FilePath string `json:"file_path"`
	// MemoryType is User, Project, Local or Managed.
	MemoryType string `json:"memory_type"`
	// LoadReason (session_start, nested_traversal, path_glob_match,
	// include, compact) is what matchers test.
	LoadReason string `json:"load_reason"`
	// Globs are the paths: patterns of a rules file loaded because a
	// file they match was read.
	Globs []string `json:"globs,omitempty"`
	// TriggerFilePath is the file whose reading loaded this one.
	TriggerFilePath string `json:"trigger_file_path,omitempty"`
	// ParentFilePath is the file that @-included this one.
	ParentFilePath string `json:"parent_file_path,omitempty"`
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
	// SessionTitle is the session's title, when it has one.
	SessionTitle string `json:"session_title,omitempty"`
}

// UserPromptExpansionHookInput is the payload of HookUserPromptExpansion.
type UserPromptExpansionHookInput struct {
	BaseHookInput
	// ExpansionType is slash_command (commands and skills) or mcp_prompt.
	ExpansionType string `json:"expansion_type"`
	// CommandName, without its slash, is what matchers test.
	CommandName string `json:"command_name"`
	CommandArgs string `json:"command_args"`
	// CommandSource is where the command is defined (projectSettings,
	// userSettings, policySettings, plugin, bundled, mcp), when known.
	CommandSource string `json:"command_source,omitempty"`
	// Prompt is the prompt as the user typed it, not its expansion.
	Prompt string `json:"prompt"`
}

// PreToolUseHookInput is the payload of HookPreToolUse.
type PreToolUseHookInput struct {
	BaseHookInput
	ToolName  string          `json:"tool_name"`
	ToolInput json.RawMessage `json:"tool_input"`
	ToolUseID string          `json:"tool_use_id"`
	// MCPServer is set for the tools of MCP servers.
	MCPServer *HookMCPServer `json:"mcp_server,omitempty"`
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
	// MCPServer is set for the tools of MCP servers.
	MCPServer *HookMCPServer `json:"mcp_server,omitempty"`
}

// PermissionDeniedHookInput is the payload of HookPermissionDenied.
type PermissionDeniedHookInput struct {
	BaseHookInput
	ToolName  string          `json:"tool_name"`
	ToolInput json.RawMessage `json:"tool_input"`
	ToolUseID string          `json:"tool_use_id"`
	// Reason says why the call was refused.
	Reason string `json:"reason"`
	// MCPServer is set for the tools of MCP servers.
	MCPServer *HookMCPServer `json:"mcp_server,omitempty"`
}

// PostToolUseHookInput is the payload of HookPostToolUse.
type PostToolUseHookInput struct {
	BaseHookInput
	ToolName     string          `json:"tool_name"`
	ToolInput    json.RawMessage `json:"tool_input"`
	ToolResponse json.RawMessage `json:"tool_response"`
	ToolUseID    string          `json:"tool_use_id"`
	DurationMS   int64           `json:"duration_ms"`
	// MCPServer is set for the tools of MCP servers.
	MCPServer *HookMCPServer `json:"mcp_server,omitempty"`
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
	// MCPServer is set for the tools of MCP servers.
	MCPServer *HookMCPServer `json:"mcp_server,omitempty"`
}

// PostToolBatchHookInput is the payload of HookPostToolBatch.
type PostToolBatchHookInput struct {
	BaseHookInput
	// ToolCalls are the turn's calls, in the order the model made them.
	ToolCalls []HookBatchToolCall `json:"tool_calls"`
}

// HookBatchToolCall is one call of a PostToolBatchHookInput.
type HookBatchToolCall struct {
	ToolName  string          `json:"tool_name"`
	ToolInput json.RawMessage `json:"tool_input"`
	ToolUseID string          `json:"tool_use_id"`
	// ToolResponse is the call's result; absent for a call that did not
	// run.
	ToolResponse json.RawMessage `json:"tool_response,omitempty"`
}

// NotificationHookInput is the payload of HookNotification.
type NotificationHookInput struct {
	BaseHookInput
	Message string `json:"message"`
	Title   string `json:"title,omitempty"`
	// NotificationType (permission_prompt, idle_prompt, auth_success…) is
	// what matchers test.
	NotificationType string `json:"notification_type"`
}

// ElicitationHookInput is the payload of HookElicitation.
type ElicitationHookInput struct {
	BaseHookInput
	// MCPServerName is what matchers test.
	MCPServerName string `json:"mcp_server_name"`
	Message       string `json:"message"`
	// Mode is form (RequestedSchema describes the answer) or url.
	Mode            string          `json:"mode,omitempty"`
	URL             string          `json:"url,omitempty"`
	ElicitationID   string          `json:"elicitation_id,omitempty"`
	RequestedSchema json.RawMessage `json:"requested_schema,omitempty"`
}

// ElicitationResultHookInput is the payload of HookElicitationResult.
type ElicitationResultHookInput struct {
	BaseHookInput
	// MCPServerName is what matchers test.
	MCPServerName string `json:"mcp_server_name"`
	ElicitationID string `json:"elicitation_id,omitempty"`
	Mode          string `json:"mode,omitempty"`
	// Action is accept, decline or cancel; Content an accepted form's
	// fields.
	Action  string          `json:"action"`
	Content json.RawMessage `json:"content,omitempty"`
}

// StopHookInput is the payload of HookStop.
type StopHookInput struct {
	BaseHookInput
	// StopHookActive is true when the turn goes on because a Stop hook
	// blocked before: a hook checks it not to loop forever.
	StopHookActive       bool   `json:"stop_hook_active"`
	LastAssistantMessage string `json:"last_assistant_message"`
	// BackgroundTasks are the background tasks still running (Bash's
	// run_in_background); SessionCrons the scheduled prompts (tack has
	// none). Absent when empty.
	BackgroundTasks []HookBackgroundTask `json:"background_tasks,omitempty"`
	SessionCrons    []HookSessionCron    `json:"session_crons,omitempty"`
}

// HookBackgroundTask is a background task of the session, as Stop and
// SubagentStop report it.
type HookBackgroundTask struct {
	ID          string `json:"id"`
	Type        string `json:"type"` // "shell" for a background Bash command
	Status      string `json:"status"`
	Description string `json:"description"`
	Command     string `json:"command,omitempty"`
	AgentType   string `json:"agent_type,omitempty"`
}

// HookSessionCron is a prompt scheduled to run in the session.
type HookSessionCron struct {
	ID        string `json:"id"`
	Schedule  string `json:"schedule"`
	Recurring bool   `json:"recurring"`
	Prompt    string `json:"prompt"`
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
	// BackgroundTasks and SessionCrons are as in StopHookInput.
	BackgroundTasks []HookBackgroundTask `json:"background_tasks,omitempty"`
	SessionCrons    []HookSessionCron    `json:"session_crons,omitempty"`
}

// TaskCreatedHookInput is the payload of HookTaskCreated.
type TaskCreatedHookInput struct {
	BaseHookInput
	TaskID          string `json:"task_id"`
	TaskSubject     string `json:"task_subject"`
	TaskDescription string `json:"task_description,omitempty"`
	// TeammateName and TeamName are set in agent teams.
	TeammateName string `json:"teammate_name,omitempty"`
	TeamName     string `json:"team_name,omitempty"`
}

// TaskCompletedHookInput is the payload of HookTaskCompleted.
type TaskCompletedHookInput struct {
	BaseHookInput
	TaskID          string `json:"task_id"`
	TaskSubject     string `json:"task_subject"`
	TaskDescription string `json:"task_description,omitempty"`
	// TeammateName and TeamName are set in agent teams.
	TeammateName string `json:"teammate_name,omitempty"`
	TeamName     string `json:"team_name,omitempty"`
}

// TeammateIdleHookInput is the payload of HookTeammateIdle.
type TeammateIdleHookInput struct {
	BaseHookInput
	TeammateName string `json:"teammate_name"`
	TeamName     string `json:"team_name"`
}

// StopFailureHookInput is the payload of HookStopFailure.
type StopFailureHookInput struct {
	BaseHookInput
	// Error is the error's type (rate_limit, invalid_request,
	// server_error…); matchers test it.
	Error string `json:"error"`
	// ErrorDetails is the API's message.
	ErrorDetails         string `json:"error_details,omitempty"`
	LastAssistantMessage string `json:"last_assistant_message,omitempty"`
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

// ConfigChangeHookInput is the payload of HookConfigChange.
type ConfigChangeHookInput struct {
	BaseHookInput
	// Source (user_settings, project_settings, local_settings,
	// policy_settings, skills) is what matchers test.
	Source   string `json:"source"`
	FilePath string `json:"file_path,omitempty"`
}

// FileChangedHookInput is the payload of HookFileChanged; matchers list
// file names, compared with FilePath's base name.
type FileChangedHookInput struct {
	BaseHookInput
	FilePath string `json:"file_path"`
	// Event is change, add or unlink.
	Event string `json:"event"`
}

// CwdChangedHookInput is the payload of HookCwdChanged.
type CwdChangedHookInput struct {
	BaseHookInput
	OldCwd string `json:"old_cwd"`
	NewCwd string `json:"new_cwd"`
}

// WorktreeCreateHookInput is the payload of HookWorktreeCreate.
type WorktreeCreateHookInput struct {
	BaseHookInput
	// Name is the worktree's name, not a path.
	Name string `json:"name"`
}

// WorktreeRemoveHookInput is the payload of HookWorktreeRemove.
type WorktreeRemoveHookInput struct {
	BaseHookInput
	WorktreePath string `json:"worktree_path"`
}

func (*SetupHookInput) EventName() HookEvent               { return HookSetup }
func (*SessionStartHookInput) EventName() HookEvent        { return HookSessionStart }
func (*InstructionsLoadedHookInput) EventName() HookEvent  { return HookInstructionsLoaded }
func (*UserPromptSubmitHookInput) EventName() HookEvent    { return HookUserPromptSubmit }
func (*UserPromptExpansionHookInput) EventName() HookEvent { return HookUserPromptExpansion }
func (*PreToolUseHookInput) EventName() HookEvent          { return HookPreToolUse }
func (*PermissionRequestHookInput) EventName() HookEvent   { return HookPermissionRequest }
func (*PermissionDeniedHookInput) EventName() HookEvent    { return HookPermissionDenied }
func (*PostToolUseHookInput) EventName() HookEvent         { return HookPostToolUse }
func (*PostToolUseFailureHookInput) EventName() HookEvent  { return HookPostToolUseFailure }
func (*PostToolBatchHookInput) EventName() HookEvent       { return HookPostToolBatch }
func (*NotificationHookInput) EventName() HookEvent        { return HookNotification }
func (*ElicitationHookInput) EventName() HookEvent         { return HookElicitation }
func (*ElicitationResultHookInput) EventName() HookEvent   { return HookElicitationResult }
func (*SubagentStartHookInput) EventName() HookEvent       { return HookSubagentStart }
func (*SubagentStopHookInput) EventName() HookEvent        { return HookSubagentStop }
func (*TaskCreatedHookInput) EventName() HookEvent         { return HookTaskCreated }
func (*TaskCompletedHookInput) EventName() HookEvent       { return HookTaskCompleted }
func (*TeammateIdleHookInput) EventName() HookEvent        { return HookTeammateIdle }
func (*StopHookInput) EventName() HookEvent                { return HookStop }
func (*StopFailureHookInput) EventName() HookEvent         { return HookStopFailure }
func (*PreCompactHookInput) EventName() HookEvent          { return HookPreCompact }
func (*PostCompactHookInput) EventName() HookEvent         { return HookPostCompact }
func (*ConfigChangeHookInput) EventName() HookEvent        { return HookConfigChange }
func (*FileChangedHookInput) EventName() HookEvent         { return HookFileChanged }
func (*CwdChangedHookInput) EventName() HookEvent          { return HookCwdChanged }
func (*WorktreeCreateHookInput) EventName() HookEvent      { return HookWorktreeCreate }
func (*WorktreeRemoveHookInput) EventName() HookEvent      { return HookWorktreeRemove }
func (*SessionEndHookInput) EventName() HookEvent          { return HookSessionEnd }

// hookInputs decode the payload of each event.
var hookInputs = map[HookEvent]func([]byte) (HookInput, error){
	HookSetup:               decodeHookInput[SetupHookInput],
	HookSessionStart:        decodeHookInput[SessionStartHookInput],
	HookInstructionsLoaded:  decodeHookInput[InstructionsLoadedHookInput],
	HookUserPromptSubmit:    decodeHookInput[UserPromptSubmitHookInput],
	HookUserPromptExpansion: decodeHookInput[UserPromptExpansionHookInput],
	HookPreToolUse:          decodeHookInput[PreToolUseHookInput],
	HookPermissionRequest:   decodeHookInput[PermissionRequestHookInput],
	HookPermissionDenied:    decodeHookInput[PermissionDeniedHookInput],
	HookPostToolUse:         decodeHookInput[PostToolUseHookInput],
	HookPostToolUseFailure:  decodeHookInput[PostToolUseFailureHookInput],
	HookPostToolBatch:       decodeHookInput[PostToolBatchHookInput],
	HookNotification:        decodeHookInput[NotificationHookInput],
	HookElicitation:         decodeHookInput[ElicitationHookInput],
	HookElicitationResult:   decodeHookInput[ElicitationResultHookInput],
	HookSubagentStart:       decodeHookInput[SubagentStartHookInput],
	HookSubagentStop:        decodeHookInput[SubagentStopHookInput],
	HookTaskCreated:         decodeHookInput[TaskCreatedHookInput],
	HookTaskCompleted:       decodeHookInput[TaskCompletedHookInput],
	HookTeammateIdle:        decodeHookInput[TeammateIdleHookInput],
	HookStop:                decodeHookInput[StopHookInput],
	HookStopFailure:         decodeHookInput[StopFailureHookInput],
	HookPreCompact:          decodeHookInput[PreCompactHookInput],
	HookPostCompact:         decodeHookInput[PostCompactHookInput],
	HookConfigChange:        decodeHookInput[ConfigChangeHookInput],
	HookFileChanged:         decodeHookInput[FileChangedHookInput],
	HookCwdChanged:          decodeHookInput[CwdChangedHookInput],
	HookWorktreeCreate:      decodeHookInput[WorktreeCreateHookInput],
	HookWorktreeRemove:      decodeHookInput[WorktreeRemoveHookInput],
	HookSessionEnd:          decodeHookInput[SessionEndHookInput],
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
//	PreToolUse           PermissionDecision, PermissionDecisionReason, UpdatedInput, AdditionalContext
//	PermissionRequest    Decision
//	PermissionDenied     Retry
//	PostToolUse          AdditionalContext, UpdatedMCPToolOutput, UpdatedToolOutput
//	SessionStart         AdditionalContext, InitialUserMessage, SessionTitle, WatchPaths
//	UserPromptSubmit     AdditionalContext, SessionTitle, SuppressOriginalPrompt
//	UserPromptExpansion  AdditionalContext, SuppressOriginalPrompt
//	CwdChanged, FileChanged           WatchPaths
//	Elicitation, ElicitationResult    Action, Content
//	WorktreeCreate       WorktreePath
//	others               AdditionalContext
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

	// Retry lets the model try a denied call again.
	Retry bool `json:"retry,omitempty"`
	// InitialUserMessage is a first prompt for a session started without
	// one; SessionTitle names the session.
	InitialUserMessage string `json:"initialUserMessage,omitempty"`
	SessionTitle       string `json:"sessionTitle,omitempty"`
	// SuppressOriginalPrompt, with a block, leaves the original prompt out
	// of the message telling the user it was blocked.
	SuppressOriginalPrompt bool `json:"suppressOriginalPrompt,omitempty"`
	// WatchPaths are files to watch from now on (HookFileChanged).
	WatchPaths []string `json:"watchPaths,omitempty"`
	// Action (accept, decline, cancel) and Content (an accepted form's
	// fields) answer an elicitation in the user's place.
	Action  string          `json:"action,omitempty"`
	Content json.RawMessage `json:"content,omitempty"`
	// WorktreePath is the worktree the hook created itself.
	WorktreePath string `json:"worktreePath,omitempty"`
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
			UpdatedMCPToolOutput: so.UpdatedMCPToolOutput, UpdatedToolOutput: so.UpdatedToolOutput,
			Retry: so.Retry, InitialUserMessage: so.InitialUserMessage, SessionTitle: so.SessionTitle,
			SuppressOriginalPrompt: so.SuppressOriginalPrompt, WatchPaths: so.WatchPaths,
			Action: so.Action, Content: so.Content, WorktreePath: so.WorktreePath}
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
