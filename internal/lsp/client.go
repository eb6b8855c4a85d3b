package lsp

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"time"

	"github.com/charmbracelet/x/powernap/pkg/lsp/protocol"
	"github.com/sourcegraph/jsonrpc2"
)

// client is one running server process and its connection.
type client struct {
	cfg  ServerConfig
	cmd  *exec.Cmd
	conn *jsonrpc2.Conn
	done chan struct{} // closed when the process has exited

	mu      sync.Mutex
	opened  map[protocol.DocumentURI]int32  // version
	sent    map[protocol.DocumentURI]string // text the server has
	diags   map[protocol.DocumentURI][]protocol.Diagnostic
	diagGen map[protocol.DocumentURI]int // bumped on every publishDiagnostics for a uri
	// diagVer is the document version the latest diagnostics of a uri are
	// for, 0 when the server does not say (version is optional, and the
	// library's type reads an absent one as 0: tack's versions start at 1).
	diagVer map[protocol.DocumentURI]int32
	notify  chan struct{} // closed and replaced on each publishDiagnostics
	stderr  *tailBuffer
}

type stdio struct {
	io.ReadCloser
	w io.WriteCloser
}

func (s stdio) Write(p []byte) (int, error) { return s.w.Write(p) }
func (s stdio) Close() error {
	werr := s.w.Close()
	if err := s.ReadCloser.Close(); err != nil {
		return err
	}
	return werr
}

// tailBuffer keeps the end of a server's stderr, for the crash report.
type tailBuffer struct {
	mu  sync.Mutex
	buf []byte
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, p...)
	if len(t.buf) > 4096 {
		t.buf = t.buf[len(t.buf)-4096:]
	}
	return len(p), nil
}

func (t *tailBuffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(t.buf)
}

// startClient runs the server and completes the initialize handshake within
// the configured start-up timeout.
func startClient(ctx context.Context, cfg ServerConfig, root string) (*client, error) {
	folder := root
	if cfg.WorkspaceFolder != "" {
		folder = cfg.WorkspaceFolder
		if !filepath.IsAbs(folder) {
			folder = filepath.Join(root, folder)
		}
	}
	// The process outlives the call's context: it is stopped by close.
	cmd := exec.Command(cfg.Command, cfg.Args...)
	cmd.Dir = folder
	cmd.Env = os.Environ()
	for k, v := range cfg.Env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	c := &client{cfg: cfg, cmd: cmd, done: make(chan struct{}), opened: map[protocol.DocumentURI]int32{}, sent: map[protocol.DocumentURI]string{},
		diags: map[protocol.DocumentURI][]protocol.Diagnostic{}, diagGen: map[protocol.DocumentURI]int{}, diagVer: map[protocol.DocumentURI]int32{},
		notify: make(chan struct{}), stderr: &tailBuffer{}}
	cmd.Stderr = c.stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, fmt.Errorf("lsp %s: stdin: %w", cfg.Name, err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, fmt.Errorf("lsp %s: stdout: %w", cfg.Name, err)
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("lsp %s: start %s: %w", cfg.Name, cfg.Command, err)
	}
	go func() { _ = cmd.Wait(); close(c.done) }()
	stream := jsonrpc2.NewBufferedStream(stdio{out, in}, jsonrpc2.VSCodeObjectCodec{})
	c.conn = jsonrpc2.NewConn(context.Background(), stream, jsonrpc2.AsyncHandler(jsonrpc2.HandlerWithError(c.handle)))

	timeout := 30 * time.Second
	if cfg.StartupTimeout > 0 {
		timeout = time.Duration(cfg.StartupTimeout) * time.Millisecond
	}
	ictx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var res protocol.InitializeResult
	if err := c.conn.Call(ictx, "initialize", initializeParams(cfg, folder), &res); err != nil {
		c.close()
		return nil, fmt.Errorf("lsp %s: initialize: %w%s", cfg.Name, err, c.stderrNote())
	}
	if err := c.conn.Notify(ictx, "initialized", protocol.InitializedParams{}); err != nil {
		c.close()
		return nil, fmt.Errorf("lsp %s: initialized: %w", cfg.Name, err)
	}
	if len(cfg.Settings) > 0 {
		_ = c.conn.Notify(ictx, "workspace/didChangeConfiguration", protocol.DidChangeConfigurationParams{Settings: cfg.Settings})
	}
	return c, nil
}

func initializeParams(cfg ServerConfig, folder string) protocol.InitializeParams {
	p := protocol.InitializeParams{
		XInitializeParams: protocol.XInitializeParams{
			ProcessID:    int32(os.Getpid()),
			RootURI:      protocol.URIFromPath(folder),
			Capabilities: clientCapabilities(),
		},
		WorkspaceFoldersInitializeParams: protocol.WorkspaceFoldersInitializeParams{WorkspaceFolders: workspaceFolders(folder)},
	}
	if len(cfg.InitializationOptions) > 0 {
		p.InitializationOptions = cfg.InitializationOptions
	}
	return p
}

func workspaceFolders(folder string) []protocol.WorkspaceFolder {
	return []protocol.WorkspaceFolder{{URI: string(protocol.URIFromPath(folder)), Name: filepath.Base(folder)}}
}

func (c *client) stderrNote() string {
	if s := c.stderr.String(); s != "" {
		return "\n" + s
	}
	return ""
}

func (c *client) alive() bool {
	select {
	case <-c.done:
		return false
	case <-c.conn.DisconnectNotify():
		return false
	default:
		return true
	}
}

// handle answers the server's requests and records its diagnostics.
func (c *client) handle(ctx context.Context, conn *jsonrpc2.Conn, req *jsonrpc2.Request) (any, error) {
	switch req.Method {
	case "textDocument/publishDiagnostics":
		var p protocol.PublishDiagnosticsParams
		if req.Params != nil && json.Unmarshal(*req.Params, &p) == nil {
			c.mu.Lock()
			c.diags[p.URI] = p.Diagnostics
			c.diagGen[p.URI]++
			c.diagVer[p.URI] = p.Version
			close(c.notify)
			c.notify = make(chan struct{})
			c.mu.Unlock()
		}
		return nil, nil
	case "workspace/configuration":
		var p protocol.ConfigurationParams
		if req.Params != nil {
			_ = json.Unmarshal(*req.Params, &p)
		}
		out := make([]protocol.LSPAny, len(p.Items))
		for i, it := range p.Items {
			out[i] = c.section(it.Section)
		}
		return out, nil
	case "workspace/workspaceFolders":
		return workspaceFolders(c.cmd.Dir), nil
	}
	// registerCapability, workDoneProgress/create, showMessageRequest: a
	// null answer keeps the server going.
	return nil, nil
}

// section looks a dotted configuration section up in the configured settings.
func (c *client) section(name string) protocol.LSPAny {
	var v any
	if len(c.cfg.Settings) == 0 || json.Unmarshal(c.cfg.Settings, &v) != nil {
		return nil
	}
	if name == "" {
		return v
	}
	cur := v
	for _, part := range splitDots(name) {
		m, ok := cur.(map[string]any)
		if !ok {
			return nil
		}
		cur = m[part]
	}
	return cur
}

func splitDots(s string) []string {
	var out []string
	start := 0
	for i := 0; i < len(s); i++ {
		if s[i] == '.' {
			out = append(out, s[start:i])
			start = i + 1
		}
	}
	return append(out, s[start:])
}

// sync opens the file or sends its new content, so the server sees what is
// on disk now. It returns the diagnostics generation before the change.
func (c *client) sync(ctx context.Context, path, languageID string) (gen int, version int32, err error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return 0, 0, fmt.Errorf("lsp %s: read %s: %w", c.cfg.Name, path, err)
	}
	uri := protocol.URIFromPath(path)
	c.mu.Lock()
	v, open := c.opened[uri]
	gen = c.diagGen[uri]
	c.opened[uri] = v + 1
	c.sent[uri] = string(data)
	c.mu.Unlock()
	if !open {
		err = c.conn.Notify(ctx, "textDocument/didOpen", protocol.DidOpenTextDocumentParams{TextDocument: protocol.TextDocumentItem{
			URI: uri, LanguageID: protocol.LanguageKind(languageID), Version: 1, Text: string(data)}})
	} else {
		err = c.conn.Notify(ctx, "textDocument/didChange", protocol.DidChangeTextDocumentParams{
			TextDocument: protocol.VersionedTextDocumentIdentifier{Version: v + 1, TextDocumentIdentifier: protocol.TextDocumentIdentifier{URI: uri}},
			ContentChanges: []protocol.TextDocumentContentChangeEvent{
				{Value: protocol.TextDocumentContentChangeWholeDocument{Text: string(data)}}}})
	}
	if err != nil {
		return gen, v + 1, fmt.Errorf("lsp %s: sync %s: %w", c.cfg.Name, path, err)
	}
	return gen, v + 1, nil
}

// waitDiagnostics waits until the server publishes diagnostics for uri
// newer than gen and, when it names the document's version, for version
// or later (a server may still publish for the text before the change:
// pyright does), or ctx ends; it returns the latest it has.
func (c *client) waitDiagnostics(ctx context.Context, uri protocol.DocumentURI, gen int, version int32) []protocol.Diagnostic {
	for {
		c.mu.Lock()
		d, g, ver, ch := c.diags[uri], c.diagGen[uri], c.diagVer[uri], c.notify
		c.mu.Unlock()
		if g > gen && (ver == 0 || ver >= version) {
			return d
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return d
		case <-c.done:
			return d
		}
	}
}

// openChanged lists the open files whose content on disk is not what the
// server was sent.
func (c *client) openChanged() []string {
	c.mu.Lock()
	sent := make(map[protocol.DocumentURI]string, len(c.sent))
	for k, v := range c.sent {
		sent[k] = v
	}
	c.mu.Unlock()
	var out []string
	for uri, text := range sent {
		data, err := os.ReadFile(uriPath(uri))
		if err == nil && string(data) != text {
			out = append(out, uriPath(uri))
		}
	}
	return out
}

func (c *client) close() {
	if c.alive() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		_ = c.conn.Call(ctx, "shutdown", nil, nil)
		_ = c.conn.Notify(ctx, "exit", nil)
		cancel()
		select {
		case <-c.done:
		case <-time.After(2 * time.Second):
		}
	}
	_ = c.conn.Close()
	if c.cmd.Process != nil {
		_ = c.cmd.Process.Kill()
	}
	<-c.done
}
