// Package agent is tack's Go SDK: it runs the same agent loop as the tack
// command, in-process. Query sends one prompt and yields the session's
// messages — the very messages `tack -p --output-format stream-json` prints —
// ending with a *ResultMessage.
//
//	for msg, err := range agent.Query(ctx, "What does main.go do?", agent.Options{Model: "sonnet"}) {
//		if err != nil {
//			log.Fatal(err)
//		}
//		if r, ok := msg.(*agent.ResultMessage); ok {
//			fmt.Println(r.Text())
//		}
//	}
package agent

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"sync/atomic"
	"unicode/utf8"

	"github.com/tackcode/tack/internal/protocol"
	"github.com/tackcode/tack/internal/runtime"
)

// ErrNoCredentials is returned when no API key or token is configured.
var ErrNoCredentials = errors.New("no API key: set ANTHROPIC_API_KEY (or ANTHROPIC_AUTH_TOKEN for a bearer token), an apiKeyHelper in settings, or run tack auth login")

// ErrNoPrompt is what Query yields when it is given no prompt and no
// SessionStart hook gave a first user message either.
var ErrNoPrompt = errors.New("no prompt")

// Prepare parses what every session's start needs (the model catalogue,
// the built-in agents), once per process. A session's start does it
// anyway, on another core while it begins; a program that knows early
// that it will start one can call Prepare sooner, on a goroutine of its
// own, so that the start finds it done.
func Prepare() { runtime.Prepare() }

// Query runs one prompt in a new session and yields its messages: a
// system/init message, the assistant and user messages of the loop, and a
// final *ResultMessage. A SessionStart hook may give a first user message
// (initialUserMessage): it runs first, as a prompt of its own with its own
// result, and prompt may then be "". A setup failure (bad options, no
// credentials) is yielded as an error instead, and so is ErrNoPrompt. ctx
// bounds the session from its start-up (the SessionStart hooks run under
// it) to its end; breaking out of the loop cancels the run.
func Query(ctx context.Context, prompt string, opts Options) iter.Seq2[Message, error] {
	return func(yield func(Message, error) bool) {
		s, err := start(ctx, opts)
		if err != nil {
			yield(nil, err)
			return
		}
		defer s.Close(ctx, runtime.EndOther)
		var prompts []string
		for _, p := range []string{s.InitialUserMessage(), prompt} {
			if p != "" {
				prompts = append(prompts, p)
			}
		}
		if len(prompts) == 0 {
			yield(nil, ErrNoPrompt)
			return
		}
		ctx, cancel := context.WithCancel(ctx)
		defer cancel()
		out := newOutbox(opts.MaxToolResultSize)
		go func() {
			defer out.close()
			for i, p := range prompts {
				if ctx.Err() != nil {
					return
				}
				out.last.Store(i == len(prompts)-1)
				runPrompt(ctx, s, Prompt{Text: p}, out, false)
			}
		}()
		out.deliver(yield, cancel)
	}
}

// start builds the session opts describe.
func start(ctx context.Context, opts Options) (*runtime.Session, error) {
	cfg, err := opts.config()
	if err != nil {
		return nil, err
	}
	s, err := runtime.New(ctx, cfg)
	if err != nil {
		return nil, startError(err)
	}
	return s, nil
}

// startError gives the runtime's start-up errors that callers test for
// their public form.
func startError(err error) error {
	var untrusted *runtime.UntrustedWorkspaceError
	switch {
	case errors.As(err, &untrusted):
		return &UntrustedWorkspaceError{Dir: untrusted.Dir, Setting: untrusted.Setting}
	case errors.Is(err, runtime.ErrNoCredentials):
		return ErrNoCredentials
	}
	return err
}

// runPrompt runs one prompt of a session, sending what it produces to out.
func runPrompt(ctx context.Context, s *runtime.Session, p Prompt, out *outbox, replay bool) {
	emit := out.emit
	if replay {
		emit = replayEmit(&p, s.SessionID(), emit)
	}
	if err := s.RunPrompt(ctx, runtime.Prompt{Text: p.Text, ID: p.ID, Content: llmBlocks(p.Content)}, emit); err != nil {
		out.fail(err)
	}
}

// outbox carries a session's messages from the goroutines that make them
// (the run, subagents running in parallel) to the one goroutine that yields
// them to the caller, in the order they were made.
type outbox struct {
	ch      chan item
	stopped chan struct{} // closed when the caller stops reading
	// maxToolResult bounds the tool results the caller sees (characters;
	// 0: no bound). The model and the transcript get them whole.
	maxToolResult int
	// last marks the results of the prompt being run as the last's
	// (ResultMessage.Last).
	last atomic.Bool
}

type item struct {
	m   Message
	err error
}

func newOutbox(maxToolResult int) *outbox {
	return &outbox{ch: make(chan item, 64), stopped: make(chan struct{}), maxToolResult: maxToolResult}
}

// emit sends the runtime's message m; safe for concurrent use. After the
// caller stopped reading, messages are dropped.
func (o *outbox) emit(rm protocol.Message) {
	m := publicMessage(rm)
	if o.maxToolResult > 0 {
		m = clipToolResults(m, o.maxToolResult)
	}
	if r, ok := m.(*ResultMessage); ok && o.last.Load() {
		r.last = true
	}
	select {
	case o.ch <- item{m: m}:
	case <-o.stopped:
	}
}

func (o *outbox) fail(err error) {
	select {
	case o.ch <- item{err: err}:
	case <-o.stopped:
	}
}

func (o *outbox) close() { close(o.ch) }

// deliver yields every message until the producer closes the outbox. When
// the caller breaks out, the run is cancelled and the rest drained.
func (o *outbox) deliver(yield func(Message, error) bool, cancel context.CancelFunc) {
	for it := range o.ch {
		if !yield(it.m, it.err) {
			close(o.stopped)
			cancel()
			for range o.ch {
			}
			return
		}
	}
}

// clipToolResults cuts the text of m's tool results to max characters
// (m is the caller's copy: the session keeps them whole).
func clipToolResults(m Message, max int) Message {
	u, ok := m.(*UserMessage)
	if !ok {
		return m
	}
	clipped := false
	for _, b := range u.Message.Content {
		if b.Type != BlockToolResult {
			continue
		}
		for j, c := range b.Content {
			if c.Type == BlockText && utf8.RuneCountInString(c.Text) > max {
				r := []rune(c.Text)
				b.Content[j].Text = string(r[:max]) + fmt.Sprintf("\n… [%d more characters not shown]", len(r)-max)
				clipped = true
			}
		}
	}
	if clipped {
		// The structured form holds the whole output too.
		u.ToolUseResult = nil
	}
	return u
}
