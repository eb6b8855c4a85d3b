package lsp

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/charmbracelet/x/powernap/pkg/lsp/protocol"
)

// Manager owns a session's language servers. Nothing starts until a file of
// a server's language is touched, so a session that never does pays nothing.
type Manager struct {
	root    string
	configs []ServerConfig
	report  func(string) // crash and restart notices; never nil

	mu      sync.Mutex
	servers map[string]*server
	closed  bool // Close ran: no server starts again
}

type server struct {
	cfg      ServerConfig
	client   *client
	restarts int
	lastErr  error
}

// NewManager keeps the configurations; report receives notices of crashes
// and restarts (nil drops them).
func NewManager(root string, configs []ServerConfig, report func(string)) *Manager {
	if report == nil {
		report = func(string) {}
	}
	m := &Manager{root: root, configs: configs, report: report, servers: map[string]*server{}}
	for _, c := range configs {
		m.servers[c.Name] = &server{cfg: c}
	}
	return m
}

// Configured says whether any server is configured (the LSP tool is offered
// only then).
func (m *Manager) Configured() bool { return m != nil && len(m.configs) > 0 }

// serverFor finds the server of a file by its extension.
func (m *Manager) serverFor(path string) (*server, string) {
	ext := filepath.Ext(path)
	for _, c := range m.configs {
		if lang, ok := c.ExtensionToLanguage[ext]; ok {
			return m.servers[c.Name], lang
		}
	}
	return nil, ""
}

// Owns says whether a configured server handles the file.
func (m *Manager) Owns(path string) bool {
	if m == nil {
		return false
	}
	s, _ := m.serverFor(path)
	return s != nil
}

// clientFor starts the file's server if needed, restarting a crashed one
// within its limits.
func (m *Manager) clientFor(ctx context.Context, path string) (*client, string, error) {
	s, lang := m.serverFor(path)
	if s == nil {
		return nil, "", fmt.Errorf("no language server is configured for %s files", filepath.Ext(path))
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return nil, "", errors.New("the session's language servers are stopped")
	}
	if s.client != nil && s.client.alive() {
		return s.client, lang, nil
	}
	if s.client != nil {
		// It was running and is gone: a crash.
		note := fmt.Sprintf("language server %s exited%s", s.cfg.Name, trimNote(s.client.stderrNote()))
		s.client.close()
		s.client = nil
		if s.restarts >= s.cfg.restartLimit() {
			s.lastErr = errors.New(note + "; not restarted (restart limit reached)")
			m.report(s.lastErr.Error())
			return nil, "", s.lastErr
		}
		s.restarts++
		m.report(fmt.Sprintf("%s; restarting (%d of %d)", note, s.restarts, s.cfg.restartLimit()))
	} else if s.lastErr != nil && s.restarts >= s.cfg.restartLimit() {
		return nil, "", s.lastErr
	}
	c, err := startClient(ctx, s.cfg, m.root)
	if err != nil {
		s.lastErr = err
		s.restarts++
		return nil, "", err
	}
	s.client, s.lastErr = c, nil
	return c, lang, nil
}

func trimNote(s string) string {
	s = strings.TrimSpace(s)
	if s == "" {
		return ""
	}
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		s = s[i+1:]
	}
	return ": " + s
}

// Status is one server's state for /lsp and doctor.
type Status struct {
	Name, Command, Source, State string
	Restarts                     int
	Extensions                   []string
}

// Statuses lists the servers and their state.
func (m *Manager) Statuses() []Status {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []Status
	for _, c := range m.configs {
		s := m.servers[c.Name]
		st := Status{Name: c.Name, Command: c.Command, Source: c.Source, Restarts: s.restarts, State: "not started"}
		for ext := range c.ExtensionToLanguage {
			st.Extensions = append(st.Extensions, ext)
		}
		sort.Strings(st.Extensions)
		switch {
		case s.client != nil && s.client.alive():
			st.State = "running"
		case s.client != nil:
			st.State = "crashed"
		case s.lastErr != nil:
			st.State = "failed: " + s.lastErr.Error()
		}
		out = append(out, st)
	}
	return out
}

// Check starts each server and stops it again (tack doctor).
func Check(ctx context.Context, root string, configs []ServerConfig) map[string]error {
	out := map[string]error{}
	for _, c := range configs {
		cl, err := startClient(ctx, c, root)
		if err == nil {
			cl.close()
		}
		out[c.Name] = err
	}
	return out
}

// Close stops every running server.
func (m *Manager) Close() {
	if m == nil {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.closed = true
	for _, s := range m.servers {
		if s.client != nil {
			s.client.close()
			s.client = nil
		}
	}
}

// FileRead starts the file's server, if one is configured and has not
// started yet, and opens the file in it, in the background: the model reads
// a file of the server's language before it asks about it or edits it, and
// the server's start (seconds for gopls) then overlaps the model's next
// turn instead of delaying the LSP call or the edit's diagnostics. A server
// that fails to start is reported. A running, crashed or failed server is
// left as it is: the next LSP call or edit restarts it within its limits.
func (m *Manager) FileRead(ctx context.Context, path string) {
	if m == nil {
		return
	}
	s, _ := m.serverFor(path)
	if s == nil {
		return
	}
	m.mu.Lock()
	fresh := !m.closed && s.client == nil && s.lastErr == nil && s.restarts == 0
	m.mu.Unlock()
	if !fresh {
		return
	}
	ctx = context.WithoutCancel(ctx) // the start outlives the Read that asked for it
	go func() {
		c, lang, err := m.clientFor(ctx, path)
		if err != nil {
			m.report("language server: " + err.Error())
			return
		}
		_, _, _ = c.sync(ctx, path, lang)
	}()
}

// FileChanged tells the file's server, if one runs or should, about the new
// content and returns the errors and warnings it reports within wait that
// were not there before. A server failure is returned, for the caller to
// report; it is never a reason to fail the edit.
func (m *Manager) FileChanged(ctx context.Context, path string, wait time.Duration) (string, error) {
	if !m.Owns(path) {
		return "", nil
	}
	c, lang, err := m.clientFor(ctx, path)
	if err != nil {
		return "", err
	}
	uri := protocol.URIFromPath(path)
	c.mu.Lock()
	before := append([]protocol.Diagnostic(nil), c.diags[uri]...)
	c.mu.Unlock()
	gen, version, err := c.sync(ctx, path, lang)
	if err != nil {
		return "", err
	}
	wctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	after := c.waitDiagnostics(wctx, uri, gen, version)
	return m.formatDiagnostics(path, newDiagnostics(before, after)), nil
}

// Diagnostics returns the last diagnostics a server published for path.
func (m *Manager) Diagnostics(path string) []protocol.Diagnostic {
	s, _ := m.serverFor(path)
	if s == nil {
		return nil
	}
	m.mu.Lock()
	c := s.client
	m.mu.Unlock()
	if c == nil {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]protocol.Diagnostic(nil), c.diags[protocol.URIFromPath(path)]...)
}

// WatchedFilesChanged tells running servers that files changed on disk
// outside tack's edit tools (Bash); open ones are re-sent in full.
func (m *Manager) WatchedFilesChanged(ctx context.Context, paths []string) {
	if m == nil {
		return
	}
	for _, c := range m.running() {
		var changes []protocol.FileEvent
		for _, p := range paths {
			if _, ok := c.cfg.ExtensionToLanguage[filepath.Ext(p)]; !ok {
				continue
			}
			uri := protocol.URIFromPath(p)
			changes = append(changes, protocol.FileEvent{URI: uri, Type: protocol.Changed})
			c.mu.Lock()
			_, open := c.opened[uri]
			c.mu.Unlock()
			if open {
				_, _, _ = c.sync(ctx, p, c.cfg.ExtensionToLanguage[filepath.Ext(p)])
			}
		}
		if len(changes) > 0 {
			_ = c.conn.Notify(ctx, "workspace/didChangeWatchedFiles", protocol.DidChangeWatchedFilesParams{Changes: changes})
		}
	}
}

func newDiagnostics(before, after []protocol.Diagnostic) []protocol.Diagnostic {
	seen := map[string]int{}
	for _, d := range before {
		seen[d.Message+"\x00"+fmt.Sprint(d.Severity)]++
	}
	var out []protocol.Diagnostic
	for _, d := range after {
		if d.Severity != protocol.SeverityError && d.Severity != protocol.SeverityWarning {
			continue
		}
		k := d.Message + "\x00" + fmt.Sprint(d.Severity)
		if seen[k] > 0 {
			seen[k]--
			continue
		}
		out = append(out, d)
	}
	return out
}

func (m *Manager) formatDiagnostics(path string, ds []protocol.Diagnostic) string {
	if len(ds) == 0 {
		return ""
	}
	var b strings.Builder
	for _, d := range ds {
		sev := "error"
		if d.Severity == protocol.SeverityWarning {
			sev = "warning"
		}
		fmt.Fprintf(&b, "%s:%d:%d: %s: %s", m.rel(path), d.Range.Start.Line+1, d.Range.Start.Character+1, sev, d.Message)
		if d.Source != "" {
			fmt.Fprintf(&b, " [%s]", d.Source)
		}
		b.WriteByte('\n')
	}
	return strings.TrimRight(b.String(), "\n")
}

func (m *Manager) rel(path string) string {
	if r, err := filepath.Rel(m.root, path); err == nil && !strings.HasPrefix(r, "..") {
		return r
	}
	return path
}

// Operations the LSP tool offers.
var Operations = []string{"goToDefinition", "findReferences", "hover", "documentSymbol", "workspaceSymbol",
	"goToImplementation", "prepareCallHierarchy", "incomingCalls", "outgoingCalls"}

// Run performs one operation at a 1-based line and character and returns
// compact text.
func (m *Manager) Run(ctx context.Context, op, path string, line, character int) (string, error) {
	if !filepath.IsAbs(path) {
		path = filepath.Join(m.root, path)
	}
	c, lang, err := m.clientFor(ctx, path)
	if err != nil {
		return "", err
	}
	out, err := m.run(ctx, c, lang, op, path, line, character)
	if err == nil {
		return out, nil
	}
	// A server killed just before the call fails it; once the process is
	// seen gone, the call is tried once more on a restarted server.
	select {
	case <-c.done:
	case <-time.After(2 * time.Second):
		return "", err
	}
	if c, lang, err = m.clientFor(ctx, path); err != nil {
		return "", err
	}
	return m.run(ctx, c, lang, op, path, line, character)
}

func (m *Manager) run(ctx context.Context, c *client, lang, op, path string, line, character int) (string, error) {
	if _, _, err := c.sync(ctx, path, lang); err != nil {
		return "", err
	}
	doc := protocol.TextDocumentIdentifier{URI: protocol.URIFromPath(path)}
	at := protocol.TextDocumentPositionParams{TextDocument: doc,
		Position: protocol.Position{Line: uint32(max(line-1, 0)), Character: uint32(max(character-1, 0))}}
	call := func(method string, params, result any) error {
		if err := c.conn.Call(ctx, method, params, result); err != nil {
			return fmt.Errorf("lsp %s: %s: %w", c.cfg.Name, method, err)
		}
		return nil
	}
	switch op {
	case "goToDefinition":
		var res protocol.Or_Result_textDocument_definition
		if err := call("textDocument/definition", protocol.DefinitionParams{TextDocumentPositionParams: at}, &res); err != nil {
			return "", err
		}
		return m.formatLocations(definitionLocations(res.Value)), nil
	case "goToImplementation":
		var res protocol.Or_Result_textDocument_implementation
		if err := call("textDocument/implementation", protocol.ImplementationParams{TextDocumentPositionParams: at}, &res); err != nil {
			return "", err
		}
		return m.formatLocations(definitionLocations(res.Value)), nil
	case "findReferences":
		params := protocol.ReferenceParams{TextDocumentPositionParams: at, Context: protocol.ReferenceContext{IncludeDeclaration: true}}
		var locs []protocol.Location
		if err := call("textDocument/references", params, &locs); err != nil {
			return "", err
		}
		return m.formatLocations(locs), nil
	case "hover":
		var h *hover
		if err := call("textDocument/hover", protocol.HoverParams{TextDocumentPositionParams: at}, &h); err != nil {
			return "", err
		}
		if h != nil {
			if s := hoverText(h.Contents); s != "" {
				return s, nil
			}
		}
		return "No hover information.", nil
	case "documentSymbol":
		var res protocol.Or_Result_textDocument_documentSymbol
		if err := call("textDocument/documentSymbol", protocol.DocumentSymbolParams{TextDocument: doc}, &res); err != nil {
			return "", err
		}
		var b strings.Builder
		switch syms := res.Value.(type) {
		case []protocol.DocumentSymbol:
			m.writeDocumentSymbols(&b, syms, 0)
		case []protocol.SymbolInformation:
			for _, s := range syms {
				m.writeSymbol(&b, s.Kind, s.Name, s.Location)
			}
		}
		return orNone(b.String(), "No symbols."), nil
	case "workspaceSymbol":
		// The tool has no query field: the word at the position is the query.
		var res protocol.Or_Result_workspace_symbol
		if err := call("workspace/symbol", protocol.WorkspaceSymbolParams{Query: wordAt(path, line, character)}, &res); err != nil {
			return "", err
		}
		var b strings.Builder
		switch syms := res.Value.(type) {
		case []protocol.SymbolInformation:
			for _, s := range syms {
				m.writeSymbol(&b, s.Kind, s.Name, s.Location)
			}
		case []protocol.WorkspaceSymbol:
			for _, s := range syms {
				m.writeSymbol(&b, s.Kind, s.Name, s.GetLocation())
			}
		}
		return orNone(b.String(), "No symbols."), nil
	case "prepareCallHierarchy", "incomingCalls", "outgoingCalls":
		var items []protocol.CallHierarchyItem
		if err := call("textDocument/prepareCallHierarchy", protocol.CallHierarchyPrepareParams{TextDocumentPositionParams: at}, &items); err != nil {
			return "", err
		}
		if len(items) == 0 {
			return "No call hierarchy item at this position.", nil
		}
		var b strings.Builder
		for _, it := range items {
			switch op {
			case "prepareCallHierarchy":
				m.writeItem(&b, it)
			case "incomingCalls":
				var calls []protocol.CallHierarchyIncomingCall
				if err := call("callHierarchy/incomingCalls", protocol.CallHierarchyIncomingCallsParams{Item: it}, &calls); err != nil {
					return "", err
				}
				for _, cl := range calls {
					m.writeItem(&b, cl.From)
				}
			case "outgoingCalls":
				var calls []protocol.CallHierarchyOutgoingCall
				if err := call("callHierarchy/outgoingCalls", protocol.CallHierarchyOutgoingCallsParams{Item: it}, &calls); err != nil {
					return "", err
				}
				for _, cl := range calls {
					m.writeItem(&b, cl.To)
				}
			}
		}
		return orNone(b.String(), "No calls."), nil
	}
	return "", fmt.Errorf("unknown operation %q (one of %s)", op, strings.Join(Operations, ", "))
}

// orNone is the lines written, or none when there are none.
func orNone(lines, none string) string {
	if lines == "" {
		return none
	}
	return strings.TrimRight(lines, "\n")
}

func (m *Manager) writeItem(b *strings.Builder, it protocol.CallHierarchyItem) {
	fmt.Fprintf(b, "%s %s at %s:%d:%d", kindName(it.Kind), it.Name, m.rel(uriPath(it.URI)),
		it.SelectionRange.Start.Line+1, it.SelectionRange.Start.Character+1)
	if it.Detail != "" {
		fmt.Fprintf(b, " (%s)", it.Detail)
	}
	b.WriteByte('\n')
}

// writeDocumentSymbols writes the hierarchical answer, children indented.
func (m *Manager) writeDocumentSymbols(b *strings.Builder, syms []protocol.DocumentSymbol, depth int) {
	for _, s := range syms {
		b.WriteString(strings.Repeat("  ", depth))
		fmt.Fprintf(b, "%s %s at line %d", kindName(s.Kind), s.Name, s.SelectionRange.Start.Line+1)
		if s.Detail != "" {
			fmt.Fprintf(b, " (%s)", s.Detail)
		}
		b.WriteByte('\n')
		m.writeDocumentSymbols(b, s.Children, depth+1)
	}
}

// writeSymbol writes a symbol of a flat answer, which carries its location.
func (m *Manager) writeSymbol(b *strings.Builder, kind protocol.SymbolKind, name string, loc protocol.Location) {
	fmt.Fprintf(b, "%s %s at %s:%d:%d\n", kindName(kind), name, m.rel(uriPath(loc.URI)),
		loc.Range.Start.Line+1, loc.Range.Start.Character+1)
}

// definitionLocations flattens a definition or implementation answer:
// Location, []Location or []LocationLink.
func definitionLocations(res any) []protocol.Location {
	switch v := res.(type) {
	case protocol.Definition:
		switch d := v.Value.(type) {
		case protocol.Location:
			return []protocol.Location{d}
		case []protocol.Location:
			return d
		}
	case []protocol.DefinitionLink:
		locs := make([]protocol.Location, len(v))
		for i, l := range v {
			locs[i] = protocol.Location{URI: l.TargetURI, Range: l.TargetSelectionRange}
		}
		return locs
	}
	return nil
}

func (m *Manager) formatLocations(locs []protocol.Location) string {
	var b strings.Builder
	for _, l := range locs {
		fmt.Fprintf(&b, "%s:%d:%d\n", m.rel(uriPath(l.URI)), l.Range.Start.Line+1, l.Range.Start.Character+1)
	}
	return orNone(b.String(), "No locations found.")
}

// running is the clients of the servers that are up.
func (m *Manager) running() []*client {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []*client
	for _, s := range m.servers {
		if s.client != nil && s.client.alive() {
			out = append(out, s.client)
		}
	}
	return out
}

// ResyncOpen re-sends the open files of running servers after a command
// that may have changed them (Bash): each file whose content on disk
// differs from what the server has goes out as didChange and
// didChangeWatchedFiles.
func (m *Manager) ResyncOpen(ctx context.Context) {
	if m == nil {
		return
	}
	for _, c := range m.running() {
		if changed := c.openChanged(); len(changed) > 0 {
			m.WatchedFilesChanged(ctx, changed)
		}
	}
}
