package main

import (
	"bufio"
	"encoding/json"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/tackcode/tack/internal/llm"
	"github.com/tackcode/tack/internal/llm/llmtest"
)

// askTurn is a model turn that asks two questions, the second multi-select.
func askTurn() llmtest.Turn {
	return llmtest.Turn{Content: []llm.Block{llmtest.ToolUse("AskUserQuestion", map[string]any{"questions": []any{
		map[string]any{"question": "Which database should the service use?", "header": "Database", "multiSelect": false,
			"options": []any{
				map[string]any{"label": "PostgreSQL", "description": "A server, for many writers"},
				map[string]any{"label": "SQLite", "description": "A file, for one writer"},
			}},
		map[string]any{"question": "Which checks should CI run?", "header": "CI", "multiSelect": true,
			"options": []any{
				map[string]any{"label": "Tests", "description": "go test"},
				map[string]any{"label": "Lint", "description": "staticcheck"},
				map[string]any{"label": "Fuzz", "description": "go test -fuzz"},
			}},
	}})}}
}

// TestAskUserQuestionInPrintMode: with nobody to answer, in any mode, the
// call is not a permission denial but a result that tells the model to go
// on by itself, and the run goes on to the model's answer.
func TestAskUserQuestionInPrintMode(t *testing.T) {
	// In auto mode no classifier request is made for it (the script has
	// none to answer).
	for _, mode := range []string{"default", "dontAsk", "bypassPermissions", "auto"} {
		t.Run(mode, func(t *testing.T) {
			e := newEnv(t, askTurn(), llmtest.Turn{Content: []llm.Block{llmtest.Text("went with SQLite")}})
			out, errOut := e.run("-p", "set up the service", "--output-format", "json", "--permission-mode", mode)
			if e.status != 0 {
				t.Fatalf("exit %d: %s", e.status, errOut)
			}
			if !slices.Contains(e.srv.Requests()[0].ToolNames(), "AskUserQuestion") {
				t.Fatalf("AskUserQuestion is not offered: %v", e.srv.Requests()[0].ToolNames())
			}
			var res map[string]any
			if err := json.Unmarshal([]byte(out), &res); err != nil {
				t.Fatalf("%v: %s", err, out)
			}
			if res["result"] != "went with SQLite" || len(res["permission_denials"].([]any)) != 0 {
				t.Errorf("result %v, permission_denials %v", res["result"], res["permission_denials"])
			}
			r := e.srv.Requests()[1].ToolResults()[0]
			if text := llm.TextOf(r.Content); !r.IsError || !strings.Contains(text, "No user can answer") || !strings.Contains(text, "assumptions") {
				t.Errorf("tool result %+v", r)
			}
		})
	}
}

// TestAskUserQuestionOverStreamJSON: an SDK host gets the questions in
// can_use_tool and answers them in updatedInput; the model reads each
// answer under its question.
func TestAskUserQuestionOverStreamJSON(t *testing.T) {
	e := newEnv(t, askTurn(), llmtest.Turn{Content: []llm.Block{llmtest.Text("SQLite it is")}})
	cmd := exec.Command(tackBin, "--output-format", "stream-json", "--verbose", "--input-format", "stream-json", "--permission-prompt-tool=stdio")
	cmd.Dir = e.dir
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + e.home, "CLAUDE_CONFIG_DIR=" + e.home + "/.claude",
		"ANTHROPIC_API_KEY=test-key", "ANTHROPIC_BASE_URL=" + e.srv.URL()}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { stdin.Close(); _ = cmd.Wait() })
	send := func(v any) {
		line, _ := json.Marshal(v)
		if _, err := stdin.Write(append(line, '\n')); err != nil {
			t.Fatal(err)
		}
	}
	sc := bufio.NewScanner(stdout)
	sc.Buffer(nil, 16<<20)
	until := func(pred func(map[string]any) bool) map[string]any {
		for sc.Scan() {
			var m map[string]any
			if json.Unmarshal(sc.Bytes(), &m) == nil && pred(m) {
				return m
			}
		}
		t.Fatalf("stdout ended: %v", sc.Err())
		return nil
	}
	send(map[string]any{"type": "control_request", "request_id": "i", "request": map[string]any{"subtype": "initialize"}})
	send(map[string]any{"type": "user", "session_id": "", "parent_tool_use_id": nil,
		"message": map[string]any{"role": "user", "content": "set up the service"}})
	ask := until(func(m map[string]any) bool {
		req, _ := m["request"].(map[string]any)
		return m["type"] == "control_request" && req["subtype"] == "can_use_tool"
	})
	req := ask["request"].(map[string]any)
	input := req["input"].(map[string]any)
	if req["tool_name"] != "AskUserQuestion" || len(input["questions"].([]any)) != 2 {
		t.Fatalf("can_use_tool %v", req)
	}
	input["answers"] = map[string]any{"Which database should the service use?": "SQLite", "Which checks should CI run?": "Tests, Lint"}
	send(map[string]any{"type": "control_response", "response": map[string]any{"subtype": "success", "request_id": ask["request_id"],
		"response": map[string]any{"behavior": "allow", "updatedInput": input}}})
	user := until(func(m map[string]any) bool { return m["type"] == "user" })
	res := until(func(m map[string]any) bool { return m["type"] == "result" })
	stdin.Close()
	if res["result"] != "SQLite it is" {
		t.Errorf("result %v", res)
	}
	// The host sees the answers keyed by question text, as Claude Code
	// reports them.
	structured, _ := user["tool_use_result"].(map[string]any)
	answers, _ := structured["answers"].(map[string]any)
	if answers["Which checks should CI run?"] != "Tests, Lint" || len(structured["questions"].([]any)) != 2 {
		t.Errorf("tool_use_result %v", user["tool_use_result"])
	}
	r := e.srv.Requests()[1].ToolResults()[0]
	text := llm.TextOf(r.Content)
	if r.IsError || !strings.Contains(text, `"Which database should the service use?": "SQLite"`) || !strings.Contains(text, `"Tests, Lint"`) {
		t.Errorf("tool result %+v", r)
	}
}
