// Package structured holds StructuredOutput, the tool through which the
// model returns the final answer of a run in the JSON form a caller asked
// for (--json-schema, the SDKs' outputFormat). The caller's schema is the
// tool's input schema, so the model is held to it and the registry checks
// every call against it before the tool runs.
package structured

import (
	"context"
	_ "embed"
	"encoding/json"
	"fmt"

	"github.com/tackcode/tack/internal/llm"
	"github.com/tackcode/tack/internal/tool"
)

//go:embed structured.md
var description string

// Reminder is the message that asks a model which ended its turn without
// calling the tool to call it.
//
//go:embed reminder.md
var Reminder string

// Name is the tool's name.
const Name = "StructuredOutput"

// New returns the tool for schema, a JSON Schema whose root is an object
// (the API's rule for tool inputs). Each valid call is passed to accept.
func New(schema json.RawMessage, accept func(value json.RawMessage)) (tool.Tool, error) {
	var root struct {
		Type any `json:"type"`
	}
	if err := json.Unmarshal(schema, &root); err != nil {
		return nil, fmt.Errorf("the output schema is not JSON: %w", err)
	}
	if root.Type != "object" {
		return nil, fmt.Errorf(`the output schema's root must be {"type": "object", …}, got type %v`, root.Type)
	}
	return &structuredTool{schema: schema, accept: accept}, nil
}

type structuredTool struct {
	schema json.RawMessage
	accept func(json.RawMessage)
}

func (t *structuredTool) Name() string                  { return Name }
func (t *structuredTool) Description() string           { return description }
func (t *structuredTool) InputSchema() json.RawMessage  { return t.schema }
func (t *structuredTool) ReadOnly(json.RawMessage) bool { return true }

func (t *structuredTool) Run(_ context.Context, _ *tool.Env, input json.RawMessage) (tool.Result, error) {
	t.accept(append(json.RawMessage(nil), input...))
	return tool.Result{Content: []llm.Block{llm.Text("Structured output received.")}, Structured: json.RawMessage(input), EndsTurn: true}, nil
}
