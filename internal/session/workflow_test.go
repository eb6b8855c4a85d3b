package session

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/tackcode/tack/internal/llm"
)

func TestWorkflowRoundTrip(t *testing.T) {
	dir := t.TempDir()
	w := Workflow{Name: "auth-refactor", Cwd: "/repo/app", PermissionMode: "acceptEdits",
		Settings: ".claude/settings.json", MCPConfig: ".mcp.json",
		LastTool: &LastTool{Name: "mcp__docs__search", Decision: "allow"}}
	if err := SaveWorkflow(dir, sid1, w); err != nil {
		t.Fatal(err)
	}
	got, err := LoadWorkflow(dir, sid1)
	if err != nil {
		t.Fatal(err)
	}
	w.Resume = []string{"--resume", "auth-refactor"}
	if jsonOf(t, got) != jsonOf(t, w) {
		t.Errorf("round trip\n got %s\nwant %s", jsonOf(t, got), jsonOf(t, w))
	}
	// The file is the seed's example, field for field, indented.
	data, _ := os.ReadFile(filepath.Join(dir, sid1, "workflow.json"))
	want := `{
  "name": "auth-refactor",
  "cwd": "/repo/app",
  "permission_mode": "acceptEdits",
  "settings": ".claude/settings.json",
  "mcp_config": ".mcp.json",
  "resume": [
    "--resume",
    "auth-refactor"
  ],
  "last_tool": {
    "name": "mcp__docs__search",
    "decision": "allow"
  }
}
`
	if string(data) != want {
		t.Errorf("workflow.json:\n%s", data)
	}
	ents, _ := os.ReadDir(filepath.Join(dir, sid1))
	if len(ents) != 1 {
		t.Errorf("files %v", ents)
	}
	// Unnamed: the name and resume arguments are the id; the files are the
	// project's.
	if err := SaveWorkflow(dir, sid2, Workflow{Cwd: "/w", PermissionMode: "default"}); err != nil {
		t.Fatal(err)
	}
	got2, _ := LoadWorkflow(dir, sid2)
	if want := (Workflow{Name: sid2, Cwd: "/w", PermissionMode: "default", Settings: ".claude/settings.json",
		MCPConfig: ".mcp.json", Resume: []string{"--resume", sid2}}); jsonOf(t, got2) != jsonOf(t, want) || got2.Title(sid2) != "" {
		t.Errorf("unnamed %s", jsonOf(t, got2))
	}
	// UpdateWorkflow changes what fn changes.
	if err := UpdateWorkflow(dir, sid1, func(w *Workflow) { w.LastTool = &LastTool{Name: "Bash", Decision: "deny"} }); err != nil {
		t.Fatal(err)
	}
	up, _ := LoadWorkflow(dir, sid1)
	if up.LastTool.Decision != "deny" || up.Name != "auth-refactor" || up.Title(sid1) != "auth-refactor" {
		t.Errorf("updated %+v", up)
	}
}

func TestRecordFilesOfTheLaunch(t *testing.T) {
	for _, c := range []struct {
		settings, mcp string
		values        []string
		want          [2]string
	}{
		{"", "", nil, [2]string{".claude/settings.json", ".mcp.json"}},
		{"ci/settings.json", "", []string{`{"mcpServers":{}}`, "tools.json", "more.json"}, [2]string{"ci/settings.json", "tools.json"}},
		{` {"env":{}}`, "", []string{`{"mcpServers":{}}`}, [2]string{".claude/settings.json", ".mcp.json"}},
	} {
		if got := [2]string{SettingsRecord(c.settings), MCPConfigRecord(c.values)}; got != c.want {
			t.Errorf("%q %q: %v, want %v", c.settings, c.values, got, c.want)
		}
	}
}

func TestLaunchRoundTrip(t *testing.T) {
	dir := t.TempDir()
	sys := ""
	l := Launch{Model: "claude-opus-4-5", Settings: `{"env":{}}`, MCPConfig: []string{".mcp.json", `{"mcpServers":{}}`},
		StrictMCPConfig: true, AddDirs: []string{"/repo/lib"}, Agent: "reviewer", AllowedTools: []string{"Bash(npm test *)"},
		DisallowedTools: []string{"WebFetch"}, SystemPrompt: &sys, AppendSystemPrompt: "Be brief.", CostUSD: 0.42,
		HooksOnce: []string{"k1"}}
	if err := SaveLaunch(dir, sid1, l); err != nil {
		t.Fatal(err)
	}
	got, err := LoadLaunch(dir, sid1)
	if err != nil {
		t.Fatal(err)
	}
	if got.SchemaVersion != 1 || got.SessionID != sid1 || got.CreatedAt.IsZero() || got.UpdatedAt.IsZero() || got.PluginDirs == nil {
		t.Errorf("defaults not set: %+v", got)
	}
	l.SchemaVersion, l.SessionID, l.CreatedAt, l.UpdatedAt, l.PluginDirs = 1, sid1, got.CreatedAt, got.UpdatedAt, []string{}
	if jsonOf(t, got) != jsonOf(t, l) {
		t.Errorf("round trip\n got %s\nwant %s", jsonOf(t, got), jsonOf(t, l))
	}
	if _, err := LoadWorkflow(dir, sid1); !errors.Is(err, ErrNotFound) {
		t.Errorf("a launch record made a workflow record: %v", err)
	}
}

// An older tack kept everything in workflow.json: it still loads, split in
// the seed's record and the launch.
func TestLegacyRecordMigrates(t *testing.T) {
	dir := t.TempDir()
	old := `{"schema_version":1,"session_id":"` + sid1 + `","name":"files","cwd":"/work/proj","created_at":"2026-01-01T00:00:00Z",
"updated_at":"2026-01-02T00:00:00Z","model":"claude-haiku-4-5","permission_mode":"acceptEdits","settings":"{\"env\":{}}",
"mcp_config":["{\"mcpServers\":{}}","tools.json"],"strict_mcp_config":false,"add_dirs":["/lib"],"agent":"reviewer",
"plugin_dirs":[],"allowed_tools":[],"disallowed_tools":[],"cost_usd":0.5,"last_tool":{"name":"Bash","decision":"deny"},
"hooks_once":["h1"],"deferred_tool_use":{"id":"toolu_1","name":"Bash","input":{"command":"ls"}},"resume":["--resume","files"]}`
	os.MkdirAll(filepath.Join(dir, sid1), 0o700)
	os.WriteFile(workflowPath(dir, sid1), []byte(old), 0o600)
	w, err := LoadWorkflow(dir, sid1)
	if err != nil {
		t.Fatal(err)
	}
	if want := (Workflow{Name: "files", Cwd: "/work/proj", PermissionMode: "acceptEdits", Settings: ".claude/settings.json",
		MCPConfig: "tools.json", Resume: []string{"--resume", "files"}, LastTool: &LastTool{Name: "Bash", Decision: "deny"}}); jsonOf(t, w) != jsonOf(t, want) {
		t.Errorf("workflow %s", jsonOf(t, w))
	}
	l, err := LoadLaunch(dir, sid1)
	if err != nil {
		t.Fatal(err)
	}
	if l.Model != "claude-haiku-4-5" || l.Agent != "reviewer" || !slices.Equal(l.AddDirs, []string{"/lib"}) || l.CostUSD != 0.5 ||
		l.Settings != `{"env":{}}` || len(l.MCPConfig) != 2 || l.DeferredToolUse == nil || l.DeferredToolUse.ID != "toolu_1" ||
		!slices.Equal(l.HooksOnce, []string{"h1"}) {
		t.Errorf("launch %+v", l)
	}
	// Saved again, both files are of the new form and valid.
	if err := SaveWorkflow(dir, sid1, *w); err != nil {
		t.Fatal(err)
	}
	if err := SaveLaunch(dir, sid1, *l); err != nil {
		t.Fatal(err)
	}
	schemas := compileSchemas(t)
	for name, path := range map[string]string{"workflow.schema.json": workflowPath(dir, sid1), "launch.schema.json": launchPath(dir, sid1)} {
		data, _ := os.ReadFile(path)
		if err := validateWith(schemas[name], data); err != nil {
			t.Errorf("%s: %v", path, err)
		}
	}
	// An old record that is broken names its file.
	os.Remove(launchPath(dir, sid1))
	os.WriteFile(workflowPath(dir, sid1), []byte(`{"schema_version":1,"cwd":3}`), 0o600)
	if _, err := LoadWorkflow(dir, sid1); err == nil || !strings.Contains(err.Error(), workflowPath(dir, sid1)) {
		t.Errorf("broken old record: %v", err)
	}
}

func TestWorkflowErrorsNameTheFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, sid1, "workflow.json")
	if _, err := LoadWorkflow(dir, sid1); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing: %v", err)
	}
	const ok = `"name":"x","cwd":"/x","settings":".claude/settings.json","mcp_config":".mcp.json"`
	cases := map[string]string{
		"{":                                     "invalid JSON",
		`{"cwd":"/x"} junk`:                     "invalid JSON",
		`{"cwd":"/x"}`:                          "does not match workflow.schema.json",
		`{` + ok + `}`:                          "permission_mode",
		`{` + ok + `,"permission_mode":"yolo"}`: "permission_mode",
		`{` + ok + `,"permission_mode":"plan","extra":1}`:                                      "extra",
		`{` + ok + `,"permission_mode":"plan","model":"opus"}`:                                 "model",
		`{` + ok + `,"permission_mode":"plan","resume":"--resume x"}`:                          "resume",
		`{` + ok + `,"permission_mode":"plan","last_tool":{"name":"Bash","decision":"maybe"}}`: "decision",
		`{"name":"","cwd":"/x","settings":"s","mcp_config":"m","permission_mode":"plan"}`:      "name",
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
	if err := SaveLaunch(dir, sid2, Launch{AddDirs: []string{""}}); err == nil || !strings.Contains(err.Error(), "launch.json") {
		t.Errorf("launch with an empty directory: %v", err)
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
	names := []string{"workflow.schema.json", "launch.schema.json", "prefix.schema.json", "transcript-record.schema.json"}
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
	if err := SaveLaunch(dir, sid1, Launch{Model: "m", AddDirs: []string{"/lib"}}); err != nil {
		t.Fatal(err)
	}
	data, _ = os.ReadFile(launchPath(dir, sid1))
	if err := validateWith(schemas["launch.schema.json"], data); err != nil {
		t.Errorf("launch.json: %v", err)
	}
	p, _ := PrefixOf(sid1, &llm.Request{Model: "m", System: []llm.Block{llm.Text("s")}, Tools: []llm.ToolSpec{{Name: "Bash"}}})
	if err := SavePrefix(dir, sid1, p); err != nil {
		t.Fatal(err)
	}
	data, _ = os.ReadFile(prefixPath(dir, sid1))
	if err := validateWith(schemas["prefix.schema.json"], data); err != nil {
		t.Errorf("prefix.json: %v", err)
	}
	// The seed's own example record is accepted, and loads.
	seed := `{"name":"auth-refactor","cwd":"/repo/app","permission_mode":"default","settings":".claude/settings.json","mcp_config":".mcp.json","resume":["--resume","auth-refactor"],"last_tool":{"name":"mcp__docs__search","decision":"allow"}}`
	if err := validateWith(schemas["workflow.schema.json"], []byte(seed)); err != nil {
		t.Errorf("seed example refused: %v", err)
	}
	os.MkdirAll(filepath.Join(dir, sid2), 0o700)
	os.WriteFile(workflowPath(dir, sid2), []byte(seed), 0o600)
	if w, err := LoadWorkflow(dir, sid2); err != nil || w.Name != "auth-refactor" {
		t.Errorf("seed example: %+v %v", w, err)
	}
}

// The modes a save accepts are the schema's: the check saves make without
// compiling the schema says what the schema says.
func TestRecordModesAreTheSchemaEnum(t *testing.T) {
	data, err := Schemas.ReadFile("schema/workflow.schema.json")
	if err != nil {
		t.Fatal(err)
	}
	var s struct {
		Properties struct {
			PermissionMode struct {
				Enum []string `json:"enum"`
			} `json:"permission_mode"`
		} `json:"properties"`
	}
	if err := json.Unmarshal(data, &s); err != nil {
		t.Fatal(err)
	}
	if got := s.Properties.PermissionMode.Enum; !slices.Equal(got, recordModes) {
		t.Errorf("schema enum %q, recordModes %q", got, recordModes)
	}
}

// Equal tells apart two records that differ in any one field: a field
// added to Workflow and left out of Equal fails here.
func TestWorkflowEqualSeesEveryField(t *testing.T) {
	base := Workflow{Name: "n", Cwd: "/w", PermissionMode: "default", Settings: "s.json", MCPConfig: "m.json",
		Resume: []string{"--resume", "n"}, LastTool: &LastTool{Name: "Read", Decision: "allow"}}
	same := base
	same.Resume = slices.Clone(base.Resume)
	same.LastTool = &LastTool{Name: "Read", Decision: "allow"}
	if !base.Equal(same) {
		t.Fatal("equal records, in copies of their own, differ")
	}
	typ := reflect.TypeFor[Workflow]()
	for i := range typ.NumField() {
		if !typ.Field(i).IsExported() {
			continue // legacy: below
		}
		other := same
		other.Resume = slices.Clone(same.Resume)
		f := reflect.ValueOf(&other).Elem().Field(i)
		switch f.Kind() {
		case reflect.String:
			f.SetString(f.String() + "x")
		case reflect.Slice:
			f.Set(reflect.ValueOf([]string{"--resume", "other"}))
		case reflect.Pointer:
			f.Set(reflect.ValueOf(&LastTool{Name: "Read", Decision: "deny"}))
		default:
			t.Fatalf("field %s: a kind this test does not change (%s)", typ.Field(i).Name, f.Kind())
		}
		if base.Equal(other) {
			t.Errorf("records that differ in %s are equal", typ.Field(i).Name)
		}
	}
	none := base
	none.LastTool = nil
	if base.Equal(none) || none.Equal(base) {
		t.Error("a record with a last tool equals one without")
	}
	old := base
	old.legacy = true
	if old.Equal(base) || base.Equal(old) {
		t.Error("a record read from the old form equals the same record in the new form")
	}
}
