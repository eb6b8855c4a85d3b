package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tackcode/tack/internal/llm"
	"github.com/tackcode/tack/internal/tool"
)

// TestCallToolForHooks calls a tool of an in-process go-sdk server the way
// an mcp_tool hook does: by the server's own tool name, only once the
// server is connected.
func TestCallToolForHooks(t *testing.T) {
	srv := mcp.NewServer(&mcp.Implementation{Name: "policy", Version: "1"}, nil)
	srv.AddTool(&mcp.Tool{Name: "judge", InputSchema: json.RawMessage(`{"type":"object"}`)}, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "judged " + string(req.Params.Arguments)}}}, nil
	})
	srv.AddTool(&mcp.Tool{Name: "broken", InputSchema: json.RawMessage(`{"type":"object"}`)}, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: "the policy store is down"}}}, nil
	})
	release := make(chan struct{})
	dial := func(ctx context.Context) (mcp.Transport, error) {
		<-release // the server is still starting until the test says so
		ct, st := mcp.NewInMemoryTransports()
		if _, err := srv.Connect(ctx, st, nil); err != nil {
			return nil, err
		}
		return ct, nil
	}
	m := New(Options{Registry: tool.NewRegistry()})
	defer m.Close()
	down := func(context.Context) (mcp.Transport, error) { return nil, errors.New("connection refused") }
	m.Start(context.Background(), []ServerConfig{{Name: "policy", Type: TypeSDK, Dial: dial}, {Name: "down", Type: TypeSDK, Dial: down}})

	ctx := context.Background()
	if _, _, err := m.CallTool(ctx, "policy", "judge", nil); err == nil || err.Error() != `MCP server "policy" is not connected (still starting)` {
		t.Fatalf("a server still starting: %v", err)
	}
	close(release)
	if !m.WaitReady(ctx, 30*time.Second) {
		t.Fatalf("not connected: %+v", m.Statuses())
	}
	blocks, isError, err := m.CallTool(ctx, "policy", "judge", json.RawMessage(`{"cmd":"rm -rf x"}`))
	if err != nil || isError || llm.TextOf(blocks) != `judged {"cmd":"rm -rf x"}` {
		t.Fatalf("judge: %q %v %v", llm.TextOf(blocks), isError, err)
	}
	blocks, isError, err = m.CallTool(ctx, "policy", "broken", nil)
	if err != nil || !isError || llm.TextOf(blocks) != "the policy store is down" {
		t.Errorf("broken: %q %v %v", llm.TextOf(blocks), isError, err)
	}
	if _, _, err := m.CallTool(ctx, "policy", "mcp__policy__judge", nil); err == nil || !strings.Contains(err.Error(), `MCP server "policy" has no tool "mcp__policy__judge" (it offers: broken, judge)`) {
		t.Errorf("tack's name for the tool: %v", err)
	}
	if _, _, err := m.CallTool(ctx, "down", "judge", nil); err == nil || !strings.HasPrefix(err.Error(), `MCP server "down" is not connected (failed: `) || !strings.Contains(err.Error(), "connection refused") {
		t.Errorf("a failed server: %v", err)
	}
	if _, _, err := m.CallTool(ctx, "nowhere", "judge", nil); err == nil || !strings.Contains(err.Error(), `no MCP server named "nowhere"`) {
		t.Errorf("an unknown server: %v", err)
	}
}
