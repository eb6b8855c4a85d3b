package mcp

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/tackcode/tack/internal/tool"
)

// TestListChangedBeforeTheAnswer: a stdio server that announces
// tools/list_changed and answers the call in the same write. The call
// returns once the new list is read, every time: the notification is
// taken as it is read off the connection, before the answer behind it,
// not when the SDK's handler goroutine gets to it.
func TestListChangedBeforeTheAnswer(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	reg := tool.NewRegistry()
	m := New(Options{Registry: reg, Env: append(os.Environ(), "TACK_TOGGLE_SERVER=1")})
	defer m.Close()
	m.Start(context.Background(), []ServerConfig{{Name: "toggle", Command: exe, Args: []string{"-test.run=^TestToggleServer$"}}})
	if !m.WaitReady(context.Background(), 30*time.Second) || statusOf(m, "toggle").Status != StatusConnected {
		t.Fatalf("not connected: %+v", m.Statuses())
	}
	const extra = "mcp__toggle__extra"
	for i := 1; i <= 40; i++ {
		call(t, reg, "mcp__toggle__toggle", map[string]any{})
		_, offered := reg.Get(extra)
		if want := i%2 == 1; offered != want {
			t.Fatalf("after call %d, %s offered: %v, want %v", i, extra, offered, want)
		}
	}
}

// TestToggleServer is TestListChangedBeforeTheAnswer's server when
// TACK_TOGGLE_SERVER is set: newline-delimited JSON-RPC on stdin and
// stdout. Its "toggle" tool adds or takes away the "extra" tool, and writes
// the list_changed notification and its answer at once.
func TestToggleServer(t *testing.T) {
	if os.Getenv("TACK_TOGGLE_SERVER") == "" {
		t.Skip("TestListChangedBeforeTheAnswer's server process")
	}
	out := bufio.NewWriter(os.Stdout)
	send := func(v any) {
		b, _ := json.Marshal(v)
		out.Write(b)
		out.WriteByte('\n')
	}
	extra := false
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(nil, 1<<20)
	for in.Scan() {
		var msg struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		if json.Unmarshal(in.Bytes(), &msg) != nil || msg.ID == nil {
			continue // notifications
		}
		answer := func(result any) {
			send(map[string]any{"jsonrpc": "2.0", "id": msg.ID, "result": result})
		}
		schema := map[string]any{"type": "object"}
		switch msg.Method {
		case "initialize":
			answer(map[string]any{"protocolVersion": "2025-06-18", "serverInfo": map[string]any{"name": "toggle", "version": "1"},
				"capabilities": map[string]any{"tools": map[string]any{"listChanged": true}}})
		case "tools/list":
			tools := []any{map[string]any{"name": "toggle", "inputSchema": schema}}
			if extra {
				tools = append(tools, map[string]any{"name": "extra", "inputSchema": schema})
			}
			answer(map[string]any{"tools": tools})
		case "tools/call":
			extra = !extra
			send(map[string]any{"jsonrpc": "2.0", "method": "notifications/tools/list_changed"})
			answer(map[string]any{"content": []any{map[string]any{"type": "text", "text": fmt.Sprint("extra: ", extra)}}})
		default:
			send(map[string]any{"jsonrpc": "2.0", "id": msg.ID, "error": map[string]any{"code": -32601, "message": "no " + msg.Method}})
		}
		out.Flush()
	}
}
