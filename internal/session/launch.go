package session

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/tackcode/tack/internal/protocol"
)

// Launch is what tack keeps beside the workflow record, in
// <projectDir>/<id>/launch.json, to launch a resumed session as it was:
// the options given on the command line (which Claude Code forgets on
// resume, seed 001), the once-only hooks that ran, a deferred call, the
// cost so far. Slices are written as [] when empty.
type Launch struct {
	SchemaVersion int       `json:"schema_version"`
	SessionID     string    `json:"session_id"`
	CreatedAt     time.Time `json:"created_at"`
	UpdatedAt     time.Time `json:"updated_at"`
	Model         string    `json:"model,omitempty"`
	FallbackModel string    `json:"fallback_model,omitempty"`
	// Settings is the --settings value as given: a file or inline JSON.
	Settings       string   `json:"settings,omitempty"`
	SettingSources []string `json:"setting_sources,omitempty"`
	// MCPConfig is the --mcp-config values as given: files or inline JSON.
	MCPConfig            []string `json:"mcp_config"`
	StrictMCPConfig      bool     `json:"strict_mcp_config"`
	AddDirs              []string `json:"add_dirs"`
	Agent                string   `json:"agent,omitempty"`
	Agents               string   `json:"agents,omitempty"`
	PluginDirs           []string `json:"plugin_dirs"`
	Tools                []string `json:"tools,omitempty"`
	AllowedTools         []string `json:"allowed_tools"`
	DisallowedTools      []string `json:"disallowed_tools"`
	PermissionPromptTool string   `json:"permission_prompt_tool,omitempty"`
	MaxThinkingTokens    int      `json:"max_thinking_tokens,omitempty"`
	// Thinking, ThinkingDisplay, Effort and TaskBudget are --thinking,
	// --thinking-display, --effort and --task-budget.
	Thinking        string `json:"thinking,omitempty"`
	ThinkingDisplay string `json:"thinking_display,omitempty"`
	Effort          string `json:"effort,omitempty"`
	TaskBudget      int    `json:"task_budget,omitempty"`
	// SystemPrompt is nil when --system-prompt was not given.
	SystemPrompt       *string `json:"system_prompt,omitempty"`
	AppendSystemPrompt string  `json:"append_system_prompt,omitempty"`
	CostUSD            float64 `json:"cost_usd"`
	// DeferredToolUse is the call a PreToolUse hook deferred when the
	// session stopped: resuming it decides the call (the transcript keeps
	// its tool_use without a result).
	DeferredToolUse *protocol.DeferredToolUse `json:"deferred_tool_use,omitempty"`
	// HooksOnce names the once-only hooks that have run in the session
	// (hook.OnceLog keys), so that a resume does not run them again.
	HooksOnce []string `json:"hooks_once,omitempty"`
}

func launchPath(projectDir, id string) string {
	return filepath.Join(projectDir, id, "launch.json")
}

// SaveLaunch writes l atomically (synced the first time: see writeAtomic). It sets SchemaVersion,
// SessionID from id, UpdatedAt (and CreatedAt when zero).
func SaveLaunch(projectDir, id string, l Launch) error {
	if !IsSessionID(id) {
		return fmt.Errorf("save launch record: %q is not a session id", id)
	}
	now := time.Now().UTC()
	l.SchemaVersion, l.SessionID = WorkflowVersion, id
	if l.CreatedAt.IsZero() {
		l.CreatedAt = now
	}
	l.UpdatedAt = now
	for _, s := range []*[]string{&l.MCPConfig, &l.AddDirs, &l.PluginDirs, &l.AllowedTools, &l.DisallowedTools} {
		if *s == nil {
			*s = []string{}
		}
	}
	data, err := json.MarshalIndent(l, "", "  ")
	if err != nil {
		return fmt.Errorf("encode launch record: %w", err)
	}
	path := launchPath(projectDir, id)
	for name, list := range map[string][]string{"mcp_config": l.MCPConfig, "add_dirs": l.AddDirs, "plugin_dirs": l.PluginDirs,
		"setting_sources": l.SettingSources, "tools": l.Tools, "allowed_tools": l.AllowedTools, "disallowed_tools": l.DisallowedTools, "hooks_once": l.HooksOnce} {
		if slices.Contains(list, "") {
			return fmt.Errorf("%s: %s has an empty entry", path, name)
		}
	}
	_, statErr := os.Lstat(path)
	return writeAtomic(path, append(data, '\n'), errors.Is(statErr, fs.ErrNotExist))
}

// LoadLaunch reads and validates the launch record of session id. A session
// an older tack recorded has its launch in workflow.json, which is read
// instead. A missing record gives an error matching os.ErrNotExist and
// ErrNotFound.
func LoadLaunch(projectDir, id string) (*Launch, error) {
	if !IsSessionID(id) {
		return nil, fmt.Errorf("load launch record: %q is not a session id", id)
	}
	return loadLaunchFile(projectDir, id)
}

func loadLaunchFile(projectDir, id string) (*Launch, error) {
	path := launchPath(projectDir, id)
	data, err := readRecord(path, "launch record")
	if errors.Is(err, fs.ErrNotExist) {
		if old, ok := legacyLaunch(projectDir, id); ok {
			return old, nil
		}
	}
	if err != nil {
		return nil, err
	}
	if err := validate(launchSchema, path, data); err != nil {
		return nil, err
	}
	var l Launch
	if err := json.Unmarshal(data, &l); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return &l, nil
}
