package hook

import (
	"encoding/json"
	"fmt"
	"path/filepath"

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

// MCPServer says which MCP server a tool comes from, on the payloads of
// calls of MCP tools (mcp__server__tool).
type MCPServer struct {
	Name string `json:"name"`
	// Source is the scope that configured the server (project, user,
	// local, plugin:NAME, sdk, …).
	Source string `json:"source"`
}

// SetupInput is sent when the session is set up for a repository: tack
// --init or --init-only (trigger init), or --maintenance (trigger
// maintenance). Matchers test the trigger.
type SetupInput struct {
	Base
	Trigger string `json:"trigger"`
}

// SessionStartInput is sent when a session starts or restarts.
type SessionStartInput struct {
	Base
	// Source is startup, resume, clear, compact or fork; matchers test it.
	Source string `json:"source"`
	Model  string `json:"model,omitempty"`
	// SessionTitle is the session's title, when it has one (a resumed
	// session's).
	SessionTitle string `json:"session_title,omitempty"`
}

// InstructionsLoadedInput is sent for each instructions file put into the
// context (CLAUDE.md, CLAUDE.local.md, .claude/rules/*.md, an @-included
// file): at start, and later when a nested one is read lazily. Matchers test
// the load reason.
type InstructionsLoadedInput struct {
	Base
	FilePath string `json:"file_path"`
	// MemoryType is User, Project, Local or Managed.
	MemoryType string `json:"memory_type"`
	// LoadReason is session_start, nested_traversal, path_glob_match,
	// include or compact.
	LoadReason string `json:"load_reason"`
	// Globs are the paths: patterns of a rules file loaded because a file
	// they match was read.
	Globs []string `json:"globs,omitempty"`
	// TriggerFilePath is the file whose reading loaded this one (lazy loads).
	TriggerFilePath string `json:"trigger_file_path,omitempty"`
	// ParentFilePath is the file that @-included this one.
	ParentFilePath string `json:"parent_file_path,omitempty"`
}

// UserPromptSubmitInput is sent before a user prompt is processed.
type UserPromptSubmitInput struct {
	Base
	Prompt string `json:"prompt"`
	// Source says who authored the prompt (user, sdk, system, …); optional.
	Source string `json:"source,omitempty"`
	// SessionTitle is the session's title, when it has one.
	SessionTitle string `json:"session_title,omitempty"`
}

// UserPromptExpansionInput is sent when a slash command, a skill or an MCP
// prompt typed by the user expands into the prompt sent to the model.
// Matchers test the command name.
type UserPromptExpansionInput struct {
	Base
	// ExpansionType is slash_command (commands and skills) or mcp_prompt.
	ExpansionType string `json:"expansion_type"`
	// CommandName is the command without its slash ("deploy",
	// "mcp__server__prompt").
	CommandName string `json:"command_name"`
	CommandArgs string `json:"command_args"`
	// CommandSource is where the command is defined, in Claude Code's
	// words (projectSettings, userSettings, policySettings, plugin,
	// bundled, mcp), when known.
	CommandSource string `json:"command_source,omitempty"`
	// Prompt is the prompt as the user typed it ("/deploy staging"), not
	// its expansion: the hooks run before the command does.
	Prompt string `json:"prompt"`
}

// PreToolUseInput is sent before a tool call runs.
type PreToolUseInput struct {
	Base
	ToolName  string          `json:"tool_name"`
	ToolInput json.RawMessage `json:"tool_input"` // nil is sent as {}
	ToolUseID string          `json:"tool_use_id"`
	// MCPServer is set for the tools of MCP servers.
	MCPServer *MCPServer `json:"mcp_server,omitempty"`
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
	// MCPServer is set for the tools of MCP servers.
	MCPServer *MCPServer `json:"mcp_server,omitempty"`
}

// PermissionDeniedInput is sent when a tool call was refused: by a rule, the
// permission mode, a hook, the auto-mode classifier or the user.
type PermissionDeniedInput struct {
	Base
	ToolName  string          `json:"tool_name"`
	ToolInput json.RawMessage `json:"tool_input"` // nil is sent as {}
	ToolUseID string          `json:"tool_use_id"`
	// Reason says why the call was refused, as the model is told.
	Reason string `json:"reason"`
	// MCPServer is set for the tools of MCP servers.
	MCPServer *MCPServer `json:"mcp_server,omitempty"`
}

// PostToolUseInput is sent after a tool call succeeded.
type PostToolUseInput struct {
	Base
	ToolName     string          `json:"tool_name"`
	ToolInput    json.RawMessage `json:"tool_input"`    // nil is sent as {}
	ToolResponse json.RawMessage `json:"tool_response"` // nil is sent as null
	ToolUseID    string          `json:"tool_use_id"`
	// DurationMS is always sent, as Claude Code does.
	DurationMS int64 `json:"duration_ms"`
	// MCPServer is set for the tools of MCP servers.
	MCPServer *MCPServer `json:"mcp_server,omitempty"`
}

// PostToolUseFailureInput is sent after a tool call failed.
type PostToolUseFailureInput struct {
	Base
	ToolName  string          `json:"tool_name"`
	ToolInput json.RawMessage `json:"tool_input"` // nil is sent as {}
	ToolUseID string          `json:"tool_use_id"`
	Error     string          `json:"error"`
	// IsInterrupt is true when the user interrupted the call; always sent.
	IsInterrupt bool  `json:"is_interrupt"`
	DurationMS  int64 `json:"duration_ms,omitempty"`
	// MCPServer is set for the tools of MCP servers.
	MCPServer *MCPServer `json:"mcp_server,omitempty"`
}

// PostToolBatchInput is sent once after all the tool calls of one model turn
// ran (in parallel or in order), before the results go back to the model.
type PostToolBatchInput struct {
	Base
	// ToolCalls are the batch's calls, in the order the model made them.
	ToolCalls []BatchToolCall `json:"tool_calls"` // nil is sent as []
}

// BatchToolCall is one call of a PostToolBatch.
type BatchToolCall struct {
	ToolName  string          `json:"tool_name"`
	ToolInput json.RawMessage `json:"tool_input"` // nil is sent as {}
	ToolUseID string          `json:"tool_use_id"`
	// ToolResponse is the call's structured result; absent for a call that
	// did not run.
	ToolResponse json.RawMessage `json:"tool_response,omitempty"`
}

// NotificationInput is sent when tack shows the user a notification.
type NotificationInput struct {
	Base
	Message string `json:"message"`
	Title   string `json:"title,omitempty"`
	// NotificationType (permission_prompt, idle_prompt, auth_success, …) is
	// what matchers test.
	NotificationType string `json:"notification_type"`
}

// ElicitationInput is sent when an MCP server asks the user for input
// (elicitation/create), before the user is asked; a hook may answer in the
// user's place. Matchers test the server name.
type ElicitationInput struct {
	Base
	MCPServerName string `json:"mcp_server_name"`
	Message       string `json:"message"`
	// Mode is form (RequestedSchema describes the fields) or url (the user
	// is sent to URL).
	Mode          string `json:"mode,omitempty"`
	URL           string `json:"url,omitempty"`
	ElicitationID string `json:"elicitation_id,omitempty"`
	// RequestedSchema is the JSON Schema of a form's answer, verbatim.
	RequestedSchema json.RawMessage `json:"requested_schema,omitempty"`
}

// ElicitationResultInput is sent when the user (or a hook) answered an
// elicitation, before the answer goes back to the MCP server. Matchers test
// the server name.
type ElicitationResultInput struct {
	Base
	MCPServerName string `json:"mcp_server_name"`
	ElicitationID string `json:"elicitation_id,omitempty"`
	Mode          string `json:"mode,omitempty"`
	// Action is accept, decline or cancel.
	Action string `json:"action"`
	// Content is an accepted form's answer, verbatim.
	Content json.RawMessage `json:"content,omitempty"`
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
	// BackgroundTasks and SessionCrons are as in StopInput.
	BackgroundTasks []BackgroundTask `json:"background_tasks,omitempty"`
	SessionCrons    []SessionCron    `json:"session_crons,omitempty"`
}

// TaskCreatedInput is sent when a task is added to the session's task list
// (TaskCreate), before it is recorded.
type TaskCreatedInput struct {
	Base
	TaskID          string `json:"task_id"`
	TaskSubject     string `json:"task_subject"`
	TaskDescription string `json:"task_description,omitempty"`
	// TeammateName and TeamName are set when a teammate of an agent team
	// created the task.
	TeammateName string `json:"teammate_name,omitempty"`
	TeamName     string `json:"team_name,omitempty"`
}

// TaskCompletedInput is sent when a task of the task list is about to be
// marked completed.
type TaskCompletedInput struct {
	Base
	TaskID          string `json:"task_id"`
	TaskSubject     string `json:"task_subject"`
	TaskDescription string `json:"task_description,omitempty"`
	// TeammateName and TeamName are set when a teammate of an agent team
	// completed the task.
	TeammateName string `json:"teammate_name,omitempty"`
	TeamName     string `json:"team_name,omitempty"`
}

// TeammateIdleInput is sent when a teammate of an agent team is about to
// go idle. tack has no agent teams yet, so it never fires; the type is here
// so that settings and SDK callbacks naming it read the same payload.
type TeammateIdleInput struct {
	Base
	TeammateName string `json:"teammate_name"`
	TeamName     string `json:"team_name"`
}

// StopInput is sent when the main agent is about to end its turn.
type StopInput struct {
	Base
	// StopHookActive is true when the turn goes on because a Stop hook
	// blocked before; hooks check it to avoid looping forever.
	StopHookActive       bool   `json:"stop_hook_active"`
	LastAssistantMessage string `json:"last_assistant_message"`
	// BackgroundTasks are the session's background tasks still running
	// (Bash's run_in_background), so that a hook can keep the model from
	// stopping before they end; SessionCrons are its scheduled prompts
	// (tack has none). Claude Code 2.1.328 sends them empty in some runs
	// and leaves them out in others; tack leaves out an empty list.
	BackgroundTasks []BackgroundTask `json:"background_tasks,omitempty"`
	SessionCrons    []SessionCron    `json:"session_crons,omitempty"`
}

// BackgroundTask is a background task of the session, as Stop and
// SubagentStop report it.
type BackgroundTask struct {
	ID string `json:"id"`
	// Type is the kind of task: "shell" for a background Bash command.
	Type        string `json:"type"`
	Status      string `json:"status"`
	Description string `json:"description"`
	// Command is a shell task's command line.
	Command string `json:"command,omitempty"`
	// AgentType is a subagent task's agent type.
	AgentType string `json:"agent_type,omitempty"`
}

// SessionCron is a prompt scheduled to run in the session.
type SessionCron struct {
	ID        string `json:"id"`
	Schedule  string `json:"schedule"`
	Recurring bool   `json:"recurring"`
	Prompt    string `json:"prompt"`
}

// StopFailureInput is sent instead of Stop when the turn ended on an API
// error. Matchers test the error type.
type StopFailureInput struct {
	Base
	// Error is the error's type: authentication_failed, billing_error,
	// rate_limit, overloaded, invalid_request, model_not_found,
	// server_error, max_output_tokens, unknown, …
	Error string `json:"error"`
	// ErrorDetails is the API's message.
	ErrorDetails         string `json:"error_details,omitempty"`
	LastAssistantMessage string `json:"last_assistant_message,omitempty"`
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

// ConfigChangeInput is sent when a settings file (or a skill) changed on
// disk during the session, before the change is applied. Matchers test the
// source.
type ConfigChangeInput struct {
	Base
	// Source is user_settings, project_settings, local_settings,
	// policy_settings or skills.
	Source   string `json:"source"`
	FilePath string `json:"file_path,omitempty"`
}

// FileChangedInput is sent when a file the session watches changed on disk
// outside tack. Matchers list file names: the hook runs when the changed
// file's base name is one of them.
type FileChangedInput struct {
	Base
	FilePath string `json:"file_path"`
	// Event is change, add or unlink.
	Event string `json:"event"`
}

// CwdChangedInput is sent when the session's working directory moved (a
// Bash cd).
type CwdChangedInput struct {
	Base
	OldCwd string `json:"old_cwd"`
	NewCwd string `json:"new_cwd"`
}

// WorktreeCreateInput is sent when the session is about to create a git
// worktree (--worktree, EnterWorktree, an isolated subagent). A hook that
// answers with a path (worktreePath, or plain stdout) has created the
// worktree itself, in git's place.
type WorktreeCreateInput struct {
	Base
	// Name is the worktree's name (a slug), not a path.
	Name string `json:"name"`
}

// WorktreeRemoveInput is sent when a worktree the session created is
// removed.
type WorktreeRemoveInput struct {
	Base
	WorktreePath string `json:"worktree_path"`
}

// SessionEndInput is sent when a session ends.
type SessionEndInput struct {
	Base
	// Reason is clear, resume, logout, prompt_input_exit or other; matchers
	// test it (Claude Code 2.1.328 does).
	Reason string `json:"reason"`
}

// EventName implementations.

func (SetupInput) EventName() Event               { return Setup }
func (SessionStartInput) EventName() Event        { return SessionStart }
func (InstructionsLoadedInput) EventName() Event  { return InstructionsLoaded }
func (UserPromptSubmitInput) EventName() Event    { return UserPromptSubmit }
func (UserPromptExpansionInput) EventName() Event { return UserPromptExpansion }
func (PreToolUseInput) EventName() Event          { return PreToolUse }
func (PermissionRequestInput) EventName() Event   { return PermissionRequest }
func (PermissionDeniedInput) EventName() Event    { return PermissionDenied }
func (PostToolUseInput) EventName() Event         { return PostToolUse }
func (PostToolUseFailureInput) EventName() Event  { return PostToolUseFailure }
func (PostToolBatchInput) EventName() Event       { return PostToolBatch }
func (NotificationInput) EventName() Event        { return Notification }
func (ElicitationInput) EventName() Event         { return Elicitation }
func (ElicitationResultInput) EventName() Event   { return ElicitationResult }
func (SubagentStartInput) EventName() Event       { return SubagentStart }
func (SubagentStopInput) EventName() Event        { return SubagentStop }
func (TaskCreatedInput) EventName() Event         { return TaskCreated }
func (TaskCompletedInput) EventName() Event       { return TaskCompleted }
func (TeammateIdleInput) EventName() Event        { return TeammateIdle }
func (StopInput) EventName() Event                { return Stop }
func (StopFailureInput) EventName() Event         { return StopFailure }
func (PreCompactInput) EventName() Event          { return PreCompact }
func (PostCompactInput) EventName() Event         { return PostCompact }
func (ConfigChangeInput) EventName() Event        { return ConfigChange }
func (FileChangedInput) EventName() Event         { return FileChanged }
func (CwdChangedInput) EventName() Event          { return CwdChanged }
func (WorktreeCreateInput) EventName() Event      { return WorktreeCreate }
func (WorktreeRemoveInput) EventName() Event      { return WorktreeRemove }
func (SessionEndInput) EventName() Event          { return SessionEnd }

// MatchValue implementations: what Claude Code's matchers test for each
// event. Tool events match the tool name, the others their own field; the
// events Claude Code fires without looking at matchers (UserPromptSubmit,
// PostToolBatch, Stop, the task and teammate events, CwdChanged, the
// worktree events) match nothing, so every handler runs.

func (in SetupInput) MatchValue() (string, bool)               { return in.Trigger, true }
func (in SessionStartInput) MatchValue() (string, bool)        { return in.Source, true }
func (in InstructionsLoadedInput) MatchValue() (string, bool)  { return in.LoadReason, true }
func (UserPromptSubmitInput) MatchValue() (string, bool)       { return "", false }
func (in UserPromptExpansionInput) MatchValue() (string, bool) { return in.CommandName, true }
func (in PreToolUseInput) MatchValue() (string, bool)          { return in.ToolName, true }
func (in PermissionRequestInput) MatchValue() (string, bool)   { return in.ToolName, true }
func (in PermissionDeniedInput) MatchValue() (string, bool)    { return in.ToolName, true }
func (in PostToolUseInput) MatchValue() (string, bool)         { return in.ToolName, true }
func (in PostToolUseFailureInput) MatchValue() (string, bool)  { return in.ToolName, true }
func (PostToolBatchInput) MatchValue() (string, bool)          { return "", false }
func (in NotificationInput) MatchValue() (string, bool)        { return in.NotificationType, true }
func (in ElicitationInput) MatchValue() (string, bool)         { return in.MCPServerName, true }
func (in ElicitationResultInput) MatchValue() (string, bool)   { return in.MCPServerName, true }
func (in SubagentStartInput) MatchValue() (string, bool)       { return in.AgentType, true }
func (in SubagentStopInput) MatchValue() (string, bool)        { return in.AgentType, true }
func (TaskCreatedInput) MatchValue() (string, bool)            { return "", false }
func (TaskCompletedInput) MatchValue() (string, bool)          { return "", false }
func (TeammateIdleInput) MatchValue() (string, bool)           { return "", false }
func (StopInput) MatchValue() (string, bool)                   { return "", false }
func (in StopFailureInput) MatchValue() (string, bool)         { return in.Error, true }
func (in PreCompactInput) MatchValue() (string, bool)          { return in.Trigger, true }
func (in PostCompactInput) MatchValue() (string, bool)         { return in.Trigger, true }
func (in ConfigChangeInput) MatchValue() (string, bool)        { return in.Source, true }
func (in FileChangedInput) MatchValue() (string, bool)         { return filepath.Base(in.FilePath), true }
func (CwdChangedInput) MatchValue() (string, bool)             { return "", false }
func (WorktreeCreateInput) MatchValue() (string, bool)         { return "", false }
func (WorktreeRemoveInput) MatchValue() (string, bool)         { return "", false }
func (in SessionEndInput) MatchValue() (string, bool)          { return in.Reason, true }

// MarshalJSON implementations. Each sets hook_event_name from the type and
// fills required JSON values a zero field would leave invalid, so any value
// of these types encodes to a payload that validates against its schema.
// The local "wire" types drop the methods, so encoding does not recurse.

func (in SetupInput) MarshalJSON() ([]byte, error) {
	type wire SetupInput
	in.HookEventName = Setup
	return jsonx.Marshal(wire(in))
}

func (in SessionStartInput) MarshalJSON() ([]byte, error) {
	type wire SessionStartInput
	in.HookEventName = SessionStart
	return jsonx.Marshal(wire(in))
}

func (in InstructionsLoadedInput) MarshalJSON() ([]byte, error) {
	type wire InstructionsLoadedInput
	in.HookEventName = InstructionsLoaded
	return jsonx.Marshal(wire(in))
}

func (in UserPromptSubmitInput) MarshalJSON() ([]byte, error) {
	type wire UserPromptSubmitInput
	in.HookEventName = UserPromptSubmit
	return jsonx.Marshal(wire(in))
}

func (in UserPromptExpansionInput) MarshalJSON() ([]byte, error) {
	type wire UserPromptExpansionInput
	in.HookEventName = UserPromptExpansion
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

func (in PermissionDeniedInput) MarshalJSON() ([]byte, error) {
	type wire PermissionDeniedInput
	in.HookEventName = PermissionDenied
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

func (in PostToolBatchInput) MarshalJSON() ([]byte, error) {
	type wire PostToolBatchInput
	in.HookEventName = PostToolBatch
	calls := make([]BatchToolCall, len(in.ToolCalls)) // a copy: the caller's slice stays as it was
	for i, c := range in.ToolCalls {
		c.ToolInput = orEmptyObject(c.ToolInput)
		calls[i] = c
	}
	in.ToolCalls = calls
	return jsonx.Marshal(wire(in))
}

func (in NotificationInput) MarshalJSON() ([]byte, error) {
	type wire NotificationInput
	in.HookEventName = Notification
	return jsonx.Marshal(wire(in))
}

func (in ElicitationInput) MarshalJSON() ([]byte, error) {
	type wire ElicitationInput
	in.HookEventName = Elicitation
	return jsonx.Marshal(wire(in))
}

func (in ElicitationResultInput) MarshalJSON() ([]byte, error) {
	type wire ElicitationResultInput
	in.HookEventName = ElicitationResult
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

func (in TaskCreatedInput) MarshalJSON() ([]byte, error) {
	type wire TaskCreatedInput
	in.HookEventName = TaskCreated
	return jsonx.Marshal(wire(in))
}

func (in TaskCompletedInput) MarshalJSON() ([]byte, error) {
	type wire TaskCompletedInput
	in.HookEventName = TaskCompleted
	return jsonx.Marshal(wire(in))
}

func (in TeammateIdleInput) MarshalJSON() ([]byte, error) {
	type wire TeammateIdleInput
	in.HookEventName = TeammateIdle
	return jsonx.Marshal(wire(in))
}

func (in StopInput) MarshalJSON() ([]byte, error) {
	type wire StopInput
	in.HookEventName = Stop
	return jsonx.Marshal(wire(in))
}

func (in StopFailureInput) MarshalJSON() ([]byte, error) {
	type wire StopFailureInput
	in.HookEventName = StopFailure
	if in.Error == "" {
		in.Error = "unknown" // the schema's enum has no empty value
	}
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

func (in ConfigChangeInput) MarshalJSON() ([]byte, error) {
	type wire ConfigChangeInput
	in.HookEventName = ConfigChange
	return jsonx.Marshal(wire(in))
}

func (in FileChangedInput) MarshalJSON() ([]byte, error) {
	type wire FileChangedInput
	in.HookEventName = FileChanged
	return jsonx.Marshal(wire(in))
}

func (in CwdChangedInput) MarshalJSON() ([]byte, error) {
	type wire CwdChangedInput
	in.HookEventName = CwdChanged
	return jsonx.Marshal(wire(in))
}

func (in WorktreeCreateInput) MarshalJSON() ([]byte, error) {
	type wire WorktreeCreateInput
	in.HookEventName = WorktreeCreate
	return jsonx.Marshal(wire(in))
}

func (in WorktreeRemoveInput) MarshalJSON() ([]byte, error) {
	type wire WorktreeRemoveInput
	in.HookEventName = WorktreeRemove
	return jsonx.Marshal(wire(in))
}

func (in SessionEndInput) MarshalJSON() ([]byte, error) {
	type wire SessionEndInput
	in.HookEventName = SessionEnd
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
	s, ok := spec(head.Event)
	if !ok {
		return nil, fmt.Errorf("parse hook input: unknown hook_event_name %q", head.Event)
	}
	in, err := s.decode(payload)
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

// toolPayload is implemented by the payloads of tool events.
type toolPayload interface {
	toolCall() (name string, input json.RawMessage)
}

func (in PreToolUseInput) toolCall() (string, json.RawMessage) {
	return in.ToolName, in.ToolInput
}

func (in PermissionRequestInput) toolCall() (string, json.RawMessage) {
	return in.ToolName, in.ToolInput
}

func (in PermissionDeniedInput) toolCall() (string, json.RawMessage) {
	return in.ToolName, in.ToolInput
}

func (in PostToolUseInput) toolCall() (string, json.RawMessage) {
	return in.ToolName, in.ToolInput
}

func (in PostToolUseFailureInput) toolCall() (string, json.RawMessage) {
	return in.ToolName, in.ToolInput
}

// toolCall returns the tool name and input of a tool event's payload (a
// value or a pointer).
func toolCall(in Input) (name string, input json.RawMessage, ok bool) {
	t, ok := in.(toolPayload)
	if !ok {
		return "", nil, false
	}
	name, input = t.toolCall()
	return name, input, true
}
