package sdk

import (
	"strings"
	"testing"

	"github.com/tackcode/tack/internal/llm"
	"github.com/tackcode/tack/internal/llm/llmtest"
)

// TestSDKAnswersAskUserQuestion: the official SDK's canUseTool gets the
// model's questions and answers them through updatedInput.answers, as the
// Agent SDK documents for AskUserQuestion; the model reads each answer
// under its question, and the app sees them in tool_use_result.
func TestSDKAnswersAskUserQuestion(t *testing.T) {
	srv := llmtest.New(t,
		llmtest.Reply(llmtest.ToolUse("AskUserQuestion", map[string]any{"questions": []any{
			map[string]any{"question": "Which license should the project use?", "header": "License", "multiSelect": false,
				"options": []any{
					map[string]any{"label": "MIT", "description": "Short and permissive"},
					map[string]any{"label": "GPL-3.0", "description": "Copyleft"},
				}},
			map[string]any{"question": "Which platforms should releases cover?", "header": "Platforms", "multiSelect": true,
				"options": []any{
					map[string]any{"label": "Linux", "description": "amd64 and arm64"},
					map[string]any{"label": "macOS", "description": "arm64"},
				}},
		}})),
		llmtest.Reply(llmtest.Text("MIT, for Linux and macOS.")))
	out, _ := runQuery(t, srv, "ask")
	if len(out.PermissionCalls) != 1 || out.PermissionCalls[0].ToolName != "AskUserQuestion" ||
		len(out.PermissionCalls[0].Input["questions"].([]any)) != 2 {
		t.Fatalf("canUseTool calls %+v", out.PermissionCalls)
	}
	if res := out.results(); len(res) != 1 || res[0]["result"] != "MIT, for Linux and macOS." {
		t.Fatalf("results %v", res)
	}
	r := srv.Requests()[1].ToolResults()
	if len(r) != 1 || r[0].IsError {
		t.Fatalf("tool results %+v", r)
	}
	text := llm.TextOf(r[0].Content)
	for _, want := range []string{`"Which license should the project use?": "MIT"`, `"Which platforms should releases cover?": "Linux, macOS"`} {
		if !strings.Contains(text, want) {
			t.Errorf("the tool result lacks %s:\n%s", want, text)
		}
	}
	var answers map[string]any
	for _, m := range out.Messages {
		if tr, ok := m["tool_use_result"].(map[string]any); ok && m["type"] == "user" {
			answers, _ = tr["answers"].(map[string]any)
		}
	}
	if answers["Which license should the project use?"] != "MIT" {
		t.Errorf("tool_use_result answers %v", answers)
	}
}
