package sdkproto

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"

	"github.com/google/uuid"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tackcode/tack/agent"
)

// Exit codes of Serve.
const (
	// ExitOK: stdin ended and every queued message ran; the last result
	// was not an error.
	ExitOK = 0
	// ExitError: the session could not start, or the last result was an
	// error other than an interruption.
	ExitError = 1
	// ExitSignal: ctx ended (SIGTERM, SIGINT) before stdin did.
	ExitSignal = 143
)

// Config is what Serve runs with.
type Config struct {
	In  io.Reader
	Out io.Writer
	// Err receives warnings and errors, one line each.
	Err io.Writer
	// Options are the session's options from the command line; initialize
	// adds to them (system prompt, agents, hooks…).
	Options agent.Options
	// SessionStates reports session_state_changed (running, requires_action,
	// idle): the host said it reads them (CLAUDE_CODE_SDK_READS_SESSION_STATE
	// or CLAUDE_CODE_EMIT_SESSION_STATE_EVENTS).
	SessionStates bool
	// HostOnlyStates marks those messages sdk_host_only, for the Agent SDK
	// to keep to itself; without it they are for whoever reads the stream
	// (CLAUDE_CODE_EMIT_SESSION_STATE_EVENTS).
	HostOnlyStates bool
	// ManagedSettingsInInitialize: the host sends its managed settings in
	// initialize (--managed-settings-in-initialize), and no session starts
	// without them.
	ManagedSettingsInInitialize bool
	// SessionMirror sends each transcript write as a transcript_mirror
	// frame (--session-mirror: the SDK's sessionStore).
	SessionMirror bool
}

// PromptToolStdio is the --permission-prompt-tool value that sends
// permission prompts to the SDK as can_use_tool control requests.
const PromptToolStdio = "stdio"

// server is one run of Serve.
type server struct {
	cfg  Config
	opts agent.Options
	conn *conn

	sdk         *sdkServers // the SDK's in-process MCP servers
	client      *agent.Client
	initialized bool
	startErr    error
	written     chan struct{} // closed when the client's messages are all written

	mu         sync.Mutex
	lastResult *agent.ResultMessage
	// slow are the control requests answered in the background (slowControl).
	slow sync.WaitGroup
}

// Serve runs a session over the protocol until stdin ends (after the
// queued messages have run) or ctx ends, and returns the exit code.
func Serve(ctx context.Context, cfg Config) int {
	s := &server{cfg: cfg, opts: cfg.Options}
	s.conn = newConn(cfg.Out, s.warn)
	s.sdk = newSDKServers(s.conn)
	go s.conn.read(cfg.In)

	for {
		f, ok := s.conn.in.pop(ctx)
		if !ok {
			break
		}
		switch f.Type {
		case typeControlRequest:
			s.control(ctx, f)
		case typeUser:
			s.user(ctx, f)
		case typeControlCancel:
			// Every request from the SDK is answered at once: there is
			// nothing in flight to cancel.
		default:
			s.warn("ignoring stdin line %d: unknown message type %q", f.line, f.Type)
		}
		if s.startErr != nil {
			break
		}
	}
	return s.finish(ctx)
}

// finish waits for the queued work, closes the session and picks the exit
// code.
func (s *server) finish(ctx context.Context) int {
	s.slow.Wait()
	if s.client != nil {
		s.client.CloseSend()
		<-s.written
		_ = s.client.Close()
	}
	switch {
	case s.startErr != nil:
		return ExitError
	case ctx.Err() != nil:
		return ExitSignal
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if r := s.lastResult; r != nil && r.IsError && !strings.HasPrefix(r.TerminalReason, "aborted") {
		return ExitError
	}
	return ExitOK
}

func (s *server) warn(format string, args ...any) {
	fmt.Fprintf(s.cfg.Err, "tack: "+format+"\n", args...)
}

// start creates the session with the options gathered so far.
func (s *server) start(ctx context.Context) error {
	if s.client != nil || s.startErr != nil {
		return s.startErr
	}
	opts := s.opts
	if s.cfg.ManagedSettingsInInitialize && opts.ManagedSettings == "" {
		// A session without the policy its host meant to impose must not run.
		s.startErr = errors.New("--managed-settings-in-initialize requires initialize.managedSettings to be a JSON object, in an initialize request that comes first")
		s.warn("%v", s.startErr)
		return s.startErr
	}
	if opts.PermissionPromptTool == PromptToolStdio {
		opts.PermissionPromptTool = ""
		opts.CanUseTool = s.canUseTool
	}
	opts.SessionStateMessages = s.cfg.SessionStates
	if opts.Notify == nil {
		opts.Notify = func(msg string) { s.warn("%s", msg) }
	}
	if s.cfg.SessionMirror {
		opts.OnTranscriptWrite = s.mirror
	}
	c, err := agent.NewClient(ctx, opts)
	if err != nil {
		s.startErr = err
		s.warn("%v", err)
		s.rejected(err)
		return err
	}
	s.client = c
	s.written = make(chan struct{})
	go s.forward()
	return nil
}

// mirror sends a transcript write to the SDK's sessionStore.
func (s *server) mirror(path string, lines []json.RawMessage) {
	if err := s.conn.write(NewMirrorFrame(path, lines)); err != nil {
		s.warn("transcript mirror: %v", err)
	}
}

// rejected answers a resume refused by --resume-drops-turn with the
// error_during_execution result the SDK's hosts look for, as the prompt
// waiting for the session would have got.
func (s *server) rejected(err error) {
	var rej *agent.ResumeRejectedError
	if !errors.As(err, &rej) {
		return
	}
	if werr := s.conn.write(RejectedResult(s.opts.Resume, rej)); werr != nil {
		s.warn("%v", werr)
	}
}

// RejectedResult is the result of a resume --resume-drops-turn refused, as
// Claude Code gives it: error_during_execution, the refusal (whose text
// starts with the prefix hosts match) its one error.
func RejectedResult(sessionID string, err *agent.ResumeRejectedError) *agent.ResultMessage {
	return &agent.ResultMessage{Type: "result", Subtype: agent.ResultErrorDuringExecution, IsError: true, Errors: []string{err.Error()},
		SessionID: sessionID, UUID: uuid.NewString(), ModelUsage: map[string]agent.ModelUsage{},
		PermissionDenials: []agent.PermissionDenial{}}
}

// forward writes the client's messages as they come.
func (s *server) forward() {
	defer close(s.written)
	for m, err := range s.client.Messages() {
		if err != nil {
			// The prompt could not run: it still gets its result.
			s.warn("%v", err)
			m = &agent.ResultMessage{Type: "result", Subtype: agent.ResultErrorDuringExecution, IsError: true, Errors: []string{err.Error()},
				SessionID: s.client.SessionID(), UUID: uuid.NewString(), ModelUsage: map[string]agent.ModelUsage{},
				PermissionDenials: []agent.PermissionDenial{}}
		}
		if sys, ok := m.(*agent.SystemMessage); ok && sys.Subtype == agent.SubtypeSessionStateChanged && s.cfg.HostOnlyStates {
			// The SDK keeps these to itself.
			sys.Fields["sdk_host_only"] = true
		}
		if r, ok := m.(*agent.ResultMessage); ok {
			s.mu.Lock()
			s.lastResult = r
			s.mu.Unlock()
		}
		if err := s.conn.write(m); err != nil {
			s.warn("%v", err)
			return // Messages stops the runs' output: the SDK is gone
		}
	}
}

// user queues a user message.
func (s *server) user(ctx context.Context, f inFrame) {
	text, blocks, dropped, err := promptContent(f.Message)
	if err != nil {
		s.warn("ignoring stdin line %d: a user message that cannot be read: %v", f.line, err)
		return
	}
	if dropped > 0 {
		s.warn("stdin line %d: %d content block(s) a prompt cannot carry were left out", f.line, dropped)
	}
	if strings.TrimSpace(text) == "" && len(blocks) == 0 {
		s.warn("ignoring stdin line %d: a user message without text", f.line)
		return
	}
	if s.start(ctx) != nil {
		return
	}
	if f.Priority == "now" {
		// Into the running turn, if there is one; queued otherwise.
		if _, err := s.client.InjectPrompt(agent.Prompt{Text: text, ID: f.UUID}); err != nil {
			s.warn("stdin line %d: %v", f.line, err)
		}
		return
	}
	if err := s.client.SendPrompt(agent.Prompt{Text: text, ID: f.UUID, Content: blocks}); err != nil {
		s.warn("stdin line %d: %v", f.line, err)
	}
}

// control answers a control request from the SDK.
func (s *server) control(ctx context.Context, f inFrame) {
	var req struct {
		Subtype string `json:"subtype"`
	}
	if err := json.Unmarshal(f.Request, &req); err != nil || f.RequestID == "" {
		s.warn("ignoring stdin line %d: a control_request without a request id or subtype", f.line)
		if f.RequestID != "" {
			_ = s.conn.fail(f.RequestID, "", errors.New("malformed control request"))
		}
		return
	}
	if slowControl[req.Subtype] && s.start(ctx) == nil {
		// It waits on a model or a server: the lines after it go on
		// meanwhile (an interrupt, a permission answer…).
		s.slow.Go(func() {
			payload, err := s.dispatch(ctx, req.Subtype, f.Request)
			s.answer(f.RequestID, payload, err)
		})
		return
	}
	payload, err := s.dispatch(ctx, req.Subtype, f.Request)
	s.answer(f.RequestID, payload, err)
}

// answer writes the answer to the control request id.
func (s *server) answer(id string, payload any, err error) {
	var unsupported unsupportedError
	switch {
	case errors.As(err, &unsupported):
		_ = s.conn.fail(id, ErrorCodeUnsupported, err)
	case err != nil:
		_ = s.conn.fail(id, "", err)
	default:
		_ = s.conn.respond(id, payload)
	}
}

type unsupportedError struct{ subtype string }

func (e unsupportedError) Error() string {
	return fmt.Sprintf("tack does not support the control request %q", e.subtype)
}

func (s *server) dispatch(ctx context.Context, subtype string, raw json.RawMessage) (any, error) {
	switch subtype {
	case "initialize":
		return s.initialize(ctx, raw)
	case "interrupt":
		var req struct {
			CancelQueued bool `json:"cancel_queued"`
		}
		_ = json.Unmarshal(raw, &req)
		if s.client == nil {
			return map[string]any{"still_queued": []string{}}, nil
		}
		out := map[string]any{}
		if req.CancelQueued {
			out["cancelled"] = s.client.CancelQueued()
		}
		out["still_queued"] = s.client.Interrupt()
		return out, nil
	case "set_model":
		var req struct {
			Model *string `json:"model"`
		}
		if err := json.Unmarshal(raw, &req); err != nil {
			return nil, fmt.Errorf("set_model: %w", err)
		}
		model := ""
		if req.Model != nil {
			model = *req.Model
		}
		if s.client == nil {
			s.opts.Model = model
			return map[string]any{"model": model}, nil
		}
		id, err := s.client.SetModel(model)
		if err != nil {
			return nil, fmt.Errorf("set_model: %w", err)
		}
		return map[string]any{"model": id}, nil
	case "set_permission_mode":
		var req struct {
			Mode string `json:"mode"`
		}
		if err := json.Unmarshal(raw, &req); err != nil {
			return nil, fmt.Errorf("set_permission_mode: %w", err)
		}
		mode := agent.PermissionMode(req.Mode)
		if !mode.Valid() {
			return nil, fmt.Errorf("set_permission_mode: unknown mode %q (want default, acceptEdits, plan, auto, bypassPermissions or dontAsk)", req.Mode)
		}
		if s.client == nil {
			s.opts.PermissionMode = mode
			return map[string]any{"mode": mode}, nil
		}
		if err := s.client.SetPermissionMode(mode); err != nil {
			return nil, fmt.Errorf("set_permission_mode: %w", err)
		}
		_ = s.conn.write(&agent.SystemMessage{Subtype: agent.SubtypeStatus, SessionID: s.client.SessionID(), UUID: uuid.NewString(),
			Fields: map[string]any{"status": nil, "permissionMode": mode}})
		return map[string]any{"mode": mode}, nil
	case "set_max_thinking_tokens":
		var req struct {
			MaxThinkingTokens *int `json:"max_thinking_tokens"`
		}
		if err := json.Unmarshal(raw, &req); err != nil {
			return nil, fmt.Errorf("set_max_thinking_tokens: %w", err)
		}
		if err := s.start(ctx); err != nil {
			return nil, err
		}
		n := 0
		if req.MaxThinkingTokens != nil {
			n = *req.MaxThinkingTokens
		}
		s.client.SetMaxThinkingTokens(n)
		return map[string]any{}, nil
	case "rewind_files":
		var req struct {
			UserMessageID string `json:"user_message_id"`
			DryRun        bool   `json:"dry_run"`
		}
		if err := json.Unmarshal(raw, &req); err != nil {
			return nil, fmt.Errorf("rewind_files: %w", err)
		}
		if err := s.start(ctx); err != nil {
			return nil, err
		}
		return s.client.RewindFiles(req.UserMessageID, req.DryRun), nil
	case "mcp_message":
		// A message an in-process server sends on its own.
		var req struct {
			ServerName string          `json:"server_name"`
			Message    json.RawMessage `json:"message"`
		}
		if err := json.Unmarshal(raw, &req); err != nil {
			return nil, fmt.Errorf("mcp_message: %w", err)
		}
		if err := s.sdk.deliver(req.ServerName, req.Message); err != nil {
			return nil, fmt.Errorf("mcp_message: %w", err)
		}
		return map[string]any{"mcp_response": map[string]any{"jsonrpc": "2.0", "result": map[string]any{}, "id": 0}}, nil
	case "mcp_status":
		if err := s.start(ctx); err != nil {
			return nil, err
		}
		return map[string]any{"mcpServers": s.client.MCPServers()}, nil
	}
	if h, ok := s.hostControl(subtype); ok {
		return h(ctx, raw)
	}
	return nil, unsupportedError{subtype}
}

// initialize applies the SDK's initialize request, starts the session and
// describes it.
func (s *server) initialize(ctx context.Context, raw json.RawMessage) (any, error) {
	var req initRequest
	if s.client != nil {
		// Again (the SDK's reinitialize), or after a user message started
		// the session: it is described as it is; what the request would
		// set up is not applied.
		_ = json.Unmarshal(raw, &req)
		s.warn("initialize after the session started: its options are not applied")
		out := initResponse(s.client.Info(), initApplied{}, false)
		if len(req.Hooks) > 0 {
			out["hooks_applied"] = false
		}
		return out, nil
	}
	if s.initialized {
		return nil, errors.New("initialize: the session failed to start")
	}
	s.initialized = true
	if err := json.Unmarshal(raw, &req); err != nil {
		s.startErr = fmt.Errorf("initialize: %w", err)
		s.warn("%v", s.startErr)
		return nil, s.startErr
	}
	applied, err := applyInit(&s.opts, req, s.hookCallback, s.sdkServer, s.warn)
	if err != nil {
		s.startErr = err
		s.warn("%v", err)
		return nil, err
	}
	if err := s.start(ctx); err != nil {
		return nil, err
	}
	return initResponse(s.client.Info(), applied, len(req.Hooks) > 0), nil
}

// sdkServer is the SDK's in-process MCP server name, reached over the
// control channel (m, when given, answers its handshake).
func (s *server) sdkServer(name string, m *manifest) agent.MCPServerConfig {
	return agent.MCPTransportServer{Dial: func(context.Context) (sdk.Transport, error) { return s.sdk.transport(name, m), nil }}
}

// hookCallback forwards one SDK hook callback: the hook's payload goes to
// the SDK in a hook_callback request, its answer is the hook's output.
func (s *server) hookCallback(id string) agent.HookCallback {
	return func(ctx context.Context, _ agent.HookInput, payload json.RawMessage) (*agent.HookOutput, error) {
		fields := map[string]any{"callback_id": id, "input": payload}
		var ids struct {
			ToolUseID string `json:"tool_use_id"`
		}
		if json.Unmarshal(payload, &ids) == nil && ids.ToolUseID != "" {
			fields["tool_use_id"] = ids.ToolUseID
		}
		raw, err := s.conn.request(ctx, "hook_callback", fields)
		if err != nil {
			return nil, err
		}
		if len(raw) == 0 {
			return nil, nil
		}
		var out agent.HookOutput
		if err := json.Unmarshal(raw, &out); err != nil {
			return nil, fmt.Errorf("hook callback %s answered %s: %w", id, clip(raw, 200), err)
		}
		return &out, nil
	}
}

// canUseTool asks the SDK about a tool call that needs approval.
func (s *server) canUseTool(ctx context.Context, name string, input json.RawMessage, info agent.ToolPermissionContext) (agent.PermissionResult, error) {
	// What the run said before the question goes out first.
	if err := s.client.Flush(ctx); err != nil {
		return agent.PermissionResult{}, err
	}
	suggestions := info.Suggestions
	if suggestions == nil {
		suggestions = []agent.PermissionUpdate{}
	}
	fields := map[string]any{"tool_name": name, "input": input, "tool_use_id": info.ToolUseID, "permission_suggestions": suggestions}
	if info.Reason != "" {
		fields["decision_reason"] = info.Reason
	}
	if info.BlockedPath != "" {
		fields["blocked_path"] = info.BlockedPath
	}
	// The client reports the session as requires_action meanwhile.
	raw, err := s.conn.request(ctx, "can_use_tool", fields)
	if err != nil {
		return agent.PermissionResult{}, err
	}
	var answer struct {
		Behavior           string                   `json:"behavior"`
		UpdatedInput       json.RawMessage          `json:"updatedInput"`
		UpdatedPermissions []agent.PermissionUpdate `json:"updatedPermissions"`
		Message            string                   `json:"message"`
		Interrupt          bool                     `json:"interrupt"`
	}
	if err := json.Unmarshal(raw, &answer); err != nil {
		return agent.PermissionResult{}, fmt.Errorf("can_use_tool answer %s: %w", clip(raw, 200), err)
	}
	switch answer.Behavior {
	case "allow":
		if string(answer.UpdatedInput) == "null" {
			answer.UpdatedInput = nil
		}
		return agent.PermissionResult{Allow: true, UpdatedInput: answer.UpdatedInput, UpdatedPermissions: answer.UpdatedPermissions}, nil
	case "deny":
		if answer.Interrupt {
			s.client.Interrupt()
		}
		return agent.PermissionResult{Message: answer.Message}, nil
	}
	return agent.PermissionResult{}, fmt.Errorf("can_use_tool answer has behavior %q, want allow or deny", answer.Behavior)
}
