package agent

import (
	"context"
	"encoding/json"
	"errors"
	"iter"
	"strings"
	"sync"

	"github.com/google/uuid"

	"github.com/tackcode/tack/internal/llm"
	"github.com/tackcode/tack/internal/lsp"
	"github.com/tackcode/tack/internal/runtime"
)

// Session states, as reported by messages of subtype
// SubtypeSessionStateChanged when Options.SessionStateMessages is set.
const (
	StateRunning        = "running"
	StateIdle           = "idle"
	StateRequiresAction = "requires_action"
)

// ErrClientClosed is returned by Send after CloseSend or Close.
var ErrClientClosed = errors.New("agent: the client is closed")

// Prompt is one user message given to a Client.
type Prompt struct {
	Text string
	// ID identifies the message to the caller (the Agent SDK's message
	// uuid); Interrupt and CancelQueued report queued prompts by it.
	ID string
	// Content, when set, is the whole message (text and images, e.g.
	// ImageBlock), sent instead of Text; Text is then only its text.
	Content []ContentBlock
}

// Client is a multi-turn session. Prompts given to Send are queued and run
// one after the other in the same conversation; Messages yields what every
// run produces, in order, each run ending with a *ResultMessage.
//
//	c, err := agent.NewClient(ctx, opts)
//	if err != nil { … }
//	defer c.Close()
//	c.Send("Read main.go")
//	c.Send("Now add a test for it")
//	c.CloseSend()
//	for msg, err := range c.Messages() { … }
//
// Messages must have one reader; until it reads, runs wait for it.
type Client struct {
	s      *runtime.Session
	out    *outbox
	ctx    context.Context // ends every run
	cancel context.CancelFunc
	states bool
	replay bool

	mu        sync.Mutex
	queue     []Prompt
	wake      chan struct{} // a prompt was queued, or CloseSend called
	sendEnded bool
	runCancel context.CancelFunc // the running prompt's, nil between runs

	// outMu keeps barriers (Flush) from being sent once the outbox closed.
	outMu     sync.RWMutex
	outClosed bool

	done      chan struct{} // closed when the worker has ended
	stopOnce  sync.Once     // stops delivery (out.stopped)
	closeOnce sync.Once
}

// NewClient starts a session with opts. ctx bounds the whole session,
// its start-up included (the SessionStart hooks run under it): cancelling it
// interrupts the running prompt and drops the queued ones.
func NewClient(ctx context.Context, opts Options) (*Client, error) {
	c := &Client{out: newOutbox(opts.MaxToolResultSize), states: opts.SessionStateMessages, replay: opts.ReplayUserMessages,
		wake: make(chan struct{}, 1), done: make(chan struct{})}
	if ask := opts.CanUseTool; ask != nil && c.states {
		// The session waits for its host while the callback decides.
		opts.CanUseTool = func(ctx context.Context, name string, input json.RawMessage, info ToolPermissionContext) (PermissionResult, error) {
			c.state(StateRequiresAction)
			defer c.state(StateRunning)
			return ask(ctx, name, input, info)
		}
	}
	s, err := start(ctx, opts)
	if err != nil {
		return nil, err
	}
	c.s = s
	c.ctx, c.cancel = context.WithCancel(ctx)
	go c.work()
	return c, nil
}

// SessionID returns the session's id.
func (c *Client) SessionID() string { return c.s.SessionID() }

// Info describes the session: model, mode, commands, agents, MCP servers.
func (c *Client) Info() ClientInfo { return infoOf(c.s.Info()) }

// MCPServers returns the state of each MCP server of the session.
func (c *Client) MCPServers() []MCPServerStatus { return convert(c.s.MCPStatuses(), mcpStatusOf) }

// LanguageServers returns the state of each language server of the session
// (none when lspServers configures none).
func (c *Client) LanguageServers() []LanguageServerStatus {
	m := c.s.LSP()
	if m == nil {
		return nil
	}
	return convert(m.Statuses(), func(s lsp.Status) LanguageServerStatus { return LanguageServerStatus(s) })
}

// Send queues a prompt; it runs once the prompts before it have.
func (c *Client) Send(prompt string) error { return c.SendPrompt(Prompt{Text: prompt}) }

// SendPrompt queues a prompt with an id.
func (c *Client) SendPrompt(p Prompt) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.sendEnded {
		return ErrClientClosed
	}
	c.queue = append(c.queue, p)
	c.signal()
	return nil
}

// Inject adds a user message to the prompt that is running, as a user
// typing while the agent works: it joins the next request (with the
// results of the tool calls in flight), and the turn goes on with it. When
// no prompt is running it is queued like Send, and Inject returns false. A
// message injected as a run ends is not lost: it runs as the next prompt.
func (c *Client) Inject(text string) (delivered bool, err error) {
	return c.InjectPrompt(Prompt{Text: text})
}

// InjectPrompt is Inject for a prompt with an id: with
// Options.ReplayUserMessages, a message that joins the running prompt is
// echoed at once as a user message with its id and isReplay, as a queued
// prompt is when its run starts; one that finds no prompt running is
// queued like SendPrompt, and echoed when it runs.
func (c *Client) InjectPrompt(p Prompt) (delivered bool, err error) {
	if strings.TrimSpace(p.Text) == "" {
		return false, errors.New("inject: empty message")
	}
	c.mu.Lock()
	ended := c.sendEnded
	c.mu.Unlock()
	if ended {
		return false, ErrClientClosed
	}
	if !c.s.Inject([]llm.Block{llm.Text(p.Text)}) {
		return false, c.SendPrompt(p)
	}
	if c.replay {
		c.outMu.RLock()
		if !c.outClosed {
			c.out.emit(replayEcho(&p, c.SessionID()))
		}
		c.outMu.RUnlock()
	}
	return true, nil
}

// CloseSend says no more prompts will come: once the queued ones have run,
// Messages ends.
func (c *Client) CloseSend() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.sendEnded = true
	c.signal()
}

// signal wakes the worker; c.mu is held.
func (c *Client) signal() {
	select {
	case c.wake <- struct{}{}:
	default:
	}
}

// Interrupt stops the running prompt, which ends with an error result
// (terminal reason aborted_streaming or aborted_tools); the queued prompts
// still run. It returns the ids of the prompts still queued.
func (c *Client) Interrupt() (stillQueued []string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.runCancel != nil {
		c.runCancel()
	}
	return ids(c.queue)
}

// CancelQueued drops the queued prompts that have not started and returns
// their ids.
func (c *Client) CancelQueued() (cancelled []string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := ids(c.queue)
	c.queue = nil
	return out
}

func ids(ps []Prompt) []string {
	out := []string{}
	for _, p := range ps {
		if p.ID != "" {
			out = append(out, p.ID)
		}
	}
	return out
}

// SetModel switches the model for the following requests ("" for the
// default one) and returns the model id now in use. It refuses a name
// that is no model (listing the aliases) and a model the availableModels
// setting does not allow; the model in use is then unchanged.
func (c *Client) SetModel(model string) (string, error) { return c.s.SetModel(model) }

// SetMaxThinkingTokens turns extended thinking on with this budget for the
// following requests, or off with 0.
func (c *Client) SetMaxThinkingTokens(n int) { c.s.SetMaxThinkingTokens(n) }

// SetPermissionMode changes the permission mode for the calls decided from
// now on, the running prompt's included.
func (c *Client) SetPermissionMode(mode PermissionMode) error {
	return c.s.SetPermissionMode(string(mode))
}

// RewindFiles puts the files that Edit, Write and NotebookEdit changed
// back as they were before the prompt whose user message is messageID
// (Prompt.ID, or the uuid in the transcript); dryRun only reports what
// would change. It needs Options.FileCheckpointing.
func (c *Client) RewindFiles(messageID string, dryRun bool) RewindResult {
	return RewindResult(c.s.RewindFiles(messageID, dryRun))
}

// RewindResult says what RewindFiles did (or, for a dry run, would do).
type RewindResult struct {
	CanRewind    bool     `json:"canRewind"`
	Error        string   `json:"error,omitempty"`
	FilesChanged []string `json:"filesChanged,omitempty"`
	Insertions   int      `json:"insertions"`
	Deletions    int      `json:"deletions"`
}

// Messages yields the messages of every run, in order, until the queue is
// done after CloseSend, or Close. An error is a run that could not start
// (its prompt got no result); the following runs go on. Breaking out of the
// loop drops the messages that follow, and with them the runs' output.
func (c *Client) Messages() iter.Seq2[Message, error] {
	return func(yield func(Message, error) bool) {
		for it := range c.out.ch {
			if b, ok := it.m.(barrier); ok {
				close(b)
				continue
			}
			if !yield(it.m, it.err) {
				c.stop()
				// The rest is dropped without holding the caller up.
				go func() {
					for it := range c.out.ch {
						if b, ok := it.m.(barrier); ok {
							close(b)
						}
					}
				}()
				return
			}
		}
	}
}

// ReceiveResponse yields the messages of one prompt, up to and including
// its result, then returns; the next call yields the next prompt's. It is
// the turn-by-turn alternative to Messages (not to be mixed with it):
//
//	c.Send("Read main.go")
//	for msg, err := range c.ReceiveResponse() { … }
//	c.Send("Now add a test for it")
//	for msg, err := range c.ReceiveResponse() { … }
//
// Breaking out early leaves the rest of the prompt's messages for the next
// call. It returns at once when the session has ended.
func (c *Client) ReceiveResponse() iter.Seq2[Message, error] {
	return func(yield func(Message, error) bool) {
		for it := range c.out.ch {
			if b, ok := it.m.(barrier); ok {
				close(b)
				continue
			}
			_, last := it.m.(*ResultMessage)
			if !yield(it.m, it.err) || last || it.err != nil {
				return
			}
		}
	}
}

// Flush returns once every message emitted so far by the running prompt
// has been yielded by Messages (and so handled by its reader), or when ctx
// ends. A host calls it before asking its user something about the run.
func (c *Client) Flush(ctx context.Context) error {
	c.outMu.RLock()
	if c.outClosed {
		c.outMu.RUnlock()
		return nil
	}
	b := make(barrier)
	c.out.emit(b)
	c.outMu.RUnlock()
	select {
	case <-b:
		return nil
	case <-c.out.stopped:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Close interrupts the running prompt, drops the queued ones and ends the
// session (SessionEnd hooks run, told EndOther; the transcript is closed).
// Messages not yet read are dropped.
func (c *Client) Close() error { return c.CloseFor(EndOther) }

// CloseFor is Close, telling the session's SessionEnd hooks why it ends: a
// host that has the user clear the conversation says EndClear, one that
// switches to another says EndResume, one whose user leaves at its prompt
// says EndPromptInputExit. Only the first Close or CloseFor counts.
func (c *Client) CloseFor(reason EndReason) error {
	c.closeOnce.Do(func() {
		c.cancel()
		c.CloseSend()
		c.stop()
		<-c.done
		c.s.Close(c.ctx, string(reason))
	})
	return nil
}

// Wait returns when the client has no more work: the queue ran out after
// CloseSend, or ctx ended.
func (c *Client) Wait(ctx context.Context) error {
	select {
	case <-c.done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (c *Client) stop() { c.stopOnce.Do(func() { close(c.out.stopped) }) }

// work runs the queued prompts one at a time.
func (c *Client) work() {
	defer close(c.done)
	defer func() {
		c.outMu.Lock()
		c.outClosed = true
		c.out.close()
		c.outMu.Unlock()
	}()
	idle := true
	for {
		p, ctx, ok := c.next()
		if !ok {
			return
		}
		if idle {
			c.state(StateRunning)
			idle = false
		}
		runPrompt(ctx, c.s, p, c.out, c.replay)
		c.mu.Lock()
		c.runCancel()
		c.runCancel = nil
		// What was injected too late to join the run comes next.
		if late := c.s.TakeUndelivered(); len(late) > 0 {
			c.queue = append([]Prompt{{Text: llm.TextOf(late)}}, c.queue...)
		}
		empty := len(c.queue) == 0
		c.mu.Unlock()
		if empty {
			c.state(StateIdle)
			idle = true
		}
	}
}

// next waits for a prompt and makes its run's context, under the lock so
// that an Interrupt cannot fall between the two.
func (c *Client) next() (Prompt, context.Context, bool) {
	for {
		c.mu.Lock()
		if c.ctx.Err() != nil {
			c.mu.Unlock()
			return Prompt{}, nil, false
		}
		if len(c.queue) > 0 {
			p := c.queue[0]
			c.queue = c.queue[1:]
			ctx, cancel := context.WithCancel(c.ctx)
			c.runCancel = cancel
			c.mu.Unlock()
			return p, ctx, true
		}
		ended := c.sendEnded
		c.mu.Unlock()
		if ended {
			return Prompt{}, nil, false
		}
		select {
		case <-c.wake:
		case <-c.ctx.Done():
		}
	}
}

// state emits a session_state_changed message when they were asked for.
func (c *Client) state(state string) {
	if !c.states {
		return
	}
	c.out.emit(&SystemMessage{Subtype: SubtypeSessionStateChanged, SessionID: c.SessionID(), UUID: uuid.NewString(),
		Fields: map[string]any{"state": state}})
}

// barrier marks a point in the outbox: Messages closes it when it gets
// there instead of yielding it.
type barrier chan struct{}

func (barrier) MessageType() string { return "barrier" }
