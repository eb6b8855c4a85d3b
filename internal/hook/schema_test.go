package hook_test

import (
	"bytes"
	"encoding/json"
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/tackcode/tack/internal/hook"
	"github.com/tackcode/tack/internal/hook/hooktest"
	"github.com/tackcode/tack/internal/hook/schema"
)

// schemas returns every published schema, compiled, keyed by file name.
func schemas(t *testing.T) map[string]*jsonschema.Schema {
	t.Helper()
	all, err := hooktest.Schemas()
	if err != nil {
		t.Fatal(err)
	}
	return all
}

func validate(t *testing.T, s *jsonschema.Schema, b []byte) error {
	t.Helper()
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("not JSON: %s", b)
	}
	return s.Validate(v)
}

func inputSchema(t *testing.T, all map[string]*jsonschema.Schema, ev hook.Event) *jsonschema.Schema {
	t.Helper()
	s := all[string(ev)+".input.json"]
	if s == nil {
		t.Fatalf("no input schema for %s", ev)
	}
	return s
}

// examples returns a realistic payload of every event, built the way the
// engine builds them.
func examples() []hook.Input {
	base := hook.Base{SessionID: "68db6c51", TranscriptPath: "/home/u/.claude/projects/-r/68db6c51.jsonl", Cwd: "/r", PermissionMode: "default"}
	sub := base
	sub.AgentID, sub.AgentType = "a1", "Explore"
	lifecycle := hook.Base{SessionID: "68db6c51", TranscriptPath: "/t.jsonl", Cwd: "/r"}
	return []hook.Input{
		hook.SessionStartInput{Base: lifecycle, Source: "startup", Model: "claude-sonnet-4-5"},
		hook.SessionStartInput{Base: lifecycle, Source: "compact"},
		hook.SessionEndInput{Base: lifecycle, Reason: "other"},
		hook.UserPromptSubmitInput{Base: base, Prompt: "fix the bug"},
		hook.PreToolUseInput{Base: base, ToolName: "Bash", ToolInput: json.RawMessage(`{"command":"rm -rf /tmp/x"}`), ToolUseID: "toolu_1"},
		hook.PreToolUseInput{Base: sub, ToolName: "Read", ToolUseID: "toolu_2"}, // nil input, inside a subagent
		hook.PermissionRequestInput{Base: base, ToolName: "Bash", ToolInput: json.RawMessage(`{"command":"touch x"}`), ToolUseID: "toolu_3",
			PermissionSuggestions: json.RawMessage(`[{"type":"addRules","rules":[{"toolName":"Bash","ruleContent":"touch:*"}],"behavior":"allow","destination":"localSettings"}]`)},
		hook.PostToolUseInput{Base: base, ToolName: "Bash", ToolInput: json.RawMessage(`{"command":"echo hi"}`), ToolResponse: json.RawMessage(`{"stdout":"hi","stderr":"","interrupted":false}`), ToolUseID: "toolu_4", DurationMS: 12},
		hook.PostToolUseInput{Base: base, ToolName: "Glob", ToolUseID: "toolu_5"}, // nil input and response
		hook.PostToolUseFailureInput{Base: base, ToolName: "Bash", ToolInput: json.RawMessage(`{"command":"false"}`), ToolUseID: "toolu_6", Error: "Exit code 1", IsInterrupt: false, DurationMS: 3},
		hook.NotificationInput{Base: base, Message: "Claude needs your permission to use Bash", NotificationType: "permission_prompt", Title: "Permission needed"},
		hook.StopInput{Base: base, StopHookActive: true, LastAssistantMessage: "Done."},
		hook.SubagentStartInput{Base: base, AgentID: "a1", AgentType: "Explore"},
		hook.SubagentStopInput{Base: sub, AgentID: "a1", AgentType: "Explore", AgentTranscriptPath: "/t/a1.jsonl", LastAssistantMessage: "found it"},
		hook.PreCompactInput{Base: base, Trigger: "manual", CustomInstructions: "keep the plan"},
		hook.PreCompactInput{Base: base, Trigger: "auto"},
		hook.PostCompactInput{Base: base, Trigger: "auto", CompactSummary: "summary"},
		hook.SetupInput{Base: lifecycle, Trigger: "init"},
		hook.SessionStartInput{Base: lifecycle, Source: "resume", Model: "claude-opus-5-5", SessionTitle: "Fix the flaky test"},
		hook.InstructionsLoadedInput{Base: lifecycle, FilePath: "/r/CLAUDE.md", MemoryType: "Project", LoadReason: "session_start"},
		hook.InstructionsLoadedInput{Base: base, FilePath: "/r/.claude/rules/go.md", MemoryType: "Project", LoadReason: "path_glob_match",
			Globs: []string{"**/*.go"}, TriggerFilePath: "/r/main.go"},
		hook.InstructionsLoadedInput{Base: base, FilePath: "/r/docs/style.md", MemoryType: "Project", LoadReason: "include", ParentFilePath: "/r/CLAUDE.md"},
		hook.UserPromptSubmitInput{Base: base, Prompt: "and the docs", Source: "user", SessionTitle: "Fix the flaky test"},
		hook.UserPromptExpansionInput{Base: base, ExpansionType: "slash_command", CommandName: "deploy", CommandArgs: "staging",
			CommandSource: "project", Prompt: "Deploy to staging: run make deploy ENV=staging."},
		hook.PreToolUseInput{Base: base, ToolName: "mcp__memory__create_entities", ToolInput: json.RawMessage(`{"entities":[]}`), ToolUseID: "toolu_7",
			MCPServer: &hook.MCPServer{Name: "memory", Source: "project"}},
		hook.PermissionDeniedInput{Base: base, ToolName: "Bash", ToolInput: json.RawMessage(`{"command":"rm -rf build"}`), ToolUseID: "toolu_8",
			Reason: "Permission to use Bash with command rm -rf build has been denied.", MCPServer: nil},
		hook.PermissionDeniedInput{Base: sub, ToolName: "mcp__gh__merge", ToolUseID: "toolu_9", Reason: "denied by a hook",
			MCPServer: &hook.MCPServer{Name: "gh", Source: "user"}}, // nil input
		hook.PostToolBatchInput{Base: base, ToolCalls: []hook.BatchToolCall{
			{ToolName: "Read", ToolInput: json.RawMessage(`{"file_path":"/r/a.go"}`), ToolUseID: "toolu_10", ToolResponse: json.RawMessage(`{"type":"text","file":{"filePath":"/r/a.go","content":"package a\n"}}`)},
			{ToolName: "Read", ToolUseID: "toolu_11"}, // nil input, did not run
		}},
		hook.PostToolBatchInput{Base: base}, // nil calls
		hook.ElicitationInput{Base: base, MCPServerName: "everything", Message: "Please provide your name", Mode: "form",
			RequestedSchema: json.RawMessage(`{"type":"object","properties":{"name":{"type":"string"}},"required":["name"]}`)},
		hook.ElicitationInput{Base: base, MCPServerName: "auth", Message: "Sign in", Mode: "url", URL: "https://example.com/login", ElicitationID: "el-1"},
		hook.ElicitationResultInput{Base: base, MCPServerName: "everything", Mode: "form", Action: "accept", Content: json.RawMessage(`{"name":"Ada"}`)},
		hook.ElicitationResultInput{Base: base, MCPServerName: "auth", ElicitationID: "el-1", Action: "cancel"},
		hook.TaskCreatedInput{Base: base, TaskID: "1", TaskSubject: "Write the tests", TaskDescription: "Cover every event"},
		hook.TaskCompletedInput{Base: base, TaskID: "1", TaskSubject: "Write the tests", TeammateName: "tester", TeamName: "core"},
		hook.TeammateIdleInput{Base: base, TeammateName: "tester", TeamName: "core"},
		hook.StopFailureInput{Base: base, Error: "invalid_request", ErrorDetails: "messages.1.content: field required", LastAssistantMessage: "Let me check."},
		hook.StopFailureInput{Base: base}, // no error type: sent as unknown
		hook.ConfigChangeInput{Base: base, Source: "project_settings", FilePath: "/r/.claude/settings.json"},
		hook.ConfigChangeInput{Base: base, Source: "skills"},
		hook.FileChangedInput{Base: base, FilePath: "/r/.envrc", Event: "change"},
		hook.CwdChangedInput{Base: base, OldCwd: "/r", NewCwd: "/r/sub"},
		hook.WorktreeCreateInput{Base: base, Name: "fix-flaky-test"},
		hook.WorktreeRemoveInput{Base: base, WorktreePath: "/r/.claude/worktrees/fix-flaky-test"},
	}
}

func TestEveryEventHasASchemaAndEverySchemaAnEvent(t *testing.T) {
	all := schemas(t)
	want := map[string]bool{"output.json": true}
	for _, ev := range hook.Events() {
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
	seen := map[hook.Event]bool{}
	for _, in := range examples() {
		seen[in.EventName()] = true
	}
	for _, ev := range hook.Events() {
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
		other := hook.PreToolUse
		if in.EventName() == hook.PreToolUse {
			other = hook.Stop
		}
		if validate(t, inputSchema(t, all, other), b) == nil {
			t.Errorf("%s payload validates against the %s schema", in.EventName(), other)
		}
	}
}

func TestClaudeCodeSamplesValidate(t *testing.T) {
	all := schemas(t)
	for _, line := range hook.SampleLines(t) {
		var head struct {
			Event hook.Event `json:"hook_event_name"`
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
		ev      hook.Event
		payload string
	}{
		{hook.PreToolUse, `{"session_id":"s","transcript_path":"t","cwd":"c","hook_event_name":"PreToolUse","tool_input":{},"tool_use_id":"x"}`},
		{hook.PreToolUse, `{"session_id":"s","transcript_path":"t","cwd":"c","hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":"ls","tool_use_id":"x"}`},
		{hook.SessionStart, `{"session_id":"s","transcript_path":"t","cwd":"c","hook_event_name":"SessionStart","source":"boot"}`},
		{hook.Stop, `{"session_id":"s","transcript_path":"t","cwd":"c","hook_event_name":"Stop","stop_hook_active":"no"}`},
		{hook.PreCompact, `{"session_id":"s","transcript_path":"t","cwd":"c","hook_event_name":"PreCompact","trigger":"auto"}`},
		{hook.SessionEnd, `{"transcript_path":"t","cwd":"c","hook_event_name":"SessionEnd","reason":"other"}`},
		{hook.PreToolUse, `{"session_id":"s","transcript_path":"t","cwd":"c","hook_event_name":"PreToolUse","tool_name":"mcp__m__x","tool_input":{},"tool_use_id":"x","mcp_server":{"name":"m"}}`},
		{hook.Setup, `{"session_id":"s","transcript_path":"t","cwd":"c","hook_event_name":"Setup","trigger":"startup"}`},
		{hook.InstructionsLoaded, `{"session_id":"s","transcript_path":"t","cwd":"c","hook_event_name":"InstructionsLoaded","file_path":"/r/CLAUDE.md","memory_type":"project","load_reason":"session_start"}`},
		{hook.InstructionsLoaded, `{"session_id":"s","transcript_path":"t","cwd":"c","hook_event_name":"InstructionsLoaded","file_path":"/r/CLAUDE.md","memory_type":"Project"}`},
		{hook.UserPromptExpansion, `{"session_id":"s","transcript_path":"t","cwd":"c","hook_event_name":"UserPromptExpansion","expansion_type":"skill","command_name":"d","command_args":"","prompt":"p"}`},
		{hook.PermissionDenied, `{"session_id":"s","transcript_path":"t","cwd":"c","hook_event_name":"PermissionDenied","tool_name":"Bash","tool_input":{},"tool_use_id":"x"}`},
		{hook.PostToolBatch, `{"session_id":"s","transcript_path":"t","cwd":"c","hook_event_name":"PostToolBatch"}`},
		{hook.PostToolBatch, `{"session_id":"s","transcript_path":"t","cwd":"c","hook_event_name":"PostToolBatch","tool_calls":[{"tool_name":"Read","tool_input":{}}]}`},
		{hook.Elicitation, `{"session_id":"s","transcript_path":"t","cwd":"c","hook_event_name":"Elicitation","mcp_server_name":"m","message":"x","mode":"dialog"}`},
		{hook.ElicitationResult, `{"session_id":"s","transcript_path":"t","cwd":"c","hook_event_name":"ElicitationResult","mcp_server_name":"m","action":"ok"}`},
		{hook.TaskCreated, `{"session_id":"s","transcript_path":"t","cwd":"c","hook_event_name":"TaskCreated","task_id":"1"}`},
		{hook.TaskCompleted, `{"session_id":"s","transcript_path":"t","cwd":"c","hook_event_name":"TaskCompleted","task_id":1,"task_subject":"x"}`},
		{hook.TeammateIdle, `{"session_id":"s","transcript_path":"t","cwd":"c","hook_event_name":"TeammateIdle","teammate_name":"x"}`},
		{hook.StopFailure, `{"session_id":"s","transcript_path":"t","cwd":"c","hook_event_name":"StopFailure","error":"HTTP 400"}`},
		{hook.ConfigChange, `{"session_id":"s","transcript_path":"t","cwd":"c","hook_event_name":"ConfigChange","source":"settings.json"}`},
		{hook.FileChanged, `{"session_id":"s","transcript_path":"t","cwd":"c","hook_event_name":"FileChanged","file_path":"/r/x","event":"modify"}`},
		{hook.CwdChanged, `{"session_id":"s","transcript_path":"t","cwd":"c","hook_event_name":"CwdChanged","new_cwd":"/r/sub"}`},
		{hook.WorktreeCreate, `{"session_id":"s","transcript_path":"t","cwd":"c","hook_event_name":"WorktreeCreate"}`},
		{hook.WorktreeRemove, `{"session_id":"s","transcript_path":"t","cwd":"c","hook_event_name":"WorktreeRemove","worktree_path":7}`},
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
		`{"hookSpecificOutput":{"hookEventName":"SessionStart","additionalContext":"x","initialUserMessage":"hi","sessionTitle":"t","watchPaths":["/r/.envrc"]}}`,
		`{"hookSpecificOutput":{"hookEventName":"UserPromptSubmit","sessionTitle":"t","suppressOriginalPrompt":true}}`,
		`{"hookSpecificOutput":{"hookEventName":"UserPromptExpansion","additionalContext":"x","suppressOriginalPrompt":true}}`,
		`{"hookSpecificOutput":{"hookEventName":"Setup","additionalContext":"installed"}}`,
		`{"hookSpecificOutput":{"hookEventName":"PermissionDenied","retry":true}}`,
		`{"decision":"block","reason":"x","hookSpecificOutput":{"hookEventName":"PostToolBatch","additionalContext":"x"}}`,
		`{"hookSpecificOutput":{"hookEventName":"Elicitation","action":"accept","content":{"name":"Ada"}}}`,
		`{"hookSpecificOutput":{"hookEventName":"ElicitationResult","action":"decline"}}`,
		`{"hookSpecificOutput":{"hookEventName":"CwdChanged","watchPaths":["/r/sub/.envrc"]}}`,
		`{"hookSpecificOutput":{"hookEventName":"FileChanged","watchPaths":[]}}`,
		`{"hookSpecificOutput":{"hookEventName":"WorktreeCreate","worktreePath":"/tmp/wt"}}`,
	}
	for _, v := range valid {
		if err := validate(t, s, []byte(v)); err != nil {
			t.Errorf("output %s should validate: %v", v, err)
		}
		// What validates, tack reads.
		if out, err := hook.ParseText(v); err != nil || out == nil {
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
		`{"hookSpecificOutput":{"hookEventName":"Elicitation","action":"maybe"}}`,
		`{"hookSpecificOutput":{"hookEventName":"ElicitationResult","action":"accept","content":"Ada"}}`,
		`{"hookSpecificOutput":{"hookEventName":"WorktreeCreate"}}`,
		`{"hookSpecificOutput":{"hookEventName":"FileChanged","watchPaths":"/r/x"}}`,
		`{"hookSpecificOutput":{"hookEventName":"PermissionDenied","retry":"yes"}}`,
		`{"hookSpecificOutput":{"hookEventName":"SessionStart","sessionTitle":7}}`,
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
	for _, ev := range hook.Events() {
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
			if ev == hook.SubagentStart || ev == hook.SubagentStop {
				if k == "agent_id" || k == "agent_type" {
					continue // the event's own, required fields
				}
			}
			props[k] = doc.Props[k]
		}
		if ref == nil {
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

// outputDefs returns the $defs of output.json: the hookSpecificOutput of
// each event that has one.
func outputDefs(t *testing.T) map[string]any {
	t.Helper()
	var doc struct {
		Defs map[string]any `json:"$defs"`
	}
	if err := json.Unmarshal(schema.Output(), &doc); err != nil {
		t.Fatal(err)
	}
	return doc.Defs
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
	full := hook.Output{Continue: &yes, StopReason: "x", SuppressOutput: true, SystemMessage: "x", Decision: "block", Reason: "x", Async: true, AsyncTimeout: 1,
		HookSpecificOutput: &hook.SpecificOutput{HookEventName: hook.PreToolUse, PermissionDecision: "x", PermissionDecisionReason: "x", UpdatedInput: json.RawMessage(`{}`), AdditionalContext: "x",
			Decision:             &hook.PermissionRequestDecision{Behavior: "x", UpdatedInput: json.RawMessage(`{}`), UpdatedPermissions: json.RawMessage(`[]`), Message: "x", Interrupt: true},
			UpdatedMCPToolOutput: json.RawMessage(`1`), UpdatedToolOutput: json.RawMessage(`1`),
			Retry: true, InitialUserMessage: "x", SessionTitle: "x", SuppressOriginalPrompt: true, WatchPaths: []string{"x"},
			Action: "x", Content: json.RawMessage(`{}`), WorktreePath: "x"}}
	// A field added to the types and not above would go unchecked.
	for _, v := range []reflect.Value{reflect.ValueOf(full), reflect.ValueOf(*full.HookSpecificOutput)} {
		for i := range v.NumField() {
			if v.Field(i).IsZero() {
				t.Errorf("%s.%s is not set in this test", v.Type().Name(), v.Type().Field(i).Name)
			}
		}
	}
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
	for _, ev := range hook.Events() {
		if _, ok := outputDefs(t)[string(ev)]; !ok {
			continue // no hookSpecificOutput of its own
		}
		for k := range schemaProps(t, "output.json", "$defs", string(ev)) {
			inDefs[k] = true
		}
	}
	for k := range hso {
		if !inDefs[k] {
			t.Errorf("hookSpecificOutput: %s is in no event's schema", k)
		}
	}
}
