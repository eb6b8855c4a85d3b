package hook

import (
	"bytes"
	"encoding/json"
	"io/fs"
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/tackcode/tack/internal/hook/schema"
)

// schemas compiles every published schema, keyed by file name.
func schemas(t *testing.T) map[string]*jsonschema.Schema {
	t.Helper()
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	names, err := fs.Glob(schema.FS(), "*.json")
	if err != nil || len(names) == 0 {
		t.Fatalf("no schemas: %v", err)
	}
	for _, name := range names {
		b, _ := schema.FS().ReadFile(name)
		doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if err := c.AddResource(schema.BaseURL+name, doc); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
	}
	out := map[string]*jsonschema.Schema{}
	for _, name := range names {
		s, err := c.Compile(schema.BaseURL + name)
		if err != nil {
			t.Fatalf("compile %s: %v", name, err)
		}
		out[name] = s
	}
	return out
}

func validate(t *testing.T, s *jsonschema.Schema, b []byte) error {
	t.Helper()
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("not JSON: %s", b)
	}
	return s.Validate(v)
}

func inputSchema(t *testing.T, all map[string]*jsonschema.Schema, ev Event) *jsonschema.Schema {
	t.Helper()
	s := all[string(ev)+".input.json"]
	if s == nil {
		t.Fatalf("no input schema for %s", ev)
	}
	return s
}

// examples returns a realistic payload of every event, built the way the
// engine builds them.
func examples() []Input {
	base := Base{SessionID: "68db6c51", TranscriptPath: "/home/u/.claude/projects/-r/68db6c51.jsonl", Cwd: "/r", PermissionMode: "default"}
	sub := base
	sub.AgentID, sub.AgentType = "a1", "Explore"
	lifecycle := Base{SessionID: "68db6c51", TranscriptPath: "/t.jsonl", Cwd: "/r"}
	return []Input{
		SessionStartInput{Base: lifecycle, Source: "startup", Model: "claude-sonnet-4-5"},
		SessionStartInput{Base: lifecycle, Source: "compact"},
		SessionEndInput{Base: lifecycle, Reason: "other"},
		UserPromptSubmitInput{Base: base, Prompt: "fix the bug"},
		PreToolUseInput{Base: base, ToolName: "Bash", ToolInput: json.RawMessage(`{"command":"rm -rf /tmp/x"}`), ToolUseID: "toolu_1"},
		PreToolUseInput{Base: sub, ToolName: "Read", ToolUseID: "toolu_2"}, // nil input, inside a subagent
		PermissionRequestInput{Base: base, ToolName: "Bash", ToolInput: json.RawMessage(`{"command":"touch x"}`), ToolUseID: "toolu_3",
			PermissionSuggestions: json.RawMessage(`[{"type":"addRules","rules":[{"toolName":"Bash","ruleContent":"touch:*"}],"behavior":"allow","destination":"localSettings"}]`)},
		PostToolUseInput{Base: base, ToolName: "Bash", ToolInput: json.RawMessage(`{"command":"echo hi"}`), ToolResponse: json.RawMessage(`{"stdout":"hi","stderr":"","interrupted":false}`), ToolUseID: "toolu_4", DurationMS: 12},
		PostToolUseInput{Base: base, ToolName: "Glob", ToolUseID: "toolu_5"}, // nil input and response
		PostToolUseFailureInput{Base: base, ToolName: "Bash", ToolInput: json.RawMessage(`{"command":"false"}`), ToolUseID: "toolu_6", Error: "Exit code 1", IsInterrupt: false, DurationMS: 3},
		NotificationInput{Base: base, Message: "Claude needs your permission to use Bash", NotificationType: "permission_prompt", Title: "Permission needed"},
		StopInput{Base: base, StopHookActive: true, LastAssistantMessage: "Done."},
		SubagentStartInput{Base: base, AgentID: "a1", AgentType: "Explore"},
		SubagentStopInput{Base: sub, AgentID: "a1", AgentType: "Explore", AgentTranscriptPath: "/t/a1.jsonl", LastAssistantMessage: "found it"},
		PreCompactInput{Base: base, Trigger: "manual", CustomInstructions: "keep the plan"},
		PreCompactInput{Base: base, Trigger: "auto"},
		PostCompactInput{Base: base, Trigger: "auto", CompactSummary: "summary"},
	}
}

func TestEveryEventHasASchemaAndEverySchemaAnEvent(t *testing.T) {
	all := schemas(t)
	want := map[string]bool{"output.json": true}
	for _, ev := range Events() {
		want[string(ev)+".input.json"] = true
	}
	for name := range all {
		if !want[name] {
			t.Errorf("schema %s belongs to no event", name)
		}
		delete(want, name)
	}
	for name := range want {
		t.Errorf("missing schema %s", name)
	}
	// Every event has an example below, so every schema is exercised.
	seen := map[Event]bool{}
	for _, in := range examples() {
		seen[in.EventName()] = true
	}
	for _, ev := range Events() {
		if !seen[ev] {
			t.Errorf("no example payload for %s", ev)
		}
	}
}

func TestConstructedPayloadsValidate(t *testing.T) {
	all := schemas(t)
	for _, in := range examples() {
		b, err := json.Marshal(in)
		if err != nil {
			t.Fatal(err)
		}
		if err := validate(t, inputSchema(t, all, in.EventName()), b); err != nil {
			t.Errorf("%s payload %s does not validate: %v", in.EventName(), b, err)
		}
		// The payload is also valid for no other event's schema: the
		// hook_event_name const ties each schema to its event.
		other := PreToolUse
		if in.EventName() == PreToolUse {
			other = Stop
		}
		if validate(t, inputSchema(t, all, other), b) == nil {
			t.Errorf("%s payload validates against the %s schema", in.EventName(), other)
		}
	}
}

func TestClaudeCodeSamplesValidate(t *testing.T) {
	all := schemas(t)
	for _, line := range sampleLines(t) {
		var head struct {
			Event Event `json:"hook_event_name"`
		}
		if err := json.Unmarshal(line, &head); err != nil {
			t.Fatal(err)
		}
		if err := validate(t, inputSchema(t, all, head.Event), line); err != nil {
			t.Errorf("sample %s does not validate: %v", head.Event, err)
		}
	}
}

func TestInvalidPayloadsFail(t *testing.T) {
	all := schemas(t)
	cases := []struct {
		ev      Event
		payload string
	}{
		{PreToolUse, `{"session_id":"s","transcript_path":"t","cwd":"c","hook_event_name":"PreToolUse","tool_input":{},"tool_use_id":"x"}`},
		{PreToolUse, `{"session_id":"s","transcript_path":"t","cwd":"c","hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":"ls","tool_use_id":"x"}`},
		{SessionStart, `{"session_id":"s","transcript_path":"t","cwd":"c","hook_event_name":"SessionStart","source":"boot"}`},
		{Stop, `{"session_id":"s","transcript_path":"t","cwd":"c","hook_event_name":"Stop","stop_hook_active":"no"}`},
		{PreCompact, `{"session_id":"s","transcript_path":"t","cwd":"c","hook_event_name":"PreCompact","trigger":"auto"}`},
		{SessionEnd, `{"transcript_path":"t","cwd":"c","hook_event_name":"SessionEnd","reason":"other"}`},
	}
	for _, c := range cases {
		if validate(t, inputSchema(t, all, c.ev), []byte(c.payload)) == nil {
			t.Errorf("%s payload should not validate: %s", c.ev, c.payload)
		}
	}
}

func TestOutputsValidate(t *testing.T) {
	s := schemas(t)["output.json"]
	blockRm, err := os.ReadFile("testdata/block-rm.output.json")
	if err != nil {
		t.Fatal(err)
	}
	valid := []string{
		string(blockRm),
		`{}`,
		`{"continue":false,"stopReason":"budget spent","suppressOutput":true,"systemMessage":"bye"}`,
		`{"decision":"block","reason":"tests fail"}`,
		`{"decision":"approve"}`,
		`{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"defer"}}`,
		`{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"allow","updatedInput":{"command":"ls"},"additionalContext":"ok"}}`,
		`{"hookSpecificOutput":{"hookEventName":"PermissionRequest","decision":{"behavior":"allow","updatedInput":{"a":1}}}}`,
		`{"hookSpecificOutput":{"hookEventName":"PermissionRequest","decision":{"behavior":"deny","message":"no","interrupt":true}}}`,
		`{"decision":"block","reason":"lint","hookSpecificOutput":{"hookEventName":"PostToolUse","additionalContext":"x","updatedMCPToolOutput":{"content":[]}}}`,
		`{"hookSpecificOutput":{"hookEventName":"SessionStart","additionalContext":"branch main"}}`,
		`{"hookSpecificOutput":{"hookEventName":"UserPromptSubmit","additionalContext":"today is Monday"}}`,
		`{"async":true,"asyncTimeout":5000}`,
	}
	for _, v := range valid {
		if err := validate(t, s, []byte(v)); err != nil {
			t.Errorf("output %s should validate: %v", v, err)
		}
		// What validates, tack reads.
		if out, err := parseText(v); err != nil || out == nil {
			t.Errorf("parseText(%s) = %v, %v", v, out, err)
		}
	}
	invalid := []string{
		`{"continue":"no"}`,
		`{"decision":"deny"}`,
		`{"hookSpecificOutput":{"permissionDecision":"deny"}}`,
		`{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"maybe"}}`,
		`{"hookSpecificOutput":{"hookEventName":"PreToolUse","updatedInput":"rm"}}`,
		`{"hookSpecificOutput":{"hookEventName":"PermissionRequest","decision":{"behavior":"perhaps"}}}`,
		`{"hookSpecificOutput":{"hookEventName":"PermissionRequest"}}`,
		`{"hookSpecificOutput":{"hookEventName":"Stop","additionalContext":42}}`,
	}
	for _, v := range invalid {
		if validate(t, s, []byte(v)) == nil {
			t.Errorf("output %s should not validate", v)
		}
	}
}

// TestInputSchemasShareTheBase guards the hand-written files against drift:
// the common fields are declared identically everywhere.
func TestInputSchemasShareTheBase(t *testing.T) {
	common := []string{"session_id", "transcript_path", "cwd", "prompt_id", "permission_mode", "effort", "agent_id", "agent_type"}
	var ref map[string]any
	for _, ev := range Events() {
		b, err := schema.Input(string(ev))
		if err != nil {
			t.Fatal(err)
		}
		var doc struct {
			Props    map[string]any `json:"properties"`
			Required []string       `json:"required"`
		}
		if err := json.Unmarshal(b, &doc); err != nil {
			t.Fatal(err)
		}
		if got := strings.Join(doc.Required[:4], ","); got != "session_id,transcript_path,cwd,hook_event_name" {
			t.Errorf("%s: required starts with %s", ev, got)
		}
		props := map[string]any{}
		for _, k := range common {
			if ev == SubagentStart || ev == SubagentStop {
				if k == "agent_id" || k == "agent_type" {
					continue // the event's own, required fields
				}
			}
			props[k] = doc.Props[k]
		}
		if ev == SessionStart {
			ref = props
			continue
		}
		for k, v := range props {
			if !reflect.DeepEqual(v, ref[k]) {
				t.Errorf("%s declares %s differently: %v vs %v", ev, k, v, ref[k])
			}
		}
	}
	if _, err := schema.Input("Nope"); err == nil {
		t.Error("schema.Input(Nope) should fail")
	}
}

// schemaProps returns the property names a schema file declares at path
// (a list of nested "properties"/"$defs" steps).
func schemaProps(t *testing.T, file string, path ...string) map[string]bool {
	t.Helper()
	b, err := schema.FS().ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var doc any
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	for _, step := range path {
		doc = doc.(map[string]any)[step]
	}
	out := map[string]bool{}
	for k := range doc.(map[string]any)["properties"].(map[string]any) {
		out[k] = true
	}
	return out
}

// TestSchemasDeclareEveryField guards against a field added to a Go type
// but not to its published schema (which accepts unknown keys, so
// validation alone would not notice).
func TestSchemasDeclareEveryField(t *testing.T) {
	for _, in := range examples() {
		b, _ := in.MarshalJSON()
		var keys map[string]json.RawMessage
		if err := json.Unmarshal(b, &keys); err != nil {
			t.Fatal(err)
		}
		declared := schemaProps(t, string(in.EventName())+".input.json")
		for k := range keys {
			if !declared[k] {
				t.Errorf("%s: %s is not in the schema", in.EventName(), k)
			}
		}
	}
	// Every Output field, with all of them set.
	yes := true
	full := Output{Continue: &yes, StopReason: "x", SuppressOutput: true, SystemMessage: "x", Decision: "block", Reason: "x", Async: true, AsyncTimeout: 1,
		HookSpecificOutput: &SpecificOutput{HookEventName: PreToolUse, PermissionDecision: "x", PermissionDecisionReason: "x", UpdatedInput: json.RawMessage(`{}`), AdditionalContext: "x",
			Decision:             &PermissionRequestDecision{Behavior: "x", UpdatedInput: json.RawMessage(`{}`), UpdatedPermissions: json.RawMessage(`[]`), Message: "x", Interrupt: true},
			UpdatedMCPToolOutput: json.RawMessage(`1`), UpdatedToolOutput: json.RawMessage(`1`)}}
	b, _ := json.Marshal(full)
	var top map[string]json.RawMessage
	_ = json.Unmarshal(b, &top)
	declared := schemaProps(t, "output.json")
	for k := range top {
		if !declared[k] {
			t.Errorf("output: %s is not in the schema", k)
		}
	}
	var hso map[string]json.RawMessage
	_ = json.Unmarshal(top["hookSpecificOutput"], &hso)
	inDefs := map[string]bool{}
	for _, ev := range []string{"PreToolUse", "PermissionRequest", "PostToolUse"} {
		for k := range schemaProps(t, "output.json", "$defs", ev) {
			inDefs[k] = true
		}
	}
	for k := range hso {
		if !inDefs[k] {
			t.Errorf("hookSpecificOutput: %s is in no event's schema", k)
		}
	}
}
