package sdkproto

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// An SDK MCP server (createSdkMcpServer) runs inside the host program: tack
// reaches it by sending each JSON-RPC message as an mcp_message control
// request and reading the answer from the control response. When the
// SDK sent the server's manifest with initialize (its answers to the MCP
// initialize and tools/list), the handshake is answered from it and only
// the other messages (tools/call…) cross the channel, as with Claude Code.

// manifest is what initialize's sdkMcpServerManifests holds for a server.
type manifest struct {
	InitializeResult json.RawMessage `json:"initializeResult"`
	ToolsListResult  json.RawMessage `json:"toolsListResult"`
}

// sdkServers routes the SDK's servers' messages to their connections.
type sdkServers struct {
	conn *conn

	mu     sync.Mutex
	active map[string]*channelConn // the live connection of each server
}

func newSDKServers(c *conn) *sdkServers {
	return &sdkServers{conn: c, active: map[string]*channelConn{}}
}

// transport returns the MCP transport to server name.
func (ss *sdkServers) transport(name string, m *manifest) sdk.Transport {
	return &channelTransport{servers: ss, name: name, manifest: m}
}

// deliver passes a message the SDK's server sent on its own (a
// notification such as tools/list_changed) to the server's connection.
func (ss *sdkServers) deliver(name string, raw json.RawMessage) error {
	ss.mu.Lock()
	c := ss.active[name]
	ss.mu.Unlock()
	if c == nil {
		return fmt.Errorf("no connection to the SDK MCP server %q", name)
	}
	msg, err := jsonrpc.DecodeMessage(raw)
	if err != nil {
		return fmt.Errorf("SDK MCP server %q: %w", name, err)
	}
	c.push(msg)
	return nil
}

type channelTransport struct {
	servers  *sdkServers
	name     string
	manifest *manifest
}

func (t *channelTransport) Connect(ctx context.Context) (sdk.Connection, error) {
	c := &channelConn{t: t, in: make(chan jsonrpc.Message, 16), done: make(chan struct{})}
	t.servers.mu.Lock()
	t.servers.active[t.name] = c
	t.servers.mu.Unlock()
	return c, nil
}

// channelConn is one MCP connection over the control channel.
type channelConn struct {
	t    *channelTransport
	in   chan jsonrpc.Message
	done chan struct{}
	once sync.Once
}

func (c *channelConn) SessionID() string { return "" }

func (c *channelConn) push(m jsonrpc.Message) {
	select {
	case c.in <- m:
	case <-c.done:
	}
}

func (c *channelConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	select {
	case m := <-c.in:
		return m, nil
	case <-c.done:
		return nil, errors.New("connection closed")
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

func (c *channelConn) Close() error {
	c.once.Do(func() {
		close(c.done)
		ss := c.t.servers
		ss.mu.Lock()
		if ss.active[c.t.name] == c {
			delete(ss.active, c.t.name)
		}
		ss.mu.Unlock()
	})
	return nil
}

func (c *channelConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	req, isReq := msg.(*jsonrpc.Request)
	if isReq && c.t.manifest != nil {
		// The handshake is answered from the manifest.
		switch {
		case req.Method == "initialize" && len(c.t.manifest.InitializeResult) > 0:
			c.reply(req.ID, c.t.manifest.InitializeResult)
			return nil
		case req.Method == "notifications/initialized" && len(c.t.manifest.InitializeResult) > 0:
			return nil
		case req.Method == "tools/list" && len(c.t.manifest.ToolsListResult) > 0:
			c.reply(req.ID, c.t.manifest.ToolsListResult)
			return nil
		}
	}
	data, err := jsonrpc.EncodeMessage(msg)
	if err != nil {
		return fmt.Errorf("SDK MCP server %q: %w", c.t.name, err)
	}
	fields := map[string]any{"server_name": c.t.name, "message": json.RawMessage(data)}
	if !isReq || !req.ID.IsValid() {
		// A notification or a response: the SDK's answer carries nothing.
		_, err := c.t.servers.conn.request(ctx, "mcp_message", fields)
		return err
	}
	// A call: its answer comes back in the control response, and is read
	// from the connection like any message from the server.
	go func() {
		raw, err := c.t.servers.conn.request(ctx, "mcp_message", fields)
		if err == nil {
			var body struct {
				MCPResponse json.RawMessage `json:"mcp_response"`
			}
			if err = json.Unmarshal(raw, &body); err == nil {
				var m jsonrpc.Message
				if m, err = jsonrpc.DecodeMessage(body.MCPResponse); err == nil {
					c.push(m)
					return
				}
			}
		}
		c.push(&jsonrpc.Response{ID: req.ID, Error: &jsonrpc.Error{Code: jsonrpc.CodeInternalError,
			Message: fmt.Sprintf("SDK MCP server %q: %v", c.t.name, err)}})
	}()
	return nil
}

// reply answers call id with result, as if the server had.
func (c *channelConn) reply(id jsonrpc.ID, result json.RawMessage) {
	go c.push(&jsonrpc.Response{ID: id, Result: result})
}
