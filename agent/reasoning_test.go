package agent_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tackcode/tack/agent"
	"github.com/tackcode/tack/internal/llm/llmtest"
)

// runOnce sends one prompt through a new client and returns the client,
// still open, for its Info.
func runOnce(t *testing.T, opts agent.Options, prompt string) *agent.Client {
	t.Helper()
	c, err := agent.NewClient(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	if err := c.Send(prompt); err != nil {
		t.Fatal(err)
	}
	for _, err := range c.ReceiveResponse() {
		if err != nil {
			t.Fatal(err)
		}
	}
	return c
}

// Effort, task budget and thinking reach the API as Claude Code sends them
// (output_config.effort and task_budget with their betas, thinking
// adaptive with its display),
// and Info reports them with the prompt id the hooks saw.
func TestClientEffortThinkingAndPromptID(t *testing.T) {
	srv := llmtest.New(t, llmtest.Reply(llmtest.Text("a")))
	opts := testOptions(t, srv)
	opts.Effort, opts.Thinking, opts.ThinkingDisplay, opts.TaskBudget = "low", "enabled", "summarized", 50_000
	var hookPromptID string
	opts.Hooks = map[agent.HookEvent][]agent.HookMatcher{agent.HookUserPromptSubmit: {{Hooks: []agent.HookCallback{
		func(_ context.Context, in agent.HookInput, _ json.RawMessage) (*agent.HookOutput, error) {
			hookPromptID = in.Common().PromptID
			return nil, nil
		}}}}}
	c := runOnce(t, opts, "hi")
	req := srv.Requests()[0]
	var body struct {
		OutputConfig struct {
			Effort     string `json:"effort"`
			TaskBudget struct {
				Type  string `json:"type"`
				Total int    `json:"total"`
			} `json:"task_budget"`
		} `json:"output_config"`
	}
	if err := json.Unmarshal(req.Body, &body); err != nil {
		t.Fatal(err)
	}
	if body.OutputConfig.Effort != "low" || !strings.Contains(req.Header.Get("anthropic-beta"), "effort-2025-11-24") {
		t.Errorf("effort %q, betas %q", body.OutputConfig.Effort, req.Header.Get("anthropic-beta"))
	}
	if tb := body.OutputConfig.TaskBudget; tb.Type != "tokens" || tb.Total != 50_000 || !strings.Contains(req.Header.Get("anthropic-beta"), "task-budgets-2026-03-13") {
		t.Errorf("task budget %+v, betas %q", tb, req.Header.Get("anthropic-beta"))
	}
	if string(req.Thinking) != `{"type":"adaptive","display":"summarized"}` {
		t.Errorf("thinking %s", req.Thinking)
	}
	info := c.Info()
	if info.Effort != "low" || !info.Thinking {
		t.Errorf("info effort %q thinking %v", info.Effort, info.Thinking)
	}
	if hookPromptID == "" || info.PromptID != hookPromptID {
		t.Errorf("info prompt id %q, the hook's %q", info.PromptID, hookPromptID)
	}
	// The transcript's prompt record carries it as promptId, as Claude
	// Code's does.
	c.Close()
	transcript, err := os.ReadFile(info.TranscriptPath)
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(transcript), `"promptId":"`+hookPromptID+`"`); n != 1 {
		t.Errorf("%d records with promptId %s in:\n%s", n, hookPromptID, transcript)
	}
}

// Unset, no effort and no thinking are sent: Info says the API's default
// effort (high) and thinking off. The settings' effortLevel and
// alwaysThinkingEnabled fill them; a model that takes no effort gets none.
func TestClientEffortFromSettingsAndDefaults(t *testing.T) {
	srv := llmtest.New(t, llmtest.Reply(llmtest.Text("a")), llmtest.Reply(llmtest.Text("b")), llmtest.Reply(llmtest.Text("c")))
	opts := testOptions(t, srv)
	c := runOnce(t, opts, "one")
	if req := srv.Requests()[0]; strings.Contains(string(req.Body), "output_config") || len(req.Thinking) != 0 {
		t.Errorf("unset effort or thinking sent: %s", req.Body)
	}
	if info := c.Info(); info.Effort != "high" || info.Thinking || info.PromptID == "" {
		t.Errorf("defaults: effort %q thinking %v prompt %q", info.Effort, info.Thinking, info.PromptID)
	}

	settings := filepath.Join(opts.Env["CLAUDE_CONFIG_DIR"], "settings.json")
	if err := os.WriteFile(settings, []byte(`{"effortLevel": "xhigh", "alwaysThinkingEnabled": true}`), 0o600); err != nil {
		t.Fatal(err)
	}
	c = runOnce(t, opts, "two")
	if req := srv.Requests()[1]; !strings.Contains(string(req.Body), `"output_config":{"effort":"xhigh"}`) || string(req.Thinking) != `{"type":"adaptive"}` {
		t.Errorf("settings not applied: %s", req.Body)
	}
	if info := c.Info(); info.Effort != "xhigh" || !info.Thinking {
		t.Errorf("settings: effort %q thinking %v", info.Effort, info.Thinking)
	}

	opts.Model, opts.Thinking = "haiku", "disabled"
	c = runOnce(t, opts, "three")
	if req := srv.Requests()[2]; strings.Contains(string(req.Body), "output_config") || len(req.Thinking) != 0 {
		t.Errorf("haiku got an effort, or disabled thinking was sent: %s", req.Body)
	}
	if info := c.Info(); info.Effort != "" || info.Thinking {
		t.Errorf("haiku: effort %q thinking %v", info.Effort, info.Thinking)
	}
}

func TestOptionsRefuseUnknownEffort(t *testing.T) {
	srv := llmtest.New(t)
	opts := testOptions(t, srv)
	opts.Effort = "extreme"
	_, err := agent.NewClient(context.Background(), opts)
	if err == nil || !strings.Contains(err.Error(), `unknown Effort "extreme"`) {
		t.Fatalf("err = %v", err)
	}
}
