package mcp

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tackcode/tack/internal/llm"
	"github.com/tackcode/tack/internal/tool"
)

// Manager runs a session's MCP servers. It is safe for concurrent use.
type Manager struct {
	opts   Options
	limits Limits
	ctx    context.Context // ends with Close
	cancel context.CancelFunc
	wg     sync.WaitGroup // every goroutine the manager started

	spawnMu  sync.Mutex // a leaf lock: taken with no other held, or last
	draining bool       // Close is waiting for wg: no more goroutines

	mu      sync.Mutex
	servers map[string]*server
	order   []string      // names, in the order first started
	changed chan struct{} // closed, and replaced, whenever a status changes
	closed  bool
	roots   []string

	resMu    sync.Mutex // serialises updates of the resource tools group
	resTools []tool.Tool

	progMu   sync.Mutex
	progress map[string]*progressEntry // by progress token
	progSeq  atomic.Uint64
}

// New returns a manager with no servers.
func New(opts Options) *Manager {
	ctx, cancel := context.WithCancel(context.Background())
	m := &Manager{
		opts:     opts,
		limits:   opts.Limits.withDefaults(),
		ctx:      ctx,
		cancel:   cancel,
		servers:  map[string]*server{},
		changed:  make(chan struct{}),
		roots:    slices.Clone(opts.Roots),
		progress: map[string]*progressEntry{},
	}
	m.resTools = []tool.Tool{listResourcesTool{m: m}, readResourceTool{m: m}}
	return m
}

// Start starts every server at once, each in its own goroutine, and returns
// without waiting: WaitReady waits. A server whose name is already running
// is replaced. ctx bounds the start-up only: cancelling it abandons the
// servers still starting (they report failed); the servers' lives end with
// Close.
func (m *Manager) Start(ctx context.Context, servers []ServerConfig) {
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		return
	}
	var old, started []*server
	for _, cfg := range servers {
		s := m.newServerLocked(cfg)
		if prev := m.servers[cfg.Name]; prev != nil {
			old = append(old, prev)
		} else {
			m.order = append(m.order, cfg.Name)
		}
		m.servers[cfg.Name] = s
		started = append(started, s)
	}
	m.notifyLocked()
	m.mu.Unlock()
	for _, s := range old {
		s.stop(StatusDisabled)
	}
	for _, s := range started {
		if s.cfg.Disabled {
			continue
		}
		m.spawn(func() { _, _ = s.connect(ctx) })
	}
}

// newServerLocked makes the server for cfg; m.mu is held.
func (m *Manager) newServerLocked(cfg ServerConfig) *server {
	part := serverPart(cfg.Name)
	// Two names may sanitise alike ("a.b", "a_b"): the later one gets a
	// digest, so that tool names stay unique across servers.
	for name, other := range m.servers {
		if name != cfg.Name && other.part == part {
			part = fit(part+"_"+hash8(cfg.Name), cfg.Name, maxServerNameLen)
			break
		}
	}
	return newServer(m, cfg, part, m.roots)
}

// spawn runs f in a goroutine that Close waits for, and reports whether
// it did: once Close waits, no goroutine is started.
func (m *Manager) spawn(f func()) bool {
	m.spawnMu.Lock()
	defer m.spawnMu.Unlock()
	if m.draining {
		return false
	}
	m.wg.Add(1)
	go func() {
		defer m.wg.Done()
		f()
	}()
	return true
}

// notifyLocked wakes WaitReady; m.mu is held.
func (m *Manager) notifyLocked() {
	close(m.changed)
	m.changed = make(chan struct{})
}

func (m *Manager) notify() {
	m.mu.Lock()
	m.notifyLocked()
	m.mu.Unlock()
}

// WaitReady waits until no server is pending, ctx is done or deadline has
// passed, and reports whether no server is pending. Servers that are still
// pending then join the catalogue when they are ready (see Options.OnChange).
// A negative deadline is none: each server's start-up timeout
// (Limits.StartTimeout, for its handshake and again for its lists) bounds
// the wait.
func (m *Manager) WaitReady(ctx context.Context, deadline time.Duration) bool {
	var expired <-chan time.Time
	if deadline >= 0 {
		timer := time.NewTimer(deadline)
		defer timer.Stop()
		expired = timer.C
	}
	for {
		m.mu.Lock()
		ch := m.changed
		pending := false
		for _, s := range m.servers {
			if s.currentStatus() == StatusPending {
				pending = true
				break
			}
		}
		m.mu.Unlock()
		if !pending {
			return true
		}
		select {
		case <-ch:
		case <-expired:
			return false
		case <-ctx.Done():
			return false
		}
	}
}

// Overdue marks every server still making its first connection, after the
// caller waited for it for waited (see WaitReady): it stays pending, and
// may still connect and join, but its Status is Overdue and its error says
// what it has not answered, after how long, and how long it still has. It
// returns the statuses of the servers it marked.
func (m *Manager) Overdue(waited time.Duration) []Status {
	var out []Status
	for _, s := range m.list() {
		if st, ok := s.markOverdue(waited); ok {
			out = append(out, st)
		}
	}
	return out
}

// Statuses returns the state of every server, in the order they were first
// started.
func (m *Manager) Statuses() []Status {
	m.mu.Lock()
	servers := m.listLocked()
	m.mu.Unlock()
	out := make([]Status, len(servers))
	for i, s := range servers {
		out[i] = s.statusInfo()
	}
	return out
}

func (m *Manager) listLocked() []*server {
	out := make([]*server, 0, len(m.order))
	for _, name := range m.order {
		if s := m.servers[name]; s != nil {
			out = append(out, s)
		}
	}
	return out
}

func (m *Manager) list() []*server {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.listLocked()
}

func (m *Manager) get(name string) (*server, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	s := m.servers[name]
	if s == nil {
		return nil, fmt.Errorf("no MCP server named %q", name)
	}
	return s, nil
}

// Tools returns the bridged tools of every server, as the registry has them.
func (m *Manager) Tools() []tool.Tool {
	var out []tool.Tool
	for _, s := range m.list() {
		for _, t := range s.toolList() {
			out = append(out, t)
		}
	}
	return out
}

// ResourceTools returns ListMcpResourcesTool and ReadMcpResourceTool, for a
// registry the manager does not update itself.
func (m *Manager) ResourceTools() []tool.Tool { return slices.Clone(m.resTools) }

// Prompts returns the prompts of every server, as each last listed them.
func (m *Manager) Prompts() []PromptInfo {
	var out []PromptInfo
	for _, s := range m.list() {
		out = append(out, s.promptList()...)
	}
	return out
}

// GetPrompt renders a server's prompt with args.
func (m *Manager) GetPrompt(ctx context.Context, server, name string, args map[string]string) ([]llm.Message, error) {
	s, err := m.get(server)
	if err != nil {
		return nil, err
	}
	return s.getPrompt(ctx, name, args)
}

// Resources returns the resources of server, or of every server when
// server is "".
func (m *Manager) Resources(server string) []ResourceInfo {
	var out []ResourceInfo
	for _, s := range m.list() {
		if server == "" || s.cfg.Name == server {
			out = append(out, s.resourceList()...)
		}
	}
	return out
}

// ReadResource reads a resource of server, as blocks for the model.
func (m *Manager) ReadResource(ctx context.Context, server, uri string) ([]llm.Block, error) {
	s, err := m.get(server)
	if err != nil {
		return nil, err
	}
	res, err := s.readResource(ctx, uri)
	if err != nil {
		return nil, err
	}
	blocks := make([]llm.Block, 0, len(res.Contents))
	for _, c := range res.Contents {
		blocks = append(blocks, resourceBlock(c))
	}
	return limitOutput(blocks, m.limits.MaxOutputTokens), nil
}

// Reconnect closes a server's connection, if any, and connects again (a
// stdio server is started again), waiting for the outcome.
func (m *Manager) Reconnect(ctx context.Context, name string) error {
	s, err := m.get(name)
	if err != nil {
		return err
	}
	if s.cfg.Disabled || s.isStopped() {
		return fmt.Errorf("MCP server %q is disabled", name)
	}
	s.dropSession()
	_, err = s.connect(ctx)
	return err
}

// SetEnabled enables or disables a server for the rest of the session. A
// disabled server is stopped and its tools leave the catalogue; enabling
// starts it and waits for the outcome.
func (m *Manager) SetEnabled(ctx context.Context, name string, enabled bool) error {
	m.mu.Lock()
	old := m.servers[name]
	if old == nil || m.closed {
		m.mu.Unlock()
		return fmt.Errorf("no MCP server named %q", name)
	}
	if (!enabled && old.cfg.Disabled) || (enabled && !old.cfg.Disabled && !old.isStopped()) {
		m.mu.Unlock()
		return nil
	}
	cfg := old.cfg
	cfg.Disabled = !enabled
	s := newServer(m, cfg, old.part, m.roots)
	m.servers[name] = s
	m.notifyLocked()
	m.mu.Unlock()
	old.stop(StatusDisabled)
	if !enabled {
		return nil
	}
	_, err := s.connect(ctx)
	return err
}

// Remove stops a server and forgets it: its tools leave the catalogue and
// it is no longer listed. An unknown name is no error.
func (m *Manager) Remove(name string) {
	m.mu.Lock()
	s := m.servers[name]
	if s != nil {
		delete(m.servers, name)
		m.order = slices.DeleteFunc(m.order, func(n string) bool { return n == name })
		m.notifyLocked()
	}
	m.mu.Unlock()
	if s != nil {
		s.stop(StatusDisabled)
	}
}

// SetRoots replaces the directories offered to servers as roots; servers
// are told that the list changed.
func (m *Manager) SetRoots(dirs []string) {
	m.mu.Lock()
	old := m.roots
	m.roots = slices.Clone(dirs)
	servers := m.listLocked()
	m.mu.Unlock()
	for _, s := range servers {
		s.setRoots(old, dirs)
	}
}

// rootURI is the file:// URI of a directory.
func rootURI(dir string) string {
	if abs, err := filepath.Abs(dir); err == nil {
		dir = abs
	}
	return (&url.URL{Scheme: "file", Path: filepath.ToSlash(dir)}).String()
}

// Close stops every server (stdio process groups are killed) and waits for
// the manager's goroutines. The servers' tools leave the registry.
func (m *Manager) Close() error {
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		return nil
	}
	m.closed = true
	servers := m.listLocked()
	m.mu.Unlock()
	var wg sync.WaitGroup
	for _, s := range servers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s.stop(StatusDisabled)
		}()
	}
	wg.Wait()
	m.cancel()
	m.spawnMu.Lock()
	m.draining = true
	m.spawnMu.Unlock()
	m.wg.Wait()
	m.updateResourceGroup()
	return nil
}

// updateResourceGroup offers the resource tools while a server that has
// resources is in the catalogue.
func (m *Manager) updateResourceGroup() {
	m.resMu.Lock()
	defer m.resMu.Unlock()
	want := false
	m.mu.Lock()
	closed := m.closed
	servers := m.listLocked()
	m.mu.Unlock()
	if !closed {
		for _, s := range servers {
			if s.offersResources() {
				want = true
				break
			}
		}
	}
	if m.opts.Registry == nil {
		return
	}
	if want {
		m.opts.Registry.SetGroup(ResourceGroup, m.resTools)
	} else {
		m.opts.Registry.SetGroup(ResourceGroup, nil)
	}
}

func (m *Manager) notice(server, level, format string, args ...any) {
	if m.opts.OnNotice != nil {
		m.opts.OnNotice(Notice{Server: server, Level: level, Message: fmt.Sprintf(format, args...)})
	}
}

// progressEntry is what a progress token stands for.
type progressEntry struct {
	server, tool, name, toolUseID string
}

// registerProgress returns a new progress token for a call; release drops
// it after ProgressGrace, for notifications still on their way.
func (m *Manager) registerProgress(e *progressEntry) (token string, release func()) {
	token = fmt.Sprintf("tack-%d", m.progSeq.Add(1))
	m.progMu.Lock()
	m.progress[token] = e
	m.progMu.Unlock()
	return token, func() {
		time.AfterFunc(ProgressGrace, func() {
			m.progMu.Lock()
			delete(m.progress, token)
			m.progMu.Unlock()
		})
	}
}

func (m *Manager) onProgress(token any, progress, total float64, message string) {
	if m.opts.OnProgress == nil {
		return
	}
	key, ok := token.(string)
	if !ok {
		key = fmt.Sprint(token)
	}
	m.progMu.Lock()
	e := m.progress[key]
	m.progMu.Unlock()
	if e == nil {
		return
	}
	m.opts.OnProgress(Progress{Server: e.server, Tool: e.tool, Name: e.name, ToolUseID: e.toolUseID,
		Progress: progress, Total: total, Message: message})
}

// errNotConnected is returned for calls to a server that cannot be reached.
var errNotConnected = errors.New("not connected")

// Probe connects to one server, waits for the outcome (within the start-up
// timeout) and stops it again: the health check of `tack mcp list`. Only
// opts' connection settings matter (Env, Dir, HTTPTransport, Limits…).
func Probe(ctx context.Context, cfg ServerConfig, opts Options) Status {
	opts.Registry, opts.OnChange, opts.OnNotice, opts.OnProgress = nil, nil, nil, nil
	m := New(opts)
	defer m.Close()
	m.Start(ctx, []ServerConfig{cfg})
	m.WaitReady(ctx, m.limits.StartTimeout+5*time.Second)
	if sts := m.Statuses(); len(sts) > 0 {
		return sts[0]
	}
	return Status{Name: cfg.Name, Status: StatusFailed, Error: "not started", Transport: cfg.transport(), Scope: cfg.Scope}
}
