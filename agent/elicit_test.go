package agent_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/tackcode/tack/agent"
	"github.com/tackcode/tack/internal/llm"
	"github.com/tackcode/tack/internal/llm/llmtest"
)

// TestElicitationAnsweredByTheSDKThenByHooks: server-everything asks for a
// form; no Elicitation hook answers, so OnElicitation (the SDK's user) does;
// the ElicitationResult hook sees that answer and changes it, and the
// server gets the hook's version.
func TestElicitationAnsweredByTheSDKThenByHooks(t *testing.T) {
	js, _ := filepath.Abs(filepath.Join("..", "test", "mcp", "node_modules", "@modelcontextprotocol", "server-everything", "dist", "index.js"))
	if _, err := os.Stat(js); err != nil {
		t.Fatal("test/mcp/node_modules is missing: run scripts/test (it runs `npm ci --prefix test/mcp`)")
	}
	srv := llmtest.Start(t, llmtest.Options{Turns: []llmtest.Turn{
		llmtest.Reply(llmtest.ToolUse("mcp__everything__trigger-elicitation-request", map[string]any{})),
		llmtest.Reply(llmtest.Text("done")),
	}})
	opts := testOptions(t, srv)
	opts.Env["TACK_MCP_STARTUP_DEADLINE_MS"] = "60000"
	opts.MCPServers = map[string]agent.MCPServerConfig{"everything": agent.MCPStdioServer{Command: "node", Args: []string{js, "stdio"}}}
	opts.AllowedTools = []string{"mcp__everything"}

	var mu sync.Mutex
	var seen []string
	record := func(s string) { mu.Lock(); seen = append(seen, s); mu.Unlock() }
	opts.OnElicitation = func(_ context.Context, e agent.Elicitation) (agent.ElicitationAnswer, error) {
		record("user asked by " + e.Server)
		return agent.ElicitationAnswer{Action: agent.ElicitAccept, Content: map[string]any{"name": "Ada (typed)", "check": false}}, nil
	}
	opts.Hooks = map[agent.HookEvent][]agent.HookMatcher{
		agent.HookElicitation: {{Matcher: "everything", Hooks: []agent.HookCallback{
			func(_ context.Context, in agent.HookInput, _ json.RawMessage) (*agent.HookOutput, error) {
				e := in.(*agent.ElicitationHookInput)
				record("Elicitation " + e.MCPServerName + " " + e.Mode)
				return nil, nil // no answer: the user is asked
			}}}},
		agent.HookElicitationResult: {{Matcher: "everything", Hooks: []agent.HookCallback{
			func(_ context.Context, in agent.HookInput, _ json.RawMessage) (*agent.HookOutput, error) {
				r := in.(*agent.ElicitationResultHookInput)
				record("ElicitationResult " + r.Action + " " + string(r.Content))
				return &agent.HookOutput{HookSpecificOutput: &agent.HookSpecificOutput{HookEventName: agent.HookElicitationResult,
					Action: "accept", Content: json.RawMessage(`{"name":"Ada (reviewed)","check":true}`)}}, nil
			}}}},
	}
	collect(t, context.Background(), "fill in the form", opts)

	reqs := srv.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d requests", len(reqs))
	}
	if got := llm.TextOf(reqs[1].ToolResults()[0].Content); !strings.Contains(got, "- Name: Ada (reviewed)\n- Agreed to terms: true") {
		t.Errorf("tool result:\n%s", got)
	}
	want := []string{"Elicitation everything form", "user asked by everything", `ElicitationResult accept {"check":false,"name":"Ada (typed)"}`}
	mu.Lock()
	defer mu.Unlock()
	if strings.Join(seen, "\n") != strings.Join(want, "\n") {
		t.Errorf("seen\n%s\nwant\n%s", strings.Join(seen, "\n"), strings.Join(want, "\n"))
	}
}
