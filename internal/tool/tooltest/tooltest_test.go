package tooltest

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/tackcode/tack/internal/tool"
)

type fake struct{ name, schema string }

func (f fake) Name() string                  { return f.name }
func (f fake) Description() string           { return "d" }
func (f fake) InputSchema() json.RawMessage  { return json.RawMessage(f.schema) }
func (f fake) ReadOnly(json.RawMessage) bool { return true }
func (f fake) Run(context.Context, *tool.Env, json.RawMessage) (tool.Result, error) {
	return tool.Result{}, nil
}

func TestProblemsFindsEachMismatch(t *testing.T) {
	want, err := ClaudeCode()
	if err != nil {
		t.Fatal(err)
	}
	if len(want["Bash"].Properties) != 5 || want["Edit"].Required[0] != "file_path" {
		t.Fatalf("claude-code-tools.json read wrong: %+v", want["Bash"])
	}
	cases := map[string]fake{
		`is number, Claude Code's is string`: {"Write", `{"type":"object","properties":{"file_path":{"type":"number"},"content":{"type":"string"}},"required":["file_path","content"],"additionalProperties":false}`},
		`property "content" is missing`:      {"Write", `{"type":"object","properties":{"file_path":{"type":"string"}},"required":["file_path","content"],"additionalProperties":false}`},
		`required [file_path]`:               {"Write", `{"type":"object","properties":{"file_path":{"type":"string"},"content":{"type":"string"}},"required":["file_path"],"additionalProperties":false}`},
		`accepts unknown properties`:         {"Mine", `{"type":"object","properties":{}}`},
		`input schema`:                       {"Mine", `{"type":"objekt"}`},
		`not in Claude Code's`:               {"Write", `{"type":"object","properties":{"file_path":{"type":"string"},"content":{"type":"string"},"mode":{"type":"string"}},"required":["file_path","content"],"additionalProperties":false}`},
	}
	for wantMsg, f := range cases {
		got := strings.Join(Problems(f, want), "; ")
		if !strings.Contains(got, wantMsg) {
			t.Errorf("%s: problems %q do not mention %q", f.schema, got, wantMsg)
		}
	}
	ok := fake{"Write", `{"type":"object","properties":{"file_path":{"type":"string"},"content":{"type":"string"}},"required":["file_path","content"],"additionalProperties":false}`}
	if p := Problems(ok, want); len(p) != 0 {
		t.Errorf("a matching tool has problems: %v", p)
	}
}
