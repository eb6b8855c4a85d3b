package web

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/tackcode/tack/internal/llm"
	"github.com/tackcode/tack/internal/llm/anthropic"
	"github.com/tackcode/tack/internal/llm/llmtest"
	"github.com/tackcode/tack/internal/tool"
)

const (
	smallModel = "claude-haiku-4-5"
	mainModel  = "claude-opus-5-5"
)

// modelEnv is a session whose model is the fake Messages API server playing
// turns, reached through the real Anthropic provider.
func modelEnv(t *testing.T, turns ...llmtest.Turn) (*tool.Env, *llmtest.Server) {
	t.Helper()
	srv := llmtest.New(t, turns...)
	p := anthropic.New(anthropic.Config{APIKey: "test", BaseURL: srv.URL(), MaxRetries: -1})
	return &tool.Env{Model: tool.ModelCaller{Provider: p, Small: smallModel, Main: mainModel}}, srv
}

func TestFetchAppliesPrompt(t *testing.T) {
	site := newSite(t)
	env, srv := modelEnv(t, llmtest.Reply(llmtest.Text("Install it with `go get example.com/x`.")))
	res, fr := runFetch(t, testFetchTool(), env, fmt.Sprintf(`{"url":%q,"prompt":"How do I install it?"}`, site.URL+"/page"))

	if res.IsError || fr.Result != "Install it with `go get example.com/x`." {
		t.Errorf("result %v %q", res.IsError, fr.Result)
	}
	if fr.Code != 200 || fr.CodeText != "OK" || fr.Bytes != len(testHTML) || fr.URL != site.URL+"/page" {
		t.Errorf("structured %+v", fr)
	}
	reqs := srv.Requests()
	if len(reqs) != 1 {
		t.Fatalf("%d model requests, want 1", len(reqs))
	}
	req := reqs[0]
	if req.Model != smallModel || req.MaxTokens != answerMaxTokens || len(req.Tools) != 0 {
		t.Errorf("request model %s max_tokens %d tools %d", req.Model, req.MaxTokens, len(req.Tools))
	}
	if req.SystemText() != fetchSystem {
		t.Errorf("system %q", req.SystemText())
	}
	user := req.LastUserText()
	for _, w := range []string{"<page source=\"" + site.URL + "/page\">", "# Install", "[the intro](" + site.URL + "/docs/intro)", "How do I install it?"} {
		if !strings.Contains(user, w) {
			t.Errorf("user message lacks %q:\n%s", w, user)
		}
	}
	if strings.Contains(user, "<html") || strings.Contains(user, "This is bytes") {
		t.Errorf("user message holds raw HTML or a paging note:\n%s", user)
	}
}

func TestFetchPagesLongContent(t *testing.T) {
	site := newSite(t)
	env, srv := modelEnv(t,
		llmtest.Reply(llmtest.Text("first part")),
		llmtest.Reply(llmtest.Text("second part")),
		llmtest.Reply(llmtest.Text("last part")))
	f := testFetchTool() // reads 4000 bytes of /big, 1000 at a time
	in := func(offset int) string {
		return fmt.Sprintf(`{"url":%q,"prompt":"count","offset":%d}`, site.URL+"/big", offset)
	}

	_, fr := runFetch(t, f, env, in(0))
	// /big is 11-byte lines: the first part ends after line 90, at byte 990.
	for _, w := range []string{"first part", "offset 990 to continue", "larger than 4000 bytes"} {
		if !strings.Contains(fr.Result, w) {
			t.Errorf("first result lacks %q:\n%s", w, fr.Result)
		}
	}
	_, fr = runFetch(t, f, env, in(990))
	if !strings.Contains(fr.Result, "second part") || !strings.Contains(fr.Result, "offset 1980 to continue") {
		t.Errorf("second result:\n%s", fr.Result)
	}
	_, fr = runFetch(t, f, env, in(3960))
	if !strings.Contains(fr.Result, "last part") || !strings.Contains(fr.Result, "This is the last part.") {
		t.Errorf("last result:\n%s", fr.Result)
	}

	reqs := srv.Requests()
	if len(reqs) != 3 {
		t.Fatalf("%d model requests, want 3", len(reqs))
	}
	second := reqs[1].LastUserText()
	if !strings.Contains(second, "This is bytes 990 to 1980 of a 4000-byte page.") || len(second) > f.budget+500 {
		t.Errorf("second request (%d bytes) lacks its place in the page:\n%.300s", len(second), second)
	}
	if _, err := f.Run(context.Background(), env, json.RawMessage(in(4000))); !tool.IsInputError(err) {
		t.Errorf("offset past the end: %v", err)
	}
}

func TestFetchModelError(t *testing.T) {
	site := newSite(t)
	env, _ := modelEnv(t, llmtest.Turn{Faults: []llmtest.Fault{{Status: 400}}})
	_, err := testFetchTool().Run(context.Background(), env, json.RawMessage(fmt.Sprintf(`{"url":%q,"prompt":"p"}`, site.URL+"/plain")))
	if err == nil || tool.IsInputError(err) || !strings.Contains(err.Error(), "applying the prompt") {
		t.Errorf("want a wrapped model error, got %v", err)
	}
}

// searchTurn is a model turn that ran one search with results and cited one.
func searchTurn() llmtest.Turn {
	return llmtest.Reply(
		llmtest.Text("Let me look that up."),
		llm.Block{Type: llm.TypeServerToolUse, ID: "srvtoolu_01", Name: "web_search", Input: json.RawMessage(`{"query":"go 1.26 release notes"}`)},
		llm.Block{Type: "web_search_tool_result", Raw: json.RawMessage(`{"type":"web_search_tool_result","tool_use_id":"srvtoolu_01","content":[` +
			`{"type":"web_search_result","url":"https://go.dev/doc/go1.26","title":"Go 1.26 Release Notes","encrypted_content":"e1","page_age":"2 months ago"},` +
			`{"type":"web_search_result","url":"https://go.dev/blog/go1.26","title":"Go 1.26 is released","encrypted_content":"e2"}]}`)},
		llm.Block{Type: llm.TypeText, Text: "Go 1.26 was released in February.", Raw: json.RawMessage(`{"type":"text","text":"Go 1.26 was released in February.",` +
			`"citations":[{"type":"web_search_result_location","url":"https://go.dev/blog/go1.26","title":"Go 1.26 is released","cited_text":"Go 1.26 is out","encrypted_index":"i1"}]}`)},
	)
}

func runSearch(t *testing.T, env *tool.Env, input string) (tool.Result, searchResult) {
	t.Helper()
	s := searchTool{}
	if err := tool.NewRegistry(s).Validate(s, json.RawMessage(input)); err != nil {
		t.Fatalf("input %s: %v", input, err)
	}
	res, err := s.Run(context.Background(), env, json.RawMessage(input))
	if err != nil {
		t.Fatalf("WebSearch %s: %v", input, err)
	}
	sr, ok := res.Structured.(searchResult)
	if !ok {
		t.Fatalf("structured result is %T", res.Structured)
	}
	return res, sr
}

func TestSearch(t *testing.T) {
	for _, c := range []struct {
		input, tool string
	}{
		{`{"query":"go 1.26 release notes","allowed_domains":["go.dev"]}`,
			`{"type":"web_search_20250305","name":"web_search","max_uses":8,"allowed_domains":["go.dev"]}`},
		{`{"query":"go 1.26 release notes","blocked_domains":["spam.example"]}`,
			`{"type":"web_search_20250305","name":"web_search","max_uses":8,"blocked_domains":["spam.example"]}`},
		{`{"query":"go 1.26 release notes"}`,
			`{"type":"web_search_20250305","name":"web_search","max_uses":8}`},
	} {
		t.Run(c.input, func(t *testing.T) {
			env, srv := modelEnv(t, searchTurn())
			res, sr := runSearch(t, env, c.input)

			reqs := srv.Requests()
			if len(reqs) != 1 {
				t.Fatalf("%d model requests, want 1", len(reqs))
			}
			req := reqs[0]
			if req.Model != mainModel || len(req.Tools) != 1 || string(req.Tools[0]) != c.tool {
				t.Errorf("request model %s tools %s; want %s", req.Model, req.Tools, c.tool)
			}
			if !strings.Contains(req.LastUserText(), "go 1.26 release notes") {
				t.Errorf("user message %q does not ask for the query", req.LastUserText())
			}

			text := llm.TextOf(res.Content)
			for _, w := range []string{
				"1. Go 1.26 Release Notes\n   https://go.dev/doc/go1.26",
				"2. Go 1.26 is released\n   https://go.dev/blog/go1.26",
				"Go 1.26 was released in February.",
			} {
				if !strings.Contains(text, w) {
					t.Errorf("result lacks %q:\n%s", w, text)
				}
			}
			if res.IsError {
				t.Error("result marked as an error")
			}
			got, _ := json.Marshal(sr.Results)
			want := `["Let me look that up.",{"tool_use_id":"srvtoolu_01","content":[{"title":"Go 1.26 Release Notes","url":"https://go.dev/doc/go1.26"},{"title":"Go 1.26 is released","url":"https://go.dev/blog/go1.26"}]},"Go 1.26 was released in February."]`
			if sr.Query != "go 1.26 release notes" || string(got) != want || sr.DurationSeconds <= 0 {
				t.Errorf("structured %s %s %v", sr.Query, got, sr.DurationSeconds)
			}
		})
	}
}

func TestSearchFailure(t *testing.T) {
	env, _ := modelEnv(t, llmtest.Reply(
		llm.Block{Type: llm.TypeServerToolUse, ID: "srvtoolu_01", Name: "web_search", Input: json.RawMessage(`{"query":"q"}`)},
		llm.Block{Type: "web_search_tool_result", Raw: json.RawMessage(`{"type":"web_search_tool_result","tool_use_id":"srvtoolu_01","content":{"type":"web_search_tool_result_error","error_code":"too_many_requests"}}`)},
		llmtest.Text("The search failed."),
	))
	res, _ := runSearch(t, env, `{"query":"anything"}`)
	if text := llm.TextOf(res.Content); !res.IsError || !strings.Contains(text, "too_many_requests") {
		t.Errorf("want an error result naming the code, got %v %q", res.IsError, text)
	}
}

func TestSearchResumesPausedTurn(t *testing.T) {
	paused := searchTurn()
	paused.StopReason = "pause_turn"
	env, srv := modelEnv(t, paused, llmtest.Reply(llmtest.Text("Done.")))
	res, _ := runSearch(t, env, `{"query":"go 1.26 release notes"}`)
	reqs := srv.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d model requests, want 2", len(reqs))
	}
	if last := reqs[1].LastMessage(); last.Role != llm.RoleAssistant || len(last.Content) != 4 {
		t.Errorf("resumed request does not end with the paused turn: %+v", last)
	}
	if text := llm.TextOf(res.Content); !strings.Contains(text, "go.dev/doc/go1.26") || !strings.Contains(text, "Done.") {
		t.Errorf("result:\n%s", text)
	}
}
