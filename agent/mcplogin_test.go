package agent_test

import (
	"context"
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/tackcode/tack/agent"
	"github.com/tackcode/tack/internal/hook"
	"github.com/tackcode/tack/internal/hook/hooktest"
	"github.com/tackcode/tack/internal/llm"
	"github.com/tackcode/tack/internal/llm/llmtest"
	"github.com/tackcode/tack/internal/mcp/oauth/oauthtest"
)

// oauthClient is a client of a session whose MCP server "remote" is res,
// behind OAuth, with a browser in mode and a Notification hook logging
// its payloads: it returns the client, the hook log and the browser's
// status file.
func oauthClient(t *testing.T, srv *llmtest.Server, res *oauthtest.Resource, mode string) (*agent.Client, string, string) {
	t.Helper()
	opts := testOptions(t, srv)
	browser, status := oauthtest.Browser(t, mode)
	opts.Env["BROWSER"] = browser
	// The first request waits for the server to say it needs a login.
	opts.Env["TACK_MCP_STARTUP_DEADLINE_MS"] = "60000"
	opts.MCPServers = map[string]agent.MCPServerConfig{"remote": agent.MCPHTTPServer{URL: res.URL}}
	opts.AllowedTools = []string{"mcp__remote"}
	log := filepath.Join(t.TempDir(), "hooks.jsonl")
	settings, err := json.Marshal(map[string]any{"hooks": hooktest.LoggingHooks(log, hook.Notification)})
	if err != nil {
		t.Fatal(err)
	}
	opts.Settings = string(settings)
	c, err := agent.NewClient(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c, log, status
}

// prompt runs one prompt to its result.
func prompt(t *testing.T, c *agent.Client, text string) {
	t.Helper()
	if err := c.Send(text); err != nil {
		t.Fatal(err)
	}
	for _, err := range c.ReceiveResponse() {
		if err != nil {
			t.Fatal(err)
		}
	}
}

func mcpStatus(c *agent.Client, name string) string {
	for _, s := range c.MCPServers() {
		if s.Name == name {
			return s.Status
		}
	}
	return "absent"
}

// TestMCPLoginNotifiesAuthSuccess: a remote MCP server behind OAuth needs
// a login, and its tools are not offered; Client.MCPLogin (what the UI's
// /mcp login runs) goes through the browser, the Notification hooks hear
// auth_success, and the server's tool then answers the model.
func TestMCPLoginNotifiesAuthSuccess(t *testing.T) {
	as := oauthtest.NewAuthServer(t)
	res := oauthtest.NewResource(t, as)
	srv := llmtest.New(t,
		llmtest.Reply(llmtest.Text("not signed in")),
		llmtest.Reply(llmtest.ToolUse("mcp__remote__whoami", map[string]any{})),
		llmtest.Reply(llmtest.Text("done")))
	c, log, status := oauthClient(t, srv, res, oauthtest.Follow)
	prompt(t, c, "hello")
	if s := mcpStatus(c, "remote"); s != "needs-auth" {
		t.Fatalf("status before login %q: %+v", s, c.MCPServers())
	}

	if err := c.MCPLogin(context.Background(), "remote"); err != nil {
		t.Fatalf("MCPLogin: %v", err)
	}
	if data := oauthtest.WaitFile(t, status); !strings.HasPrefix(string(data), "200 ") {
		t.Errorf("the browser saw %q", data)
	}
	if n := as.Counts(); n.Authorizations != 1 || n.CodeGrants != 1 {
		t.Errorf("the authorization server counts %+v, want one authorization", n)
	}
	notes := hooktest.Only(hooktest.ReadLog(t, log), hook.Notification)
	if len(notes) != 1 {
		t.Fatalf("%d Notification payloads, want 1: %v", len(notes), notes)
	}
	n := notes[0]
	if n.String("notification_type") != "auth_success" || !strings.Contains(n.String("message"), "remote") || n.Has("title") {
		t.Errorf("Notification payload %s", n.Raw)
	}
	if n.String("session_id") != c.SessionID() {
		t.Errorf("session_id %q, want %q", n.String("session_id"), c.SessionID())
	}

	if s := mcpStatus(c, "remote"); s != "connected" {
		t.Errorf("status after login %q", s)
	}
	prompt(t, c, "who am I?")
	reqs := srv.Requests()
	if len(reqs) != 3 {
		t.Fatalf("%d requests", len(reqs))
	}
	if slices.Contains(reqs[0].ToolNames(), "mcp__remote__whoami") || !slices.Contains(reqs[1].ToolNames(), "mcp__remote__whoami") {
		t.Errorf("tools before login %v, after %v", reqs[0].ToolNames(), reqs[1].ToolNames())
	}
	if res := reqs[2].ToolResults(); len(res) != 1 || res[0].IsError || llm.TextOf(res[0].Content) != "hello" {
		t.Errorf("tool results %+v", res)
	}
}

// TestMCPLoginFailedNotifiesNothing: a login whose callback is forged
// fails, and the Notification hooks hear no auth_success; they are live
// all the same, as a host's idle_prompt shows.
func TestMCPLoginFailedNotifiesNothing(t *testing.T) {
	as := oauthtest.NewAuthServer(t)
	res := oauthtest.NewResource(t, as)
	c, log, status := oauthClient(t, llmtest.New(t, llmtest.Reply(llmtest.Text("not signed in"))), res, oauthtest.ForgeState)
	prompt(t, c, "hello")

	err := c.MCPLogin(context.Background(), "remote")
	if err == nil || !strings.Contains(err.Error(), "state mismatch") {
		t.Fatalf("MCPLogin: %v, want a state mismatch", err)
	}
	if data := oauthtest.WaitFile(t, status); !strings.HasPrefix(string(data), "400 ") {
		t.Errorf("the forged callback got %q", data)
	}
	if s := mcpStatus(c, "remote"); s == "connected" {
		t.Errorf("status after a failed login %q", s)
	}
	c.Notify(context.Background(), "idle_prompt", "", "waiting")
	var types []string
	for _, n := range hooktest.Only(hooktest.ReadLog(t, log), hook.Notification) {
		types = append(types, n.String("notification_type"))
	}
	if !slices.Equal(types, []string{"idle_prompt"}) {
		t.Errorf("notification types %q, want only the host's idle_prompt", types)
	}
}
