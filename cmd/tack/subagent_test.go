package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/tackcode/tack/internal/llm"
	"github.com/tackcode/tack/internal/llm/llmtest"
)

// A subagent's requests carry what the session was launched with: the
// --betas header, the --max-thinking-tokens budget, and the --fallback-model
// it moves to when its model stays overloaded; a definition's own model
// replaces only the model.
func TestSubagentRequestsCarryTheSessionsBetasThinkingAndFallback(t *testing.T) {
	overloaded := []llmtest.Fault{{Status: 529, RetryAfter: "0"}, {Status: 529, RetryAfter: "0"}}
	agent := func(typ, prompt string) llm.Block {
		return llmtest.ToolUse("Agent", map[string]any{"subagent_type": typ, "description": "a task", "prompt": prompt})
	}
	// The subagents run one after the other: the script is in order.
	e := newEnv(t,
		llmtest.Reply(agent("worker", "WORKER-JOB")),
		llmtest.Turn{Content: []llm.Block{llmtest.Text("worked")}, Faults: overloaded},
		llmtest.Reply(agent("quick", "QUICK-JOB")),
		llmtest.Reply(llmtest.Text("quick")),
		llmtest.Reply(llmtest.Text("done")))
	e.extra = []string{"CLAUDE_CODE_MAX_RETRIES=1"}
	_, errOut := e.run("-p", "delegate", "--model", "opus", "--fallback-model", "sonnet", "--betas", "context-1m-2025-08-07",
		"--max-thinking-tokens", "2048", "--agents", `{"worker": {"description": "Works", "prompt": "You work."},
		"quick": {"description": "Quick", "prompt": "You are quick.", "model": "haiku"}}`)
	if e.status != 0 {
		t.Fatalf("exit %d: %s", e.status, errOut)
	}
	resolve := func(alias string) string { return llm.Catalogue().Resolve(alias, func(string) string { return "" }).ID }
	var worker, quick []llmtest.Request
	for _, r := range e.srv.Requests() {
		switch {
		case llmtest.FirstUserContains("WORKER-JOB")(&r):
			worker = append(worker, r)
		case llmtest.FirstUserContains("QUICK-JOB")(&r):
			quick = append(quick, r)
		}
	}
	if len(worker) != 3 || len(quick) != 1 {
		t.Fatalf("%d worker and %d quick requests, want 3 (two overloaded) and 1", len(worker), len(quick))
	}
	for _, r := range append(worker, quick...) {
		if beta := r.Header.Get("anthropic-beta"); !strings.Contains(beta, "context-1m-2025-08-07") {
			t.Errorf("a subagent's request to %s has anthropic-beta %q, without --betas", r.Model, beta)
		}
		var thinking struct {
			Type         string `json:"type"`
			BudgetTokens int    `json:"budget_tokens"`
		}
		if json.Unmarshal(r.Thinking, &thinking); thinking.Type != "enabled" || thinking.BudgetTokens != 2048 {
			t.Errorf("a subagent's request to %s has thinking %s, not the session's", r.Model, r.Thinking)
		}
	}
	if worker[0].Model != resolve("opus") || worker[2].Model != resolve("sonnet") {
		t.Errorf("the worker asked %s, then %s after the overload: want the session's model, then its fallback", worker[0].Model, worker[2].Model)
	}
	if quick[0].Model != resolve("haiku") {
		t.Errorf("the quick agent asked %s, not its definition's model", quick[0].Model)
	}
}

// -p's result counts usage as Claude Code's does: usage is the main agent's
// requests; modelUsage (per model) and total_cost_usd include the subagent's.
func TestPrintResultUsageIsTheMainAgents(t *testing.T) {
	when := func(first string, u llm.Usage, b llm.Block) llmtest.Turn {
		return llmtest.Turn{When: llmtest.FirstUserContains(first), Content: []llm.Block{b}, Usage: &u}
	}
	e := newEnv(t,
		when("delegate", llm.Usage{InputTokens: 100, OutputTokens: 10}, llmtest.ToolUse("Agent",
			map[string]any{"subagent_type": "quick", "description": "a task", "prompt": "CHILD: count"})),
		when("CHILD:", llm.Usage{InputTokens: 7000, OutputTokens: 700}, llmtest.Text("counted")),
		when("delegate", llm.Usage{InputTokens: 200, OutputTokens: 20}, llmtest.Text("done")))
	out, errOut := e.run("-p", "delegate", "--model", "opus", "--output-format", "json",
		"--agents", `{"quick": {"description": "Counts", "prompt": "You count.", "model": "haiku"}}`)
	if e.status != 0 {
		t.Fatalf("exit %d: %s", e.status, errOut)
	}
	var res struct {
		Usage struct {
			InputTokens  int64 `json:"input_tokens"`
			OutputTokens int64 `json:"output_tokens"`
		} `json:"usage"`
		ModelUsage map[string]struct {
			InputTokens  int64   `json:"inputTokens"`
			OutputTokens int64   `json:"outputTokens"`
			CostUSD      float64 `json:"costUSD"`
		} `json:"modelUsage"`
		TotalCostUSD float64 `json:"total_cost_usd"`
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if res.Usage.InputTokens != 300 || res.Usage.OutputTokens != 30 {
		t.Errorf("usage %+v, want the main agent's 300/30 only", res.Usage)
	}
	main, child := res.ModelUsage["claude-opus-5-5"], res.ModelUsage["claude-haiku-4-5"]
	if main.InputTokens != 300 || child.InputTokens != 7000 || child.OutputTokens != 700 {
		t.Errorf("modelUsage %+v, want opus 300 and haiku 7000/700", res.ModelUsage)
	}
	if d := res.TotalCostUSD - main.CostUSD - child.CostUSD; child.CostUSD <= 0 || d > 1e-9 || d < -1e-9 {
		t.Errorf("total_cost_usd %v, modelUsage %+v", res.TotalCostUSD, res.ModelUsage)
	}
}
