package session

import (
	"bytes"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/tackcode/tack/internal/atomicfile"
	"github.com/tackcode/tack/internal/jsonx"
	"github.com/tackcode/tack/internal/llm"
	"github.com/tackcode/tack/internal/protocol"
)

// Schemas holds the JSON Schemas of the files this package writes:
// workflow.schema.json, prefix.schema.json and transcript-record.schema.json.
//
//go:embed schema/*.schema.json
var Schemas embed.FS

// WorkflowVersion is the schema_version of workflow and prefix files.
const WorkflowVersion = 1

// Workflow is a session's workflow record, <projectDir>/<id>/workflow.json:
// the launch options Claude Code forgets on resume (seed 001), which tack
// restores. Slices are written as [] when empty.
type Workflow struct {
	SchemaVersion        int       `json:"schema_version"`
	SessionID            string    `json:"session_id"`
	Name                 string    `json:"name,omitempty"`
	Cwd                  string    `json:"cwd"`
	CreatedAt            time.Time `json:"created_at"`
	UpdatedAt            time.Time `json:"updated_at"`
	Model                string    `json:"model,omitempty"`
	FallbackModel        string    `json:"fallback_model,omitempty"`
	PermissionMode       string    `json:"permission_mode"`
	Settings             string    `json:"settings,omitempty"`
	SettingSources       []string  `json:"setting_sources,omitempty"`
	MCPConfig            []string  `json:"mcp_config"`
	StrictMCPConfig      bool      `json:"strict_mcp_config"`
	AddDirs              []string  `json:"add_dirs"`
	Agent                string    `json:"agent,omitempty"`
	Agents               string    `json:"agents,omitempty"`
	PluginDirs           []string  `json:"plugin_dirs"`
	Tools                []string  `json:"tools,omitempty"`
	AllowedTools         []string  `json:"allowed_tools"`
	DisallowedTools      []string  `json:"disallowed_tools"`
	PermissionPromptTool string    `json:"permission_prompt_tool,omitempty"`
	MaxThinkingTokens    int       `json:"max_thinking_tokens,omitempty"`
	// SystemPrompt is nil when --system-prompt was not given.
	SystemPrompt       *string   `json:"system_prompt,omitempty"`
	AppendSystemPrompt string    `json:"append_system_prompt,omitempty"`
	CostUSD            float64   `json:"cost_usd"`
	LastTool           *LastTool `json:"last_tool,omitempty"`
	// DeferredToolUse is the call a PreToolUse hook deferred when the
	// session stopped: resuming it decides the call (the transcript keeps
	// its tool_use without a result).
	DeferredToolUse *protocol.DeferredToolUse `json:"deferred_tool_use,omitempty"`
	// HooksOnce names the once-only hooks that have run in the session
	// (hook.OnceLog keys), so that a resume does not run them again.
	HooksOnce []string `json:"hooks_once,omitempty"`
	// Resume is the arguments that resume the session; SaveWorkflow fills
	// it with ["--resume", name or id] when empty.
	Resume []string `json:"resume"`
}

// LastTool is the last tool call and the permission decision it got.
type LastTool struct {
	Name string `json:"name"`
	// Decision is allow, deny or ask.
	Decision string `json:"decision"`
}

// Prefix is the start of a session's first request, kept in
// <projectDir>/<id>/prefix.json so a resumed session sends the same bytes
// and still hits the prompt cache.
type Prefix struct {
	SchemaVersion int       `json:"schema_version"`
	SessionID     string    `json:"session_id"`
	Model         string    `json:"model,omitempty"`
	SavedAt       time.Time `json:"saved_at"`
	// System and Tools are the request's "system" and "tools" arrays, verbatim.
	System json.RawMessage `json:"system"`
	Tools  json.RawMessage `json:"tools"`
}

// PrefixOf cuts the system blocks and tools array out of the body req sends.
func PrefixOf(sessionID string, req *llm.Request) (Prefix, error) {
	body, err := req.Body()
	if err != nil {
		return Prefix{}, fmt.Errorf("encode request prefix: %w", err)
	}
	var d doc
	if d.parse(body) != nil || d.root().kind != kindObject {
		return Prefix{}, errors.New("encode request prefix: request body is not a JSON object")
	}
	p := Prefix{SchemaVersion: WorkflowVersion, SessionID: sessionID, Model: req.Model,
		System: json.RawMessage("[]"), Tools: json.RawMessage("[]")}
	d.members(0, func(k, v int) {
		switch key := d.tape[k]; {
		case key.is(body, "system"):
			p.System = append(json.RawMessage(nil), d.tape[v].raw(body)...)
		case key.is(body, "tools"):
			p.Tools = append(json.RawMessage(nil), d.tape[v].raw(body)...)
		}
	})
	return p, nil
}

// SystemBlocks decodes the system array; a request built from them encodes
// the same bytes.
func (p Prefix) SystemBlocks() ([]llm.Block, error) {
	var blocks []llm.Block
	if err := json.Unmarshal(p.System, &blocks); err != nil {
		return nil, fmt.Errorf("prefix system blocks: %w", err)
	}
	return blocks, nil
}

// ToolSpecs returns the tools array as raw specs, which encode verbatim
// (with their names and whether they are deferred, to compare them with
// the tools offered now).
func (p Prefix) ToolSpecs() ([]llm.ToolSpec, error) {
	var raws []json.RawMessage
	if err := json.Unmarshal(p.Tools, &raws); err != nil {
		return nil, fmt.Errorf("prefix tools: %w", err)
	}
	specs := make([]llm.ToolSpec, len(raws))
	for i, r := range raws {
		var head struct {
			Name         string `json:"name"`
			DeferLoading bool   `json:"defer_loading"`
		}
		if err := json.Unmarshal(r, &head); err != nil {
			return nil, fmt.Errorf("prefix tool %d: %w", i, err)
		}
		specs[i] = llm.ToolSpec{Name: head.Name, DeferLoading: head.DeferLoading, Raw: r}
	}
	return specs, nil
}

func workflowPath(projectDir, id string) string {
	return filepath.Join(projectDir, id, "workflow.json")
}

func prefixPath(projectDir, id string) string { return filepath.Join(projectDir, id, "prefix.json") }

// SaveWorkflow validates w and writes it atomically. It sets SchemaVersion,
// SessionID from id, UpdatedAt (and CreatedAt when zero) and default Resume.
func SaveWorkflow(projectDir, id string, w Workflow) error {
	if !IsSessionID(id) {
		return fmt.Errorf("save workflow record: %q is not a session id", id)
	}
	now := time.Now().UTC()
	w.SchemaVersion, w.SessionID = WorkflowVersion, id
	if w.CreatedAt.IsZero() {
		w.CreatedAt = now
	}
	w.UpdatedAt = now
	if len(w.Resume) == 0 {
		w.Resume = resumeArgs(id, w.Name)
	}
	for _, s := range []*[]string{&w.MCPConfig, &w.AddDirs, &w.PluginDirs, &w.AllowedTools, &w.DisallowedTools} {
		if *s == nil {
			*s = []string{}
		}
	}
	data, err := json.MarshalIndent(w, "", "  ")
	if err != nil {
		return fmt.Errorf("encode workflow: %w", err)
	}
	path := workflowPath(projectDir, id)
	if err := validate(workflowSchema, path, data); err != nil {
		return err
	}
	return writeAtomic(path, append(data, '\n'))
}

func resumeArgs(id, name string) []string {
	if name != "" {
		return []string{"--resume", name}
	}
	return []string{"--resume", id}
}

// LoadWorkflow reads and validates the workflow record of session id. A
// missing record gives an error matching os.ErrNotExist.
func LoadWorkflow(projectDir, id string) (*Workflow, error) {
	if !IsSessionID(id) {
		return nil, fmt.Errorf("load workflow record: %q is not a session id", id)
	}
	return loadWorkflowFile(workflowPath(projectDir, id))
}

func loadWorkflowFile(path string) (*Workflow, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		// Both ErrNotFound and fs.ErrNotExist match: a session without a
		// record (an older one) is normal.
		return nil, fmt.Errorf("workflow record: %w (%w)", err, ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("workflow record: %w", err)
	}
	if err := validate(workflowSchema, path, data); err != nil {
		return nil, err
	}
	var w Workflow
	if err := json.Unmarshal(data, &w); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return &w, nil
}

// UpdateWorkflow loads the workflow record of session id, lets fn change it
// and saves it (last_tool after a tool call, cost_usd after a turn…).
func UpdateWorkflow(projectDir, id string, fn func(*Workflow)) error {
	w, err := LoadWorkflow(projectDir, id)
	if err != nil {
		return err
	}
	fn(w)
	return SaveWorkflow(projectDir, id, *w)
}

// SavePrefix validates p and writes it atomically, compact so that the raw
// arrays keep their bytes.
func SavePrefix(projectDir, id string, p Prefix) error {
	if !IsSessionID(id) {
		return fmt.Errorf("save request prefix: %q is not a session id", id)
	}
	p.SchemaVersion, p.SessionID = WorkflowVersion, id
	if p.SavedAt.IsZero() {
		p.SavedAt = time.Now().UTC()
	}
	if len(p.System) == 0 {
		p.System = json.RawMessage("[]")
	}
	if len(p.Tools) == 0 {
		p.Tools = json.RawMessage("[]")
	}
	// Built by hand: encoding/json would compact the raw arrays, and a tool
	// schema's whitespace is part of the cached prefix.
	head, err := jsonx.Marshal(struct {
		SchemaVersion int       `json:"schema_version"`
		SessionID     string    `json:"session_id"`
		Model         string    `json:"model,omitempty"`
		SavedAt       time.Time `json:"saved_at"`
	}{p.SchemaVersion, p.SessionID, p.Model, p.SavedAt})
	if err != nil {
		return fmt.Errorf("encode prefix: %w", err)
	}
	data := append(head[:len(head)-1:len(head)-1], `,"system":`...)
	data = append(append(data, p.System...), `,"tools":`...)
	data = append(append(data, p.Tools...), '}')
	path := prefixPath(projectDir, id)
	if err := validate(prefixSchema, path, data); err != nil {
		return err
	}
	return writeAtomic(path, append(data, '\n'))
}

// LoadPrefix reads and validates the prefix of session id.
func LoadPrefix(projectDir, id string) (*Prefix, error) {
	if !IsSessionID(id) {
		return nil, fmt.Errorf("load request prefix: %q is not a session id", id)
	}
	path := prefixPath(projectDir, id)
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("request prefix: %w (%w)", err, ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("request prefix: %w", err)
	}
	if err := validate(prefixSchema, path, data); err != nil {
		return nil, err
	}
	var p Prefix
	if err := json.Unmarshal(data, &p); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return &p, nil
}

// writeAtomic replaces path by data, whole (see atomicfile), creating its
// folder; the file is private to the user, as transcripts are.
func writeAtomic(path string, data []byte) error {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("create %s: %w", dir, err)
	}
	return atomicfile.Write(path, data, 0o600)
}

// Schema validation. github.com/google/jsonschema-go is used rather than
// santhosh-tekuri/jsonschema: it is already linked into tack and costs
// ~0.1 ms at start-up, where santhosh-tekuri compiles its meta-schemas in
// an init function (~4 ms and 1.7 MB on every start of tack; measured).
// Tests check the schemas with santhosh-tekuri too.

// schemaFile is an embedded schema, resolved on first use (~0.6 ms) and
// immutable from then on.
type schemaFile struct {
	name     string
	resolved func() (*jsonschema.Resolved, error)
}

func newSchemaFile(name string) schemaFile {
	return schemaFile{name: name, resolved: sync.OnceValues(func() (*jsonschema.Resolved, error) {
		data, err := Schemas.ReadFile("schema/" + name)
		if err != nil {
			return nil, err
		}
		var sch jsonschema.Schema
		if err := json.Unmarshal(data, &sch); err != nil {
			return nil, fmt.Errorf("schema %s: %w", name, err)
		}
		res, err := sch.Resolve(nil)
		if err != nil {
			return nil, fmt.Errorf("schema %s: %w", name, err)
		}
		return res, nil
	})}
}

var (
	workflowSchema = newSchemaFile("workflow.schema.json")
	prefixSchema   = newSchemaFile("prefix.schema.json")
)

// validate checks data against schema; errors name path.
func validate(s schemaFile, path string, data []byte) error {
	res, err := s.resolved()
	if err != nil {
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	var doc any
	if err := dec.Decode(&doc); err != nil {
		return fmt.Errorf("%s: invalid JSON: %w", path, err)
	}
	if dec.More() {
		return fmt.Errorf("%s: invalid JSON: data after the top-level value", path)
	}
	if err := res.Validate(doc); err != nil {
		return fmt.Errorf("%s: does not match %s: %w", path, s.name, err)
	}
	return nil
}
