package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tackcode/tack/internal/llm"
	"github.com/tackcode/tack/internal/tool"
)

// protocolVersion is the version tack asks for. The SDK's default (a newer
// draft) first sends server/discover and falls back to initialize when the
// server does not know it: a round trip lost on every server of today.
const protocolVersion = "2025-11-25"

// maxListed bounds how many tools, resources or prompts are read from one
// server, against a server that pages forever.
const maxListed = 10_000

// server is one configured server for the life of its configuration: it
// connects, reconnects or restarts, and is stopped once (when disabled,
// replaced or closed); enabling it again makes a new server.
type server struct {
	m      *Manager
	cfg    ServerConfig
	part   string // the server's name inside tool names
	client *mcp.Client
	watch  httpWatch
	ctx    context.Context // ends when the server is stopped
	cancel context.CancelFunc

	connMu sync.Mutex // one connection attempt at a time
	pubMu  sync.Mutex // orders catalogue updates (registry, OnChange)

	mu        sync.Mutex
	status    string
	errText   string
	sess      *session
	caps      *mcp.ServerCapabilities
	tools     []*mcpTool // by name
	resources []ResourceInfo
	prompts   []PromptInfo
	stopped   bool
	// awaiting names the request a connection attempt is waiting for the
	// server to answer ("" when none is), for the message about a server
	// that does not answer.
	awaiting string
	// overdue is set by Manager.Overdue on a server still starting.
	overdue bool
	// everConnected is set once a session was established: from then on a
	// lost session is restarted on use.
	everConnected bool
	reconnecting  bool
	refreshKinds  map[ChangeKind]bool
	refreshing    bool
	refreshes     atomic.Int64 // lists re-read on notifications, for tests
	// noted counts the list_changed notifications read off a stdio
	// server's connection whose refresh is not yet asked for (see
	// noteListChanged).
	noted atomic.Int64
}

// session is one live connection to a server.
type session struct {
	cs     *mcp.ClientSession
	conn   *trackTransport
	proc   *process // stdio servers
	cancel context.CancelFunc
	done   chan struct{} // closed when the connection has ended
	// closing is set when tack ends the session on purpose, so that its
	// end is not taken for a crash.
	closing atomic.Bool
}

func newServer(m *Manager, cfg ServerConfig, part string, roots []string) *server {
	ctx, cancel := context.WithCancel(m.ctx)
	s := &server{m: m, cfg: cfg, part: part, ctx: ctx, cancel: cancel, status: StatusPending, awaiting: handshake}
	if cfg.Disabled {
		s.status, s.stopped = StatusDisabled, true
	}
	opts := &mcp.ClientOptions{
		ElicitationHandler:         s.elicit,
		ToolListChangedHandler:     func(context.Context, *mcp.ToolListChangedRequest) { s.listChanged(ChangeTools) },
		ResourceListChangedHandler: func(context.Context, *mcp.ResourceListChangedRequest) { s.listChanged(ChangeResources) },
		PromptListChangedHandler:   func(context.Context, *mcp.PromptListChangedRequest) { s.listChanged(ChangePrompts) },
		ProgressNotificationHandler: func(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
			if p := req.Params; p != nil {
				m.onProgress(p.ProgressToken, p.Progress, p.Total, p.Message)
			}
		},
	}
	if m.opts.Sample != nil {
		//lint:ignore SA1019 sampling is deprecated only from protocol 2026-07-28; servers of today use it.
		opts.CreateMessageHandler = s.sample
	}
	name, version := m.opts.ClientName, m.opts.ClientVersion
	if name == "" {
		name = "tack"
	}
	if version == "" {
		version = "dev"
	}
	s.client = mcp.NewClient(&mcp.Implementation{Name: name, Version: version}, opts)
	s.setRoots(nil, roots)
	return s
}

func (s *server) group() string { return GroupPrefix + s.cfg.Name }

func (s *server) currentStatus() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.status
}

func (s *server) statusInfo() Status {
	s.mu.Lock()
	defer s.mu.Unlock()
	return Status{Name: s.cfg.Name, Status: s.status, Error: s.errText, Tools: len(s.tools),
		Transport: s.cfg.transport(), Scope: s.cfg.Scope, Overdue: s.overdue && s.status == StatusPending}
}

// await records the request the server is now expected to answer.
func (s *server) await(request string) {
	s.mu.Lock()
	s.awaiting = request
	s.mu.Unlock()
}

// markOverdue marks the server overdue if it is still making its first
// connection (not reconnecting, which has its own message), with a message
// saying what it has not answered after waited, and reports whether it was.
func (s *server) markOverdue(waited time.Duration) (Status, bool) {
	s.mu.Lock()
	if s.stopped || s.status != StatusPending || s.errText != "" || s.awaiting == "" {
		s.mu.Unlock()
		return Status{}, false
	}
	s.overdue = true
	s.errText = fmt.Sprintf("no answer to %s after %s; still waiting for it, up to %s (MCP_TIMEOUT); %s",
		s.awaiting, waited, s.m.limits.StartTimeout, waitLonger)
	s.mu.Unlock()
	s.m.notify()
	return s.statusInfo(), true
}

func (s *server) isStopped() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.stopped
}

func (s *server) setStatus(status, errText string) {
	s.mu.Lock()
	if s.stopped {
		s.mu.Unlock()
		return
	}
	changed := s.status != status || s.errText != errText
	s.status, s.errText = status, errText
	s.overdue = false
	s.mu.Unlock()
	if changed {
		s.m.notify()
	}
}

func (s *server) toolList() []*mcpTool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.tools)
}

func (s *server) promptList() []PromptInfo {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.stopped {
		return nil
	}
	return slices.Clone(s.prompts)
}

func (s *server) resourceList() []ResourceInfo {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.stopped {
		return nil
	}
	return slices.Clone(s.resources)
}

func (s *server) offersResources() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return !s.stopped && s.caps != nil && s.caps.Resources != nil
}

// live returns the current session, if it has not ended.
func (s *server) live() *session {
	s.mu.Lock()
	sess := s.sess
	s.mu.Unlock()
	if sess == nil {
		return nil
	}
	select {
	case <-sess.done:
		return nil
	default:
		return sess
	}
}

// connect returns a live session, connecting (starting the server) when
// there is none. Concurrent callers share one attempt.
func (s *server) connect(ctx context.Context) (*session, error) {
	return s.connectAs(ctx, false)
}

// connectAs is connect; a background reconnection (quiet) reports a failed
// try as still pending, and leaves the notice to its last try.
func (s *server) connectAs(ctx context.Context, quiet bool) (*session, error) {
	s.connMu.Lock()
	defer s.connMu.Unlock()
	if sess := s.live(); sess != nil {
		return sess, nil
	}
	if s.isStopped() {
		return nil, fmt.Errorf("MCP server %q is disabled", s.cfg.Name)
	}
	// Stopping the server abandons the attempt, whoever made it.
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	defer context.AfterFunc(s.ctx, cancel)()
	s.setStatus(StatusPending, "")
	start := time.Now()
	s.debug("MCP server starting", "transport", s.cfg.transport(), "command", s.cfg.Command, "url", s.cfg.URL)
	sess, caps, err := s.dial(ctx)
	if err == nil {
		err = s.load(ctx, sess, caps)
		if err != nil {
			sess.close()
		}
	}
	if err != nil {
		s.debug("MCP server failed", "after", time.Since(start).Round(time.Millisecond), "error", err)
		if s.isStopped() {
			return nil, fmt.Errorf("MCP server %q is disabled", s.cfg.Name)
		}
		status := StatusFailed
		var ce *connectError
		if errors.As(err, &ce) && ce.needsAuth {
			status = StatusNeedsAuth
		} else if quiet {
			s.setStatus(StatusPending, "reconnecting: "+err.Error())
			return nil, err
		}
		s.setStatus(status, err.Error())
		s.m.notice(s.cfg.Name, NoticeError, "MCP server %q %s: %v", s.cfg.Name, statusVerb(status), err)
		return nil, err
	}
	s.mu.Lock()
	if s.stopped {
		s.mu.Unlock()
		sess.close()
		return nil, fmt.Errorf("MCP server %q is disabled", s.cfg.Name)
	}
	s.sess = sess
	s.caps = caps
	s.everConnected = true
	s.mu.Unlock()
	watch := func() {
		_ = sess.cs.Wait()
		close(sess.done)
		s.ended(sess)
	}
	if !s.m.spawn(watch) {
		sess.close() // the manager is closing
		watch()
	}
	// The catalogue is complete before the status says connected, which
	// WaitReady waits for.
	s.m.updateResourceGroup()
	s.setStatus(StatusConnected, "")
	s.debug("MCP server connected", "after", time.Since(start).Round(time.Millisecond), "tools", s.statusInfo().Tools)
	// Lists that changed while they were being read are read again.
	s.kickRefresh("")
	return sess, nil
}

func statusVerb(status string) string {
	if status == StatusNeedsAuth {
		return "needs authentication"
	}
	return "failed"
}

// connectError is a failure to connect, described for the user.
type connectError struct {
	msg       string
	needsAuth bool
	err       error
}

func (e *connectError) Error() string { return e.msg }
func (e *connectError) Unwrap() error { return e.err }

// trackTransport keeps the connection its transport made, so that a
// session can be torn down at once: the SDK's ClientSession.Close waits for
// calls in flight.
type trackTransport struct {
	mcp.Transport
	mu   sync.Mutex
	conn mcp.Connection
}

func (t *trackTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	c, err := t.Transport.Connect(ctx)
	t.mu.Lock()
	t.conn = c
	t.mu.Unlock()
	return c, err
}

func (t *trackTransport) closeConn() {
	t.mu.Lock()
	c := t.conn
	t.mu.Unlock()
	if c != nil {
		_ = c.Close()
	}
}

// dial makes a transport and runs the MCP handshake, within the start-up
// timeout.
func (s *server) dial(ctx context.Context) (*session, *mcp.ServerCapabilities, error) {
	cfg := s.cfg
	var inner mcp.Transport
	var proc *procTransport
	switch cfg.transport() {
	case TypeStdio:
		if cfg.Command == "" {
			return nil, nil, &connectError{msg: "no command to start"}
		}
		proc = newProcTransport(cfg, s.m.opts.Env, s.m.opts.Dir)
		proc.onListChanged = s.noteListChanged
		inner = proc
	case TypeHTTP, TypeSSE:
		var next http.RoundTripper
		if f := s.m.opts.HTTPTransport; f != nil {
			next = f(cfg.Name)
		}
		t, err := remoteTransport(cfg, next, &s.watch)
		if err != nil {
			return nil, nil, &connectError{msg: err.Error(), err: err}
		}
		inner = t
	case TypeSDK:
		if cfg.Dial == nil {
			return nil, nil, &connectError{msg: "no in-process server to connect to"}
		}
		t, err := cfg.Dial(s.ctx)
		if err != nil {
			return nil, nil, &connectError{msg: err.Error(), err: err}
		}
		inner = t
	default:
		return nil, nil, &connectError{msg: fmt.Sprintf("unknown transport type %q (want stdio, http or sse)", cfg.Type)}
	}
	tr := &trackTransport{Transport: inner}
	// The connection lives in attemptCtx: the SSE transport ties its
	// stream to the context given to Connect.
	attemptCtx, cancel := context.WithCancel(s.ctx)
	stopAbandon := context.AfterFunc(ctx, cancel)
	var timedOut atomic.Bool
	timer := time.AfterFunc(s.m.limits.StartTimeout, func() {
		timedOut.Store(true)
		cancel()
	})
	s.watch.takeChallenge()
	s.watch.takeAuthRequired()
	s.watch.takeSessionGone()
	s.await(handshake)
	cs, err := s.client.Connect(attemptCtx, tr, &mcp.ClientSessionOptions{ProtocolVersion: protocolVersion})
	fired := !timer.Stop()
	abandoned := !stopAbandon()
	if err == nil && (fired || abandoned) {
		_ = cs.Close()
		err = context.Canceled
	}
	if err != nil {
		cancel()
		tr.closeConn()
		return nil, nil, s.describe(err, proc, timedOut.Load(), ctx)
	}
	sess := &session{cs: cs, conn: tr, cancel: cancel, done: make(chan struct{})}
	if proc != nil {
		sess.proc = proc.proc
	}
	var caps *mcp.ServerCapabilities
	if r := cs.InitializeResult(); r != nil {
		caps = r.Capabilities
	}
	if caps == nil {
		caps = &mcp.ServerCapabilities{}
	}
	return sess, caps, nil
}

// describe turns a failed handshake into a message that says what happened.
func (s *server) describe(err error, proc *procTransport, timedOut bool, ctx context.Context) error {
	var msg string
	switch {
	case timedOut:
		msg = fmt.Sprintf("no answer to %s within %s; %s", handshake, s.m.limits.StartTimeout, waitLonger)
	case ctx.Err() != nil:
		msg = "start-up abandoned: " + ctx.Err().Error()
	case s.ctx.Err() != nil:
		msg = "stopped while starting"
	case proc != nil && proc.proc == nil:
		msg = fmt.Sprintf("cannot start %q: %v", s.cfg.Command, errors.Unwrap(err))
		if errors.Unwrap(err) == nil {
			msg = fmt.Sprintf("cannot start %q: %v", s.cfg.Command, err)
		}
	default:
		msg = "MCP handshake failed: " + err.Error()
	}
	if proc != nil && proc.proc != nil {
		p := proc.proc
		// The handshake fails on EOF a moment before the exit is reaped.
		select {
		case <-p.exited:
		case <-time.After(500 * time.Millisecond):
		}
		p.waitStderr(200 * time.Millisecond)
		if d := p.exitDescription(); d != "" && !timedOut {
			msg = fmt.Sprintf("the server %s before completing the MCP handshake", d)
		}
		if tail := p.stderr.String(); tail != "" {
			msg += "; stderr: " + cut(tail, 1000)
		}
	}
	if ch := s.watch.takeChallenge(); ch != "" {
		return &connectError{msg: "the server requires authentication (HTTP 401, WWW-Authenticate: " + cut(ch, 300) + ")", needsAuth: true, err: err}
	}
	if ae := s.watch.takeAuthRequired(); ae != nil {
		// The error names the server, which the notice names already.
		return &connectError{msg: strings.TrimPrefix(ae.Error(), fmt.Sprintf("MCP server %q: ", s.cfg.Name)), needsAuth: true, err: err}
	}
	return &connectError{msg: msg, err: err}
}

// handshake is what a server is first waited for.
const handshake = "the MCP handshake (initialize request)"

// load reads the server's lists after a handshake and publishes them.
func (s *server) load(ctx context.Context, sess *session, caps *mcp.ServerCapabilities) error {
	ctx, cancel := context.WithTimeout(ctx, s.m.limits.StartTimeout)
	defer cancel()
	defer s.await("")
	// listed reads one list; a server that does not answer in time is
	// told apart from one that answers with an error.
	listed := func(method string, list func() error) error {
		s.await("the " + method + " request")
		err := list()
		if err != nil && errors.Is(ctx.Err(), context.DeadlineExceeded) {
			return fmt.Errorf("no answer to the %s request within %s; %s", method, s.m.limits.StartTimeout, waitLonger)
		}
		if err != nil {
			return fmt.Errorf("%s: %w", method, err)
		}
		return nil
	}
	var tools []*mcp.Tool
	if caps.Tools != nil {
		err := listed("tools/list", func() (err error) { tools, err = listAll(sess.cs.Tools(ctx, nil)); return err })
		if err != nil {
			return &connectError{msg: err.Error(), err: err}
		}
	}
	var resources []*mcp.Resource
	if caps.Resources != nil {
		err := listed("resources/list", func() (err error) { resources, err = listAll(sess.cs.Resources(ctx, nil)); return err })
		if err != nil {
			s.m.notice(s.cfg.Name, NoticeWarning, "MCP server %q: %v", s.cfg.Name, err)
		}
	}
	var prompts []*mcp.Prompt
	if caps.Prompts != nil {
		err := listed("prompts/list", func() (err error) { prompts, err = listAll(sess.cs.Prompts(ctx, nil)); return err })
		if err != nil {
			s.m.notice(s.cfg.Name, NoticeWarning, "MCP server %q: %v", s.cfg.Name, err)
		}
	}
	s.mu.Lock()
	s.caps = caps
	s.mu.Unlock()
	s.publishTools(tools)
	s.publishResources(resources)
	s.publishPrompts(prompts)
	return nil
}

func listAll[T any](seq func(yield func(*T, error) bool)) ([]*T, error) {
	var out []*T
	for item, err := range seq {
		if err != nil {
			return out, err
		}
		if item != nil {
			out = append(out, item)
		}
		if len(out) >= maxListed {
			break
		}
	}
	return out, nil
}

// publishTools makes tools the server's catalogue: the registry group and
// OnChange learn what was added and removed.
func (s *server) publishTools(remote []*mcp.Tool) {
	s.pubMu.Lock()
	defer s.pubMu.Unlock()
	if s.isStopped() {
		return
	}
	names := make([]string, len(remote))
	for i, t := range remote {
		names[i] = t.Name
	}
	byRemote := toolNames(s.part, names)
	seen := map[string]bool{}
	var tools []*mcpTool
	for _, t := range remote {
		if seen[t.Name] {
			continue
		}
		seen[t.Name] = true
		tools = append(tools, bridgeTool(s, byRemote[t.Name], t))
	}
	slices.SortFunc(tools, func(a, b *mcpTool) int { return strings.Compare(a.name, b.name) })
	s.mu.Lock()
	old := s.tools
	s.tools = tools
	s.mu.Unlock()

	var added, removed []string
	oldBy := map[string]*mcpTool{}
	for _, t := range old {
		oldBy[t.name] = t
	}
	for _, t := range tools {
		if o, ok := oldBy[t.name]; !ok {
			added = append(added, t.name)
		} else {
			if !o.same(t) {
				added = append(added, t.name)
				removed = append(removed, t.name)
			}
			delete(oldBy, t.name)
		}
	}
	for name := range oldBy {
		removed = append(removed, name)
	}
	slices.Sort(removed)
	if len(added) == 0 && len(removed) == 0 && old != nil {
		return
	}
	if r := s.m.opts.Registry; r != nil {
		list := make([]tool.Tool, len(tools))
		for i, t := range tools {
			list[i] = t
		}
		r.SetGroup(s.group(), list)
	}
	if (len(added) > 0 || len(removed) > 0) && s.m.opts.OnChange != nil {
		s.m.opts.OnChange(Change{Server: s.cfg.Name, Kind: ChangeTools, Added: added, Removed: removed})
	}
}

func (s *server) publishResources(list []*mcp.Resource) {
	s.pubMu.Lock()
	defer s.pubMu.Unlock()
	if s.isStopped() {
		return
	}
	infos := make([]ResourceInfo, 0, len(list))
	for _, r := range list {
		infos = append(infos, ResourceInfo{Server: s.cfg.Name, URI: r.URI, Name: r.Name, Title: r.Title,
			Description: r.Description, MIMEType: r.MIMEType})
	}
	s.mu.Lock()
	old := s.resources
	s.resources = infos
	s.mu.Unlock()
	added, removed := diffKeys(old, infos, func(r ResourceInfo) string { return r.URI })
	if (len(added) > 0 || len(removed) > 0) && s.m.opts.OnChange != nil {
		s.m.opts.OnChange(Change{Server: s.cfg.Name, Kind: ChangeResources, Added: added, Removed: removed})
	}
}

func (s *server) publishPrompts(list []*mcp.Prompt) {
	s.pubMu.Lock()
	defer s.pubMu.Unlock()
	if s.isStopped() {
		return
	}
	names := make([]string, len(list))
	for i, p := range list {
		names[i] = p.Name
	}
	commands := toolNames(s.part, names) // the same rules as tool names
	infos := make([]PromptInfo, 0, len(list))
	seen := map[string]bool{}
	for _, p := range list {
		if seen[p.Name] {
			continue
		}
		seen[p.Name] = true
		info := PromptInfo{Server: s.cfg.Name, Name: p.Name, Title: p.Title, Description: p.Description,
			Command: commands[p.Name]}
		for _, a := range p.Arguments {
			if a != nil {
				info.Arguments = append(info.Arguments, PromptArgument{Name: a.Name, Description: a.Description, Required: a.Required})
			}
		}
		infos = append(infos, info)
	}
	slices.SortFunc(infos, func(a, b PromptInfo) int { return strings.Compare(a.Command, b.Command) })
	s.mu.Lock()
	old := s.prompts
	s.prompts = infos
	s.mu.Unlock()
	added, removed := diffKeys(old, infos, func(p PromptInfo) string { return p.Command })
	if (len(added) > 0 || len(removed) > 0) && s.m.opts.OnChange != nil {
		s.m.opts.OnChange(Change{Server: s.cfg.Name, Kind: ChangePrompts, Added: added, Removed: removed})
	}
}

func diffKeys[T any](old, cur []T, key func(T) string) (added, removed []string) {
	was := map[string]bool{}
	for _, o := range old {
		was[key(o)] = true
	}
	for _, c := range cur {
		k := key(c)
		if !was[k] {
			added = append(added, k)
		}
		delete(was, k)
	}
	for k := range was {
		removed = append(removed, k)
	}
	slices.Sort(removed)
	return added, removed
}

// listChanged is the SDK's handler of a list_changed notification. A stdio
// server's notifications were taken as they were read (noteListChanged).
func (s *server) listChanged(kind ChangeKind) {
	if s.cfg.transport() != TypeStdio {
		s.kickRefresh(kind)
	}
}

// noteListChanged takes a list_changed notification as the connection
// reads it, before the messages after it are read: the refresh counts as
// due at once (waitRefresh waits for it), and is asked for off the
// connection's goroutine, which must not wait on the server's lock.
func (s *server) noteListChanged(kind ChangeKind) {
	s.noted.Add(1)
	go func() {
		s.kickRefresh(kind)
		s.noted.Add(-1)
	}()
}

// kickRefresh asks for a list to be read again. It is called from the
// SDK's notification goroutine, so it only records the wish; one goroutine
// per server does the reading, and wishes made meanwhile are merged.
func (s *server) kickRefresh(kind ChangeKind) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.stopped {
		return
	}
	if kind != "" {
		if s.refreshKinds == nil {
			s.refreshKinds = map[ChangeKind]bool{}
		}
		s.refreshKinds[kind] = true
	}
	// Without a session (connecting), connect kicks again when done.
	if s.refreshing || len(s.refreshKinds) == 0 || s.sess == nil {
		return
	}
	s.refreshing = s.m.spawn(s.refreshLoop)
}

func (s *server) refreshLoop() {
	for {
		s.mu.Lock()
		kinds := s.refreshKinds
		sess := s.sess
		if len(kinds) == 0 || s.stopped || sess == nil {
			s.refreshing = false
			s.mu.Unlock()
			return
		}
		s.refreshKinds = nil
		s.mu.Unlock()
		s.refreshes.Add(1)
		ctx, cancel := context.WithTimeout(s.ctx, s.m.limits.StartTimeout)
		if kinds[ChangeTools] {
			if tools, err := listAll(sess.cs.Tools(ctx, nil)); err == nil {
				s.publishTools(tools)
			} else if s.ctx.Err() == nil {
				s.m.notice(s.cfg.Name, NoticeWarning, "MCP server %q: reading its changed tool list: %v", s.cfg.Name, err)
			}
		}
		if kinds[ChangeResources] {
			if list, err := listAll(sess.cs.Resources(ctx, nil)); err == nil {
				s.publishResources(list)
			}
		}
		if kinds[ChangePrompts] {
			if list, err := listAll(sess.cs.Prompts(ctx, nil)); err == nil {
				s.publishPrompts(list)
			}
		}
		cancel()
	}
}

// ended handles a session that ended without tack closing it: a stdio
// server is restarted on its next use, a remote one is reconnected in the
// background. Its tools stay in the catalogue meanwhile.
func (s *server) ended(sess *session) {
	if sess.closing.Load() {
		return
	}
	s.mu.Lock()
	if s.sess != sess || s.stopped {
		s.mu.Unlock()
		return
	}
	s.sess = nil
	s.mu.Unlock()
	if p := sess.proc; p != nil {
		// The connection ends on EOF a moment before the exit is reaped.
		select {
		case <-p.exited:
		case <-time.After(time.Second):
		}
		why := p.exitDescription()
		if why == "" {
			why = "closed its connection"
		}
		sess.close()
		p.waitStderr(200 * time.Millisecond)
		if tail := p.stderr.String(); tail != "" {
			why += "; stderr: " + cut(tail, 500)
		}
		s.setStatus(StatusFailed, "the server "+why+"; it is started again on its next use")
		s.m.notice(s.cfg.Name, NoticeWarning, "MCP server %q %s; it is started again on its next use", s.cfg.Name, why)
		return
	}
	sess.close()
	s.setStatus(StatusPending, "connection lost; reconnecting")
	s.m.notice(s.cfg.Name, NoticeWarning, "MCP server %q: connection lost; reconnecting", s.cfg.Name)
	s.startReconnect()
}

// startReconnect reconnects a remote server in the background, with
// exponential backoff, a bounded number of times.
func (s *server) startReconnect() {
	s.mu.Lock()
	if s.reconnecting || s.stopped {
		s.mu.Unlock()
		return
	}
	s.reconnecting = true
	s.mu.Unlock()
	started := s.m.spawn(func() {
		defer func() {
			s.mu.Lock()
			s.reconnecting = false
			s.mu.Unlock()
		}()
		delay := s.m.limits.ReconnectDelay
		var err error
		for try := 0; try < s.m.limits.ReconnectTries; try++ {
			t := time.NewTimer(delay)
			select {
			case <-s.ctx.Done():
				t.Stop()
				return
			case <-t.C:
			}
			if s.live() != nil {
				return // a call reconnected it meanwhile
			}
			if _, err = s.connectAs(s.ctx, true); err == nil {
				s.m.notice(s.cfg.Name, NoticeInfo, "MCP server %q reconnected", s.cfg.Name)
				return
			}
			var ce *connectError
			if errors.As(err, &ce) && ce.needsAuth {
				return
			}
			delay = min(delay*2, 30*time.Second)
		}
		if err != nil && s.ctx.Err() == nil && s.live() == nil {
			msg := fmt.Sprintf("%v (gave up reconnecting after %d tries; tried again on next use)", err, s.m.limits.ReconnectTries)
			s.setStatus(StatusFailed, msg)
			s.m.notice(s.cfg.Name, NoticeError, "MCP server %q failed: %s", s.cfg.Name, msg)
		}
	})
	if !started {
		s.mu.Lock()
		s.reconnecting = false
		s.mu.Unlock()
	}
}

// close ends the session at once: the connection first (a stdio server's
// process group is stopped), so that calls in flight fail instead of
// holding up the SDK's graceful close.
func (sess *session) close() {
	sess.closing.Store(true)
	sess.conn.closeConn()
	_ = sess.cs.Close()
	sess.cancel()
}

// dropSession closes the current session on purpose.
func (s *server) dropSession() {
	s.mu.Lock()
	sess := s.sess
	s.sess = nil
	s.mu.Unlock()
	if sess != nil {
		sess.close()
	}
}

// stop ends the server for good, with the given status; its tools leave
// the catalogue.
func (s *server) stop(status string) {
	s.mu.Lock()
	if s.stopped {
		s.mu.Unlock()
		return
	}
	s.stopped = true
	sess := s.sess
	s.sess = nil
	s.status, s.errText = status, ""
	s.mu.Unlock()
	s.cancel()
	if sess != nil {
		sess.close()
	}
	// Wait for an attempt in progress to give up.
	s.connMu.Lock()
	//lint:ignore SA2001 the lock is taken only to wait for the holder.
	s.connMu.Unlock()
	s.m.notify()
	s.pubMu.Lock()
	s.mu.Lock()
	old := s.tools
	s.tools, s.resources, s.prompts = nil, nil, nil
	s.mu.Unlock()
	// A server replacing this one connects only once this one is stopped,
	// so the group is still this server's.
	if r := s.m.opts.Registry; r != nil {
		r.SetGroup(s.group(), nil)
	}
	if len(old) > 0 && s.m.opts.OnChange != nil {
		names := make([]string, len(old))
		for i, t := range old {
			names[i] = t.name
		}
		s.m.opts.OnChange(Change{Server: s.cfg.Name, Kind: ChangeTools, Removed: names})
	}
	s.pubMu.Unlock()
	s.m.updateResourceGroup()
}

// use returns a live session for a call, starting or reconnecting the
// server when it has none.
func (s *server) use(ctx context.Context) (*session, error) {
	if sess := s.live(); sess != nil {
		return sess, nil
	}
	s.mu.Lock()
	stopped, ever, status, why := s.stopped, s.everConnected, s.status, s.errText
	s.mu.Unlock()
	if stopped {
		return nil, fmt.Errorf("MCP server %q is disabled", s.cfg.Name)
	}
	// A server that never started is not tried again behind the user's
	// back (it may take the whole start-up timeout to fail again); only
	// Reconnect does. One that ran before is restarted or reconnected.
	if !ever && (status == StatusFailed || status == StatusNeedsAuth) {
		return nil, fmt.Errorf("MCP server %q is %w: %s", s.cfg.Name, errNotConnected, why)
	}
	sess, err := s.connect(ctx)
	if err != nil {
		return nil, fmt.Errorf("MCP server %q is %w: %v", s.cfg.Name, errNotConnected, err)
	}
	return sess, nil
}

// lost reports whether a request failed because the session ended (the
// server crashed, the connection broke) rather than because the server
// answered with an error.
func lost(ctx context.Context, sess *session, err error) bool {
	if err == nil || ctx.Err() != nil {
		return false
	}
	var rpcErr *jsonrpc.Error
	if errors.As(err, &rpcErr) {
		return false
	}
	// The connection ends a moment after the failed read.
	select {
	case <-sess.done:
		return true
	case <-time.After(time.Second):
		return false
	}
}

// callTool calls t on the server within the tool timeout. A stdio server
// that died is started again and the call made once more.
func (s *server) callTool(ctx context.Context, t *mcpTool, args json.RawMessage) (*mcp.CallToolResult, error) {
	ctx, cancel := context.WithTimeout(ctx, s.m.limits.ToolTimeout)
	defer cancel()
	params := &mcp.CallToolParams{Name: t.remote, Arguments: args}
	if s.m.opts.OnProgress != nil {
		token, release := s.m.registerProgress(&progressEntry{server: s.cfg.Name, tool: t.remote, name: t.name, toolUseID: tool.ToolUseID(ctx)})
		defer release()
		params.SetProgressToken(token)
	}
	var res *mcp.CallToolResult
	err := s.request(ctx, func(sess *session) error {
		var err error
		res, err = sess.cs.CallTool(ctx, params)
		return err
	})
	if err != nil {
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			return nil, fmt.Errorf("MCP tool %s of server %q timed out after %s (MCP_TOOL_TIMEOUT)", t.remote, s.cfg.Name, s.m.limits.ToolTimeout)
		}
		return nil, err
	}
	// A call that changed the server's lists (it announced list_changed
	// while answering) returns once the new lists are read, so that the
	// next request already offers them.
	s.waitRefresh(ctx, refreshWait)
	return res, nil
}

// refreshWait bounds how long a tool call waits for the list refresh its
// server started while answering it.
const refreshWait = 5 * time.Second

// waitRefresh waits until no list refresh is running or due, at most d.
func (s *server) waitRefresh(ctx context.Context, d time.Duration) {
	deadline := time.Now().Add(d)
	for {
		s.mu.Lock()
		busy := s.noted.Load() > 0 || s.refreshing || (len(s.refreshKinds) > 0 && s.sess != nil)
		s.mu.Unlock()
		if !busy || time.Now().After(deadline) || ctx.Err() != nil {
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// request runs do on a live session. When the session is lost during the
// request, do runs once more on a new session if it cannot have run: a
// stdio server that died is started again; a remote server that forgot
// the session (HTTP 404, or 400 as some servers answer) is reconnected. Otherwise a remote server is
// reconnected in the background and the error returned.
func (s *server) request(ctx context.Context, do func(*session) error) error {
	sess, err := s.use(ctx)
	if err != nil {
		return err
	}
	err = do(sess)
	if !lost(ctx, sess, err) {
		return wrapServerErr(s.cfg.Name, err)
	}
	stdio := s.cfg.transport() == TypeStdio
	if !stdio && !errors.Is(err, mcp.ErrSessionMissing) && !s.watch.takeSessionGone() {
		return fmt.Errorf("MCP server %q: %w (the connection was lost; reconnecting)", s.cfg.Name, err)
	}
	s.ended(sess)
	if stdio {
		s.m.notice(s.cfg.Name, NoticeInfo, "MCP server %q stopped during a request; starting it again", s.cfg.Name)
	}
	sess2, err2 := s.use(ctx)
	if err2 != nil {
		return fmt.Errorf("MCP server %q: %v; connecting again failed: %w", s.cfg.Name, err, err2)
	}
	return wrapServerErr(s.cfg.Name, do(sess2))
}

func wrapServerErr(server string, err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("MCP server %q: %w", server, err)
}

// getPrompt renders a prompt as messages.
func (s *server) getPrompt(ctx context.Context, name string, args map[string]string) ([]llm.Message, error) {
	ctx, cancel := context.WithTimeout(ctx, s.m.limits.ToolTimeout)
	defer cancel()
	var res *mcp.GetPromptResult
	err := s.request(ctx, func(sess *session) error {
		var err error
		res, err = sess.cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: name, Arguments: args})
		return err
	})
	if err != nil {
		return nil, err
	}
	msgs := make([]llm.Message, 0, len(res.Messages))
	for _, pm := range res.Messages {
		if pm == nil {
			continue
		}
		role := llm.RoleUser
		if pm.Role == "assistant" {
			role = llm.RoleAssistant
		}
		var blocks []llm.Block
		if b, ok := contentBlock(pm.Content); ok {
			blocks = append(blocks, b)
		}
		msgs = append(msgs, llm.Message{Role: role, Content: limitOutput(blocks, s.m.limits.MaxOutputTokens)})
	}
	return msgs, nil
}

// readResource reads one resource.
func (s *server) readResource(ctx context.Context, uri string) (*mcp.ReadResourceResult, error) {
	ctx, cancel := context.WithTimeout(ctx, s.m.limits.ToolTimeout)
	defer cancel()
	var res *mcp.ReadResourceResult
	err := s.request(ctx, func(sess *session) error {
		var err error
		res, err = sess.cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri})
		return err
	})
	return res, err
}

// debug writes a line about the server to the debug log, if there is one.
func (s *server) debug(msg string, args ...any) {
	if log := s.m.opts.Logger; log != nil {
		log.Debug(msg, append([]any{"server", s.cfg.Name}, args...)...)
	}
}
