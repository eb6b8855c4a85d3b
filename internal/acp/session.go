package acp

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/tackcode/tack/agent"
)

// session is one ACP session: an agent.Client and what the client has been
// told about it.
type session struct {
	id     string
	ctx    context.Context // the connection's
	conn   *sdk.AgentSideConnection
	client *agent.Client
	cwd    string
	files  *clientFiles // nil unless the client reads and writes files

	mu        sync.Mutex
	mode      agent.PermissionMode // as last reported to the client
	calls     map[string]*toolCall // by tool_use id
	seq       int                  // calls reported so far
	plan      []planTask
	streamed  map[string]bool // responses whose text arrived as deltas
	running   bool
	cancelled bool // the running prompt was cancelled
}

// startSession starts the agent session for opts.
func startSession(ctx context.Context, conn *sdk.AgentSideConnection, opts agent.Options, caps sdk.ClientCapabilities) (*session, error) {
	s := &session{ctx: ctx, conn: conn, cwd: opts.Cwd, calls: map[string]*toolCall{}, streamed: map[string]bool{}}
	opts.CanUseTool = s.canUseTool
	hooks := map[agent.HookEvent][]agent.HookMatcher{}
	for ev, ms := range opts.Hooks {
		hooks[ev] = ms
	}
	hooks[agent.HookPreToolUse] = append(append([]agent.HookMatcher{}, hooks[agent.HookPreToolUse]...),
		agent.HookMatcher{Matcher: editTools, Hooks: []agent.HookCallback{s.preview}})
	opts.Hooks = hooks
	s.delegate(&opts, caps)
	s.delegateTerminal(&opts, caps)
	c, err := agent.NewClient(ctx, opts)
	if err != nil {
		return nil, err
	}
	s.client, s.id = c, c.SessionID()
	s.files.setSession(s.id)
	s.mode = c.Info().PermissionMode
	return s, nil
}

func (s *session) close() { _ = s.client.Close() }

// send tells the client about the session; a failure means the client is
// gone, and the connection's end stops the session.
func (s *session) send(u sdk.SessionUpdate) {
	_ = s.conn.SessionUpdate(s.ctx, sdk.SessionNotification{SessionId: sdk.SessionId(s.id), Update: u})
}

// prompt runs one prompt to its end, streaming what it does.
func (s *session) prompt(ctx context.Context, p sdk.PromptRequest) (sdk.PromptResponse, error) {
	content, err := promptContent(p.Prompt)
	if err != nil {
		return sdk.PromptResponse{}, sdk.NewInvalidParams(err.Error())
	}
	s.mu.Lock()
	if s.running {
		s.mu.Unlock()
		return sdk.PromptResponse{}, sdk.NewInvalidRequest("a prompt is already running in this session")
	}
	s.running, s.cancelled = true, false
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		s.running = false
		s.mu.Unlock()
	}()
	if err := s.client.SendPrompt(agent.Prompt{Text: agent.TextOf(content), Content: content}); err != nil {
		return sdk.PromptResponse{}, fmt.Errorf("prompt: %w", err)
	}
	done := make(chan struct{})
	defer close(done)
	go func() {
		// session/cancel ends the request's context.
		select {
		case <-ctx.Done():
			s.cancel()
		case <-done:
		}
	}()
	var result *agent.ResultMessage
	for m, err := range s.client.ReceiveResponse() {
		if err != nil {
			return sdk.PromptResponse{}, fmt.Errorf("prompt: %w", err)
		}
		if r, ok := m.(*agent.ResultMessage); ok {
			result = r
			continue
		}
		s.handle(m)
	}
	return s.finish(result)
}

// cancel interrupts the running prompt.
func (s *session) cancel() {
	s.mu.Lock()
	running := s.running
	if running {
		s.cancelled = true
	}
	s.mu.Unlock()
	if running {
		s.client.Interrupt()
	}
}

// finish is the answer to a prompt that ended with result.
func (s *session) finish(result *agent.ResultMessage) (sdk.PromptResponse, error) {
	s.mu.Lock()
	cancelled := s.cancelled
	s.mu.Unlock()
	switch {
	case cancelled:
		return sdk.PromptResponse{StopReason: sdk.StopReasonCancelled}, nil
	case result == nil:
		return sdk.PromptResponse{}, fmt.Errorf("prompt: the session ended before the prompt did")
	}
	usage := &sdk.Usage{InputTokens: int(result.Usage.InputTokens), OutputTokens: int(result.Usage.OutputTokens),
		TotalTokens: int(result.Usage.InputTokens + result.Usage.OutputTokens)}
	if n := int(result.Usage.CacheReadInputTokens); n > 0 {
		usage.CachedReadTokens = &n
	}
	if n := int(result.Usage.CacheCreationInputTokens); n > 0 {
		usage.CachedWriteTokens = &n
	}
	reason, err := stopReason(result)
	if err != nil {
		return sdk.PromptResponse{}, err
	}
	return sdk.PromptResponse{StopReason: reason, Usage: usage}, nil
}

// stopReason maps how a run ended onto ACP's stop reasons; a run that
// failed is an error naming why.
func stopReason(r *agent.ResultMessage) (sdk.StopReason, error) {
	stop := ""
	if r.StopReason != nil {
		stop = *r.StopReason
	}
	switch {
	case strings.HasPrefix(r.TerminalReason, "aborted"):
		return sdk.StopReasonCancelled, nil
	case r.Subtype == agent.ResultErrorMaxTurns:
		return sdk.StopReasonMaxTurnRequests, nil
	case stop == "max_tokens":
		return sdk.StopReasonMaxTokens, nil
	case stop == "refusal":
		return sdk.StopReasonRefusal, nil
	case !r.IsError:
		return sdk.StopReasonEndTurn, nil
	}
	msg := strings.Join(r.Errors, "; ")
	if msg == "" {
		msg = r.Subtype
	}
	return "", sdk.NewInternalError(map[string]any{"error": msg, "subtype": r.Subtype})
}

// handle turns one message of a run into session updates.
func (s *session) handle(m agent.Message) {
	switch m := m.(type) {
	case *agent.StreamEvent:
		if m.ParentToolUseID == nil {
			s.streamEvent(m.Event)
		}
	case *agent.AssistantMessage:
		if m.ParentToolUseID != nil {
			return // a subagent's: its Agent call stands for it
		}
		s.mu.Lock()
		streamed := s.streamed[m.Message.ID]
		s.mu.Unlock()
		for _, b := range m.Message.Content {
			switch {
			case b.Type == agent.BlockToolUse:
				s.toolStart(b)
			case b.Type == agent.BlockText && !streamed && b.Text != "":
				s.send(sdk.UpdateAgentMessageText(b.Text))
			case b.Type == agent.BlockThinking && !streamed && b.Thinking != "":
				s.send(sdk.UpdateAgentThoughtText(b.Thinking))
			}
		}
	case *agent.UserMessage:
		if m.ParentToolUseID != nil {
			return
		}
		for _, b := range m.Message.Content {
			if b.Type == agent.BlockToolResult {
				s.toolDone(b, m.ToolUseResult)
			}
		}
		s.reportMode()
	}
}

// streamEvent sends the text and thinking deltas of a response as chunks.
func (s *session) streamEvent(raw json.RawMessage) {
	var ev struct {
		Type    string `json:"type"`
		Message struct {
			ID string `json:"id"`
		} `json:"message"`
		Delta struct {
			Type     string `json:"type"`
			Text     string `json:"text"`
			Thinking string `json:"thinking"`
		} `json:"delta"`
	}
	if json.Unmarshal(raw, &ev) != nil {
		return
	}
	switch {
	case ev.Type == "message_start":
		s.mu.Lock()
		s.streamed[ev.Message.ID] = true
		s.mu.Unlock()
	case ev.Type != "content_block_delta":
	case ev.Delta.Type == "text_delta" && ev.Delta.Text != "":
		s.send(sdk.UpdateAgentMessageText(ev.Delta.Text))
	case ev.Delta.Type == "thinking_delta" && ev.Delta.Thinking != "":
		s.send(sdk.UpdateAgentThoughtText(ev.Delta.Thinking))
	}
}

// reportMode tells the client when the session's mode changed by itself
// (ExitPlanMode leaving plan mode).
func (s *session) reportMode() {
	mode := s.client.Info().PermissionMode
	s.mu.Lock()
	changed := mode != s.mode
	s.mode = mode
	s.mu.Unlock()
	if changed {
		s.send(sdk.SessionUpdate{CurrentModeUpdate: &sdk.SessionCurrentModeUpdate{CurrentModeId: sdk.SessionModeId(mode)}})
	}
}

// setMode is session/set_mode.
func (s *session) setMode(ctx context.Context, mode string) error {
	if !validMode(mode) {
		return fmt.Errorf("unknown mode %q (want one of %s)", mode, strings.Join(modeIDs(), ", "))
	}
	if err := s.client.SetPermissionMode(agent.PermissionMode(mode)); err != nil {
		return err
	}
	s.reportMode()
	return nil
}

var errNoPrompt = errors.New("the prompt has no text, image or resource")

// promptContent turns an ACP prompt into message content: text, images,
// and the resources the client embedded or linked, as text the model reads.
func promptContent(blocks []sdk.ContentBlock) ([]agent.ContentBlock, error) {
	var out []agent.ContentBlock
	for i, b := range blocks {
		switch {
		case b.Text != nil:
			if b.Text.Text != "" {
				out = append(out, agent.TextBlock(b.Text.Text))
			}
		case b.Image != nil:
			data, err := base64.StdEncoding.DecodeString(b.Image.Data)
			if err != nil {
				return nil, fmt.Errorf("prompt[%d]: image data is not base64: %w", i, err)
			}
			out = append(out, agent.ImageBlock(b.Image.MimeType, data))
		case b.Resource != nil && b.Resource.Resource.TextResourceContents != nil:
			r := b.Resource.Resource.TextResourceContents
			out = append(out, agent.TextBlock(fmt.Sprintf("<context ref=%q>\n%s\n</context>", r.Uri, r.Text)))
		case b.Resource != nil:
			return nil, fmt.Errorf("prompt[%d]: a binary resource, which tack cannot read", i)
		case b.ResourceLink != nil:
			out = append(out, agent.TextBlock("@"+linkPath(b.ResourceLink.Uri)))
		case b.Audio != nil:
			return nil, fmt.Errorf("prompt[%d]: audio, which tack does not take (see promptCapabilities)", i)
		}
	}
	if len(out) == 0 {
		return nil, errNoPrompt
	}
	return out, nil
}

// linkPath is the path of a file:// link, or the link itself.
func linkPath(uri string) string {
	if p, ok := strings.CutPrefix(uri, "file://"); ok {
		return p
	}
	return uri
}
