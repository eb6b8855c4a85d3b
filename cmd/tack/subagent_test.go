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
