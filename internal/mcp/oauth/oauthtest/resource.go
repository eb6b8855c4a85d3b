package oauthtest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Resource is a protected MCP server: the go-sdk's Streamable HTTP server
// behind a bearer check. Without a live token it answers 401 with a
// resource_metadata challenge; its tool "whoami" answers "hello"; the tool
// "admin" needs the scope "admin" and answers 403 insufficient_scope
// without it, naming only that scope (the client keeps what it had: the
// step-up union).
type Resource struct {
	// URL is the MCP endpoint.
	URL  string
	base string
}

// NewResource starts a protected MCP server whose tokens as issues, closed
// when the test ends.
func NewResource(t testing.TB, as *AuthServer) *Resource {
	res := &Resource{}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /.well-known/oauth-protected-resource/mcp", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, 200, map[string]any{
			"resource":              res.URL,
			"authorization_servers": []string{as.URL()},
			"scopes_supported":      []string{"read", "admin"},
		})
	})
	mux.Handle("/mcp", guard(as, res, mcpHandler()))
	srv := httptest.NewUnstartedServer(mux)
	res.base = "http://" + srv.Listener.Addr().String()
	res.URL = res.base + "/mcp"
	as.mu.Lock()
	as.resource = res.URL
	as.mu.Unlock()
	srv.Start()
	t.Cleanup(srv.Close)
	return res
}

// mcpHandler is the MCP server itself, with its two tools.
func mcpHandler() http.Handler {
	server := mcp.NewServer(&mcp.Implementation{Name: "protected", Version: "1"}, nil)
	text := func(s string) mcp.ToolHandler {
		return func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: s}}}, nil
		}
	}
	server.AddTool(&mcp.Tool{Name: "whoami", InputSchema: json.RawMessage(`{"type":"object"}`)}, text("hello"))
	server.AddTool(&mcp.Tool{Name: "admin", InputSchema: json.RawMessage(`{"type":"object"}`)}, text("admin ok"))
	return mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return server }, nil)
}

// guard lets through to next only the requests with a live token of as,
// and calls of "admin" only with the scope "admin".
func guard(as *AuthServer, res *Resource, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		prm := res.base + "/.well-known/oauth-protected-resource/mcp"
		g := as.live(bearer(r.Header))
		if g == nil {
			w.Header().Set("WWW-Authenticate", fmt.Sprintf(`Bearer resource_metadata="%s", scope="read"`, prm))
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		if r.Method == http.MethodPost && calledTool(r) == "admin" && !slices.Contains(g.scopes, "admin") {
			w.Header().Set("WWW-Authenticate", fmt.Sprintf(`Bearer error="insufficient_scope", scope="admin", resource_metadata="%s"`, prm))
			http.Error(w, "insufficient scope", http.StatusForbidden)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// calledTool is the tool a JSON-RPC tools/call request calls ("" for any
// other request); the body is left for the next handler to read.
func calledTool(r *http.Request) string {
	body, _ := io.ReadAll(r.Body)
	r.Body = io.NopCloser(bytes.NewReader(body))
	var msg struct {
		Method string `json:"method"`
		Params struct {
			Name string `json:"name"`
		} `json:"params"`
	}
	if json.Unmarshal(body, &msg) != nil || msg.Method != "tools/call" {
		return ""
	}
	return msg.Params.Name
}

// bearer is the token of an Authorization: Bearer header, "" without one.
func bearer(h http.Header) string {
	a := h.Get("Authorization")
	if len(a) > 7 && strings.EqualFold(a[:7], "bearer ") {
		return a[7:]
	}
	return ""
}
