package bash

import (
	"testing"
	"unicode/utf8"
)

// compatTools is Claude Code's tool list, kept beside the repository.
const compatTools = "/work/shared/compat/claude-code-tools.json"

// wire is a tool's input shape: property types and required names.
type wire struct {
	Properties map[string]string
	Required   []string
}

// expected copies claude-code-tools.json for the tools we mirror, so that
// the test runs where that file is absent; TaskOutput's shape is ours.
var expected = map[string]wire{
	"Bash": {
		Properties: map[string]string{"command": "string", "timeout": "number", "description": "string", "run_in_background": "boolean", "dangerouslyDisableSandbox": "boolean"},
		Required:   []string{"command"},
	},
	"TaskStop": {
		Properties: map[string]string{"task_id": "string", "shell_id": "string"},
		Required:   []string{},
	},
	"TaskOutput": {
		Properties: map[string]string{"task_id": "string", "block": "boolean", "timeout": "number"},
		Required:   []string{"task_id"},
	},
}

type schema struct {
	Type       string `json:"type"`
	Properties map[string]struct {
		Type        string `json:"type"`
		Description string `json:"description"`
	} `json:"properties"`
	Required             []string `json:"required"`
	AdditionalProperties *bool    `json:"additionalProperties"`
}

func TestDescriptions(t *testing.T) {
	total := 0
	for _, tl := range Tools() {
		d := tl.Description()
		n := utf8.RuneCountInString(d)
		if n == 0 || n > 1500 {
			t.Errorf("%s description is %d characters", tl.Name(), n)
		}
		total += len(d) + len(tl.InputSchema())
	}
	// The three together must leave room in a first request under 25 KB.
	if total > 5000 {
		t.Errorf("the tools take %d bytes of the request", total)
	}
}

func TestReadOnly(t *testing.T) {
	want := map[string]bool{"Bash": false, "TaskOutput": true, "TaskStop": false}
	for _, tl := range Tools() {
		if tl.ReadOnly(nil) != want[tl.Name()] {
			t.Errorf("%s ReadOnly = %v", tl.Name(), !want[tl.Name()])
		}
	}
}
