package session

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/tackcode/tack/internal/llm"
)

func TestWorkflowRoundTrip(t *testing.T) {
	dir := t.TempDir()
	sys := ""
	w := Workflow{Name: "auth-refactor", Cwd: "/repo/app", Model: "claude-opus-4-5", PermissionMode: "acceptEdits",
		Settings: ".claude/settings.json", MCPConfig: []string{".mcp.json", `{"mcpServers":{}}`}, StrictMCPConfig: true,
		AddDirs: []string{"/repo/lib"}, Agent: "reviewer", AllowedTools: []string{"Bash(npm test *)"},
		DisallowedTools: []string{"WebFetch"}, SystemPrompt: &sys, AppendSystemPrompt: "Be brief.", CostUSD: 0.42,
		LastTool: &LastTool{Name: "mcp__docs__search", Decision: "allow"}}
	if err := SaveWorkflow(dir, sid1, w); err != nil {
		t.Fatal(err)
	}
	got, err := LoadWorkflow(dir, sid1)
	if err != nil {
		t.Fatal(err)
	}
	if got.SchemaVersion != 1 || got.SessionID != sid1 || got.CreatedAt.IsZero() || got.UpdatedAt.IsZero() ||
		!slices.Equal(got.Resume, []string{"--resume", "auth-refactor"}) || got.PluginDirs == nil {
		t.Errorf("defaults not set: %+v", got)
	}
	w.SchemaVersion, w.SessionID, w.CreatedAt, w.UpdatedAt, w.Resume, w.PluginDirs = 1, sid1, got.CreatedAt, got.UpdatedAt, got.Resume, []string{}
	if jsonOf(t, got) != jsonOf(t, w) {
		t.Errorf("round trip\n got %s\nwant %s", jsonOf(t, got), jsonOf(t, w))
	}
	// Readable: indented, and only the workflow file and no temp left.
	data, _ := os.ReadFile(filepath.Join(dir, sid1, "workflow.json"))
	if !strings.Contains(string(data), "\n  \"permission_mode\": \"acceptEdits\",\n") {
		t.Errorf("not indented:\n%s", data)
	}
	ents, _ := os.ReadDir(filepath.Join(dir, sid1))
	if len(ents) != 1 {
		t.Errorf("files %v", ents)
	}
	// Without a name, resume uses the id.
	if err := SaveWorkflow(dir, sid2, Workflow{Cwd: "/w", PermissionMode: "default"}); err != nil {
		t.Fatal(err)
	}
	if got, _ := LoadWorkflow(dir, sid2); !slices.Equal(got.Resume, []string{"--resume", sid2}) {
		t.Errorf("resume %v", got.Resume)
	}
	// UpdateWorkflow keeps created_at and changes what fn changes.
	if err := UpdateWorkflow(dir, sid1, func(w *Workflow) { w.LastTool = &LastTool{Name: "Bash", Decision: "deny"} }); err != nil {
		t.Fatal(err)
	}
	up, _ := LoadWorkflow(dir, sid1)
	if up.LastTool.Decision != "deny" || !up.CreatedAt.Equal(got.CreatedAt) || up.Name != "auth-refactor" {
		t.Errorf("updated %+v", up)
	}
}

func TestWorkflowErrorsNameTheFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, sid1, "workflow.json")
	if _, err := LoadWorkflow(dir, sid1); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing: %v", err)
	}
	cases := map[string]string{
		"{":                    "invalid JSON",
		`{"cwd":"/x"} junk`:    "invalid JSON",
		`{"schema_version":1}`: "does not match workflow.schema.json",
		`{"schema_version":1,"session_id":"` + sid1 + `","cwd":"/x","created_at":"2026-01-01T00:00:00Z","updated_at":"2026-01-01T00:00:00Z","permission_mode":"yolo","resume":["--resume","x"]}`:                                                "permission_mode",
		`{"schema_version":1,"session_id":"` + sid1 + `","cwd":"/x","created_at":"2026-01-01T00:00:00Z","updated_at":"2026-01-01T00:00:00Z","permission_mode":"plan","resume":["--resume","x"],"extra":1}`:                                      "extra",
		`{"schema_version":1,"session_id":"` + sid1 + `","cwd":"/x","created_at":"2026-01-01T00:00:00Z","updated_at":"2026-01-01T00:00:00Z","permission_mode":"plan","resume":["--continue","x"]}`:                                              "resume",
		`{"schema_version":1,"session_id":"` + sid1 + `","cwd":"/x","created_at":"2026-01-01T00:00:00Z","updated_at":"2026-01-01T00:00:00Z","permission_mode":"plan","resume":["--resume","x"],"last_tool":{"name":"Bash","decision":"maybe"}}`: "decision",
	}
	os.MkdirAll(filepath.Dir(path), 0o700)
	for content, want := range cases {
		os.WriteFile(path, []byte(content), 0o600)
		_, err := LoadWorkflow(dir, sid1)
		if err == nil || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: error %v, want the path and %q", content, err, want)
		}
	}
	// Saving a record the schema refuses writes nothing.
	err := SaveWorkflow(dir, sid2, Workflow{Cwd: "/w", PermissionMode: "sometimes"})
	if err == nil || !strings.Contains(err.Error(), filepath.Join(dir, sid2, "workflow.json")) {
		t.Errorf("save: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, sid2)); !errors.Is(err, os.ErrNotExist) {
		t.Error("invalid record written")
	}
	if err := SaveWorkflow(dir, sid2, Workflow{PermissionMode: "default"}); err == nil {
		t.Error("record without cwd saved")
	}
	if err := SaveWorkflow(dir, "not-a-uuid", Workflow{Cwd: "/w", PermissionMode: "default"}); err == nil {
		t.Error("record with a bad session id saved")
	}
}

// mcpSchema is a tool schema as an MCP server sends it, whitespace and all:
// those bytes are part of the cached prefix.
const mcpSchema = `{
  "type": "object",
  "properties": { "q": { "type": "string" } }
}`

func TestPrefixKeepsTheRequestBytes(t *testing.T) {
	dir := t.TempDir()
	req := &llm.Request{Model: "claude-test-1", MaxTokens: 1000,
		System: []llm.Block{llm.Text("You are tack."), {Type: llm.TypeText, Text: "Main prompt <env>\n", CacheControl: &llm.CacheControl{Type: "ephemeral", TTL: "1h"}}},
		Tools: []llm.ToolSpec{{Name: "Bash", Description: "Run a command", InputSchema: json.RawMessage(`{"type":"object","properties":{"command":{"type":"string"}},"required":["command"],"additionalProperties":false}`)},
			{Name: "mcp__docs__search", Description: "Search docs", InputSchema: json.RawMessage(mcpSchema), DeferLoading: true},
			{Raw: json.RawMessage(`{"type":"web_search_20250305","name":"web_search","max_uses":5}`)}},
		Messages: []llm.Message{{Role: llm.RoleUser, Content: []llm.Block{llm.Text("hi")}}}}
	want, err := req.Body()
	if err != nil {
		t.Fatal(err)
	}
	p, err := PrefixOf(sid1, req)
	if err != nil {
		t.Fatal(err)
	}
	if err := SavePrefix(dir, sid1, p); err != nil {
		t.Fatal(err)
	}
	loaded, err := LoadPrefix(dir, sid1)
	if err != nil {
		t.Fatal(err)
	}
	system, err := loaded.SystemBlocks()
	if err != nil {
		t.Fatal(err)
	}
	tools, err := loaded.ToolSpecs()
	if err != nil {
		t.Fatal(err)
	}
	if tools[1].Name != "mcp__docs__search" || loaded.Model != "claude-test-1" {
		t.Errorf("tools %+v", tools)
	}
	again := &llm.Request{Model: req.Model, MaxTokens: req.MaxTokens, System: system, Tools: tools, Messages: req.Messages}
	got, err := again.Body()
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("resumed prefix differs\n got %s\nwant %s", got, want)
	}
	// Broken prefix files name themselves.
	path := filepath.Join(dir, sid1, "prefix.json")
	for content, want := range map[string]string{
		"[": "invalid JSON",
		`{"schema_version":1,"session_id":"` + sid1 + `","system":[],"tools":[{"description":"x"}]}`: "prefix.schema.json",
	} {
		os.WriteFile(path, []byte(content), 0o600)
		if _, err := LoadPrefix(dir, sid1); err == nil || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v", content, err)
		}
	}
}

// compileSchemas compiles the embedded schemas with santhosh-tekuri's
// validator, which checks them against the draft 2020-12 meta-schema (a
// second, independent implementation; only tests link it).
func compileSchemas(t *testing.T) map[string]*jsonschema.Schema {
	t.Helper()
	c := jsonschema.NewCompiler()
	c.AssertFormat()
	names := []string{"workflow.schema.json", "prefix.schema.json", "transcript-record.schema.json"}
	for _, n := range names {
		data, err := Schemas.ReadFile("schema/" + n)
		if err != nil {
			t.Fatal(err)
		}
		doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(data))
		if err != nil {
			t.Fatalf("%s: %v", n, err)
		}
		if err := c.AddResource(n, doc); err != nil {
			t.Fatal(err)
		}
	}
	out := map[string]*jsonschema.Schema{}
	for _, n := range names {
		s, err := c.Compile(n)
		if err != nil {
			t.Fatalf("%s: %v", n, err)
		}
		out[n] = s
	}
	return out
}

func validateWith(s *jsonschema.Schema, data []byte) error {
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(data))
	if err != nil {
		return err
	}
	return s.Validate(v)
}

func TestWorkflowFilesMatchBothValidators(t *testing.T) {
	schemas := compileSchemas(t)
	dir := t.TempDir()
	if err := SaveWorkflow(dir, sid1, Workflow{Cwd: "/w", PermissionMode: "dontAsk", LastTool: &LastTool{Name: "Read", Decision: "ask"}}); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(workflowPath(dir, sid1))
	if err := validateWith(schemas["workflow.schema.json"], data); err != nil {
		t.Errorf("workflow.json: %v", err)
	}
	p, _ := PrefixOf(sid1, &llm.Request{Model: "m", System: []llm.Block{llm.Text("s")}, Tools: []llm.ToolSpec{{Name: "Bash"}}})
	if err := SavePrefix(dir, sid1, p); err != nil {
		t.Fatal(err)
	}
	data, _ = os.ReadFile(prefixPath(dir, sid1))
	if err := validateWith(schemas["prefix.schema.json"], data); err != nil {
		t.Errorf("prefix.json: %v", err)
	}
	// The seed's own example record is refused: mcp_config is a list in
	// tack's record and the tack fields are required.
	seed := `{"name":"auth-refactor","cwd":"/repo/app","permission_mode":"default","settings":".claude/settings.json","mcp_config":".mcp.json","resume":["--resume","auth-refactor"],"last_tool":{"name":"mcp__docs__search","decision":"allow"}}`
	if validateWith(schemas["workflow.schema.json"], []byte(seed)) == nil {
		t.Error("seed example accepted")
	}
}
