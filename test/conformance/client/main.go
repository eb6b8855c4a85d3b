// Command client is tack's MCP client as the official MCP conformance suite
// (@modelcontextprotocol/conformance) runs it: the suite starts a test
// server for a scenario and runs this command with the server's URL as its
// last argument, the scenario's name in MCP_CONFORMANCE_SCENARIO and, for
// some scenarios, a JSON object in MCP_CONFORMANCE_CONTEXT (such as a
// pre-registered OAuth client).
//
// It does what tack does with one configured remote server: an
// internal/mcp Manager connects over Streamable HTTP, with every request
// going through internal/mcp/oauth's round tripper, which runs the
// authorization code flow when the server asks for it. The "browser" of
// that flow is this command again ($BROWSER=<self> -browse): it follows
// the fake authorization server's redirects back to tack's callback. Then
// it calls the server's tools (or the calls the scenario's context lists),
// reads its resources and renders its prompts, answering sampling and
// elicitation requests with canned answers. It exits 0 when all of that
// worked and 1 otherwise; some scenarios expect a failure, which the suite
// allows for.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"net/http"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/tackcode/tack/internal/llm"
	"github.com/tackcode/tack/internal/mcp"
	"github.com/tackcode/tack/internal/mcp/oauth"
)

// serverName is the name the one server has in tack's configuration.
const serverName = "conformance"

// browseFlag makes the command act as the browser of the OAuth flow.
const browseFlag = "-browse"

// Bounds, inside the suite's own 30 s per scenario.
const (
	startTimeout = 20 * time.Second
	callTimeout  = 20 * time.Second
	flowTimeout  = 15 * time.Second
)

func main() {
	log.SetFlags(log.Ltime | log.Lmicroseconds)
	log.SetPrefix("tack-conformance: ")
	if len(os.Args) == 3 && os.Args[1] == browseFlag {
		if err := browse(os.Args[2]); err != nil {
			log.Fatalf("browser: %v", err)
		}
		return
	}
	if len(os.Args) < 2 {
		log.Fatalf("usage: %s <server-url> (with MCP_CONFORMANCE_SCENARIO set)", os.Args[0])
	}
	sc := scenario{
		name: os.Getenv("MCP_CONFORMANCE_SCENARIO"),
		url:  os.Args[len(os.Args)-1],
	}
	if raw := os.Getenv("MCP_CONFORMANCE_CONTEXT"); raw != "" {
		if err := json.Unmarshal([]byte(raw), &sc.ctx); err != nil {
			log.Fatalf("MCP_CONFORMANCE_CONTEXT: %v", err)
		}
	}
	if err := sc.run(); err != nil {
		log.Fatalf("scenario %q: %v", sc.name, err)
	}
	log.Printf("scenario %q: done", sc.name)
}

// scenario is one run of the suite.
type scenario struct {
	name string
	url  string
	ctx  scenarioContext
}

// scenarioContext is what MCP_CONFORMANCE_CONTEXT may carry.
type scenarioContext struct {
	// ClientID and ClientSecret are a client registered in advance with
	// the scenario's authorization server.
	ClientID     string `json:"client_id"`
	ClientSecret string `json:"client_secret"`
	// ToolCalls, when given, are the calls to make instead of calling
	// every tool.
	ToolCalls []toolCall `json:"toolCalls"`
}

type toolCall struct {
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments"`
}

// run connects to the scenario's server and uses it.
func (sc *scenario) run() error {
	dir, err := os.MkdirTemp("", "tack-conformance-oauth-")
	if err != nil {
		return fmt.Errorf("token directory: %w", err)
	}
	defer os.RemoveAll(dir)
	self, err := os.Executable()
	if err != nil {
		return fmt.Errorf("finding the browser helper: %w", err)
	}
	flow, err := oauth.New(oauth.Options{
		Dir:               dir,
		Notify:            func(msg string) { log.Printf("oauth: %s", msg) },
		Getenv:            browserEnv(self + " " + browseFlag),
		FlowTimeout:       flowTimeout,
		ClientMetadataURL: "https://conformance-test.local/client-metadata.json",
	})
	if err != nil {
		return fmt.Errorf("oauth: %w", err)
	}
	authServer := oauth.Server{Name: serverName, URL: sc.url, ClientID: sc.ctx.ClientID, ClientSecret: sc.ctx.ClientSecret,
		ClientCredentials: strings.HasPrefix(sc.name, "auth/client-credentials-")}

	m := mcp.New(mcp.Options{
		HTTPTransport: func(string) http.RoundTripper { return flow.RoundTripper(authServer, nil) },
		Sample:        sample,
		Elicit:        elicit,
		OnNotice:      func(n mcp.Notice) { log.Printf("notice (%s): %s", n.Level, n.Message) },
		OnProgress: func(p mcp.Progress) {
			log.Printf("progress of %s: %v/%v %s", p.Tool, p.Progress, p.Total, p.Message)
		},
		Limits:        mcp.Limits{StartTimeout: startTimeout, ToolTimeout: callTimeout, ReconnectTries: 1},
		ClientName:    "tack",
		ClientVersion: "conformance",
	})
	defer m.Close()

	ctx, cancel := context.WithTimeout(context.Background(), startTimeout+5*time.Second)
	defer cancel()
	// Streamable HTTP is what every client scenario serves; none uses the
	// legacy SSE transport.
	m.Start(ctx, []mcp.ServerConfig{{Name: serverName, Type: mcp.TypeHTTP, URL: sc.url}})
	m.WaitReady(ctx, startTimeout+time.Second)
	st := m.Statuses()[0]
	if st.Status != mcp.StatusConnected {
		return fmt.Errorf("server %s: %s", st.Status, st.Error)
	}
	log.Printf("connected to %s: %d tools", sc.url, st.Tools)

	var errs []error
	errs = append(errs, sc.callTools(m)...)
	errs = append(errs, readResources(m)...)
	errs = append(errs, renderPrompts(m)...)
	return errors.Join(errs...)
}

// callTools makes the calls of the scenario's context, or calls every tool
// the server offers with canned arguments.
func (sc *scenario) callTools(m *mcp.Manager) []error {
	tools := map[string]func(context.Context, json.RawMessage) error{}
	var names []string
	prefix := "mcp__" + serverName + "__"
	for _, t := range m.Tools() {
		remote := strings.TrimPrefix(t.Name(), prefix)
		names = append(names, remote)
		tools[remote] = func(ctx context.Context, args json.RawMessage) error {
			res, err := t.Run(ctx, nil, args)
			if err != nil {
				return err
			}
			log.Printf("%s returned: %s", remote, cutText(llm.TextOf(res.Content), 300))
			if res.IsError {
				return fmt.Errorf("the tool reported an error: %s", cutText(llm.TextOf(res.Content), 300))
			}
			return nil
		}
	}
	slices.Sort(names)
	calls := sc.ctx.ToolCalls
	if calls == nil {
		for _, name := range names {
			calls = append(calls, toolCall{Name: name, Arguments: cannedArguments(name)})
		}
	}
	var errs []error
	for _, c := range calls {
		call := tools[c.Name]
		if call == nil {
			errs = append(errs, fmt.Errorf("tool %q: not offered by the server (it offers %v)", c.Name, names))
			continue
		}
		ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
		err := call(ctx, c.Arguments)
		cancel()
		if err != nil {
			errs = append(errs, fmt.Errorf("tool %q: %w", c.Name, err))
		}
	}
	return errs
}

// cannedArguments are the arguments a tool of the suite's test servers
// wants; an empty object for the rest.
func cannedArguments(tool string) json.RawMessage {
	switch tool {
	case "add_numbers":
		return json.RawMessage(`{"a":5,"b":3}`)
	}
	return json.RawMessage(`{}`)
}

// readResources reads every resource the server lists.
func readResources(m *mcp.Manager) []error {
	var errs []error
	for _, r := range m.Resources(serverName) {
		ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
		blocks, err := m.ReadResource(ctx, serverName, r.URI)
		cancel()
		if err != nil {
			errs = append(errs, fmt.Errorf("resource %s: %w", r.URI, err))
			continue
		}
		log.Printf("resource %s: %s", r.URI, cutText(llm.TextOf(blocks), 200))
	}
	return errs
}

// renderPrompts renders every prompt the server lists, with a canned value
// for each argument.
func renderPrompts(m *mcp.Manager) []error {
	var errs []error
	for _, p := range m.Prompts() {
		args := map[string]string{}
		for _, a := range p.Arguments {
			args[a.Name] = "conformance"
		}
		ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
		msgs, err := m.GetPrompt(ctx, p.Server, p.Name, args)
		cancel()
		if err != nil {
			errs = append(errs, fmt.Errorf("prompt %q: %w", p.Name, err))
			continue
		}
		log.Printf("prompt %q: %d messages", p.Name, len(msgs))
	}
	return errs
}

// sample answers sampling/createMessage as a model would, with a canned
// text.
func sample(_ context.Context, req mcp.SamplingRequest) (mcp.SamplingResult, error) {
	log.Printf("sampling request: %d messages", len(req.Messages))
	return mcp.SamplingResult{
		Content:    llm.Text("A canned answer from tack's conformance client."),
		Model:      "tack-conformance",
		StopReason: "endTurn",
	}, nil
}

// elicit answers elicitation/create as a user who accepts: a form is
// submitted with its defaults untouched (the MCP SDK fills them in, as
// SEP-1034 asks of clients) and a canned value for each required field
// that has no default; a URL is taken as visited.
func elicit(_ context.Context, req mcp.ElicitationRequest) (mcp.ElicitationResult, error) {
	log.Printf("elicitation request (%s): %s", req.Mode, req.Message)
	if req.Mode == "url" {
		return mcp.ElicitationResult{Action: mcp.ElicitAccept}, nil
	}
	content := map[string]any{}
	props, _ := req.Schema["properties"].(map[string]any)
	required, _ := req.Schema["required"].([]any)
	for _, r := range required {
		name, _ := r.(string)
		prop, _ := props[name].(map[string]any)
		if _, hasDefault := prop["default"]; name == "" || hasDefault {
			continue
		}
		content[name] = cannedValue(prop)
	}
	return mcp.ElicitationResult{Action: mcp.ElicitAccept, Content: content}, nil
}

// cannedValue is a value that fits a form field's schema.
func cannedValue(prop map[string]any) any {
	if enum, ok := prop["enum"].([]any); ok && len(enum) > 0 {
		return enum[0]
	}
	switch prop["type"] {
	case "boolean":
		return true
	case "integer", "number":
		return 1
	}
	return "conformance"
}

// browserEnv is the environment tack's OAuth flow looks up: BROWSER is
// browser; nothing else is set, so no desktop browser is tried.
func browserEnv(browser string) func(string) string {
	return func(key string) string {
		if key == "BROWSER" {
			return browser
		}
		return ""
	}
}

// browse is the browser of the OAuth flow: it opens the authorization URL
// and follows the redirects, which the suite's authorization server sends
// straight back to tack's callback with a code.
func browse(authURL string) error {
	client := &http.Client{Timeout: flowTimeout}
	resp, err := client.Get(authURL)
	if err != nil {
		return fmt.Errorf("opening %s: %w", authURL, err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s ended at %s with HTTP %d: %s", authURL, resp.Request.URL, resp.StatusCode, body)
	}
	return nil
}

// cutText shortens s for a log line.
func cutText(s string, max int) string {
	s = strings.ReplaceAll(s, "\n", " ")
	if len(s) <= max {
		return s
	}
	return s[:max] + "…"
}
