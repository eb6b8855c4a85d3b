package agent

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/tackcode/tack/internal/config"
	"github.com/tackcode/tack/internal/llm"
	"github.com/tackcode/tack/internal/mcp"
	"github.com/tackcode/tack/internal/mcp/mcpconfig"
	"github.com/tackcode/tack/internal/mcp/oauth"
	"github.com/tackcode/tack/internal/mcp/serve"
	"github.com/tackcode/tack/internal/protocol"
	"github.com/tackcode/tack/internal/session"
	"github.com/tackcode/tack/internal/shell"
	"github.com/tackcode/tack/internal/tool"
	"github.com/tackcode/tack/internal/tool/builtin"
	"github.com/tackcode/tack/internal/tool/toolsearch"
)

// Elicitation is an MCP server asking the user for input.
type Elicitation = mcp.ElicitationRequest

// ElicitationAnswer is the user's answer to an Elicitation.
type ElicitationAnswer = mcp.ElicitationResult

// MCPProgress is a progress notification of a running MCP tool call.
type MCPProgress = mcp.Progress

// DefaultMCPStartupDeadline is how long the first request waits for MCP
// servers that are still starting, unless TACK_MCP_STARTUP_DEADLINE_MS or
// MCP_TIMEOUT says otherwise; slower ones join the session later. Those
// still starting then are reported (Options.Notify) and are failed in the
// init message: the first turn runs without them.
const DefaultMCPStartupDeadline = 3 * time.Second

// defaultToolSearchShare is the share of the context window MCP tools may
// take before they are deferred behind ToolSearch.
const defaultToolSearchShare = 0.10

// mcpState is a session's MCP servers.
type mcpState struct {
	manager  *mcp.Manager
	deadline time.Duration
	share    float64

	mu sync.Mutex
	// deferMode is the decision to defer MCP tools, taken once: -1 not
	// yet, 0 no, 1 yes.
	deferMode int
	// ready is set once the first request has been prepared: later tool
	// changes are announced to the model.
	ready bool
	// flow signs in to remote servers (nil without any); remote are those
	// servers by name.
	flow   *oauth.Flow
	remote map[string]*mcpconfig.Server
}

// startMCP reads the MCP configuration, reports problems and servers left
// waiting for approval, and starts every server at once, in parallel.
func (s *agentSession) startMCP(opts Options, settings *config.Merged, getenv func(string) string, procEnv []string, provider llm.Provider, small string) error {
	files, err := mcpconfig.DefaultFiles(getenv, s.cwd)
	if err != nil {
		return err
	}
	mcpConfig := opts.MCPConfig
	if extra, err := mcpConfigJSON(opts.MCPServers); err != nil {
		return err
	} else if extra != "" {
		mcpConfig = append(slices.Clone(mcpConfig), extra)
	}
	inProcess, err := sdkServerConfigs(opts.MCPServers)
	if err != nil {
		return err
	}
	set, err := mcpconfig.Load(mcpconfig.Options{
		Files:     files,
		LookupEnv: func(k string) (string, bool) { v := getenv(k); return v, v != "" || os.Getenv(k) != "" },
		MCPConfig: mcpConfig,
		Strict:    opts.StrictMCPConfig,
		Sources:   s.trust.mcpScopes(),
		Settings: mcpconfig.ApprovalSettings{
			EnableAllProjectMcpServers: settings.EnableAllProjectMcpServers != nil && *settings.EnableAllProjectMcpServers,
			EnabledMcpjsonServers:      config.Texts(settings.EnabledMcpjsonServers),
			DisabledMcpjsonServers:     config.Texts(settings.DisabledMcpjsonServers),
		},
	})
	if err != nil {
		return err
	}
	// Plugins' servers, and those the main-thread agent defines.
	if s.ext != nil {
		set.Add(s.ext.MCPServers()...)
	}
	set.Add(s.agentMCP...)
	for _, p := range set.Problems() {
		notify(opts, "MCP: "+p.Error())
	}
	plan := set.Plan()
	for _, srv := range plan.Pending {
		notify(opts, mcpconfig.PendingNotice(srv))
	}
	var flow *oauth.Flow
	configs := make([]mcp.ServerConfig, 0, len(plan.Start))
	remote := map[string]*mcpconfig.Server{}
	for _, srv := range plan.Start {
		configs = append(configs, serverConfig(srv))
		if srv.Type.Remote() {
			remote[srv.Name] = srv
		}
	}
	if len(remote) > 0 {
		if flow, err = oauth.New(oauth.Options{Dir: oauth.DefaultDir(session.ConfigDir(getenv)), Passive: true,
			Notify: func(m string) { notify(opts, m) }, Getenv: getenv}); err != nil {
			return err
		}
	}
	st := &mcpState{deadline: mcpDeadline(getenv), deferMode: -1, share: toolSearchShare(getenv), flow: flow, remote: remote}
	s.mcp = st
	if st.share < 0 {
		st.deferMode = 0
	}
	mopts := mcp.Options{
		Registry: s.registry,
		OnChange: s.onMCPChange,
		OnNotice: func(n mcp.Notice) { notify(opts, "MCP "+n.Server+": "+n.Message) },
		OnProgress: func(p mcp.Progress) {
			if opts.OnMCPProgress != nil {
				opts.OnMCPProgress(p)
			}
		},
		Sample: func(ctx context.Context, r mcp.SamplingRequest) (mcp.SamplingResult, error) {
			return sample(ctx, provider, small, r)
		},
		Env: procEnv, Dir: s.cwd, Roots: s.checker.Dirs(), Limits: mcp.LimitsFromEnv(getenv),
		ClientName: "tack",
	}
	if opts.OnElicitation != nil {
		mopts.Elicit = func(ctx context.Context, r mcp.ElicitationRequest) (mcp.ElicitationResult, error) {
			return opts.OnElicitation(ctx, r)
		}
	}
	if flow != nil {
		mopts.HTTPTransport = func(name string) http.RoundTripper {
			srv := remote[name]
			if srv == nil {
				return nil
			}
			if _, static := srv.Headers["Authorization"]; static {
				return nil
			}
			o := oauth.Server{Name: name, URL: srv.URL}
			if srv.OAuth != nil {
				o.ClientID, o.CallbackPort = srv.OAuth.ClientID, srv.OAuth.CallbackPort
			}
			return flow.RoundTripper(o, nil)
		}
	}
	st.manager = mcp.New(mopts)
	configs = append(configs, inProcess...)
	if len(configs) > 0 {
		st.manager.Start(context.Background(), configs)
	}
	return nil
}

// serverConfig maps a configured server to the manager's form.
func serverConfig(srv *mcpconfig.Server) mcp.ServerConfig {
	return mcp.ServerConfig{Name: srv.Name, Type: string(srv.Type), Command: srv.Command, Args: srv.Args,
		Env: srv.Env, URL: srv.URL, Headers: srv.Headers, Scope: string(srv.Scope), Disabled: srv.Disabled}
}

// mcpDeadline is how long the first request waits for MCP servers still
// starting: TACK_MCP_STARTUP_DEADLINE_MS; else, when MCP_TIMEOUT is set,
// until each server has answered or failed (a user who gives servers
// longer to start, as Claude Code's documentation says, means the session
// to wait for them; a negative deadline is that for WaitReady); else
// DefaultMCPStartupDeadline.
func mcpDeadline(getenv func(string) string) time.Duration {
	if ms, err := strconv.Atoi(getenv("TACK_MCP_STARTUP_DEADLINE_MS")); err == nil && ms >= 0 {
		return time.Duration(ms) * time.Millisecond
	}
	if _, ok := mcp.StartTimeoutFromEnv(getenv); ok {
		return -1
	}
	return DefaultMCPStartupDeadline
}

// waitForMCP waits for m's servers up to deadline and reports each one still
// starting then: which, what it has not answered, after how long, and what
// to set to wait longer. whose qualifies the server's name in the message.
func waitForMCP(ctx context.Context, opts Options, m *mcp.Manager, deadline time.Duration, whose string) {
	if m.WaitReady(ctx, deadline) || ctx.Err() != nil {
		return
	}
	for _, st := range m.Overdue(deadline) {
		notify(opts, fmt.Sprintf("MCP server %q%s: %s. The session goes on without its tools until it answers.", st.Name, whose, st.Error))
	}
}

// toolSearchShare reads ENABLE_TOOL_SEARCH: "true" defers MCP tools
// always (share 0), "false" never (negative), "auto" or "auto:N" when they
// would take more than N % of the window (default 10 %).
func toolSearchShare(getenv func(string) string) float64 {
	v := strings.ToLower(strings.TrimSpace(getenv("ENABLE_TOOL_SEARCH")))
	switch {
	case v == "true" || v == "1":
		return 0
	case v == "false" || v == "0":
		return -1
	case strings.HasPrefix(v, "auto:"):
		if n, err := strconv.ParseFloat(strings.TrimPrefix(v, "auto:"), 64); err == nil && n >= 0 {
			return n / 100
		}
	}
	return defaultToolSearchShare
}

// prepareMCP runs before the first request: it waits for servers still
// starting, up to the deadline, then decides whether MCP tools are
// deferred and tells the model which ones exist.
func (s *agentSession) prepareMCP(ctx context.Context) {
	st := s.mcp
	if st == nil {
		return
	}
	st.mu.Lock()
	done := st.ready
	st.mu.Unlock()
	if done {
		return
	}
	if len(st.manager.Statuses()) > 0 {
		waitForMCP(ctx, s.opts, st.manager, st.deadline, "")
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	st.ready = true
	s.updateDeferredLocked(true)
}

// onMCPChange is told when a server's tools change (a late join, a
// list_changed): the model hears of new tools at its next request.
func (s *agentSession) onMCPChange(c mcp.Change) {
	st := s.mcp
	if st == nil || c.Kind != mcp.ChangeTools || len(c.Added) == 0 {
		return
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	if !st.ready {
		return // the first request's preparation covers it
	}
	s.updateDeferredLocked(false)
	if st.deferMode == 1 {
		s.engine.Announce(fmt.Sprintf("MCP server %s is now connected. Its tools are deferred: load them with ToolSearch before calling them: %s.",
			c.Server, strings.Join(c.Added, ", ")))
		return
	}
	s.engine.Announce(fmt.Sprintf("MCP server %s is now connected; its tools are available: %s.", c.Server, strings.Join(c.Added, ", ")))
}

// updateDeferredLocked takes (first time) or applies the decision to defer
// MCP tools behind ToolSearch, announcing the catalogue when it is new.
// Called with st.mu held.
func (s *agentSession) updateDeferredLocked(first bool) {
	st := s.mcp
	tools := st.manager.Tools()
	if st.deferMode == -1 {
		st.deferMode = 0
		if len(tools) > 0 {
			size := 0
			for _, t := range tools {
				size += len(t.Name()) + len(t.Description()) + len(t.InputSchema())
			}
			if float64(size)/4 > st.share*float64(s.engine.Model().ContextWindow) {
				st.deferMode = 1
			}
		}
	}
	if st.deferMode != 1 {
		return
	}
	names := make([]string, len(tools))
	for i, t := range tools {
		names[i] = t.Name()
	}
	s.registry.SetDeferred(names)
	s.registry.SetGroup("tack:toolsearch", []tool.Tool{toolsearch.Tool()})
	if first && len(names) > 0 {
		var b strings.Builder
		b.WriteString("These MCP tools are deferred: load them with ToolSearch (select:NAME) before calling them.\n")
		for _, t := range tools {
			desc, _, _ := strings.Cut(strings.TrimSpace(t.Description()), "\n")
			fmt.Fprintf(&b, "- %s: %s\n", t.Name(), oneLineCut(desc, 100))
		}
		s.engine.Announce(strings.TrimRight(b.String(), "\n"))
	}
}

func oneLineCut(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}

// mcpStatuses is the state of each MCP server now (mcp_status, /mcp).
func (s *agentSession) mcpStatuses() []protocol.MCPServerStatus {
	out := []protocol.MCPServerStatus{}
	if s.mcp == nil {
		return out
	}
	for _, st := range s.mcp.manager.Statuses() {
		out = append(out, protocol.MCPServerStatus{Name: st.Name, Status: st.Status, Error: st.Error, Scope: st.Scope,
			Tools: st.Tools, Transport: st.Transport})
	}
	return out
}

// initMCPStatuses is init's mcp_servers: the state of each server for the
// turn about to run. A server that has not answered by the end of the
// start-up wait (see waitForMCP) is failed there, as Claude Code's print
// mode reports a server that did not connect in its start-up time: the
// turn runs without its tools. Its error says it may still join.
func (s *agentSession) initMCPStatuses() []protocol.MCPServerStatus {
	out := s.mcpStatuses()
	if s.mcp == nil {
		return out
	}
	for i, st := range s.mcp.manager.Statuses() {
		if st.Overdue && i < len(out) && out[i].Name == st.Name {
			out[i].Status = mcp.StatusFailed
		}
	}
	return out
}

// sample answers a server's sampling request with the small model.
func sample(ctx context.Context, p llm.Provider, model string, r mcp.SamplingRequest) (mcp.SamplingResult, error) {
	max := r.MaxTokens
	if max <= 0 || max > 4096 {
		max = 4096
	}
	req := &llm.Request{Model: model, MaxTokens: max, Messages: r.Messages}
	if r.System != "" {
		req.System = []llm.Block{llm.Text(r.System)}
	}
	resp, err := p.Stream(ctx, req, llm.Observer{})
	if err != nil {
		return mcp.SamplingResult{}, err
	}
	return mcp.SamplingResult{Content: llm.Text(llm.TextOf(resp.Content)), Model: resp.Model, StopReason: resp.StopReason}, nil
}

// mcpPromptCommand expands "/mcp__server__prompt args…" into the prompt's
// messages; ok is false when prompt is not such a command.
func (s *agentSession) mcpPromptCommand(ctx context.Context, prompt string) (content []llm.Block, ok bool, err error) {
	p := strings.TrimSpace(prompt)
	if s.mcp == nil || !strings.HasPrefix(p, "/mcp__") {
		return nil, false, nil
	}
	name, rest, _ := strings.Cut(p[1:], " ")
	var info *mcp.PromptInfo
	for _, pi := range s.mcp.manager.Prompts() {
		if pi.Command == name {
			info = &pi
			break
		}
	}
	if info == nil {
		return nil, true, fmt.Errorf("no MCP prompt /%s (the server may not be connected)", name)
	}
	args := map[string]string{}
	words := strings.Fields(rest)
	for i, a := range info.Arguments {
		switch {
		case i < len(words) && i == len(info.Arguments)-1:
			args[a.Name] = strings.Join(words[i:], " ") // the last argument takes the rest
		case i < len(words):
			args[a.Name] = words[i]
		case a.Required:
			return nil, true, fmt.Errorf("/%s needs the argument %s", name, a.Name)
		}
	}
	msgs, err := s.mcp.manager.GetPrompt(ctx, info.Server, info.Name, args)
	if err != nil {
		return nil, true, err
	}
	for _, m := range msgs {
		content = append(content, m.Content...)
	}
	if len(content) == 0 {
		return nil, true, fmt.Errorf("/%s returned no content", name)
	}
	return content, true, nil
}

// ProbeMCPServer connects to one configured server and reports its status
// (for `tack mcp list`).
func ProbeMCPServer(ctx context.Context, srv mcpconfig.Server) (status, detail string) {
	cwd, _ := os.Getwd()
	st := mcp.Probe(ctx, serverConfig(&srv), mcp.Options{Env: os.Environ(), Dir: cwd, Limits: mcp.LimitsFromEnv(os.Getenv)})
	switch st.Status {
	case mcp.StatusConnected:
		return "✓ Connected", fmt.Sprintf("%d tools", st.Tools)
	case mcp.StatusNeedsAuth:
		return "⚠ Needs authentication", st.Error
	}
	return "✗ Failed to connect", st.Error
}

// CallMCPTool connects to one server, calls one of its tools and returns
// the result's text and whether it is an error (for `tack mcp call`).
func CallMCPTool(ctx context.Context, srv mcpconfig.Server, toolName string, input []byte) (string, bool, error) {
	cwd, _ := os.Getwd()
	reg := tool.NewRegistry()
	scratch, err := os.MkdirTemp("", "tack-mcp-call-")
	if err != nil {
		return "", false, err
	}
	defer os.RemoveAll(scratch)
	m := mcp.New(mcp.Options{Registry: reg, Env: os.Environ(), Dir: cwd, Limits: mcp.LimitsFromEnv(os.Getenv), ClientName: "tack"})
	defer m.Close()
	m.Start(ctx, []mcp.ServerConfig{serverConfig(&srv)})
	m.WaitReady(ctx, mcp.LimitsFromEnv(os.Getenv).StartTimeout)
	for _, st := range m.Statuses() {
		if st.Status != mcp.StatusConnected {
			return "", false, fmt.Errorf("MCP server %s: %s %s", srv.Name, st.Status, st.Error)
		}
	}
	var target tool.Tool
	for _, t := range m.Tools() {
		if t.Name() == toolName || strings.HasSuffix(t.Name(), "__"+toolName) {
			target = t
		}
	}
	if target == nil {
		var names []string
		for _, t := range m.Tools() {
			names = append(names, t.Name())
		}
		slices.Sort(names)
		return "", false, fmt.Errorf("MCP server %s has no tool %q (it has: %s)", srv.Name, toolName, strings.Join(names, ", "))
	}
	env := &tool.Env{ProjectDir: cwd, ScratchDir: filepath.Join(scratch, "s")}
	res, err := target.Run(tool.WithToolUseID(ctx, "toolu_cli"), env, input)
	if err != nil {
		return "", false, err
	}
	var b strings.Builder
	for _, blk := range res.Content {
		switch blk.Type {
		case llm.TypeText:
			b.WriteString(blk.Text)
			b.WriteByte('\n')
		case llm.TypeImage:
			fmt.Fprintf(&b, "[image %s, %d bytes base64]\n", blk.Source.MediaType, len(blk.Source.Data))
		}
	}
	return b.String(), res.IsError, nil
}

// ServeMCP runs tack's own tools as an MCP server on in and out (`tack mcp
// serve`). The MCP client decides what to call: tools run without asking.
func ServeMCP(ctx context.Context, opts Options, in io.Reader, out io.Writer) error {
	cwd, err := workingDir(opts.Cwd)
	if err != nil {
		return err
	}
	tools, err := builtin.Select([]string{"Bash", "Read", "Write", "Edit", "NotebookEdit", "Glob", "Grep"})
	if err != nil {
		return err
	}
	reg := tool.NewRegistry(tools...)
	scratch, err := os.MkdirTemp("", "tack-mcp-serve-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(scratch)
	sh := shell.New(cwd, os.Environ())
	defer sh.Close()
	env := &tool.Env{ProjectDir: cwd, Shell: sh, Files: tool.NewFileState(), ScratchDir: scratch, Tools: reg}
	return serve.Serve(ctx, reg, env, in, out)
}

// MCPLogin signs in to the remote MCP server name with OAuth now (the
// browser flow: its address is given through Notify), then connects to it
// again. For a server whose status is needs-auth.
func (c *Client) MCPLogin(ctx context.Context, name string) error {
	st := c.s.mcp
	if st == nil || st.remote[name] == nil || st.flow == nil {
		return fmt.Errorf("MCP login: %q is not a remote MCP server of this session", name)
	}
	srv := st.remote[name]
	o := oauth.Server{Name: name, URL: srv.URL}
	if srv.OAuth != nil {
		o.ClientID, o.CallbackPort = srv.OAuth.ClientID, srv.OAuth.CallbackPort
	}
	if err := st.flow.Login(ctx, o); err != nil {
		return fmt.Errorf("MCP login to %s: %w", name, err)
	}
	if err := st.manager.Reconnect(ctx, name); err != nil {
		return fmt.Errorf("MCP login to %s: signed in, but connecting failed: %w", name, err)
	}
	return nil
}
