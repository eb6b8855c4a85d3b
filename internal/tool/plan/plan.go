// Package plan holds ExitPlanMode, the tool a model uses to leave plan mode
// with a plan the user approves.
package plan

import (
	"context"
	_ "embed"
	"encoding/json"

	"github.com/tackcode/tack/internal/tool"
)

//go:embed exit.md
var exitDescription string

const exitSchema = `{"type":"object","properties":{"plan":{"type":"string","description":"The plan to approve, in Markdown."}},"required":["plan"],"additionalProperties":false}`

// ExitPlanMode is the name of the tool that leaves plan mode.
const ExitPlanMode = "ExitPlanMode"

// Tools returns ExitPlanMode.
func Tools() []tool.Tool { return []tool.Tool{exitTool{}} }

type exitTool struct{}

type exitInput struct {
	Plan string `json:"plan"`
}

// exitResult is the structured result.
type exitResult struct {
	Plan string `json:"plan"`
	Mode string `json:"mode"`
}

func (exitTool) Name() string                 { return ExitPlanMode }
func (exitTool) Description() string          { return exitDescription }
func (exitTool) InputSchema() json.RawMessage { return json.RawMessage(exitSchema) }

// ReadOnly: leaving plan mode changes nothing outside the session, and the
// call is always put to the user first (see the permission layer).
func (exitTool) ReadOnly(json.RawMessage) bool { return true }

// Run runs once the user approved the plan: the session leaves plan mode.
func (t exitTool) Run(ctx context.Context, env *tool.Env, input json.RawMessage) (tool.Result, error) {
	var in exitInput
	if err := tool.Decode(t.Name(), input, &in); err != nil {
		return tool.Result{}, err
	}
	if env.Modes == nil || env.Modes.Mode() != "plan" {
		return tool.Result{}, tool.BadInput(t.Name(), "the session is not in plan mode; there is nothing to leave")
	}
	if err := env.Modes.SetMode("default"); err != nil {
		return tool.Result{}, err
	}
	return tool.TextResult("The user approved the plan and the session has left plan mode. Carry it out now.",
		exitResult{Plan: in.Plan, Mode: "default"}), nil
}
