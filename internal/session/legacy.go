package session

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"time"

	"github.com/tackcode/tack/internal/protocol"
)

// legacyRecord is workflow.json as tack wrote it before the record followed
// seed 001 exactly: the seed's fields (mcp_config a list) and the launch
// options together, marked by schema_version. Reading one migrates it: the
// seed's fields become the Workflow, the rest the Launch; the next save
// writes both files in the new form.
type legacyRecord struct {
	SchemaVersion        int                       `json:"schema_version"`
	SessionID            string                    `json:"session_id"`
	Name                 string                    `json:"name"`
	Cwd                  string                    `json:"cwd"`
	CreatedAt            time.Time                 `json:"created_at"`
	UpdatedAt            time.Time                 `json:"updated_at"`
	Model                string                    `json:"model"`
	FallbackModel        string                    `json:"fallback_model"`
	PermissionMode       string                    `json:"permission_mode"`
	Settings             string                    `json:"settings"`
	SettingSources       []string                  `json:"setting_sources"`
	MCPConfig            []string                  `json:"mcp_config"`
	StrictMCPConfig      bool                      `json:"strict_mcp_config"`
	AddDirs              []string                  `json:"add_dirs"`
	Agent                string                    `json:"agent"`
	Agents               string                    `json:"agents"`
	PluginDirs           []string                  `json:"plugin_dirs"`
	Tools                []string                  `json:"tools"`
	AllowedTools         []string                  `json:"allowed_tools"`
	DisallowedTools      []string                  `json:"disallowed_tools"`
	PermissionPromptTool string                    `json:"permission_prompt_tool"`
	MaxThinkingTokens    int                       `json:"max_thinking_tokens"`
	SystemPrompt         *string                   `json:"system_prompt"`
	AppendSystemPrompt   string                    `json:"append_system_prompt"`
	CostUSD              float64                   `json:"cost_usd"`
	LastTool             *LastTool                 `json:"last_tool"`
	DeferredToolUse      *protocol.DeferredToolUse `json:"deferred_tool_use"`
	HooksOnce            []string                  `json:"hooks_once"`
	Resume               []string                  `json:"resume"`
}

// legacyOf decodes data as an old record when it is one (it has
// schema_version); ok is false for a record of the current form.
func legacyOf(path string, data []byte) (*legacyRecord, bool, error) {
	var head struct {
		SchemaVersion *int `json:"schema_version"`
	}
	if json.Unmarshal(data, &head) != nil || head.SchemaVersion == nil {
		return nil, false, nil
	}
	var old legacyRecord
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&old); err != nil {
		return nil, true, fmt.Errorf("%s: record of an older tack: %w", path, err)
	}
	if old.SchemaVersion != 1 {
		return nil, true, fmt.Errorf("%s: record of an older tack with schema_version %d (only 1 is known)", path, old.SchemaVersion)
	}
	return &old, true, nil
}

// workflow is the seed's record the old one holds.
func (o *legacyRecord) workflow(id string) *Workflow {
	name := o.Name
	if name == "" {
		name = id
	}
	mode := o.PermissionMode
	if mode == "" {
		mode = "default"
	}
	cwd := o.Cwd
	if cwd == "" {
		cwd = "."
	}
	return &Workflow{Name: name, Cwd: cwd, PermissionMode: mode, Settings: SettingsRecord(o.Settings),
		MCPConfig: MCPConfigRecord(o.MCPConfig), Resume: ResumeArgs(name), LastTool: o.LastTool, legacy: true}
}

// launch is the launch the old record holds.
func (o *legacyRecord) launch() *Launch {
	return &Launch{SchemaVersion: WorkflowVersion, SessionID: o.SessionID, CreatedAt: o.CreatedAt, UpdatedAt: o.UpdatedAt,
		Model: o.Model, FallbackModel: o.FallbackModel, Settings: o.Settings, SettingSources: o.SettingSources,
		MCPConfig: o.MCPConfig, StrictMCPConfig: o.StrictMCPConfig, AddDirs: o.AddDirs, Agent: o.Agent, Agents: o.Agents,
		PluginDirs: o.PluginDirs, Tools: o.Tools, AllowedTools: o.AllowedTools, DisallowedTools: o.DisallowedTools,
		PermissionPromptTool: o.PermissionPromptTool, MaxThinkingTokens: o.MaxThinkingTokens, SystemPrompt: o.SystemPrompt,
		AppendSystemPrompt: o.AppendSystemPrompt, CostUSD: o.CostUSD, DeferredToolUse: o.DeferredToolUse, HooksOnce: o.HooksOnce}
}

// legacyLaunch is the launch of session id when its workflow.json is an old
// record (the session has no launch.json then).
func legacyLaunch(projectDir, id string) (*Launch, bool) {
	path := workflowPath(projectDir, id)
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, false
	}
	old, ok, err := legacyOf(path, data)
	if !ok || err != nil {
		return nil, false
	}
	l := old.launch()
	l.SessionID = id
	return l, true
}
