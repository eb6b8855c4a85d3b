package agent_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/tackcode/tack/agent"
	"github.com/tackcode/tack/internal/llm"
	"github.com/tackcode/tack/internal/llm/llmtest"
)

type weatherIn struct {
	City string `json:"city" jsonschema:"the city to look up"`
}

func TestGoToolsAndTypedMCPServers(t *testing.T) {
	js, _ := filepath.Abs(filepath.Join("..", "test", "mcp", "node_modules", "@modelcontextprotocol", "server-everything", "dist", "index.js"))
	if _, err := os.Stat(js); err != nil {
		t.Fatal("test/mcp/node_modules is missing: run scripts/test (it runs `npm ci --prefix test/mcp`)")
	}
	srv := llmtest.Start(t, llmtest.Options{Turns: []llmtest.Turn{
		{Content: []llm.Block{llmtest.ToolUse("mcp__utils__weather", map[string]any{"city": "Lyon"})}},
		{Content: []llm.Block{llmtest.ToolUse("mcp__utils__weather", map[string]any{"city": 42})}},
		{Content: []llm.Block{llmtest.ToolUse("mcp__utils__weather", map[string]any{"city": "Atlantis"})}},
		{Content: []llm.Block{llmtest.ToolUse("mcp__everything__echo", map[string]any{"message": "typed stdio"})}},
		{Content: []llm.Block{llmtest.Text("done")}},
	}})
	opts := testOptions(t, srv)
	var cities []string
	weather := agent.Tool("weather", "Current weather of a city", func(ctx context.Context, in weatherIn) (string, error) {
		cities = append(cities, in.City)
		if in.City == "Atlantis" {
			return "", errors.New("no such city")
		}
		return "sunny in " + in.City, nil
	})
	// The first request waits for node to start the server, however busy
	// the machine.
	opts.Env["TACK_MCP_STARTUP_DEADLINE_MS"] = "60000"
	opts.MCPServers = map[string]agent.MCPServerConfig{
		"utils":      agent.NewSDKServer("utils", weather),
		"everything": agent.MCPStdioServer{Command: "node", Args: []string{js, "stdio"}},
	}
	opts.AllowedTools = []string{"mcp__utils", "mcp__everything"}
	msgs := collect(t, context.Background(), "what's the weather?", opts)

	reqs := srv.Requests()
	if len(reqs) != 5 {
		t.Fatalf("%d requests", len(reqs))
	}
	names := reqs[0].ToolNames()
	if !slices.Contains(names, "mcp__utils__weather") || !slices.Contains(names, "mcp__everything__echo") {
		t.Fatalf("tools %v", names)
	}
	if d := toolDescription(t, reqs[0], "mcp__utils__weather"); !strings.Contains(d, "Current weather of a city") {
		t.Errorf("description %q", d)
	}
	check := func(i int, isErr bool, want string) {
		t.Helper()
		res := reqs[i].ToolResults()
		if len(res) != 1 || res[0].IsError != isErr || !strings.Contains(llm.TextOf(res[0].Content), want) {
			t.Errorf("request %d: results %+v, want error=%v with %q", i, res, isErr, want)
		}
	}
	check(1, false, "sunny in Lyon")
	check(2, true, "")
	check(3, true, "no such city")
	check(4, false, "typed stdio")
	if !slices.Equal(cities, []string{"Lyon", "Atlantis"}) {
		t.Errorf("the Go tool saw %v: an input that breaks its schema must not reach it", cities)
	}
	init := msgs[0].(*agent.SystemMessage).Init
	var servers []string
	for _, s := range init.MCPServers {
		servers = append(servers, s.Name+" "+s.Status)
	}
	slices.Sort(servers)
	if !slices.Equal(servers, []string{"everything connected", "utils connected"}) {
		t.Errorf("mcp_servers %v", servers)
	}
}

func TestMCPServerConfigErrors(t *testing.T) {
	srv := llmtest.Start(t, llmtest.Options{})
	opts := testOptions(t, srv)
	opts.MCPServers = map[string]agent.MCPServerConfig{"empty": agent.MCPSDKServer{}}
	for _, err := range agent.Query(context.Background(), "x", opts) {
		if err == nil || !strings.Contains(err.Error(), `MCP server "empty"`) {
			t.Errorf("err %v", err)
		}
		break
	}
}

func TestMCPLoginNeedsARemoteServer(t *testing.T) {
	srv := llmtest.New(t)
	c, err := agent.NewClient(context.Background(), testOptions(t, srv))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := c.MCPLogin(context.Background(), "nowhere"); err == nil || !strings.Contains(err.Error(), `"nowhere" is not a remote MCP server`) {
		t.Errorf("err %v", err)
	}
}
