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
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/tackcode/tack/internal/atomicfile"
	"github.com/tackcode/tack/internal/jsonx"
	"github.com/tackcode/tack/internal/llm"
)

// Schemas holds the JSON Schemas of the files this package writes:
// workflow.schema.json (seed 001's, verbatim), launch.schema.json,
// prefix.schema.json and transcript-record.schema.json.
//
//go:embed schema/*.schema.json
var Schemas embed.FS

// WorkflowVersion is the schema_version of launch and prefix files.
const WorkflowVersion = 1

// Workflow is a session's workflow record, <projectDir>/<id>/workflow.json,
// exactly as seed 001 specifies it: where the session is (name, cwd), the
// permission mode, the settings and MCP files in effect, the arguments that
// resume it and the last tool decision. Whatever else tack restores on a
// resume lives beside it, in launch.json (Launch).
type Workflow struct {
	// Name is what --resume finds the session by: its custom title (-n,
	// /rename), or its id when it has none.
	Name string `json:"name"`
	// Cwd is the project directory; transcripts are stored per directory.
	Cwd            string `json:"cwd"`
	PermissionMode string `json:"permission_mode"`
	// Settings is the settings file in effect (SettingsRecord); MCPConfig
	// the MCP configuration file (MCPConfigRecord).
	Settings  string    `json:"settings"`
	MCPConfig string    `json:"mcp_config"`
	Resume    []string  `json:"resume,omitempty"`
	LastTool  *LastTool `json:"last_tool,omitempty"`

	// legacy marks a record read from the old form (legacy.go): it equals
	// no record, so that the next save writes the file in the new form.
	legacy bool
}

// LastTool is the last tool call and the permission decision it got.
type LastTool struct {
	Name string `json:"name"`
	// Decision is allow, deny or ask.
	Decision string `json:"decision"`
}

// Title is the custom title the record names, "" when the name is the
// session id (an unnamed session).
func (w *Workflow) Title(id string) string {
	if w.Name == id {
		return ""
	}
	return w.Name
}

// The files a record names when the launch named none: the project's.
const (
	DefaultSettingsFile = ".claude/settings.json"
	DefaultMCPFile      = ".mcp.json"
)

// SettingsRecord is the settings file of the record for a --settings value:
// the file it names, or the project's settings file when it is empty or
// inline JSON.
func SettingsRecord(flag string) string {
	if flag == "" || isInlineJSON(flag) {
		return DefaultSettingsFile
	}
	return flag
}

// MCPConfigRecord is the MCP file of the record for the --mcp-config
// values: the first file among them, or the project's .mcp.json.
func MCPConfigRecord(values []string) string {
	for _, v := range values {
		if v != "" && !isInlineJSON(v) {
			return v
		}
	}
	return DefaultMCPFile
}

func isInlineJSON(v string) bool {
	t := bytes.TrimSpace([]byte(v))
	return len(t) > 0 && (t[0] == '{' || t[0] == '[')
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

// PrefixOf is the system blocks and tools array of the body req sends, as
// it sends them.
func PrefixOf(sessionID string, req *llm.Request) (Prefix, error) {
	system, tools, err := req.EncodePrefix()
	if err != nil {
		return Prefix{}, fmt.Errorf("encode request prefix: %w", err)
	}
	return Prefix{SchemaVersion: WorkflowVersion, SessionID: sessionID, Model: req.Model, System: system, Tools: tools}, nil
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

// SaveWorkflow writes w, completed for session id (Complete), atomically.
// Tests hold what it writes to the seed's schema; a record is validated
// when it is read.
func SaveWorkflow(projectDir, id string, w Workflow) error {
	if !IsSessionID(id) {
		return fmt.Errorf("save workflow record: %q is not a session id", id)
	}
	w = w.Complete(id)
	data, err := json.MarshalIndent(w, "", "  ")
	if err != nil {
		return fmt.Errorf("encode workflow record: %w", err)
	}
	path := workflowPath(projectDir, id)
	if err := w.check(path); err != nil {
		return err
	}
	return writeAtomic(path, append(data, '\n'), false)
}

// Complete is w as the record of session id says it: what w leaves empty
// filled in (the name with id, the settings and MCP files with the
// project's, the resume arguments with ["--resume", name]).
func (w Workflow) Complete(id string) Workflow {
	if w.Name == "" {
		w.Name = id
	}
	if w.Settings == "" {
		w.Settings = DefaultSettingsFile
	}
	if w.MCPConfig == "" {
		w.MCPConfig = DefaultMCPFile
	}
	if len(w.Resume) == 0 {
		w.Resume = ResumeArgs(w.Name)
	}
	return w
}

// Equal reports whether w and o hold the same record, in the same form.
func (w Workflow) Equal(o Workflow) bool {
	if w.legacy || o.legacy {
		return false
	}
	sameTool := w.LastTool == o.LastTool || w.LastTool != nil && o.LastTool != nil && *w.LastTool == *o.LastTool
	return sameTool && w.Name == o.Name && w.Cwd == o.Cwd && w.PermissionMode == o.PermissionMode &&
		w.Settings == o.Settings && w.MCPConfig == o.MCPConfig && slices.Equal(w.Resume, o.Resume)
}

// ResumeArgs are the arguments that resume the session named name (a
// custom title or the id).
func ResumeArgs(name string) []string { return []string{"--resume", name} }

// LoadWorkflow reads and validates the workflow record of session id; a
// record an older tack wrote is migrated (see legacy.go). A missing record
// gives an error matching os.ErrNotExist and ErrNotFound.
func LoadWorkflow(projectDir, id string) (*Workflow, error) {
	if !IsSessionID(id) {
		return nil, fmt.Errorf("load workflow record: %q is not a session id", id)
	}
	path := workflowPath(projectDir, id)
	data, err := readRecord(path, "workflow record")
	if err != nil {
		return nil, err
	}
	if old, ok, err := legacyOf(path, data); ok || err != nil {
		if err != nil {
			return nil, err
		}
		return old.workflow(id), nil
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

// readRecord reads one of a session's record files; what names it in an
// error.
func readRecord(path, what string) ([]byte, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		// Both ErrNotFound and fs.ErrNotExist match: a session without a
		// record (an older one) is normal.
		return nil, fmt.Errorf("%s: %w (%w)", what, err, ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	return data, nil
}

// UpdateWorkflow loads the workflow record of session id, lets fn change it
// and saves it (the name and resume arguments after a rename…).
func UpdateWorkflow(projectDir, id string, fn func(*Workflow)) error {
	w, err := LoadWorkflow(projectDir, id)
	if err != nil {
		return err
	}
	fn(w)
	return SaveWorkflow(projectDir, id, *w)
}

// SavePrefix writes p atomically, compact so that the raw
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
	return writeAtomic(path, append(data, '\n'), false)
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
//
// The records are written again after every prompt from the session's
// state, so they are not synced (see atomicfile.Options.NoSync): a crash
// of tack leaves the old record or the new one, and only a power cut may
// lose the latest — the transcript, synced at the end of each prompt, is
// what must survive. durable syncs the write anyway: the first launch
// record, which alone holds the options a resume restores.
func writeAtomic(path string, data []byte, durable bool) error {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("create %s: %w", dir, err)
	}
	return atomicfile.WriteFile(path, data, atomicfile.Options{Mode: 0o600, NoSync: !durable})
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
	launchSchema   = newSchemaFile("launch.schema.json")
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

// recordModes are the permission modes a workflow record may hold (the
// enum of workflow.schema.json; a test holds the two equal).
var recordModes = []string{"default", "acceptEdits", "plan", "auto", "dontAsk", "bypassPermissions"}

// check refuses a record the schema would: saves check what a caller can
// get wrong without compiling the schema in every process (tests validate
// what Save writes against the schema itself).
func (w Workflow) check(path string) error {
	for _, f := range [][2]string{{"name", w.Name}, {"cwd", w.Cwd}, {"settings", w.Settings}, {"mcp_config", w.MCPConfig}} {
		if f[1] == "" {
			return fmt.Errorf("%s: %s is empty", path, f[0])
		}
	}
	if !slices.Contains(recordModes, w.PermissionMode) {
		return fmt.Errorf("%s: permission_mode %q is not one of %s", path, w.PermissionMode, strings.Join(recordModes, ", "))
	}
	return nil
}
