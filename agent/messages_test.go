package agent

// This file holds the SDK's own types equal to the runtime's where both
// exist: it is an internal test, the one kind of agent test that imports the
// layers below (llm, protocol) on purpose.

import (
	"encoding/json"
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/tackcode/tack/internal/llm"
	"github.com/tackcode/tack/internal/protocol"
)

// Every field of every message filled in, blocks of every modelled type
// among them: the SDK's copy of each encodes as the runtime's message does
// (what stream-json prints).
func TestMessagesEncodeAsTheRuntimesDo(t *testing.T) {
	text, parent, stop := "the answer", "toolu_1", "end_turn"
	blocks := []llm.Block{
		llm.Text("hi"),
		{Type: llm.TypeToolUse, ID: "toolu_2", Name: "Read", Input: json.RawMessage(`{"file_path":"/a"}`)},
		{Type: llm.TypeServerToolUse, ID: "srvtoolu_1", Name: "web_search", Input: json.RawMessage(`{"query":"q"}`)},
		{Type: llm.TypeThinking, Thinking: "hmm", Signature: "sig"},
		{Type: llm.TypeRedactedThinking, Data: "opaque"},
		{Type: llm.TypeImage, Source: &llm.ImageSource{Type: "base64", MediaType: "image/png", Data: "iVBORw0KGgo="}},
		{Type: "web_search_tool_result", Raw: json.RawMessage(`{"type":"web_search_tool_result","tool_use_id":"srvtoolu_1","content":[]}`)},
		{Type: llm.TypeText, Text: "cached", CacheControl: &llm.CacheControl{Type: "ephemeral", TTL: "1h"}},
	}
	results := []llm.Block{
		llm.ToolResult("toolu_2", "contents", false),
		{Type: llm.TypeToolResult, ToolUseID: "toolu_3", IsError: true, Content: []llm.Block{llm.Text("a"), blocks[5]}},
	}
	usage := llm.Usage{InputTokens: 1, CacheCreationInputTokens: 2, CacheReadInputTokens: 3, OutputTokens: 4,
		CacheCreation: &llm.CacheCreation{Ephemeral5m: 5, Ephemeral1h: 6}, ServerToolUse: &llm.ServerToolUse{WebSearchRequests: 7, WebFetchRequests: 8}}
	msgs := []protocol.Message{
		&protocol.System{Subtype: protocol.SubtypeInit, SessionID: "s", UUID: "u", Init: &protocol.Init{Cwd: "/w", SessionID: "s", Tools: []string{"Read"},
			MCPServers: []protocol.MCPServerStatus{{Name: "m", Status: "failed", Error: "e", Scope: "project", Tools: 3, Transport: "stdio"}},
			Model:      "claude", PermissionMode: "default", SlashCommands: []string{"compact"}, APIKeySource: "ANTHROPIC_API_KEY",
			ClaudeCodeVersion: "1", OutputStyle: "default", Agents: []string{"Explore"}, Skills: []string{"s"},
			Plugins: []protocol.Plugin{{Name: "p", Path: "/p"}}, AdditionalDirs: []string{"/x"}}},
		&protocol.System{Subtype: protocol.SubtypeAPIRetry, SessionID: "s", UUID: "u", Attempt: 1, MaxRetries: 3, RetryDelayMS: 500, ErrorStatus: 529, Error: "overloaded"},
		&protocol.System{Subtype: protocol.SubtypePermissionDenied, SessionID: "s", UUID: "u", ToolName: "Bash", ToolUseID: "t", Reason: "no"},
		&protocol.System{Subtype: "task_started", SessionID: "s", UUID: "u", Fields: map[string]any{"task_id": "t"}},
		&protocol.Assistant{Type: "assistant", Message: protocol.APIMessage{ID: "m", Type: "message", Role: llm.RoleAssistant, Model: "claude",
			Content: blocks, StopReason: &stop, StopSequence: &text, Usage: usage}, ParentToolUseID: &parent, SessionID: "s", UUID: "u", RequestID: "r", Error: "e"},
		&protocol.Assistant{Type: "assistant", Message: protocol.APIMessage{ID: "m", Content: []llm.Block{llm.Text("bare")}}},
		&protocol.User{Type: "user", Message: llm.Message{Role: llm.RoleUser, Content: results}, ParentToolUseID: &parent,
			SessionID: "s", UUID: "u", ToolUseResult: map[string]string{"stdout": "x"}, IsSynthetic: true, IsReplay: true},
		&protocol.StreamEvent{Type: "stream_event", Event: json.RawMessage(`{"type":"ping"}`), ParentToolUseID: &parent, SessionID: "s", UUID: "u"},
		&protocol.Result{Type: "result", Subtype: protocol.ResultSuccess, Result: &text, Errors: []string{"e"}, SessionID: "s", UUID: "u", NumTurns: 2,
			DurationMS: 3, DurationAPIMS: 4, TotalCostUSD: 0.5,
			Usage: protocol.ResultUsage{InputTokens: 1, CacheCreationInputTokens: 2, CacheReadInputTokens: 3, OutputTokens: 4,
				ServerToolUse: llm.ServerToolUse{WebSearchRequests: 5, WebFetchRequests: 6}, CacheCreation: llm.CacheCreation{Ephemeral5m: 7, Ephemeral1h: 8}},
			ModelUsage: map[string]protocol.ModelUsage{"m": {InputTokens: 1, OutputTokens: 2, CacheReadInputTokens: 3, CacheCreationInputTokens: 4,
				WebSearchRequests: 5, CostUSD: 0.25, ContextWindow: 200000, MaxOutputTokens: 64000}},
			PermissionDenials: []protocol.PermissionDenial{{ToolName: "Bash", ToolUseID: "t", ToolInput: json.RawMessage(`{"command":"rm"}`)}},
			StopReason:        &text, TerminalReason: "completed", StructuredOutput: map[string]int{"n": 1},
			DeferredToolUse: &protocol.DeferredToolUse{ID: "toolu_9", Name: "Write", Input: json.RawMessage(`{"file_path":"/a"}`)}},
		&protocol.Result{Type: "result", Subtype: protocol.ResultDuringExecution, IsError: true, ModelUsage: map[string]protocol.ModelUsage{}, PermissionDenials: []protocol.PermissionDenial{}},
	}
	for _, m := range msgs {
		pub := publicMessage(m)
		if reflect.TypeOf(pub) == reflect.TypeOf(m) || pub.MessageType() != m.MessageType() {
			t.Errorf("%T became %T", m, pub)
		}
		want, err := json.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		got, err := json.Marshal(pub)
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != string(want) {
			t.Errorf("%T encodes as\n%s\nthe runtime's as\n%s", pub, got, want)
		}
	}
	if r := publicMessage(msgs[len(msgs)-2]).(*ResultMessage); r.CostReport() != msgs[len(msgs)-2].(*protocol.Result).CostReport() {
		t.Errorf("cost report %q", r.CostReport())
	}
}

// A block read from JSON by the SDK is the runtime's block, and writes the
// same JSON back: a prompt's blocks reach the model as the caller wrote them.
func TestContentBlocksDecodeAsTheRuntimesDo(t *testing.T) {
	for _, in := range []string{
		`{"type":"text","text":"hi","cache_control":{"type":"ephemeral"}}`,
		`{"type":"text","text":"cited","citations":[{"type":"char_location"}]}`,
		`{"type":"image","source":{"type":"url","url":"https://example.com/a.png"}}`,
		`{"type":"document","source":{"type":"text","media_type":"text/plain","data":"d"}}`,
		`{"type":"tool_result","tool_use_id":"t","content":[{"type":"text","text":"a"},{"type":"image","source":{"type":"base64","media_type":"image/png","data":"x"}}],"is_error":true}`,
		`{"type":"tool_result","tool_use_id":"t","content":"plain"}`,
	} {
		var b ContentBlock
		if err := json.Unmarshal([]byte(in), &b); err != nil {
			t.Fatalf("%s: %v", in, err)
		}
		var lb llm.Block
		if err := json.Unmarshal([]byte(in), &lb); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(b.llm(), lb) {
			t.Errorf("%s decodes as %+v, the runtime's as %+v", in, b.llm(), lb)
		}
		got, _ := json.Marshal(b)
		want, _ := json.Marshal(lb)
		if string(got) != string(want) {
			t.Errorf("%s encodes back as %s, the runtime's as %s", in, got, want)
		}
	}
	var m MessageParam
	if err := json.Unmarshal([]byte(`{"role":"user","content":"short form"}`), &m); err != nil || m.Role != RoleUser || TextOf(m.Content) != "short form" {
		t.Errorf("short content: %+v %v", m, err)
	}
}

// The SDK names every content block type, message subtype and result
// subtype the layers below do, with the same value: a type added below
// cannot be forgotten here.
func TestConstantsCoverTheRuntimes(t *testing.T) {
	for _, c := range []struct {
		file, prefix, ours string
	}{
		{"../internal/llm/message.go", "Type", "Block"},
		{"../internal/protocol/protocol.go", "Subtype", "Subtype"},
		{"../internal/protocol/protocol.go", "Result", "Result"},
		{"../internal/protocol/protocol.go", "Stop", "Stop"},
	} {
		theirs := stringConstants(t, []string{c.file}, c.prefix)
		ours := stringConstants(t, goFiles(t, "."), c.ours)
		for value, name := range theirs {
			if _, ok := ours[value]; !ok {
				t.Errorf("%s %s = %q has no %s… constant in agent", c.file, name, value, c.ours)
			}
		}
		if len(theirs) == 0 {
			t.Errorf("no %s… constants in %s", c.prefix, c.file)
		}
	}
}

// stringConstants are the string constants of files whose name starts
// with prefix, by value.
func stringConstants(t *testing.T, files []string, prefix string) map[string]string {
	t.Helper()
	out := map[string]string{}
	fset := token.NewFileSet()
	for _, path := range files {
		f, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			g, ok := d.(*ast.GenDecl)
			if !ok || g.Tok != token.CONST {
				continue
			}
			for _, spec := range g.Specs {
				vs := spec.(*ast.ValueSpec)
				for i, name := range vs.Names {
					if !strings.HasPrefix(name.Name, prefix) || i >= len(vs.Values) {
						continue
					}
					if lit, ok := vs.Values[i].(*ast.BasicLit); ok && lit.Kind == token.STRING {
						v, _ := strconv.Unquote(lit.Value)
						out[v] = name.Name
					}
				}
			}
		}
	}
	return out
}

// goFiles are the package's source files in dir, tests left out.
func goFiles(t *testing.T, dir string) []string {
	t.Helper()
	all, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	return slices.DeleteFunc(all, func(p string) bool { return strings.HasSuffix(p, "_test.go") })
}
