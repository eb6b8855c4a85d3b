package acp_test

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/tackcode/tack/internal/llm/llmtest"
	"github.com/tackcode/tack/internal/testbin"
)

var tackBin string

func TestMain(m *testing.M) { testbin.Main(m, &tackBin, "-race") }

// peer is a running `tack acp` and the test's ACP client of it.
type peer struct {
	t      *testing.T
	dir    string // the project, the session's cwd
	home   string
	conn   *sdk.ClientSideConnection
	client *client
	cmd    *exec.Cmd
	stderr *bytes.Buffer
	stop   func() // ends the connection and waits for tack to exit
}

// env is a test's environment: the fake API and a private home, shared
// by the peers it starts (session/load starts a second one).
type env struct {
	srv       *llmtest.Server
	dir, home string
	noKey     bool // start tack without credentials
}

func newEnv(t *testing.T, turns ...llmtest.Turn) *env {
	t.Helper()
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return &env{srv: llmtest.New(t, turns...), dir: dir, home: t.TempDir()}
}

// write makes a file of the project.
func (e *env) write(t *testing.T, name, content string) string {
	t.Helper()
	path := filepath.Join(e.dir, name)
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// start launches tack acp with args, and initializes it with caps.
func (e *env) start(t *testing.T, caps sdk.ClientCapabilities, args ...string) (*peer, sdk.InitializeResponse) {
	t.Helper()
	cmd := exec.Command(tackBin, append([]string{"acp"}, args...)...)
	cmd.Dir = e.dir
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "ANTHROPIC_") && !strings.HasPrefix(kv, "CLAUDE_") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Env = append(cmd.Env, "ANTHROPIC_BASE_URL="+e.srv.URL(), "HOME="+e.home, "CLAUDE_CONFIG_DIR="+filepath.Join(e.home, ".claude"))
	if !e.noKey {
		cmd.Env = append(cmd.Env, "ANTHROPIC_API_KEY=test")
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	c := newClient(e.dir)
	p := &peer{t: t, dir: e.dir, home: e.home, client: c, cmd: cmd, stderr: &stderr}
	p.conn = sdk.NewClientSideConnection(c, in, out)
	p.conn.SetLogger(slog.New(slog.DiscardHandler))
	p.stop = sync.OnceFunc(func() {
		in.Close()
		if err := cmd.Wait(); err != nil {
			t.Errorf("tack acp: %v\n%s", err, stderr.String())
		}
	})
	t.Cleanup(p.stop)
	init, err := p.conn.Initialize(p.ctx(), sdk.InitializeRequest{ProtocolVersion: sdk.ProtocolVersionNumber, ClientCapabilities: caps})
	if err != nil {
		t.Fatalf("initialize: %v\n%s", err, stderr.String())
	}
	return p, init
}

// ctx bounds one request by the test's deadline.
func (p *peer) ctx() context.Context {
	ctx := context.Background()
	if d, ok := p.t.Deadline(); ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithDeadline(ctx, d.Add(-5*time.Second))
		p.t.Cleanup(cancel)
	}
	return ctx
}

func (p *peer) newSession() sdk.NewSessionResponse {
	p.t.Helper()
	resp, err := p.conn.NewSession(p.ctx(), sdk.NewSessionRequest{Cwd: p.dir, McpServers: []sdk.McpServer{}})
	if err != nil {
		p.t.Fatalf("session/new: %v\n%s", err, p.stderr.String())
	}
	return resp
}

func (p *peer) prompt(id sdk.SessionId, text string) sdk.PromptResponse {
	p.t.Helper()
	resp, err := p.conn.Prompt(p.ctx(), sdk.PromptRequest{SessionId: id, Prompt: []sdk.ContentBlock{sdk.TextBlock(text)}})
	if err != nil {
		p.t.Fatalf("session/prompt: %v\n%s", err, p.stderr.String())
	}
	return resp
}

func (p *peer) setMode(id sdk.SessionId, mode string) {
	p.t.Helper()
	if _, err := p.conn.SetSessionMode(p.ctx(), sdk.SetSessionModeRequest{SessionId: id, ModeId: sdk.SessionModeId(mode)}); err != nil {
		p.t.Fatalf("session/set_mode %s: %v", mode, err)
	}
}

// client is the test's ACP client: it records every update, answers
// permission requests with answer, and keeps buffers and terminals.
type client struct {
	dir string

	mu       sync.Mutex
	updates  []sdk.SessionUpdate
	asked    []sdk.RequestPermissionRequest
	answer   func(sdk.RequestPermissionRequest) sdk.RequestPermissionResponse
	buffers  map[string]string // what the editor holds, by path
	reads    []string
	writes   map[string]string
	terms    map[string]*terminal
	created  []sdk.CreateTerminalRequest
	released []string
}

func newClient(dir string) *client {
	return &client{dir: dir, buffers: map[string]string{}, writes: map[string]string{}, terms: map[string]*terminal{}}
}

// choose makes the client pick the option of this kind.
func (c *client) choose(kind sdk.PermissionOptionKind) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.answer = func(r sdk.RequestPermissionRequest) sdk.RequestPermissionResponse {
		for _, o := range r.Options {
			if o.Kind == kind {
				return sdk.RequestPermissionResponse{Outcome: sdk.RequestPermissionOutcome{Selected: &sdk.RequestPermissionOutcomeSelected{OptionId: o.OptionId}}}
			}
		}
		return sdk.RequestPermissionResponse{Outcome: sdk.RequestPermissionOutcome{Cancelled: &sdk.RequestPermissionOutcomeCancelled{}}}
	}
}

func (c *client) RequestPermission(ctx context.Context, r sdk.RequestPermissionRequest) (sdk.RequestPermissionResponse, error) {
	c.mu.Lock()
	c.asked = append(c.asked, r)
	answer := c.answer
	c.mu.Unlock()
	if answer == nil {
		return sdk.RequestPermissionResponse{}, fmt.Errorf("unexpected permission request for %v", r.ToolCall.Title)
	}
	return answer(r), nil
}

func (c *client) SessionUpdate(ctx context.Context, n sdk.SessionNotification) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.updates = append(c.updates, n.Update)
	return nil
}

func (c *client) ReadTextFile(ctx context.Context, r sdk.ReadTextFileRequest) (sdk.ReadTextFileResponse, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.reads = append(c.reads, r.Path)
	if b, ok := c.buffers[r.Path]; ok {
		return sdk.ReadTextFileResponse{Content: b}, nil
	}
	data, err := os.ReadFile(r.Path)
	return sdk.ReadTextFileResponse{Content: string(data)}, err
}

func (c *client) WriteTextFile(ctx context.Context, r sdk.WriteTextFileRequest) (sdk.WriteTextFileResponse, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.writes[r.Path] = r.Content
	c.buffers[r.Path] = r.Content
	return sdk.WriteTextFileResponse{}, nil
}

// terminal is a command the client runs for the agent.
type terminal struct {
	cmd  *exec.Cmd
	out  bytes.Buffer // written by the command, read after it ended
	done chan struct{}
}

func (c *client) CreateTerminal(ctx context.Context, r sdk.CreateTerminalRequest) (sdk.CreateTerminalResponse, error) {
	cmd := exec.Command(r.Command, r.Args...)
	if r.Cwd != nil {
		cmd.Dir = *r.Cwd
	}
	for _, e := range r.Env {
		cmd.Env = append(cmd.Env, e.Name+"="+e.Value)
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	term := &terminal{cmd: cmd, done: make(chan struct{})}
	cmd.Stdout, cmd.Stderr = &term.out, &term.out
	if err := cmd.Start(); err != nil {
		return sdk.CreateTerminalResponse{}, err
	}
	go func() { _ = cmd.Wait(); close(term.done) }()
	c.mu.Lock()
	defer c.mu.Unlock()
	id := fmt.Sprintf("term-%d", len(c.created)+1)
	c.created = append(c.created, r)
	c.terms[id] = term
	return sdk.CreateTerminalResponse{TerminalId: id}, nil
}

func (c *client) term(id string) (*terminal, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if t := c.terms[id]; t != nil {
		return t, nil
	}
	return nil, fmt.Errorf("no terminal %s", id)
}

func (c *client) KillTerminal(ctx context.Context, r sdk.KillTerminalRequest) (sdk.KillTerminalResponse, error) {
	t, err := c.term(r.TerminalId)
	if err != nil {
		return sdk.KillTerminalResponse{}, err
	}
	_ = syscall.Kill(-t.cmd.Process.Pid, syscall.SIGKILL)
	return sdk.KillTerminalResponse{}, nil
}

func (c *client) TerminalOutput(ctx context.Context, r sdk.TerminalOutputRequest) (sdk.TerminalOutputResponse, error) {
	t, err := c.term(r.TerminalId)
	if err != nil {
		return sdk.TerminalOutputResponse{}, err
	}
	<-t.done // the agent asks once the command has ended
	code := t.cmd.ProcessState.ExitCode()
	return sdk.TerminalOutputResponse{Output: t.out.String(), ExitStatus: &sdk.TerminalExitStatus{ExitCode: &code}}, nil
}

func (c *client) WaitForTerminalExit(ctx context.Context, r sdk.WaitForTerminalExitRequest) (sdk.WaitForTerminalExitResponse, error) {
	t, err := c.term(r.TerminalId)
	if err != nil {
		return sdk.WaitForTerminalExitResponse{}, err
	}
	select {
	case <-t.done:
	case <-ctx.Done():
		return sdk.WaitForTerminalExitResponse{}, ctx.Err()
	}
	if ws, ok := t.cmd.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return sdk.WaitForTerminalExitResponse{Signal: sdk.Ptr(ws.Signal().String())}, nil
	}
	code := t.cmd.ProcessState.ExitCode()
	return sdk.WaitForTerminalExitResponse{ExitCode: &code}, nil
}

func (c *client) ReleaseTerminal(ctx context.Context, r sdk.ReleaseTerminalRequest) (sdk.ReleaseTerminalResponse, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.released = append(c.released, r.TerminalId)
	return sdk.ReleaseTerminalResponse{}, nil
}

// seen returns the updates so far.
func (c *client) seen() []sdk.SessionUpdate {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]sdk.SessionUpdate(nil), c.updates...)
}

// agentText is the text of the agent_message_chunk updates.
func agentText(us []sdk.SessionUpdate) string {
	var b strings.Builder
	for _, u := range us {
		if u.AgentMessageChunk != nil && u.AgentMessageChunk.Content.Text != nil {
			b.WriteString(u.AgentMessageChunk.Content.Text.Text)
		}
	}
	return b.String()
}

func thoughtText(us []sdk.SessionUpdate) string {
	var b strings.Builder
	for _, u := range us {
		if u.AgentThoughtChunk != nil && u.AgentThoughtChunk.Content.Text != nil {
			b.WriteString(u.AgentThoughtChunk.Content.Text.Text)
		}
	}
	return b.String()
}

// toolCalls are the tool_call updates; toolUpdates the tool_call_update
// ones.
func toolCalls(us []sdk.SessionUpdate) []*sdk.SessionUpdateToolCall {
	var out []*sdk.SessionUpdateToolCall
	for _, u := range us {
		if u.ToolCall != nil {
			out = append(out, u.ToolCall)
		}
	}
	return out
}

func toolUpdates(us []sdk.SessionUpdate, id sdk.ToolCallId) []*sdk.SessionToolCallUpdate {
	var out []*sdk.SessionToolCallUpdate
	for _, u := range us {
		if u.ToolCallUpdate != nil && u.ToolCallUpdate.ToolCallId == id {
			out = append(out, u.ToolCallUpdate)
		}
	}
	return out
}

// firstDiff is the first diff reported for a call, in its tool_call or a
// tool_call_update.
func firstDiff(us []sdk.SessionUpdate, id sdk.ToolCallId) *sdk.ToolCallContentDiff {
	for _, u := range us {
		var content []sdk.ToolCallContent
		switch {
		case u.ToolCall != nil && u.ToolCall.ToolCallId == id:
			content = u.ToolCall.Content
		case u.ToolCallUpdate != nil && u.ToolCallUpdate.ToolCallId == id:
			content = u.ToolCallUpdate.Content
		}
		for _, c := range content {
			if c.Diff != nil {
				return c.Diff
			}
		}
	}
	return nil
}

// lastRequestText is everything the model was sent in the last request.
func lastRequestText(t *testing.T, srv *llmtest.Server) string {
	t.Helper()
	reqs := srv.Requests()
	if len(reqs) == 0 {
		t.Fatal("no request")
	}
	return string(reqs[len(reqs)-1].Body)
}
