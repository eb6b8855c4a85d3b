// Package engine runs the agent loop of one session: build a request, stream
// the model's turn, run the tool calls it asks for (read-only calls in
// parallel, the others one at a time in order), append the results and go
// again, until the model ends its turn or a limit stops it.
//
// The engine emits typed protocol messages and knows nothing of terminals or
// output formats. Everything it adds to the conversation also goes to a
// Recorder, which keeps the transcript.
package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/tackcode/tack/internal/compact"
	"github.com/tackcode/tack/internal/hook"
	"github.com/tackcode/tack/internal/llm"
	"github.com/tackcode/tack/internal/protocol"
	"github.com/tackcode/tack/internal/tool"
)

// Config is everything a session needs. Provider, Tools and Env are required.
type Config struct {
	SessionID string
	Provider  llm.Provider
	Catalog   *llm.Catalog
	Model     llm.Model
	// FallbackModel, when set, replaces Model for the rest of the session
	// once Model stays overloaded through every retry.
	FallbackModel llm.Model
	// System is the system prompt, already assembled.
	System []llm.Block
	// Context blocks open the first user message of the session (memory
	// files, reminders); they sit in the cached prefix.
	Context []llm.Block
	Tools   *tool.Registry
	// ToolSpecs, when set, is a resumed session's recorded tools array,
	// sent instead of the registry's while it offers exactly the same tools
	// (so the original bytes keep the prompt cache); the registry still
	// validates and runs the calls.
	ToolSpecs []llm.ToolSpec
	Env       *tool.Env
	// Gate decides whether each tool call may run. Nil allows everything.
	Gate Gate
	// Hooks runs the session's hooks; nil runs none. HookBase fills the
	// common fields of their payloads (transcript path, permission mode…);
	// HookLog, when it is the runner's observer, lets the engine emit
	// hook_started / hook_response messages if IncludeHookEvents is set.
	Hooks             *hook.Runner
	HookBase          func() hook.Base
	HookLog           *HookLog
	IncludeHookEvents bool
	// Notify shows a message to the user: hook errors and hook system
	// messages. Nil drops them.
	Notify func(msg string)

	MaxTurns     int     // 0: no limit
	MaxBudgetUSD float64 // 0: no limit
	MaxTokens    int     // 0: the model's max output
	Thinking     *llm.Thinking
	// Effort is the reasoning effort every request asks for, on models
	// that take one ("": none, the API's default).
	Effort string
	// TaskBudget is the tokens the task may take, which every request
	// tells the model (output_config.task_budget; 0: none).
	TaskBudget int
	// Betas are API beta features every request asks for
	// (anthropic-beta).
	Betas []string
	// CacheTTL is "" (five minutes) or "1h".
	CacheTTL string
	// DisableCache sends no cache breakpoints.
	DisableCache bool
	// IncludePartial emits every SSE event as a stream_event message.
	IncludePartial bool
	// Loop bounds identical calls; zero values take the defaults.
	Loop LoopLimit
	// Compaction says when and how the conversation is compacted.
	Compaction Compaction
	// Recorder receives every message added to the conversation. Nil: none.
	Recorder Recorder
	// OnToolDecision hears, after each batch of tool calls, of its last call
	// and the permission decision it got (allow or deny), or of the first
	// call left waiting for the host (ask), once the results are in the
	// conversation. Nil: no one.
	OnToolDecision func(name, decision string)
	// OnRequest hears of each request of the conversation as it is sent,
	// before its answer: what it holds is being encoded, so it must be read
	// only, and the call must not block. Nil: no one.
	OnRequest func(req *llm.Request)
	// ParentToolUseID is set for a subagent's session: its messages carry
	// it as parent_tool_use_id.
	ParentToolUseID string
	// TranscriptPath is where the Recorder writes (for hook payloads).
	TranscriptPath string
	// UserID goes into metadata.user_id.
	UserID string
	// Now is the clock; nil means time.Now.
	Now func() time.Time
}

// Recorder keeps the transcript of a session.
type Recorder interface {
	// Record appends one message of the conversation.
	Record(m protocol.Message) error
	// Sync makes what was recorded durable; called at turn boundaries.
	Sync() error
}

// Flusher is a Recorder that holds records back until the end of a turn
// (the transcript's last-prompt record): Flush writes them, without waiting
// for the disk, before the turn's result is emitted.
type Flusher interface {
	Flush() error
}

// Session is one conversation with the model. Run may be called again to
// continue it; calls must not overlap.
type Session struct {
	cfg Config

	mu       sync.Mutex // guards messages and the fields below between runs
	messages []llm.Message
	// prevLast is the index of the last message of the previous request; its
	// last block keeps a cache breakpoint so the next request reads the
	// whole previous one from cache.
	prevLast int
	// sent is the messages array of the latest request: messages, with a
	// marked copy at each breakpoint (marks). The next request extends it
	// rather than copying the whole history (see buildRequest).
	sent  []llm.Message
	marks []int
	// sentOf is the first element of the history's array when sent was
	// last taken from it.
	sentOf *llm.Message
	// encoded keeps the JSON of the messages the latest request sent, so
	// the next one encodes only what is new.
	encoded  llm.EncodeCache
	model    llm.Model
	lastTool [2]string // name and permission decision of the last tool call
	// announcements wait for the next request (new tools, server news).
	announcements []string
	total         tally       // the whole session
	current       *tally      // the run in progress, if any
	injected      []llm.Block // user content injected into the running prompt
	thinking      *llm.Thinking
	undelivered   []llm.Block    // injected content whose run ended first
	sentTools     []llm.ToolSpec // the tools array of the latest request
	lastUsage     *llm.Usage     // the usage of the latest response
	// usageAt is how many messages lastUsage measured: the history up to
	// and including the latest response.
	usageAt int
	loops   *loopDetector
	// waiting are the tool_use blocks of the last response that a
	// PreToolUse hook's defer left without a result, the deferred call
	// first: the next run decides them before anything else.
	waiting []llm.Block
}

// New returns a session with an empty conversation.
func New(cfg Config) (*Session, error) {
	if cfg.Provider == nil || cfg.Tools == nil || cfg.Env == nil {
		return nil, errors.New("engine: Provider, Tools and Env are required")
	}
	if cfg.Catalog == nil {
		cfg.Catalog = llm.Catalogue()
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.SessionID == "" {
		cfg.SessionID = uuid.NewString()
	}
	s := &Session{
		cfg:      cfg,
		prevLast: -1,
		model:    cfg.Model,
		thinking: cfg.Thinking,
		loops:    newLoopDetector(cfg.Loop),
	}
	// Tools that call the model (WebFetch, WebSearch) spend the session's
	// money too: their usage is counted with the rest.
	if p := cfg.Env.Model.Provider; p != nil {
		cfg.Env.Model.Provider = meteredProvider{inner: p, s: s}
	}
	return s, nil
}

// SessionID returns the session's id.
func (s *Session) SessionID() string { return s.cfg.SessionID }

// Inject adds a user message to the running prompt: it joins the next
// request (with the results of the tool calls in flight, or after the
// model's answer, which then does not end the turn). It returns false when
// no prompt is running; the caller sends it as a prompt of its own then.
func (s *Session) Inject(content []llm.Block) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.current == nil || len(content) == 0 {
		return false
	}
	s.injected = append(s.injected, content...)
	return true
}

// TakeUndelivered returns (and forgets) what was injected into runs that
// ended before it could join a request.
func (s *Session) TakeUndelivered() []llm.Block {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := s.undelivered
	s.undelivered = nil
	return out
}

// takeInjected returns and forgets the injected content.
func (s *Session) takeInjected() []llm.Block {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := s.injected
	s.injected = nil
	return out
}

// SetThinking sets extended thinking for the following requests (nil:
// off).
func (s *Session) SetThinking(t *llm.Thinking) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.thinking = t
}

// Thinking returns the extended thinking of the following requests (nil:
// off).
func (s *Session) Thinking() *llm.Thinking {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.thinking
}

// SetModel switches the model for the following requests.
func (s *Session) SetModel(m llm.Model) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.model = m
}

// Model returns the current model.
func (s *Session) Model() llm.Model {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.model
}

// LastUsage returns the usage of the latest response of the session (nil
// before the first one): what the last request really sent and received.
func (s *Session) LastUsage() *llm.Usage {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.lastUsage == nil {
		return nil
	}
	u := *s.lastUsage
	return &u
}

// Messages returns a copy of the conversation so far.
func (s *Session) Messages() []llm.Message {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]llm.Message(nil), s.messages...)
}

// Restore replaces the conversation (a resumed session). No call waits for
// a decision then, until ResumeDeferred names one.
//
// The history's JSON is encoded at once, on another goroutine, for the
// first request to send (llm.EncodeCache.Prepare): a long one costs
// milliseconds, better spent while the session finishes its start. The
// last message stays out of it: it is the one the engine may edit in
// place (a prompt joined to it); those before it never change.
func (s *Session) Restore(msgs []llm.Message) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.messages = append([]llm.Message(nil), msgs...)
	s.prevLast = -1
	s.waiting = nil
	s.lastUsage = nil
	if n := len(s.messages); n > 1 {
		// An error is the first request's to report: it encodes the same
		// messages again.
		go func(history []llm.Message) { _ = s.encoded.Prepare(history) }(s.messages[: n-1 : n-1])
	}
}

// Emit receives the session's messages as they happen, on the goroutine that
// called Run.
type Emit func(protocol.Message)

// run is the state of one Run call.
type run struct {
	s        *Session
	ctx      context.Context
	emit     Emit
	start    time.Time
	apiTime  time.Duration
	turns    int
	tally    tally
	denials  []protocol.PermissionDenial
	lastStop string
	lastText string
	parentID *string
	promptID string
	// userUUID, when set, is the uuid of the prompt's user message.
	userUUID string
	// typed, when set, is the prompt as the user gave it.
	typed string
	// stopHookActive is true once a Stop hook has made the model go on.
	stopHookActive bool
	// stopReason is set when a hook asked to end the session.
	stopReason string
	// deferred is the call a PreToolUse hook deferred: the run ends.
	deferred *call
	// lastUsage is the usage of the last response, to decide compaction.
	lastUsage *llm.Usage
	recordErr error
	// asyncContext is what async hooks said that no request has carried
	// yet.
	asyncContext []string
}

// Run sends prompt as the next user message and loops until the model ends
// its turn, a limit is reached or ctx is cancelled. It always returns a
// result message (which it has also emitted).
func (s *Session) Run(ctx context.Context, prompt []llm.Block, emit Emit) *protocol.Result {
	return s.RunPrompt(ctx, Prompt{Content: prompt}, emit)
}

// Prompt is a user prompt to run, with what names it.
type Prompt struct {
	// Content is the user message.
	Content []llm.Block
	// Text is the prompt as the user gave it, which UserPromptSubmit hooks
	// are given; "" for the text of Content. They differ for a slash
	// command, whose Content is its expansion.
	Text string
	// ID is the uuid the user message is recorded under (the one an SDK
	// host gave it, so that it can name it later: rewind, resume at), and
	// PromptID the prompt_id of the run's hook payloads (the caller's,
	// when hooks it fired itself carry it too); "" makes new ones.
	ID, PromptID string
}

// RunPrompt is Run with the prompt's ids and typed text.
func (s *Session) RunPrompt(ctx context.Context, p Prompt, emit Emit) *protocol.Result {
	if emit == nil {
		emit = func(protocol.Message) {}
	}
	if p.PromptID == "" {
		p.PromptID = uuid.NewString()
	}
	r := &run{s: s, ctx: ctx, emit: emit, start: s.cfg.Now(), promptID: p.PromptID, userUUID: p.ID, typed: p.Text}
	s.mu.Lock()
	s.current = &r.tally
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		s.current = nil
		// Injected too late (or into a run that failed): kept for the
		// caller to send as a prompt of its own.
		s.undelivered = append(s.undelivered, s.injected...)
		s.injected = nil
		s.mu.Unlock()
	}()
	if s.cfg.ParentToolUseID != "" {
		id := s.cfg.ParentToolUseID
		r.parentID = &id
	}
	res := r.loop(p.Content)
	// The run no longer takes injected messages once its result is out:
	// what came too late goes to the caller (TakeUndelivered).
	s.mu.Lock()
	s.current = nil
	s.undelivered = append(s.undelivered, s.injected...)
	s.injected = nil
	s.mu.Unlock()
	r.finish(res)
	return res
}

// finish emits the result of the run, then makes its transcript durable.
// The answer goes out first: once the transcript's lines are written, a
// crash of tack loses none of them (a power cut before the sync could), so
// the reader need not wait for the disk. A write that failed is in the
// result; a sync that fails is told to the user, the result being out.
func (r *run) finish(res *protocol.Result) {
	if r.recordErr != nil {
		res.Errors = append(res.Errors, "transcript: "+r.recordErr.Error())
	}
	// The turn's records are all written before its result goes out, so
	// that whoever acts on the result (the SDK's session store, a resume)
	// finds the transcript complete; making them durable waits until the
	// result is out.
	rec := r.s.cfg.Recorder
	if f, ok := rec.(Flusher); ok {
		if err := f.Flush(); err != nil {
			r.notify("transcript: " + err.Error())
		}
	}
	r.emit(res)
	if rec != nil {
		if err := rec.Sync(); err != nil {
			r.notify("transcript: " + err.Error())
		}
	}
}

func (r *run) loop(prompt []llm.Block) *protocol.Result {
	s := r.s
	s.mu.Lock()
	first := len(s.messages) == 0
	s.mu.Unlock()
	var content []llm.Block
	if first {
		content = append(content, s.cfg.Context...)
	}
	s.mu.Lock()
	resuming := len(s.waiting) > 0
	s.mu.Unlock()
	// A run that only decides waiting calls (a resume without a prompt)
	// has no prompt to submit: the calls' results are its input.
	if !resuming || !emptyPrompt(prompt) {
		extra, refused := r.userPromptSubmit(prompt)
		if refused != nil {
			return refused
		}
		content = append(append(content, prompt...), extra...)
	}
	if len(content) > 0 {
		r.appendPrompt(content)
	}
	if stop := r.decideWaiting(); stop != nil {
		return stop
	}

	for {
		if err := r.ctx.Err(); err != nil {
			return r.interrupted("aborted_streaming")
		}
		if max := s.cfg.MaxTurns; max > 0 && r.turns >= max {
			r.turns++
			return r.errorResult(protocol.ResultMaxTurns, "max_turns", fmt.Sprintf("Reached maximum number of turns (%d)", max))
		}
		if max := s.cfg.MaxBudgetUSD; max > 0 && s.totalCost() >= max {
			return r.errorResult(protocol.ResultMaxBudget, "max_budget",
				fmt.Sprintf("Reached maximum budget ($%g): spent $%.4f", max, s.totalCost()))
		}
		if r.needsCompaction() {
			if err := r.compact("auto", ""); err != nil {
				r.notify("Automatic compaction failed: " + err.Error())
			}
		}
		r.deliverAsyncHooks()
		r.flushAnnouncements()
		r.turns++
		resp, err := r.callModel()
		if err != nil && r.ctx.Err() == nil && r.switchToFallback(err) {
			resp, err = r.callModel()
		}
		if err != nil && r.ctx.Err() == nil && compact.IsPromptTooLong(err) && s.cfg.Compaction.Threshold >= 0 {
			// The conversation outgrew the window: compact, then retry once.
			if cerr := r.compact("auto", ""); cerr == nil {
				resp, err = r.callModel()
			} else {
				r.notify("Compaction after a too-long prompt failed: " + cerr.Error())
			}
		}
		if err != nil {
			if r.ctx.Err() != nil {
				return r.interrupted("aborted_streaming")
			}
			r.stopFailure(err)
			return r.errorResult(protocol.ResultDuringExecution, "api_error", err.Error())
		}
		calls := r.appendAssistant(resp)
		r.lastStop = resp.StopReason
		if len(calls) == 0 {
			if resp.StopReason == "pause_turn" {
				continue // a server tool paused the turn: send it back to go on
			}
			if res := r.endTurn(); res != nil {
				return res
			}
			continue
		}
		stop := r.runTools(calls)
		if stop != nil {
			return stop
		}
		// A call that completes the turn (StructuredOutput's answer) ends it
		// as a final answer does, with no further request, as in Claude Code.
		if endsTurn(calls) {
			if res := r.endTurn(); res != nil {
				return res
			}
			continue
		}
		// Messages injected while the tools ran join their results.
		if injected := s.takeInjected(); len(injected) > 0 {
			r.appendPrompt(injected)
		}
	}
}

// endTurn ends the model's turn: the run's result, or nil when the turn
// goes on (a message injected while the model answered, or a Stop hook
// that says the work is not done, joins the conversation).
func (r *run) endTurn() *protocol.Result {
	if injected := r.s.takeInjected(); len(injected) > 0 {
		r.appendPrompt(injected)
		return nil
	}
	feedback, stop := r.stopHook(r.lastText)
	if stop != nil {
		return stop
	}
	if feedback != "" {
		r.stopHookActive = true
		r.appendUser(llm.Message{Role: llm.RoleUser, Content: []llm.Block{llm.Text(feedback)}}, nil, true)
		return nil
	}
	return r.success()
}

// callModel sends the conversation and returns the complete response.
func (r *run) callModel() (*llm.Response, error) {
	s := r.s
	req := s.buildRequest()
	if s.cfg.OnRequest != nil {
		s.cfg.OnRequest(req)
	}
	obs := llm.Observer{
		Retry: func(rt llm.Retry) {
			msg := &protocol.System{
				Subtype: protocol.SubtypeAPIRetry, SessionID: s.cfg.SessionID, UUID: uuid.NewString(),
				Attempt: rt.Attempt, MaxRetries: rt.MaxRetries, RetryDelayMS: rt.Delay.Milliseconds(),
				ErrorStatus: rt.Status, Error: errorKind(rt.Err), Cause: rt.Cause,
			}
			r.emit(msg)
		},
	}
	if s.cfg.IncludePartial {
		obs.Event = func(ev llm.StreamEvent) {
			r.emit(&protocol.StreamEvent{Type: "stream_event", Event: ev.Raw, ParentToolUseID: r.parentID,
				SessionID: s.cfg.SessionID, UUID: uuid.NewString()})
		}
	}
	t0 := time.Now()
	resp, err := s.cfg.Provider.Stream(r.ctx, req, obs)
	r.apiTime += time.Since(t0)
	if err != nil {
		return nil, err
	}
	s.account(req.Model, resp, true)
	u := resp.Usage
	r.lastUsage = &u
	s.mu.Lock()
	s.lastUsage = &u
	s.mu.Unlock()
	return resp, nil
}

// switchToFallback moves the session to the fallback model when the current
// one stayed overloaded through every retry. It reports whether it switched.
func (r *run) switchToFallback(err error) bool {
	s := r.s
	fb := s.cfg.FallbackModel
	var apiErr *llm.APIError
	if fb.ID == "" || !errors.As(err, &apiErr) || (apiErr.Status != 529 && apiErr.Type != "overloaded_error") {
		return false
	}
	s.mu.Lock()
	from := s.model.ID
	switched := from != fb.ID
	s.model = fb
	s.mu.Unlock()
	if switched {
		r.emit(&protocol.System{Subtype: protocol.SubtypeModelFallback, SessionID: s.cfg.SessionID, UUID: uuid.NewString(),
			Fields: map[string]any{"from": from, "to": fb.ID, "reason": apiErr.Error()}})
	}
	return switched
}

// errorKind is the short error name of an api_retry message.
func errorKind(err error) string {
	var apiErr *llm.APIError
	if errors.As(err, &apiErr) {
		switch {
		case apiErr.Type != "":
			return apiErr.Type
		case apiErr.Status == 429:
			return "rate_limit"
		case apiErr.Status >= 500:
			return "server_error"
		}
	}
	if err != nil && strings.Contains(err.Error(), "incomplete response stream") {
		return "stream_interrupted"
	}
	return "unknown"
}

// appendAssistant records the response, one message per content block (the
// blocks share the API message id), and returns its tool calls. A tool call
// whose input is not a JSON object is kept with input {} so the conversation
// stays valid; the call then fails with a tool_use_error.
func (r *run) appendAssistant(resp *llm.Response) []*call {
	s := r.s
	var calls []*call
	for i := range resp.Content {
		b := &resp.Content[i]
		if b.Type != llm.TypeToolUse {
			continue
		}
		c := &call{id: b.ID, name: b.Name, input: b.Input}
		if !isJSONObject(b.Input) {
			c.badInput = fmt.Sprintf("the input of %s was not a JSON object: %s", b.Name, truncate(string(b.Input), 200))
			b.Input = json.RawMessage("{}")
			c.input = b.Input
		}
		calls = append(calls, c)
	}
	s.mu.Lock()
	s.messages = append(s.messages, resp.Message())
	s.usageAt = len(s.messages)
	s.mu.Unlock()

	stop := resp.StopReason
	spent := s.totalCost()
	for i, b := range resp.Content {
		msg := &protocol.Assistant{
			Type: "assistant",
			Message: protocol.APIMessage{
				ID: resp.ID, Type: "message", Role: llm.RoleAssistant, Model: resp.Model,
				Content: []llm.Block{b}, Usage: resp.Usage,
			},
			ParentToolUseID: r.parentID, SessionID: s.cfg.SessionID, UUID: uuid.NewString(), RequestID: resp.RequestID,
			SessionCostUSD: spent,
		}
		if i == len(resp.Content)-1 {
			msg.Message.StopReason = &stop
		}
		r.record(msg)
		r.emit(msg)
	}
	if text := llm.TextOf(resp.Content); text != "" || len(calls) == 0 {
		r.lastText = text
	}
	return calls
}

// appendPrompt adds the user's prompt. A resumed conversation may end
// with a user message (the results of an interrupted turn): the prompt then
// joins it, since roles must alternate.
func (r *run) appendPrompt(content []llm.Block) {
	s := r.s
	s.mu.Lock()
	last := len(s.messages) - 1
	merge := last >= 0 && s.messages[last].Role == llm.RoleUser
	if merge {
		s.messages[last].Content = append(append([]llm.Block(nil), s.messages[last].Content...), content...)
	}
	s.mu.Unlock()
	id := r.userUUID
	if id == "" {
		id = uuid.NewString()
	}
	msg := &protocol.User{Type: "user", Message: llm.Message{Role: llm.RoleUser, Content: content},
		ParentToolUseID: r.parentID, SessionID: s.cfg.SessionID, UUID: id, PromptID: r.promptID}
	if !merge {
		s.mu.Lock()
		s.messages = append(s.messages, msg.Message)
		s.mu.Unlock()
	}
	r.record(msg)
}

// appendUser adds a user message to the conversation and records it. emitted
// says whether surfaces see it too (tool results, interruption notes).
func (r *run) appendUser(m llm.Message, structured any, emitted bool) {
	r.appendUserAs(uuid.NewString(), m, structured, emitted)
}

// appendUserAs is appendUser with the message's uuid.
func (r *run) appendUserAs(id string, m llm.Message, structured any, emitted bool) {
	s := r.s
	s.mu.Lock()
	s.messages = append(s.messages, m)
	s.mu.Unlock()
	msg := &protocol.User{Type: "user", Message: m, ParentToolUseID: r.parentID, SessionID: s.cfg.SessionID,
		UUID: id, ToolUseResult: structured}
	r.record(msg)
	if emitted {
		r.emit(msg)
	}
}

func (r *run) record(m protocol.Message) {
	rec := r.s.cfg.Recorder
	if rec == nil || r.recordErr != nil {
		return
	}
	if err := rec.Record(m); err != nil {
		r.recordErr = err
	}
}

// interrupted ends a run cancelled by the user.
func (r *run) interrupted(reason string) *protocol.Result {
	note := "[Request interrupted by user]"
	if reason == "aborted_tools" {
		note = "[Request interrupted by user for tool use]"
	}
	s := r.s
	s.mu.Lock()
	last := len(s.messages) - 1
	lastIsUser := last >= 0 && s.messages[last].Role == llm.RoleUser
	s.mu.Unlock()
	if lastIsUser {
		// Keep roles alternating: the note joins the pending user message.
		s.mu.Lock()
		s.messages[last].Content = append(s.messages[last].Content, llm.Text(note))
		s.mu.Unlock()
		r.record(&protocol.User{Type: "user", Message: llm.Message{Role: llm.RoleUser, Content: []llm.Block{llm.Text(note)}},
			ParentToolUseID: r.parentID, SessionID: s.cfg.SessionID, UUID: uuid.NewString()})
	} else {
		r.appendUser(llm.Message{Role: llm.RoleUser, Content: []llm.Block{llm.Text(note)}}, nil, false)
	}
	res := r.errorResult(protocol.ResultDuringExecution, reason, "Interrupted by user")
	return res
}

func (r *run) success() *protocol.Result {
	res := r.result(protocol.ResultSuccess, "completed")
	text := r.lastText
	res.Result = &text
	return res
}

// Refuse ends a prompt that hooks refused before it was run (a slash
// command whose UserPromptExpansion hooks blocked it) as a refused
// UserPromptSubmit ends one: no request, an error result with terminal
// reason terminal carrying msg, emitted and returned.
func (s *Session) Refuse(terminal, msg string, emit Emit) *protocol.Result {
	r := &run{s: s, start: s.cfg.Now()}
	res := r.errorResult(protocol.ResultDuringExecution, terminal, msg)
	if emit != nil {
		emit(res)
	}
	return res
}

func (r *run) errorResult(subtype, terminal, msg string) *protocol.Result {
	res := r.result(subtype, terminal)
	res.IsError = true
	res.Errors = []string{msg}
	return res
}

func (r *run) result(subtype, terminal string) *protocol.Result {
	s := r.s
	res := &protocol.Result{
		Type: "result", Subtype: subtype, SessionID: s.cfg.SessionID, UUID: uuid.NewString(),
		NumTurns: r.turns, DurationMS: s.cfg.Now().Sub(r.start).Milliseconds(), DurationAPIMS: r.apiTime.Milliseconds(),
		ModelUsage: map[string]protocol.ModelUsage{}, PermissionDenials: r.denials, TerminalReason: terminal,
	}
	if res.PermissionDenials == nil {
		res.PermissionDenials = []protocol.PermissionDenial{}
	}
	if r.lastStop != "" {
		stop := r.lastStop
		res.StopReason = &stop
	}
	s.mu.Lock()
	r.tally.fill(res)
	s.mu.Unlock()
	return res
}

// totalCost is the session's spend so far.
func (s *Session) totalCost() float64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.total.cost
}

// Announce queues a note for the model (new tools that joined, a server
// that failed…). It is added to the next request's last user message, so
// that the cached prefix before it does not move. Safe from any goroutine.
func (s *Session) Announce(text string) {
	if strings.TrimSpace(text) == "" {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.announcements = append(s.announcements, text)
}

// flushAnnouncements adds the queued notes to the last user message.
func (r *run) flushAnnouncements() {
	s := r.s
	s.mu.Lock()
	notes := s.announcements
	s.announcements = nil
	s.mu.Unlock()
	if len(notes) > 0 && !r.addToLastUser(llm.Reminder("", strings.Join(notes, "\n"))) {
		s.mu.Lock()
		s.announcements = append(notes, s.announcements...) // no user message to carry them yet
		s.mu.Unlock()
	}
}

// deliverAsyncHooks gives the model, with its next request, what the async
// hooks that finished since the last one said — their system messages and
// additional context, as Claude Code delivers them on the next turn — and
// shows the user their system messages and failures. An async hook that
// ends while the session is idle is heard at the next prompt.
func (r *run) deliverAsyncHooks() {
	if r.s.cfg.Hooks == nil {
		return
	}
	rep := r.s.cfg.Hooks.TakeAsync()
	for _, m := range append(rep.SystemMessages, rep.Errors...) {
		r.notify(m)
	}
	r.asyncContext = append(r.asyncContext, rep.SystemMessages...)
	r.asyncContext = append(r.asyncContext, rep.AdditionalContext...)
	if len(r.asyncContext) > 0 && r.addToLastUser(hook.ContextBlock("Async", r.asyncContext)) {
		r.asyncContext = nil
	}
}

// addToLastUser adds block to the last message, which must be the user's,
// and records it; false when the last message is not the user's.
func (r *run) addToLastUser(block llm.Block) bool {
	s := r.s
	s.mu.Lock()
	last := len(s.messages) - 1
	if last < 0 || s.messages[last].Role != llm.RoleUser {
		s.mu.Unlock()
		return false
	}
	s.messages[last].Content = append(append([]llm.Block(nil), s.messages[last].Content...), block)
	s.mu.Unlock()
	r.record(&protocol.User{Type: "user", Message: llm.Message{Role: llm.RoleUser, Content: []llm.Block{block}},
		ParentToolUseID: r.parentID, SessionID: s.cfg.SessionID, UUID: uuid.NewString()})
	return true
}

// LastTool returns the last tool call's name and whether it was allowed
// ("allow"), denied ("deny") or left waiting for the host ("ask"); empty
// before any call.
func (s *Session) LastTool() (name, decision string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.lastTool[0], s.lastTool[1]
}

// Cost returns the session's spend so far in USD.
func (s *Session) Cost() float64 { return s.totalCost() }

// emptyPrompt reports whether a prompt holds nothing but empty text.
func emptyPrompt(blocks []llm.Block) bool {
	for _, b := range blocks {
		if b.Type != llm.TypeText || strings.TrimSpace(b.Text) != "" {
			return false
		}
	}
	return true
}

func isJSONObject(b json.RawMessage) bool {
	var m map[string]json.RawMessage
	return json.Unmarshal(b, &m) == nil && m != nil
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
