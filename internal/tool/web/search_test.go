package web

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/tackcode/tack/internal/llm"
	"github.com/tackcode/tack/internal/tool"
)

func TestSearchBadInput(t *testing.T) {
	s := searchTool{}
	reg := tool.NewRegistry(s)
	for _, in := range []string{
		`{"query":"go generics","allowed_domains":["go.dev"],"blocked_domains":["x.com"]}`,
		`{"query":" x "}`,
	} {
		if _, err := s.Run(context.Background(), &tool.Env{}, json.RawMessage(in)); !tool.IsInputError(err) {
			t.Errorf("%s: want input error, got %v", in, err)
		}
	}
	if err := reg.Validate(s, json.RawMessage(`{"query":"x"}`)); !tool.IsInputError(err) {
		t.Errorf("one-character query passed the schema: %v", err)
	}
	if _, err := s.Run(context.Background(), &tool.Env{}, json.RawMessage(`{"query":"go generics"}`)); !errors.Is(err, errNoModel) {
		t.Errorf("no model: %v", err)
	}
}

func rawBlock(t *testing.T, js string) llm.Block {
	t.Helper()
	var b llm.Block
	if err := json.Unmarshal([]byte(js), &b); err != nil {
		t.Fatal(err)
	}
	return b
}

func TestCollectAndRender(t *testing.T) {
	blocks := []llm.Block{
		llm.Text("Searching. "),
		{Type: llm.TypeServerToolUse, ID: "srvtoolu_1", Name: "web_search", Input: json.RawMessage(`{"query":"q"}`)},
		rawBlock(t, `{"type":"web_search_tool_result","tool_use_id":"srvtoolu_1","content":[
			{"type":"web_search_result","url":"https://go.dev/doc","title":"Go docs","encrypted_content":"x","page_age":"1 day"},
			{"type":"web_search_result","url":"https://go.dev/blog","title":"","encrypted_content":"y"}]}`),
		llm.Text("Go has "),
		rawBlock(t, `{"type":"text","text":"generics","citations":[{"type":"web_search_result_location","url":"https://go.dev/doc","title":"Go docs","cited_text":"…","encrypted_index":"z"}]}`),
		llm.Text(" since 1.18."),
		rawBlock(t, `{"type":"web_search_tool_result","tool_use_id":"srvtoolu_2","content":{"type":"web_search_tool_result_error","error_code":"max_uses_exceeded"}}`),
	}
	results, hits, failures := collect(blocks)
	if len(hits) != 2 || len(failures) != 1 || failures[0] != "max_uses_exceeded" {
		t.Fatalf("hits %v failures %v", hits, failures)
	}
	got, _ := json.Marshal(results)
	want := `["Searching.",{"tool_use_id":"srvtoolu_1","content":[{"title":"Go docs","url":"https://go.dev/doc"},{"title":"","url":"https://go.dev/blog"}]},"Go has generics since 1.18."]`
	if string(got) != want {
		t.Errorf("results\n got %s\nwant %s", got, want)
	}
	text := render("q", results, hits)
	for _, w := range []string{"1. Go docs\n   https://go.dev/doc", "2. https://go.dev/blog\n   https://go.dev/blog", "Go has generics since 1.18.", "Markdown links"} {
		if !strings.Contains(text, w) {
			t.Errorf("rendered text lacks %q:\n%s", w, text)
		}
	}
}
