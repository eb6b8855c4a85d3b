package ghaction

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tackcode/tack/internal/llm"
	"github.com/tackcode/tack/internal/llm/llmtest"
)

// baseStep runs base-step.ts with the fixture's Bun, in workspace, with the
// environment claude-code-action's base step gets from its action.yml
// (CLAUDE_CODE_ACTION, the INPUT_* variables, provider variables) and a
// runner's RUNNER_TEMP and GITHUB_OUTPUT; tack is the Claude Code
// executable. It returns the step's outputs, its log and its HOME.
func baseStep(t *testing.T, srv *llmtest.Server, workspace string, inputs map[string]string) (map[string]string, string, string, error) {
	t.Helper()
	here, err := filepath.Abs(".")
	if err != nil {
		t.Fatal(err)
	}
	bun := filepath.Join(here, "node_modules", "@oven", "bun-linux-x64", "bin", "bun")
	for _, need := range []string{bun, filepath.Join(here, "node_modules", "@anthropic-ai", "claude-agent-sdk", "package.json")} {
		if _, err := os.Stat(need); err != nil {
			t.Fatalf("%s is missing: run scripts/test (it runs `npm ci --omit=optional --prefix test/ghaction`)", need)
		}
	}
	home, temp := t.TempDir(), t.TempDir()
	output := filepath.Join(temp, "github_output")
	if err := os.WriteFile(output, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bun, "run", filepath.Join(here, "base-step.ts"))
	cmd.Dir = workspace
	cmd.Env = []string{
		"PATH=" + os.Getenv("PATH"), "HOME=" + home, "SHELL=/bin/bash",
		"CI=true", "GITHUB_ACTIONS=true", "RUNNER_TEMP=" + temp, "GITHUB_OUTPUT=" + output,
		"GITHUB_WORKSPACE=" + workspace, "CLAUDE_CODE_ACTION=1",
		"INPUT_PATH_TO_CLAUDE_CODE_EXECUTABLE=" + tackBin,
		"ANTHROPIC_API_KEY=sk-test", "ANTHROPIC_BASE_URL=" + srv.URL(),
		// The OIDC variables the action keeps from the CLI.
		"ACTIONS_ID_TOKEN_REQUEST_URL=http://127.0.0.1:9/token", "ACTIONS_ID_TOKEN_REQUEST_TOKEN=oidc-secret",
	}
	for k, v := range inputs {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	out, runErr := cmd.CombinedOutput()
	return readCommandFile(t, output), string(out), home, runErr
}

// claude-code-action's base step, on its npm runtime, drives tack through
// the Agent SDK (pathToClaudeCodeExecutable) to the end of a run with tool
// round trips, and writes the execution file and the outputs.
func TestBaseStepRunsTackThroughAgentSDK(t *testing.T) {
	ws := workspace(t)
	srv := llmtest.New(t,
		llmtest.Reply(llmtest.Text("Looking."),
			llmtest.ToolUse("Read", map[string]any{"file_path": filepath.Join(ws, "notes.txt")}),
			llmtest.ToolUse("Bash", map[string]any{"command": "printenv CLAUDE_CODE_ENTRYPOINT ACTIONS_ID_TOKEN_REQUEST_TOKEN", "description": "entry point"})),
		llmtest.Reply(llmtest.ToolUse("Bash", map[string]any{"command": "touch checked.txt", "description": "mark"})),
		llmtest.Reply(llmtest.Text("Ship it on friday.")))
	outputs, log, home, err := baseStep(t, srv, ws, map[string]string{
		"INPUT_PROMPT":      "What do the notes say?",
		"INPUT_SETTINGS":    `{"permissions": {"allow": ["Bash(printenv:*)"]}}`,
		"INPUT_CLAUDE_ARGS": "--max-turns 6\n# tools\n--allowedTools Read 'Bash(echo:*)'",
	})
	if err != nil {
		t.Fatalf("base step: %v\n%s", err, log)
	}
	if outputs["conclusion"] != "success" || outputs["session_id"] == "" {
		t.Fatalf("outputs %v\n%s", outputs, log)
	}

	// The settings input went to ~/.claude/settings.json, which tack read
	// (printenv is allowed there). The repository's own allow rule (touch)
	// is withheld in the untrusted checkout, as Claude Code withholds it.
	var settings map[string]any
	if err := json.Unmarshal([]byte(readFile(t, filepath.Join(home, ".claude", "settings.json"))), &settings); err != nil ||
		settings["enableAllProjectMcpServers"] != true || settings["permissions"] == nil {
		t.Errorf("user settings %v %v", settings, err)
	}
	reqs := srv.Requests()
	if len(reqs) != 3 {
		t.Fatalf("%d requests, want 3", len(reqs))
	}
	if reqs[0].LastUserText() != "What do the notes say?" {
		t.Errorf("prompt %q", reqs[0].LastUserText())
	}
	res := reqs[1].ToolResults()
	if len(res) != 2 || res[0].IsError || !strings.Contains(llm.TextOf(res[0].Content), "ship it on friday") {
		t.Fatalf("first tool results %+v", res)
	}
	// The Bash call sees the entry point the action sets, and not the OIDC
	// token the action strips (printenv exits 1 for the missing variable).
	if env := llm.TextOf(res[1].Content); !strings.Contains(env, "claude-code-github-action") || strings.Contains(env, "oidc-secret") {
		t.Errorf("printenv result %q", env)
	}
	if r := reqs[2].ToolResults(); len(r) != 1 || !r[0].IsError {
		t.Errorf("touch result %+v: want a denial", r)
	}
	if _, err := os.Stat(filepath.Join(ws, "checked.txt")); err == nil {
		t.Error("touch ran on the repository's own allow rule")
	}

	// The execution file holds the SDK's messages, init to result.
	file := outputs["execution_file"]
	if filepath.Base(file) != "claude-execution-output.json" || !strings.HasPrefix(filepath.Base(filepath.Dir(file)), "claude-execution-") {
		t.Errorf("execution_file %q", file)
	}
	msgs := executionLog(t, file)
	result := msgs[len(msgs)-1]
	if msgs[0]["session_id"] != outputs["session_id"] || result["subtype"] != "success" || result["num_turns"] != 3.0 ||
		result["result"] != "Ship it on friday." {
		t.Errorf("init %v, result %v", msgs[0], result)
	}
	var toolUses int
	for _, m := range msgs {
		if m["type"] != "assistant" {
			continue
		}
		for _, b := range m["message"].(map[string]any)["content"].([]any) {
			if b.(map[string]any)["type"] == "tool_use" {
				toolUses++
			}
		}
	}
	if toolUses != 3 {
		t.Errorf("%d tool_use blocks in the execution file, want 3", toolUses)
	}
}

// A run that exceeds its turns fails the base step, with the execution file
// written and conclusion failure.
func TestBaseStepFailsOnErrorResult(t *testing.T) {
	ws := workspace(t)
	srv := llmtest.New(t,
		llmtest.Reply(llmtest.ToolUse("Read", map[string]any{"file_path": filepath.Join(ws, "notes.txt")})),
		llmtest.Reply(llmtest.Text("never reached")))
	outputs, log, _, err := baseStep(t, srv, ws, map[string]string{
		"INPUT_PROMPT": "Read the notes.", "INPUT_MAX_TURNS": "1",
	})
	if err == nil || outputs["conclusion"] != "failure" || !strings.Contains(log, "::error::base step failed: the run failed") {
		t.Fatalf("err %v, outputs %v\n%s", err, outputs, log)
	}
	msgs := executionLog(t, outputs["execution_file"])
	if res := msgs[len(msgs)-1]; res["subtype"] != "error_max_turns" {
		t.Errorf("result %v", res)
	}
}
