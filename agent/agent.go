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
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/google/uuid"

	"github.com/tackcode/tack/internal/llm"
	"github.com/tackcode/tack/internal/protocol"
)

// The message types a session yields. They are defined once, in tack's
// protocol package; stream-json prints their JSON form.
type (
	Message          = protocol.Message
	SystemMessage    = protocol.System
	InitInfo         = protocol.Init
	AssistantMessage = protocol.Assistant
	UserMessage      = protocol.User
	StreamEvent      = protocol.StreamEvent
	ResultMessage    = protocol.Result
	PermissionDenial = protocol.PermissionDenial
	ModelUsage       = protocol.ModelUsage
)

// ErrNoCredentials is returned when no API key or token is configured.
var ErrNoCredentials = errors.New("no API key: set ANTHROPIC_API_KEY (or ANTHROPIC_AUTH_TOKEN for a bearer token)")

// Query runs one prompt in a new session and yields its messages: a
// system/init message, the assistant and user messages of the loop, and a
// final *ResultMessage. A setup failure (bad options, no credentials) is
// yielded as an error instead. Breaking out of the loop cancels the run.
func Query(ctx context.Context, prompt string, opts Options) iter.Seq2[Message, error] {
	return func(yield func(Message, error) bool) {
		s, err := newSession(opts)
		if err != nil {
			yield(nil, err)
			return
		}
		defer s.close()
		ctx, cancel := context.WithCancel(ctx)
		defer cancel()
		out := newOutbox(opts.MaxToolResultSize)
		go func() {
			defer out.close()
			s.runPrompt(ctx, Prompt{Text: prompt}, out)
		}()
		out.deliver(yield, cancel)
	}
}

// runPrompt runs one prompt of a session, sending what it produces to out.
// Its user message is recorded under p.ID ("" for a new uuid).
func (s *agentSession) runPrompt(ctx context.Context, p Prompt, out *outbox) {
	prompt, id := p.Text, p.ID
	s.setOutbox(out)
	defer s.setOutbox(nil)
	s.prepareMCP(ctx)
	out.emit(s.initMessage())
	if s.skills != nil {
		s.turnSeq.Store(int64(s.skills.Seq()))
		// A skill's model holds until the end of the prompt that ran it.
		defer s.restoreModel()
	}
	content := []llm.Block{llm.Text(prompt)}
	if len(p.Content) > 0 {
		content = p.Content
	} else if cmd, ok, err := s.expandSlashCommand(ctx, prompt); ok {
		if err != nil {
			out.fail(err)
			return
		}
		content = cmd.content
	} else if expanded, ok, err := s.mcpPromptCommand(ctx, prompt); ok {
		if err != nil {
			out.fail(err)
			return
		}
		content = expanded
	}
	if instructions, ok := compactCommand(prompt); ok {
		s.engine.Compact(ctx, instructions, out.emit)
	} else {
		if id == "" {
			id = uuid.NewString()
		}
		if s.checkpoints != nil {
			s.checkpoints.begin(id)
		}
		s.run(ctx, id, content, out.emit)
	}
	// The record keeps the session's model, not a skill's.
	s.restoreModel()
	if err := s.saveRecord(s.lastTool()); err != nil {
		notify(s.opts, "session record: "+err.Error())
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
}

type item struct {
	m   Message
	err error
}

func newOutbox(maxToolResult int) *outbox {
	return &outbox{ch: make(chan item, 64), stopped: make(chan struct{}), maxToolResult: maxToolResult}
}

// emit sends m; safe for concurrent use. After the caller stopped reading,
// messages are dropped.
func (o *outbox) emit(m protocol.Message) {
	if o.maxToolResult > 0 {
		m = clipToolResults(m, o.maxToolResult)
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

// compactCommand recognises "/compact [instructions]".
func compactCommand(prompt string) (instructions string, ok bool) {
	p := strings.TrimSpace(prompt)
	if p != "/compact" && !strings.HasPrefix(p, "/compact ") && !strings.HasPrefix(p, "/compact\n") {
		return "", false
	}
	return strings.TrimSpace(strings.TrimPrefix(p, "/compact")), true
}

// clipToolResults returns m with the text of its tool results cut to max
// characters: a copy, since the message is the session's too.
func clipToolResults(m protocol.Message, max int) protocol.Message {
	u, ok := m.(*protocol.User)
	if !ok {
		return m
	}
	long := func(b llm.Block) bool { return b.Type == llm.TypeText && utf8.RuneCountInString(b.Text) > max }
	if !slices.ContainsFunc(u.Message.Content, func(b llm.Block) bool {
		return b.Type == llm.TypeToolResult && slices.ContainsFunc(b.Content, long)
	}) {
		return m
	}
	out := *u
	out.Message.Content = make([]llm.Block, len(u.Message.Content))
	for i, b := range u.Message.Content {
		if b.Type == llm.TypeToolResult {
			b.Content = slices.Clone(b.Content)
			for j, c := range b.Content {
				if long(c) {
					r := []rune(c.Text)
					b.Content[j].Text = string(r[:max]) + fmt.Sprintf("\n… [%d more characters not shown]", len(r)-max)
				}
			}
		}
		out.Message.Content[i] = b
	}
	// The structured form holds the whole output too.
	out.ToolUseResult = nil
	return &out
}
