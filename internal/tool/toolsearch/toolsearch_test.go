package toolsearch

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/tackcode/tack/internal/tool"
	"github.com/tackcode/tack/internal/tool/tooltest"
)

type fake struct{ name, desc string }

func (f fake) Name() string                  { return f.name }
func (f fake) Description() string           { return f.desc }
func (f fake) InputSchema() json.RawMessage  { return json.RawMessage(`{"type":"object"}`) }
func (f fake) ReadOnly(json.RawMessage) bool { return true }
func (f fake) Run(context.Context, *tool.Env, json.RawMessage) (tool.Result, error) {
	return tool.Result{}, nil
}

func TestToolSearch(t *testing.T) {
	reg := tool.NewRegistry(Tool(), fake{"Read", "read files"})
	reg.SetGroup("mcp__gh", []tool.Tool{
		fake{"mcp__gh__create_pull_request", "Open a pull request on GitHub"},
		fake{"mcp__gh__list_issues", "List the issues of a repository"},
		fake{"mcp__gh__get_file", "Read a file from a repository"},
	})
	reg.SetDeferred([]string{"mcp__gh__create_pull_request", "mcp__gh__list_issues", "mcp__gh__get_file"})
	env := &tool.Env{Tools: reg}
	run := func(q string, max int) (tool.Result, Result) {
		res, err := Tool().Run(context.Background(), env, json.RawMessage(`{"query":`+mustQ(q)+`,"max_results":`+itoa(max)+`}`))
		if err != nil {
			t.Fatal(err)
		}
		return res, res.Structured.(Result)
	}
	res, r := run("select:mcp__gh__list_issues,nope", 5)
	if strings.Join(r.Matches, ",") != "mcp__gh__list_issues" || strings.Join(r.Missing, ",") != "nope" {
		t.Errorf("select: %+v", r)
	}
	if string(res.Content[0].Raw) != `{"tool_name":"mcp__gh__list_issues","type":"tool_reference"}` {
		t.Errorf("block %s", res.Content[0].Raw)
	}
	_, r = run("pull request", 5)
	if len(r.Matches) == 0 || r.Matches[0] != "mcp__gh__create_pull_request" {
		t.Errorf("keyword search: %+v", r)
	}
	_, r = run("repository", 1)
	if len(r.Matches) != 1 {
		t.Errorf("max_results: %+v", r)
	}
	res, r = run("weather", 5)
	if len(r.Matches) != 0 || !strings.Contains(res.Content[0].Text, "No deferred tool") {
		t.Errorf("no match: %+v", res)
	}
	if p := tooltest.Problems(Tool(), mustShapes(t)); len(p) != 0 {
		t.Errorf("schema: %v", p)
	}
}

func mustShapes(t *testing.T) map[string]tooltest.Shape {
	s, err := tooltest.ClaudeCode()
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func mustQ(s string) string { b, _ := json.Marshal(s); return string(b) }
func itoa(i int) string     { b, _ := json.Marshal(i); return string(b) }
