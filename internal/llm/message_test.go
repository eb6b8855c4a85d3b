package llm

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestBlockJSONRoundTrip(t *testing.T) {
	cases := map[string]string{
		"text":             `{"type":"text","text":"hi <there>"}`,
		"empty text":       `{"type":"text","text":""}`,
		"tool_use":         `{"type":"tool_use","id":"toolu_1","name":"Bash","input":{"command":"ls"}}`,
		"tool_result str":  `{"type":"tool_result","tool_use_id":"toolu_1","content":"a.txt"}`,
		"tool_result err":  `{"type":"tool_result","tool_use_id":"toolu_1","content":"boom","is_error":true}`,
		"tool_result list": `{"type":"tool_result","tool_use_id":"toolu_1","content":[{"type":"text","text":"a"},{"type":"image","source":{"type":"base64","media_type":"image/png","data":"AAA="}}]}`,
		"thinking":         `{"type":"thinking","thinking":"hmm","signature":"sig"}`,
		"redacted":         `{"type":"redacted_thinking","data":"xyz"}`,
		"image":            `{"type":"image","source":{"type":"base64","media_type":"image/png","data":"AAA="}}`,
		"cache":            `{"type":"text","text":"x","cache_control":{"type":"ephemeral","ttl":"1h"}}`,
		"raw":              `{"type":"web_search_tool_result","tool_use_id":"srvtoolu_1","content":[{"type":"web_search_result","url":"https://x","title":"X"}]}`,
	}
	for name, in := range cases {
		var b Block
		if err := json.Unmarshal([]byte(in), &b); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		out, err := json.Marshal(b)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if !sameJSON(t, in, string(out)) {
			t.Errorf("%s:\n in  %s\n out %s", name, in, out)
		}
	}
}

func TestToolUseWithoutInputSendsEmptyObject(t *testing.T) {
	out, _ := json.Marshal(Block{Type: TypeToolUse, ID: "t", Name: "X"})
	if !strings.Contains(string(out), `"input":{}`) {
		t.Errorf("%s", out)
	}
}

func TestRawBlockWithCacheControl(t *testing.T) {
	var b Block
	json.Unmarshal([]byte(`{"type":"document","source":{"type":"base64","media_type":"application/pdf","data":"AA"}}`), &b)
	b.CacheControl = &CacheControl{Type: "ephemeral"}
	out, _ := json.Marshal(b)
	var m map[string]any
	if err := json.Unmarshal(out, &m); err != nil {
		t.Fatalf("%s: %v", out, err)
	}
	if m["cache_control"] == nil || m["type"] != "document" {
		t.Errorf("%s", out)
	}
}

func TestMessageAcceptsStringContent(t *testing.T) {
	var m Message
	if err := json.Unmarshal([]byte(`{"role":"user","content":"hello"}`), &m); err != nil {
		t.Fatal(err)
	}
	if m.Role != RoleUser || len(m.Content) != 1 || m.Content[0].Text != "hello" {
		t.Errorf("%+v", m)
	}
	if TextOf([]Block{Text("a"), {Type: TypeToolUse}, Text("b")}) != "ab" {
		t.Error("TextOf")
	}
}

func TestRequestBody(t *testing.T) {
	temp := 0.5
	r := &Request{
		Model: "m", MaxTokens: 100,
		System: []Block{Text("sys <tag>")},
		Messages: []Message{{Role: RoleUser, Content: []Block{Text("hi")}}, {Role: RoleAssistant, Content: []Block{Text("hello")}},
			{Role: RoleUser, Content: []Block{Text("a"), Text("b")}}, {Role: RoleAssistant, Content: []Block{Text("c")}},
			{Role: RoleUser, Content: []Block{{Type: TypeText, Text: "marked", CacheControl: &CacheControl{Type: "ephemeral"}}}}},
		Tools: []ToolSpec{
			{Name: "Read", Description: "read", InputSchema: json.RawMessage("{\n  \"type\": \"object\"\n}")},
			{Raw: json.RawMessage(`{"type":"web_search_20250305","name":"web_search"}`)},
		},
		Thinking: &Thinking{Type: "enabled", BudgetTokens: 1024}, Temperature: &temp, UserID: "u",
	}
	body, err := r.Body()
	if err != nil {
		t.Fatal(err)
	}
	// A user message of one plain text block is sent as a string, as Claude
	// Code sends it; several blocks, an assistant's, or a breakpoint keep
	// the array.
	want := `{"model":"m","max_tokens":100,"system":[{"type":"text","text":"sys <tag>"}],"messages":[{"role":"user","content":"hi"},` +
		`{"role":"assistant","content":[{"type":"text","text":"hello"}]},{"role":"user","content":[{"type":"text","text":"a"},{"type":"text","text":"b"}]},` +
		`{"role":"assistant","content":[{"type":"text","text":"c"}]},{"role":"user","content":[{"type":"text","text":"marked","cache_control":{"type":"ephemeral"}}]}],` +
		`"tools":[{"name":"Read","description":"read","input_schema":{"type":"object"}},{"type":"web_search_20250305","name":"web_search"}],` +
		`"thinking":{"type":"enabled","budget_tokens":1024},"temperature":0.5,"metadata":{"user_id":"u"},"stream":true}`
	if string(body) != want {
		t.Errorf("body\n got %s\nwant %s", body, want)
	}
	again, _ := r.Body()
	if string(again) != string(body) {
		t.Error("encoding is not deterministic")
	}
	bad := &Request{Model: "m", MaxTokens: 1, Messages: []Message{{Role: RoleUser, Content: []Block{{Type: "mystery"}}}}}
	if _, err := bad.Body(); err == nil {
		t.Error("a block of unknown type without raw JSON encoded")
	}
}

func sameJSON(t *testing.T, a, b string) bool {
	t.Helper()
	var x, y any
	if err := json.Unmarshal([]byte(a), &x); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal([]byte(b), &y); err != nil {
		t.Fatal(err)
	}
	xa, _ := json.Marshal(x)
	ya, _ := json.Marshal(y)
	return string(xa) == string(ya)
}
