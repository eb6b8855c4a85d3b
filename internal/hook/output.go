package hook

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// Output is the JSON a hook may answer with: a command hook's stdout when it
// exits 0, an http hook's 2xx body, a callback's return value. Every field is
// optional; which ones an event honours is documented on Outcome.
type Output struct {
	// Continue false stops the session after this event, whatever else the
	// hooks decided; StopReason is shown to the user.
	Continue   *bool  `json:"continue,omitempty"`
	StopReason string `json:"stopReason,omitempty"`
	// SuppressOutput hides the hook's stdout from the transcript view.
	SuppressOutput bool `json:"suppressOutput,omitempty"`
	// SystemMessage is shown to the user.
	SystemMessage string `json:"systemMessage,omitempty"`
	// Decision is "block" (with Reason) for the events that can block. On
	// PreToolUse the older "approve"/"block" mean allow/deny.
	Decision string `json:"decision,omitempty"`
	Reason   string `json:"reason,omitempty"`
	// HookSpecificOutput carries the event's own fields; its HookEventName
	// must name the event the hook ran for.
	HookSpecificOutput *SpecificOutput `json:"hookSpecificOutput,omitempty"`
	// Async is an SDK callback's "I answer later" ({"async": true}); it counts
	// as success without a decision. AsyncTimeout is in milliseconds.
	Async        bool    `json:"async,omitempty"`
	AsyncTimeout float64 `json:"asyncTimeout,omitempty"`
}

// SpecificOutput is Output.hookSpecificOutput. Fields other than
// HookEventName belong to particular events (Outcome says what each
// becomes):
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
type SpecificOutput struct {
	HookEventName Event `json:"hookEventName"`

	// PermissionDecision is allow, deny, ask or defer.
	PermissionDecision       string          `json:"permissionDecision,omitempty"`
	PermissionDecisionReason string          `json:"permissionDecisionReason,omitempty"`
	UpdatedInput             json.RawMessage `json:"updatedInput,omitempty"`
	AdditionalContext        string          `json:"additionalContext,omitempty"`

	Decision *PermissionRequestDecision `json:"decision,omitempty"`

	UpdatedMCPToolOutput json.RawMessage `json:"updatedMCPToolOutput,omitempty"`
	UpdatedToolOutput    json.RawMessage `json:"updatedToolOutput,omitempty"`

	// Retry tells the model it may try a denied call again.
	Retry bool `json:"retry,omitempty"`

	// InitialUserMessage is a first prompt for a session that starts
	// without one; SessionTitle names the session.
	InitialUserMessage string `json:"initialUserMessage,omitempty"`
	SessionTitle       string `json:"sessionTitle,omitempty"`
	// SuppressOriginalPrompt keeps the prompt itself out of the
	// conversation, leaving only the hooks' context.
	SuppressOriginalPrompt bool `json:"suppressOriginalPrompt,omitempty"`

	// WatchPaths are files the session should watch for FileChanged.
	WatchPaths []string `json:"watchPaths,omitempty"`

	// Action (accept, decline or cancel) and Content (an accepted form's
	// fields) answer an elicitation in the user's place.
	Action  string          `json:"action,omitempty"`
	Content json.RawMessage `json:"content,omitempty"`

	// WorktreePath is the worktree a WorktreeCreate hook made itself.
	WorktreePath string `json:"worktreePath,omitempty"`
}

// PermissionRequestDecision answers a PermissionRequest in place of the user.
type PermissionRequestDecision struct {
	// Behavior is allow or deny.
	Behavior string `json:"behavior"`
	// UpdatedInput and UpdatedPermissions (an array of permission updates)
	// go with allow.
	UpdatedInput       json.RawMessage `json:"updatedInput,omitempty"`
	UpdatedPermissions json.RawMessage `json:"updatedPermissions,omitempty"`
	// Message and Interrupt (stop the whole turn) go with deny.
	Message   string `json:"message,omitempty"`
	Interrupt bool   `json:"interrupt,omitempty"`
}

// parseText reads a hook's textual answer (exit-0 stdout, an http body, an
// mcp_tool result). Text that is not a JSON object is plain output, not an
// error, as in Claude Code; out is nil then. A JSON object whose fields have
// the wrong types is an error: the hook meant to answer and got it wrong.
func parseText(text string) (out *Output, err error) {
	trimmed := bytes.TrimSpace([]byte(text))
	if len(trimmed) == 0 || trimmed[0] != '{' || !json.Valid(trimmed) {
		return nil, nil
	}
	var o Output
	if err := json.Unmarshal(trimmed, &o); err != nil {
		return nil, fmt.Errorf("invalid hook JSON output: %w", err)
	}
	return &o, nil
}
