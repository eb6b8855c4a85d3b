package sdkproto

import (
	"context"
	"encoding/json"
	"io"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// TestChannelTransportUsesTheManifest: with a manifest, the handshake is
// answered without crossing the channel; a call crosses it as an
// mcp_message and its answer comes back on the connection; a message the
// server sends on its own is delivered too.
func TestChannelTransportUsesTheManifest(t *testing.T) {
	p := newPipePeer(t)
	ss := newSDKServers(p.c)
	m := &manifest{InitializeResult: json.RawMessage(`{"protocolVersion":"2025-11-25","serverInfo":{"name":"calc"}}`),
		ToolsListResult: json.RawMessage(`{"tools":[{"name":"add"}]}`)}
	conn, err := ss.transport("calc", m).Connect(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	ctx := context.Background()
	call := func(id int64, method string) {
		t.Helper()
		rid, err := jsonrpc.MakeID(float64(id))
		if err != nil {
			t.Fatal(err)
		}
		if err := conn.Write(ctx, &jsonrpc.Request{ID: rid, Method: method, Params: json.RawMessage(`{}`)}); err != nil {
			t.Fatal(err)
		}
	}
	read := func() *jsonrpc.Response {
		t.Helper()
		msg, err := conn.Read(ctx)
		if err != nil {
			t.Fatal(err)
		}
		r, ok := msg.(*jsonrpc.Response)
		if !ok {
			t.Fatalf("read %T", msg)
		}
		return r
	}
	call(1, "initialize")
	if r := read(); string(r.Result) != string(m.InitializeResult) {
		t.Errorf("initialize answered %s", r.Result)
	}
	if err := conn.Write(ctx, &jsonrpc.Request{Method: "notifications/initialized"}); err != nil {
		t.Fatal(err)
	}
	call(2, "tools/list")
	if r := read(); string(r.Result) != string(m.ToolsListResult) {
		t.Errorf("tools/list answered %s", r.Result)
	}

	// The first frame on the channel is the call, not the handshake.
	call(3, "tools/call")
	f := p.readFrame(t)
	req := f["request"].(map[string]any)
	msg := req["message"].(map[string]any)
	if req["subtype"] != "mcp_message" || req["server_name"] != "calc" || msg["method"] != "tools/call" || msg["id"] != 3.0 {
		t.Fatalf("frame %v", f)
	}
	io.WriteString(p.toIn, `{"type":"control_response","response":{"subtype":"success","request_id":"`+f["request_id"].(string)+
		`","response":{"mcp_response":{"jsonrpc":"2.0","id":3,"result":{"content":[{"type":"text","text":"5"}]}}}}}`+"\n")
	if r := read(); string(r.Result) != `{"content":[{"type":"text","text":"5"}]}` {
		t.Errorf("tools/call answered %s (%v)", r.Result, r.Error)
	}

	// A failed call is answered with a JSON-RPC error, not left hanging.
	call(4, "tools/call")
	f = p.readFrame(t)
	io.WriteString(p.toIn, `{"type":"control_response","response":{"subtype":"error","request_id":"`+f["request_id"].(string)+`","error":"SDK MCP server not found: calc"}}`+"\n")
	if r := read(); r.Error == nil {
		t.Error("a failed mcp_message gave no error")
	}

	if err := ss.deliver("calc", json.RawMessage(`{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}`)); err != nil {
		t.Fatal(err)
	}
	got, err := conn.Read(ctx)
	if r, ok := got.(*jsonrpc.Request); err != nil || !ok || r.Method != "notifications/tools/list_changed" {
		t.Errorf("delivered %v %v", got, err)
	}
	if err := ss.deliver("nope", json.RawMessage(`{}`)); err == nil {
		t.Error("a message for an unknown server was accepted")
	}
}
