package engine

import (
	"context"
	"fmt"
	"strings"

	"github.com/google/uuid"

	"github.com/tackcode/tack/internal/compact"
	"github.com/tackcode/tack/internal/hook"
	"github.com/tackcode/tack/internal/llm"
	"github.com/tackcode/tack/internal/protocol"
)

// Compaction configures how a session compacts its conversation.
type Compaction struct {
	// Threshold is the share of the context window at which the
	// conversation is compacted before the next request: 0 means
	// compact.DefaultThreshold, negative never compacts automatically.
	Threshold float64
	// KeepMessages is how many of the latest messages stay verbatim.
	KeepMessages int
	// Memory re-reads the root memory from disk for the new history.
	Memory func() []llm.Block
}

// CompactRecorder is a Recorder that can mark a compaction: the records
// after it start a new chain, opened by the new history's first message.
type CompactRecorder interface {
	RecordCompaction(trigger string, preTokens int, first protocol.Message) error
}

// Compact replaces the conversation with a summary now ("/compact"). It
// returns the result message of the operation (also emitted).
func (s *Session) Compact(ctx context.Context, instructions string, emit Emit) *protocol.Result {
	if emit == nil {
		emit = func(protocol.Message) {}
	}
	r := &run{s: s, ctx: ctx, emit: emit, start: s.cfg.Now(), promptID: uuid.NewString()}
	s.mu.Lock()
	s.current = &r.tally
	empty := len(s.messages) == 0
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		s.current = nil
		s.mu.Unlock()
	}()
	var res *protocol.Result
	switch {
	case empty:
		res = r.errorResult(protocol.ResultDuringExecution, "nothing_to_compact", "There is no conversation to compact yet.")
	default:
		if err := r.compact("manual", instructions); err != nil {
			res = r.errorResult(protocol.ResultDuringExecution, "compact_failed", "Compaction failed: "+err.Error())
		} else {
			res = r.result(protocol.ResultSuccess, "compacted")
			text := "Conversation compacted."
			res.Result = &text
		}
	}
	r.finish(res)
	return res
}

// needsCompaction reports whether the conversation has grown near the
// model's window, judging by the last request's usage.
func (r *run) needsCompaction() bool {
	s := r.s
	if s.cfg.Compaction.Threshold < 0 {
		return false
	}
	threshold := s.cfg.Compaction.Threshold
	if threshold == 0 {
		threshold = compact.DefaultThreshold
	}
	window := s.Model().ContextWindow
	if r.lastUsage != nil {
		return compact.ShouldCompact(*r.lastUsage, window, threshold)
	}
	s.mu.Lock()
	msgs := s.messages
	last, at := s.lastUsage, s.usageAt
	s.mu.Unlock()
	if last != nil && at <= len(msgs) {
		// No response yet in this run, but an earlier run's last one
		// measured the history up to it: only what came after is
		// estimated, so a prompt's check does not grow with the session.
		used := compact.UsedTokens(*last) + int64(compact.EstimateTokens(msgs[at:]))
		return float64(used) >= threshold*float64(window)
	}
	// No response yet in this session (a resumed one, say): estimate.
	return float64(compact.EstimateTokens(msgs)) >= threshold*float64(window)
}

// compact summarises the conversation and replaces it: PreCompact hooks,
// the summary (by the session's model, with the session's own system
// prompt and tools so it reads from the cache), root memory re-read from
// disk, the user's instructions kept verbatim, the transcript marked,
// PostCompact and SessionStart("compact") hooks.
func (r *run) compact(trigger, instructions string) error {
	s := r.s
	r.fireHook(&hook.PreCompactInput{Base: r.hookBase(), Trigger: trigger, CustomInstructions: instructions})
	r.emit(&protocol.System{Subtype: protocol.SubtypeStatus, SessionID: s.cfg.SessionID, UUID: uuid.NewString(),
		Fields: map[string]any{"status": "compacting"}})

	req := s.buildRequest()
	var memory []llm.Block
	if f := s.cfg.Compaction.Memory; f != nil {
		memory = f()
	}
	s.mu.Lock()
	msgs := append([]llm.Message(nil), s.messages...)
	model := s.model
	s.mu.Unlock()
	var cache *llm.CacheControl
	if !s.cfg.DisableCache {
		cache = &llm.CacheControl{Type: "ephemeral", TTL: s.cfg.CacheTTL}
	}
	out, err := compact.Compact(r.ctx, s.cfg.Provider, compact.CompactRequest{
		SummaryRequest: compact.SummaryRequest{Model: model.ID, Messages: msgs, Instructions: instructions,
			ContextWindow: model.ContextWindow, System: req.System, Tools: req.Tools, Cache: cache},
		Memory: memory, KeepMessages: s.cfg.Compaction.KeepMessages,
	})
	if err != nil {
		return err
	}
	s.account(model.ID, &llm.Response{Model: out.Model, Usage: out.Usage}, true)

	// SessionStart hooks with source "compact" may add context to the new
	// history, in its first message.
	start := r.fireHook(&hook.SessionStartInput{Base: r.hookBase(), Source: "compact", Model: model.ID})
	if len(start.AdditionalContext) > 0 && len(out.Messages) > 0 {
		first := &out.Messages[0]
		first.Content = append(first.Content, hook.ContextBlock("SessionStart", start.AdditionalContext))
	}

	s.mu.Lock()
	s.messages = out.Messages
	s.prevLast = -1
	// Calls left waiting by a deferral went with the history summarised.
	s.waiting = nil
	s.lastUsage = nil
	s.mu.Unlock()
	r.lastUsage = nil

	// The transcript: a boundary, then the new history as records.
	if rec, ok := s.cfg.Recorder.(CompactRecorder); ok && r.recordErr == nil && len(out.Messages) > 0 {
		first := &protocol.User{Type: "user", Message: out.Messages[0], ParentToolUseID: r.parentID,
			SessionID: s.cfg.SessionID, UUID: uuid.NewString()}
		if err := rec.RecordCompaction(trigger, out.TokensBefore, first); err != nil {
			r.recordErr = err
		}
		for _, m := range out.Messages[1:] {
			r.recordMessage(m)
		}
	}
	r.emit(&protocol.System{Subtype: protocol.SubtypeCompactBoundary, SessionID: s.cfg.SessionID, UUID: uuid.NewString(),
		Fields: map[string]any{"compact_metadata": map[string]any{"trigger": trigger, "pre_tokens": out.TokensBefore}}})
	r.fireHook(&hook.PostCompactInput{Base: r.hookBase(), Trigger: trigger, CompactSummary: out.Summary})
	r.notify(fmt.Sprintf("Compacted the conversation (%s): about %d tokens → %d; %d of your instructions kept verbatim.",
		trigger, out.TokensBefore, out.TokensAfter, len(out.Instructions)))
	return nil
}

// recordMessage records a message of a rebuilt history: an assistant
// message block by block, a user message whole.
func (r *run) recordMessage(m llm.Message) {
	s := r.s
	if m.Role == llm.RoleUser {
		r.record(&protocol.User{Type: "user", Message: m, ParentToolUseID: r.parentID, SessionID: s.cfg.SessionID, UUID: uuid.NewString()})
		return
	}
	id := "msg_" + strings.ReplaceAll(uuid.NewString(), "-", "")
	for _, b := range m.Content {
		r.record(&protocol.Assistant{Type: "assistant", Message: protocol.APIMessage{ID: id, Type: "message", Role: llm.RoleAssistant,
			Content: []llm.Block{b}}, ParentToolUseID: r.parentID, SessionID: s.cfg.SessionID, UUID: uuid.NewString()})
	}
}
