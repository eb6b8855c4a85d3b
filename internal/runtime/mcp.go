package runtime

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/tackcode/tack/internal/llm"
	"github.com/tackcode/tack/internal/mcp"
	"github.com/tackcode/tack/internal/mcp/mcpconfig"
	"github.com/tackcode/tack/internal/mcp/oauth"
	"github.com/tackcode/tack/internal/protocol"
	"github.com/tackcode/tack/internal/session"
	"github.com/tackcode/tack/internal/tool"
	"github.com/tackcode/tack/internal/tool/toolsearch"
)

// DefaultMCPStartupDeadline is how long the first request waits for MCP
// servers that are still starting, unless TACK_MCP_STARTUP_DEADLINE_MS or
// MCP_TIMEOUT says otherwise; slower ones join the session later. Those
// still starting then are reported (Config.Notify) and are failed in the
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
	// dynamic are the servers SetDynamicMCP manages, by name (nil until
	// its first call).
	dynamic map[string]mcp.ServerConfig
}

// startMCP starts the thread's MCP servers: the session's on the main
// thread, and in a subagent those its definition defines inline, for the
// time it runs.
func (t *thread) startMCP(ctx context.Context) error {
	if t.parent != nil {
		if defs := t.spec.def.MCPDefs; len(defs) > 0 {
			t.agentMCP = t.startAgentMCP(ctx, defs)
		}
		return nil
	}
	return t.s.startSessionMCP(ctx, t)
}

// startSessionMCP reads the MCP configuration, reports problems and servers
// left waiting for approval, and starts every server at once, in parallel:
// the first request waits for them only up to a deadline. Their tools join
// the main thread's registry.
func (s *Session) startSessionMCP(ctx context.Context, t *thread) error {
	set, err := s.mcpServers(t)
	if err != nil {
		return err
	}
	plan := set.Plan()
	for _, srv := range plan.Pending {
		s.notify(mcpconfig.PendingNotice(srv))
	}
	configs := make([]mcp.ServerConfig, 0, len(plan.Start))
	remote := map[string]*mcpconfig.Server{}
	for _, srv := range plan.Start {
		configs = append(configs, mcp.ConfigOf(srv))
		if srv.Type.Remote() {
			remote[srv.Name] = srv
		}
	}
	st := &mcpState{deadline: mcpDeadline(s.getenv), deferMode: -1, share: toolSearchShare(s.getenv), remote: remote}
	if len(remote) > 0 {
		if st.flow, err = oauth.New(oauth.Options{Dir: oauth.DefaultDir(session.ConfigDir(s.getenv)), Passive: true,
			Notify: s.notify, Getenv: s.getenv}); err != nil {
			return err
		}
	}
	if st.share < 0 {
		st.deferMode = 0
	}
	s.mcp = st
	st.manager = mcp.New(s.mcpOptions(t, st))
	configs = append(configs, s.cfg.InProcessMCP...)
	if len(configs) > 0 {
		// The servers live as long as the session, not the start-up.
		st.manager.Start(context.WithoutCancel(ctx), configs)
	}
	return nil
}

// mcpServers is the session's MCP configuration: the files', the options',
// the plugins' and the main agent's inline servers, problems reported.
func (s *Session) mcpServers(t *thread) (*mcpconfig.Set, error) {
	files, err := mcpFiles(s.getenv, s.place())
	if err != nil {
		return nil, err
	}
	mcpConfig := s.cfg.MCPConfig
	if s.cfg.MCPServers != "" {
		mcpConfig = append(slices.Clone(mcpConfig), s.cfg.MCPServers)
	}
	settings := s.settings
	set, err := mcpconfig.Load(mcpconfig.Options{
		Files:     files,
		LookupEnv: func(k string) (string, bool) { v := s.getenv(k); return v, v != "" || os.Getenv(k) != "" },
		MCPConfig: mcpConfig,
		Strict:    s.cfg.StrictMCPConfig || s.cfg.Bare,
		Sources:   s.trust.mcpScopes(),
		Settings:  approvalSettings(settings),
	})
	if err != nil {
		return nil, err
	}
	set.Add(s.ext.MCPServers()...)
	if def := t.spec.def; def != nil {
		set.Add(def.MCPDefs...)
	}
	for _, p := range set.Problems() {
		s.notify("MCP: " + p.Error())
	}
	return set, nil
}

// mcpOptions are the session's MCP manager's: tools join the main thread's
// registry, sampling answers with the small model, remote servers sign in
// through st's flow.
func (s *Session) mcpOptions(t *thread, st *mcpState) mcp.Options {
	mopts := mcp.Options{
		Registry: t.registry,
		OnChange: s.onMCPChange,
		OnNotice: func(n mcp.Notice) { s.notify("MCP " + n.Server + ": " + n.Message) },
		OnProgress: func(p mcp.Progress) {
			if s.cfg.OnMCPProgress != nil {
				s.cfg.OnMCPProgress(p)
			}
		},
		Sample: func(ctx context.Context, r mcp.SamplingRequest) (mcp.SamplingResult, error) {
			return sample(ctx, s.provider, s.small, r)
		},
		Env: s.procEnv, Dir: s.cwd, Roots: t.checker.Dirs(), Limits: mcp.LimitsFromEnv(s.getenv),
		ClientName: "tack",
		Logger:     s.debugLog("mcp"),
	}
	elicitHooks{t}.install(&mopts)
	if st.flow != nil {
		mopts.HTTPTransport = func(name string) http.RoundTripper {
			srv := st.remote[name]
			if srv == nil {
				return nil
			}
			if _, static := srv.Headers["Authorization"]; static {
				return nil
			}
			return st.flow.RoundTripper(oauthServer(srv), nil)
		}
	}
	return mopts
}

// oauthServer is a remote server as the OAuth flow knows it.
func oauthServer(srv *mcpconfig.Server) oauth.Server {
	o := oauth.Server{Name: srv.Name, URL: srv.URL}
	if srv.OAuth != nil {
		o.ClientID, o.CallbackPort = srv.OAuth.ClientID, srv.OAuth.CallbackPort
	}
	return o
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
func (s *Session) waitForMCP(ctx context.Context, m *mcp.Manager, deadline time.Duration, whose string) {
	if m.WaitReady(ctx, deadline) || ctx.Err() != nil {
		return
	}
	for _, st := range m.Overdue(deadline) {
		s.notify(fmt.Sprintf("MCP server %q%s: %s. The session goes on without its tools until it answers.", st.Name, whose, st.Error))
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
func (s *Session) prepareMCP(ctx context.Context) {
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
		s.waitForMCP(ctx, st.manager, st.deadline, "")
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	st.ready = true
	s.updateDeferredLocked(true)
}

// onMCPChange is told when a server's tools change (a late join, a
// list_changed): the model hears of new tools at its next request.
func (s *Session) onMCPChange(c mcp.Change) {
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
		s.main.engine.Announce(fmt.Sprintf("MCP server %s is now connected. Its tools are deferred: load them with ToolSearch before calling them: %s.",
			c.Server, strings.Join(c.Added, ", ")))
		return
	}
	s.main.engine.Announce(fmt.Sprintf("MCP server %s is now connected; its tools are available: %s.", c.Server, strings.Join(c.Added, ", ")))
}

// updateDeferredLocked takes (first time) or applies the decision to defer
// MCP tools behind ToolSearch, announcing the catalogue when it is new.
// Called with st.mu held.
func (s *Session) updateDeferredLocked(first bool) {
	st := s.mcp
	tools := st.manager.Tools()
	if st.deferMode == -1 {
		st.deferMode = 0
		if len(tools) > 0 {
			size := 0
			for _, t := range tools {
				size += len(t.Name()) + len(t.Description()) + len(t.InputSchema())
			}
			if float64(size)/4 > st.share*float64(s.main.engine.Model().ContextWindow) {
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
	s.main.registry.SetDeferred(names)
	s.main.registry.SetGroup("tack:toolsearch", []tool.Tool{toolsearch.Tool()})
	if first && len(names) > 0 {
		var b strings.Builder
		b.WriteString("These MCP tools are deferred: load them with ToolSearch (select:NAME) before calling them.\n")
		for _, t := range tools {
			desc, _, _ := strings.Cut(strings.TrimSpace(t.Description()), "\n")
			fmt.Fprintf(&b, "- %s: %s\n", t.Name(), oneLineCut(desc, 100))
		}
		s.main.engine.Announce(strings.TrimRight(b.String(), "\n"))
	}
}

func oneLineCut(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}

// MCPStatuses is the state of each MCP server now (mcp_status, /mcp).
func (s *Session) MCPStatuses() []protocol.MCPServerStatus {
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
func (s *Session) initMCPStatuses() []protocol.MCPServerStatus {
	out := s.MCPStatuses()
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

// mcpPromptInfo is the MCP prompt the command name ("mcp__server__prompt")
// runs; isMCP says whether name is an MCP prompt's command at all, found
// or not.
func (s *Session) mcpPromptInfo(name string) (info *mcp.PromptInfo, isMCP bool) {
	if s.mcp == nil || !strings.HasPrefix(name, "mcp__") {
		return nil, false
	}
	for _, pi := range s.mcp.manager.Prompts() {
		if pi.Command == name {
			return &pi, true
		}
	}
	return nil, true
}

// expandMCPPrompt gets the MCP prompt info from its server, its arguments
// taken from rest in order (the last one takes what is left), as the
// user message it makes.
func (s *Session) expandMCPPrompt(ctx context.Context, info *mcp.PromptInfo, rest string) (content []llm.Block, err error) {
	args := map[string]string{}
	words := strings.Fields(rest)
	for i, a := range info.Arguments {
		switch {
		case i < len(words) && i == len(info.Arguments)-1:
			args[a.Name] = strings.Join(words[i:], " ") // the last argument takes the rest
		case i < len(words):
			args[a.Name] = words[i]
		case a.Required:
			return nil, fmt.Errorf("/%s needs the argument %s", info.Command, a.Name)
		}
	}
	msgs, err := s.mcp.manager.GetPrompt(ctx, info.Server, info.Name, args)
	if err != nil {
		return nil, err
	}
	for _, m := range msgs {
		content = append(content, m.Content...)
	}
	if len(content) == 0 {
		return nil, fmt.Errorf("/%s returned no content", info.Command)
	}
	return content, nil
}

// MCPLogin signs in to the remote MCP server name with OAuth now (the
// browser flow: its address is given through Notify), tells the
// Notification hooks it did, then connects to it again. For a server whose
// status is needs-auth.
func (s *Session) MCPLogin(ctx context.Context, name string) error {
	st := s.mcp
	if st == nil || st.remote[name] == nil || st.flow == nil {
		return fmt.Errorf("MCP login: %q is not a remote MCP server of this session", name)
	}
	if err := st.flow.Login(ctx, oauthServer(st.remote[name])); err != nil {
		return fmt.Errorf("MCP login to %s: %w", name, err)
	}
	s.notifyAuthSuccess(ctx, name)
	if err := st.manager.Reconnect(ctx, name); err != nil {
		return fmt.Errorf("MCP login to %s: signed in, but connecting failed: %w", name, err)
	}
	return nil
}

// startAgentMCP starts the MCP servers a subagent defines inline, for the
// time it runs: their tools join its registry (as the session's servers'
// tools join the main thread's), and its first request waits for them up to
// the session's start-up deadline, reporting those still starting then.
// The thread closes the manager.
func (t *thread) startAgentMCP(ctx context.Context, servers []*mcpconfig.Server) *mcp.Manager {
	s, agent := t.s, t.spec.agentType
	opts := mcp.Options{
		Registry: t.registry,
		OnNotice: func(n mcp.Notice) { s.notify("MCP " + n.Server + " (agent " + agent + "): " + n.Message) },
		Env:      s.procEnv, Dir: t.cwd, Roots: s.main.checker.Dirs(), Limits: mcp.LimitsFromEnv(s.getenv),
		ClientName: "tack",
	}
	elicitHooks{t}.install(&opts)
	m := mcp.New(opts)
	configs := make([]mcp.ServerConfig, 0, len(servers))
	for _, srv := range servers {
		configs = append(configs, mcp.ConfigOf(srv))
	}
	m.Start(ctx, configs)
	s.waitForMCP(ctx, m, mcpDeadline(s.getenv), " (agent "+agent+")")
	return m
}
