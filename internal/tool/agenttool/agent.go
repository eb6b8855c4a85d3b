// Package agenttool holds the Agent tool, through which the model starts
// subagents: fresh model sessions with their own context, whose final
// report is the tool's result. The subagents themselves are built and run
// by the session runtime (internal/runtime), behind tool.Subagents.
package agenttool

import (
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/tackcode/tack/internal/tool"
)

//go:embed agent.md
var intro string

// Name is the tool's name; Task is its legacy name, still matched by
// permission rules and hooks.
const Name = "Agent"

const schema = `{"type":"object","properties":{` +
	`"description":{"type":"string","description":"A short (3-5 words) label of the task"},` +
	`"prompt":{"type":"string","description":"The task for the subagent, with everything it needs to know"},` +
	`"subagent_type":{"type":"string","description":"The agent to use (default general-purpose)"},` +
	`"model":{"type":"string","enum":["sonnet","opus","haiku","fable"],"description":"Run on this model instead of the agent's own"},` +
	`"effort":{"type":"string","enum":["low","medium","high","xhigh","max"],"description":"Reasoning effort"},` +
	`"run_in_background":{"type":"boolean","description":"Return at once with an id; read the report with TaskOutput"},` +
	`"isolation":{"type":"string","enum":["worktree","remote"],"description":"worktree: run in a temporary git worktree"}},` +
	`"required":["description","prompt"],"additionalProperties":false}`

// Info is one agent the model may start.
type Info struct {
	Name        string
	Description string
}

// New returns the Agent tool offering agents (listed in its description,
// in the order given). allowed, when non-nil, limits which types may be
// started (a coordinator's "Agent(worker, researcher)").
func New(agents []Info, allowed []string) tool.Tool {
	var b strings.Builder
	b.WriteString(strings.TrimSpace(intro))
	b.WriteString("\n\nAvailable agents:\n")
	for _, a := range agents {
		if allowed != nil && !slices.Contains(allowed, a.Name) {
			continue
		}
		desc := strings.Join(strings.Fields(a.Description), " ")
		if r := []rune(desc); len(r) > 300 {
			desc = string(r[:299]) + "…"
		}
		fmt.Fprintf(&b, "- %s: %s\n", a.Name, desc)
	}
	return &agentTool{description: strings.TrimRight(b.String(), "\n"), allowed: allowed}
}

type agentTool struct {
	description string
	allowed     []string
}

type input struct {
	Description     string `json:"description"`
	Prompt          string `json:"prompt"`
	SubagentType    string `json:"subagent_type"`
	Model           string `json:"model"`
	Effort          string `json:"effort"`
	RunInBackground bool   `json:"run_in_background"`
	Isolation       string `json:"isolation"`
}

func (t *agentTool) Name() string                 { return Name }
func (t *agentTool) Description() string          { return t.description }
func (t *agentTool) InputSchema() json.RawMessage { return json.RawMessage(schema) }

// ReadOnly: starting a subagent changes nothing by itself (each of its
// own calls is gated), so several run at once.
func (t *agentTool) ReadOnly(json.RawMessage) bool { return true }

func (t *agentTool) Run(ctx context.Context, env *tool.Env, raw json.RawMessage) (tool.Result, error) {
	var in input
	if err := tool.Decode(Name, raw, &in); err != nil {
		return tool.Result{}, err
	}
	if env.Subagents == nil {
		return tool.Result{}, tool.BadInput(Name, "subagents are not available here (a subagent cannot start subagents)")
	}
	if in.SubagentType == "" {
		in.SubagentType = "general-purpose"
	}
	if t.allowed != nil && !slices.Contains(t.allowed, in.SubagentType) {
		return tool.Result{}, tool.BadInput(Name, "this agent may only start %s, not %s", strings.Join(t.allowed, ", "), in.SubagentType)
	}
	if strings.TrimSpace(in.Prompt) == "" {
		return tool.Result{}, tool.BadInput(Name, "the prompt is empty")
	}
	res, err := env.Subagents.Run(ctx, tool.SubagentRequest{
		Type: in.SubagentType, Description: in.Description, Prompt: in.Prompt, Model: in.Model, Effort: in.Effort,
		Background: in.RunInBackground, Isolation: in.Isolation, ToolUseID: tool.ToolUseID(ctx),
	})
	if err != nil {
		return tool.Result{}, err
	}
	text := res.Report
	if res.Background {
		text = fmt.Sprintf("Agent %s started in the background (id %s). Read its report with TaskOutput {\"task_id\": %q} when you need it.",
			in.SubagentType, res.AgentID, res.AgentID)
	}
	return tool.Result{Content: tool.TextResult(text, nil).Content, IsError: res.IsError, Structured: res}, nil
}
