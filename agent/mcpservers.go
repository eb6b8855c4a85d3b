package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tackcode/tack/internal/mcp"
	"github.com/tackcode/tack/internal/version"
)

// MCPServerConfig is one MCP server of Options.MCPServers: an
// MCPStdioServer, MCPHTTPServer, MCPSSEServer or MCPSDKServer.
type MCPServerConfig interface{ mcpServer() }

// MCPStdioServer is a server tack starts as a process.
type MCPStdioServer struct {
	Command string            `json:"command"`
	Args    []string          `json:"args,omitempty"`
	Env     map[string]string `json:"env,omitempty"`
}

// MCPHTTPServer is a remote server over Streamable HTTP.
type MCPHTTPServer struct {
	URL     string            `json:"url"`
	Headers map[string]string `json:"headers,omitempty"`
}

// MCPSSEServer is a remote server over the legacy SSE transport.
type MCPSSEServer struct {
	URL     string            `json:"url"`
	Headers map[string]string `json:"headers,omitempty"`
}

// MCPSDKServer is a server that runs inside the program: an MCP server of
// the official Go SDK (github.com/modelcontextprotocol/go-sdk), connected
// in memory. Its tools are offered as mcp__<name>__<tool>, like any MCP
// server's. NewSDKServer builds one from Go functions.
type MCPSDKServer struct {
	Server *sdk.Server
}

// MCPTransportServer is a server reached through a transport the program
// provides: Dial returns a new connection's client transport each time
// tack connects (ctx lives as long as the connection may). This is how an
// SDK host's in-process servers are reached over its control channel.
type MCPTransportServer struct {
	Dial func(ctx context.Context) (sdk.Transport, error)
}

func (MCPTransportServer) mcpServer() {}
func (MCPStdioServer) mcpServer()     {}
func (MCPHTTPServer) mcpServer()      {}
func (MCPSSEServer) mcpServer()       {}
func (MCPSDKServer) mcpServer()       {}

// SDKTool is a tool written in Go, for NewSDKServer.
type SDKTool struct {
	add func(*sdk.Server)
}

// Tool declares a tool written in Go. Its input schema is inferred from In
// (a struct: fields by their json names, descriptions from `jsonschema`
// tags) and every call is checked against it before run sees it. What run
// returns is the tool's result; an error is a failed call the model sees.
//
//	type weatherIn struct {
//		City string `json:"city" jsonschema:"the city to look up"`
//	}
//	weather := agent.Tool("weather", "Current weather of a city",
//		func(ctx context.Context, in weatherIn) (string, error) { return lookUp(in.City) })
//	opts.MCPServers = map[string]agent.MCPServerConfig{"utils": agent.NewSDKServer("utils", weather)}
func Tool[In any](name, description string, run func(ctx context.Context, in In) (string, error)) SDKTool {
	return SDKTool{add: func(s *sdk.Server) {
		sdk.AddTool(s, &sdk.Tool{Name: name, Description: description},
			func(ctx context.Context, _ *sdk.CallToolRequest, in In) (*sdk.CallToolResult, any, error) {
				out, err := run(ctx, in)
				if err != nil {
					return nil, nil, err
				}
				return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: out}}}, nil, nil
			})
	}}
}

// NewSDKServer makes an in-process server named name from tools.
func NewSDKServer(name string, tools ...SDKTool) MCPSDKServer {
	s := sdk.NewServer(&sdk.Implementation{Name: name, Version: version.Version}, nil)
	for _, t := range tools {
		t.add(s)
	}
	return MCPSDKServer{Server: s}
}

// mcpConfigJSON renders the process and remote servers of servers as one
// --mcp-config value, so they load, rank and are recorded exactly as the
// flag's are; "" when there are none.
func mcpConfigJSON(servers map[string]MCPServerConfig) (string, error) {
	entries := map[string]any{}
	for _, name := range slices.Sorted(maps.Keys(servers)) {
		switch srv := servers[name].(type) {
		case MCPStdioServer:
			entries[name] = srv
		case MCPHTTPServer:
			entries[name] = struct {
				Type string `json:"type"`
				MCPHTTPServer
			}{"http", srv}
		case MCPSSEServer:
			entries[name] = struct {
				Type string `json:"type"`
				MCPSSEServer
			}{"sse", srv}
		case MCPSDKServer, MCPTransportServer:
		case nil:
			return "", fmt.Errorf("MCP server %q: no configuration", name)
		default:
			return "", fmt.Errorf("MCP server %q: unknown configuration type %T", name, srv)
		}
	}
	if len(entries) == 0 {
		return "", nil
	}
	b, err := json.Marshal(map[string]any{"mcpServers": entries})
	return string(b), err
}

// sdkServerConfigs are the in-process servers of servers, for the MCP
// manager: each connection gets a fresh pair of in-memory transports.
func sdkServerConfigs(servers map[string]MCPServerConfig) ([]mcp.ServerConfig, error) {
	var out []mcp.ServerConfig
	for _, name := range slices.Sorted(maps.Keys(servers)) {
		if t, ok := servers[name].(MCPTransportServer); ok {
			if t.Dial == nil {
				return nil, fmt.Errorf("MCP server %q: MCPTransportServer without Dial", name)
			}
			out = append(out, mcp.ServerConfig{Name: name, Type: mcp.TypeSDK, Scope: "sdk", Dial: t.Dial})
			continue
		}
		srv, ok := servers[name].(MCPSDKServer)
		if !ok {
			continue
		}
		if srv.Server == nil {
			return nil, fmt.Errorf("MCP server %q: MCPSDKServer without a Server", name)
		}
		s := srv.Server
		out = append(out, mcp.ServerConfig{Name: name, Type: mcp.TypeSDK, Scope: "sdk",
			Dial: func(ctx context.Context) (sdk.Transport, error) {
				client, server := sdk.NewInMemoryTransports()
				if _, err := s.Connect(ctx, server, nil); err != nil {
					return nil, fmt.Errorf("start in-process MCP server %q: %w", name, err)
				}
				return client, nil
			}})
	}
	return out, nil
}
