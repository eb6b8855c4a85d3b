package engine

import (
	"slices"

	"github.com/tackcode/tack/internal/llm"
)

// buildRequest assembles the next request from the conversation. Cache
// breakpoints go on the last system block, on the last block of the message
// that ended the previous request (so this request reads all of it from
// cache, however many blocks were added since) and on the last block of the
// conversation (so the next request can read this one). History is never
// modified: marked blocks are copies.
func (s *Session) buildRequest() *llm.Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	model := s.model
	maxTokens := s.cfg.MaxTokens
	if maxTokens <= 0 || maxTokens > model.MaxOutput {
		maxTokens = model.MaxOutput
	}
	req := &llm.Request{
		Model:     model.ID,
		MaxTokens: maxTokens,
		Thinking:  s.thinking,
		Tools:     s.toolSpecs(),
		UserID:    s.cfg.UserID,
		Cache:     &s.encoded,
		// The messages extend the previous request's array (see
		// sentMessages), as the encode cache may then assume.
		Extends: true,
	}
	s.sentTools = req.Tools
	req.Betas = append(req.Betas, s.cfg.Betas...)
	if s.cfg.Effort != "" && model.Effort {
		req.Effort = s.cfg.Effort
		req.Betas = addBeta(req.Betas, llm.EffortBeta)
	}
	if s.cfg.TaskBudget > 0 {
		req.TaskBudget = s.cfg.TaskBudget
		req.Betas = addBeta(req.Betas, llm.TaskBudgetBeta)
	}
	for _, t := range req.Tools {
		if t.DeferLoading && !slices.Contains(req.Betas, ToolSearchBeta) {
			// Deferred tools stay out of the context until a tool search
			// references them: an API feature behind this beta.
			req.Betas = append(req.Betas, ToolSearchBeta)
			break
		}
	}
	msgs := s.sentMessages()
	req.System = append([]llm.Block(nil), s.cfg.System...)
	if !s.cfg.DisableCache {
		cc := &llm.CacheControl{Type: "ephemeral", TTL: s.cfg.CacheTTL}
		if n := len(req.System); n > 0 {
			req.System[n-1].CacheControl = cc
		}
		last := len(msgs) - 1
		if p := s.prevLast; p >= 0 && p < last {
			markLast(&msgs[p], cc)
			s.marks = append(s.marks, p)
		}
		if last >= 0 {
			markLast(&msgs[last], cc)
			s.marks = append(s.marks, last)
		}
		s.prevLast = last
	}
	req.Messages = msgs
	return req
}

// sentMessages is the messages array of the next request, unmarked: the
// previous request's, with its breakpoints' copies put back to the
// history's messages and the new messages appended. A session's history
// only grows between requests, and only its last message is ever edited
// in place (a block added to it), so while the history is the array the
// previous request's was taken from, the array is extended: that costs
// the new messages, where a copy, or a comparison, would cost the whole
// history (and its garbage) at every request. When the history is another
// array (compaction, a restore, or the history outgrowing its capacity),
// the two are compared message by message, and the array is built anew
// if they differ. The previous request is over by then: nothing reads its
// array again. The result is capped, so that the next request's appends
// never write into an array a request holds. The caller holds s.mu.
func (s *Session) sentMessages() []llm.Message {
	n := len(s.messages)
	for _, p := range s.marks {
		if p < len(s.sent) && p < n {
			s.sent[p] = s.messages[p]
		}
	}
	s.marks = s.marks[:0]
	if k := len(s.sent); k == 0 || k > n || !s.sentFrom(k) {
		// Room for the turns to come: appends then copy nothing.
		s.sent = make([]llm.Message, n, n+n/4+8)
		copy(s.sent, s.messages)
	} else {
		// The last message the previous request sent may have been
		// edited since; the ones before it were not.
		s.sent[k-1] = s.messages[k-1]
		s.sent = append(s.sent, s.messages[k:]...)
	}
	if n > 0 {
		s.sentOf = &s.messages[0]
	}
	return s.sent[:n:n]
}

// sentFrom reports whether the first k-1 messages of sent are the
// history's: at once when the history is the array they were taken from,
// else by comparing them.
func (s *Session) sentFrom(k int) bool {
	if &s.messages[0] == s.sentOf {
		return true
	}
	return sameMessages(s.sent[:k-1], s.messages)
}

// sameMessages reports whether sent is a prefix of msgs, message by
// message: the same role and the same content slice.
func sameMessages(sent, msgs []llm.Message) bool {
	for i := range sent {
		a, b := &sent[i], &msgs[i]
		if a.Role != b.Role || len(a.Content) != len(b.Content) || (len(a.Content) > 0 && &a.Content[0] != &b.Content[0]) {
			return false
		}
	}
	return true
}

// ToolSearchBeta is the anthropic-beta value of deferred tool loading.
const ToolSearchBeta = "advanced-tool-use-2025-11-20"

// markLast puts a breakpoint on the last cacheable block of m, on a copy.
func markLast(m *llm.Message, cc *llm.CacheControl) {
	for i := len(m.Content) - 1; i >= 0; i-- {
		switch m.Content[i].Type {
		case llm.TypeThinking, llm.TypeRedactedThinking:
			continue // thinking blocks cannot carry cache_control
		}
		content := append([]llm.Block(nil), m.Content...)
		content[i].CacheControl = cc
		m.Content = content
		return
	}
}

// toolSpecs is the tools array of a request: the registry's, as it is at
// this request (MCP servers join, tools get deferred). A resumed session's
// recorded array (Config.ToolSpecs) is sent instead while it offers exactly
// the same tools, so that its bytes — and the prompt cache — stay as they
// were.
func (s *Session) toolSpecs() []llm.ToolSpec {
	now := s.cfg.Tools.Specs()
	if s.cfg.ToolSpecs != nil && sameTools(s.cfg.ToolSpecs, now) {
		return s.cfg.ToolSpecs
	}
	return now
}

// sameTools reports whether a recorded tools array offers exactly the tools
// offered now, deferred alike.
func sameTools(recorded, now []llm.ToolSpec) bool {
	if len(recorded) != len(now) {
		return false
	}
	deferred := make(map[string]bool, len(now))
	for _, t := range now {
		deferred[t.Name] = t.DeferLoading
	}
	for _, t := range recorded {
		if d, ok := deferred[t.Name]; !ok || d != t.DeferLoading {
			return false
		}
	}
	return true
}

// SentTools is the tools array of the latest request (nil before the
// first): what a resumed session re-sends to keep the prompt cache.
func (s *Session) SentTools() []llm.ToolSpec {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.sentTools
}

// addBeta adds beta to betas unless it is there.
func addBeta(betas []string, beta string) []string {
	if slices.Contains(betas, beta) {
		return betas
	}
	return append(betas, beta)
}
