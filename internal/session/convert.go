package session

import (
	"slices"
	"strings"

	"github.com/tackcode/tack/internal/llm"
)

// conversation turns chain records into API messages the model accepts:
// roles alternate and start with the user, consecutive records of one role
// become one message, and each tool_use is answered by exactly one
// tool_result in the next message (results first, in tool_use order).
func conversation(nodes []*node) []llm.Message {
	// Group the records of one API message first: a response that holds
	// only thinking (cut off before any text or call) is dropped before it
	// could merge with another response.
	type group struct {
		role   llm.Role
		id     string
		blocks []llm.Block
	}
	groups := make([]group, 0, len(nodes))
	for _, n := range nodes {
		if !isMessage(n) || n.sidechain || n.teamName || !n.hasMessage {
			continue
		}
		role, id := llm.RoleUser, ""
		if n.typ == TypeAssistant {
			role, id = llm.RoleAssistant, n.msgID
		}
		blocks := cleanBlocks(role, n.content)
		if len(blocks) == 0 {
			continue
		}
		if k := len(groups) - 1; k >= 0 && groups[k].role == role && (role == llm.RoleUser || id != "" && groups[k].id == id) {
			groups[k].blocks = append(groups[k].blocks, blocks...)
			continue
		}
		groups = append(groups, group{role: role, id: id, blocks: blocks})
	}
	msgs := make([]llm.Message, 0, len(groups))
	for _, g := range groups {
		if g.role == llm.RoleAssistant && onlyThinking(g.blocks) {
			continue
		}
		if k := len(msgs) - 1; k >= 0 && msgs[k].Role == g.role {
			msgs[k].Content = append(msgs[k].Content, g.blocks...)
			continue
		}
		msgs = append(msgs, llm.Message{Role: g.role, Content: g.blocks})
	}
	return answerToolUses(msgs)
}

// cleanBlocks returns the blocks the API may receive again: cache
// breakpoints are dropped (the engine places its own), as are empty text
// blocks and blocks the role cannot carry, which the API refuses. The
// result never shares spare capacity with in, so appending to it is safe.
func cleanBlocks(role llm.Role, in []llm.Block) []llm.Block {
	clean := true
	for i := range in {
		if !cleanBlock(role, &in[i]) {
			clean = false
			break
		}
	}
	if clean {
		return slices.Clip(in)
	}
	out := make([]llm.Block, 0, len(in))
	for _, b := range in {
		if b.Type == llm.TypeText && b.Raw == nil && strings.TrimSpace(b.Text) == "" || !allowed(role, b.Type) {
			continue
		}
		b.CacheControl = nil
		if b.Type == llm.TypeToolResult && len(b.Content) > 0 {
			inner := make([]llm.Block, len(b.Content))
			for i, c := range b.Content {
				c.CacheControl = nil
				inner[i] = c
			}
			b.Content = inner
		}
		out = append(out, b)
	}
	return out
}

// cleanBlock reports whether b can be sent as it is.
func cleanBlock(role llm.Role, b *llm.Block) bool {
	if b.CacheControl != nil || !allowed(role, b.Type) {
		return false
	}
	switch b.Type {
	case llm.TypeText:
		return b.Raw != nil || strings.TrimSpace(b.Text) != ""
	case llm.TypeToolResult:
		for i := range b.Content {
			if b.Content[i].CacheControl != nil {
				return false
			}
		}
	}
	return true
}

// answerToolUses makes the merged messages a valid conversation.
func answerToolUses(msgs []llm.Message) []llm.Message {
	out := make([]llm.Message, 0, len(msgs)+1)
	seenToolUse := map[string]bool{}
	appendAssistant := func(blocks []llm.Block) {
		if len(out) > 0 && out[len(out)-1].Role == llm.RoleAssistant {
			last := &out[len(out)-1]
			last.Content = append(last.Content, blocks...)
			return
		}
		out = append(out, llm.Message{Role: llm.RoleAssistant, Content: blocks})
	}
	for _, m := range msgs {
		if m.Role == llm.RoleAssistant {
			if len(out) == 0 {
				continue // the API wants a user message first
			}
			blocks := m.Content
			for i, b := range m.Content {
				if b.Type != llm.TypeToolUse {
					continue
				}
				// A tool_use without an id cannot be answered; a repeated id
				// (merged branches) would be answered twice.
				if b.ID == "" || seenToolUse[b.ID] {
					blocks = dropToolUses(m.Content, i, seenToolUse)
					break
				}
				seenToolUse[b.ID] = true
			}
			if onlyThinking(blocks) {
				continue
			}
			appendAssistant(blocks)
			continue
		}
		content := answer(pendingToolUses(out), m.Content)
		if len(content) == 0 {
			continue
		}
		if k := len(out) - 1; k >= 0 && out[k].Role == llm.RoleUser {
			// The assistant message between them was dropped.
			out[k].Content = append(out[k].Content, content...)
			continue
		}
		out = append(out, llm.Message{Role: llm.RoleUser, Content: content})
	}
	if pending := pendingToolUses(out); len(pending) > 0 {
		out = append(out, llm.Message{Role: llm.RoleUser, Content: answer(pending, nil)})
	}
	return out
}

// dropToolUses copies blocks without the tool_use blocks that have no id or
// an id seen before; blocks before index from were checked already.
func dropToolUses(blocks []llm.Block, from int, seen map[string]bool) []llm.Block {
	out := append([]llm.Block(nil), blocks[:from]...)
	for _, b := range blocks[from:] {
		if b.Type == llm.TypeToolUse {
			if b.ID == "" || seen[b.ID] {
				continue
			}
			seen[b.ID] = true
		}
		out = append(out, b)
	}
	return out
}

// pendingToolUses are the tool_use ids of out's last message when it is an
// assistant message.
func pendingToolUses(out []llm.Message) []string {
	if len(out) == 0 || out[len(out)-1].Role != llm.RoleAssistant {
		return nil
	}
	var ids []string
	for _, b := range out[len(out)-1].Content {
		if b.Type == llm.TypeToolUse {
			ids = append(ids, b.ID)
		}
	}
	return ids
}

// hasToolResult reports whether content holds a tool_result block.
func hasToolResult(content []llm.Block) bool {
	for i := range content {
		if content[i].Type == llm.TypeToolResult {
			return true
		}
	}
	return false
}

// answer builds a user message's content after an assistant message with
// the given tool_use ids: one result per id in that order (a synthetic error
// when the transcript has none), then the other blocks. Results that answer
// nothing, or answer an id twice, are dropped.
func answer(ids []string, content []llm.Block) []llm.Block {
	if len(ids) == 0 {
		if !hasToolResult(content) {
			return content // a prompt: nothing to drop, and nothing to copy
		}
		out := make([]llm.Block, 0, len(content))
		for _, b := range content {
			if b.Type != llm.TypeToolResult {
				out = append(out, b)
			}
		}
		return out
	}
	if answeredInOrder(ids, content) {
		return content
	}
	results := make(map[string]llm.Block, len(ids))
	for _, b := range content {
		if b.Type == llm.TypeToolResult {
			if _, dup := results[b.ToolUseID]; !dup {
				results[b.ToolUseID] = b
			}
		}
	}
	out := make([]llm.Block, 0, len(ids)+len(content))
	for _, id := range ids {
		if r, ok := results[id]; ok {
			out = append(out, r)
		} else {
			out = append(out, llm.ToolResult(id, InterruptedResult, true))
		}
	}
	for _, b := range content {
		if b.Type != llm.TypeToolResult {
			out = append(out, b)
		}
	}
	return out
}

// allowed reports whether a message of role may hold a block of type typ.
// Types tack does not model are kept: the API knows them.
func allowed(role llm.Role, typ string) bool {
	switch typ {
	case llm.TypeToolUse, llm.TypeServerToolUse, llm.TypeThinking, llm.TypeRedactedThinking:
		return role == llm.RoleAssistant
	case llm.TypeToolResult, llm.TypeImage, "document":
		return role == llm.RoleUser
	}
	return true
}

// answeredInOrder reports whether content already starts with one result
// per id, in order, and holds no other result.
func answeredInOrder(ids []string, content []llm.Block) bool {
	if len(content) < len(ids) {
		return false
	}
	for i, id := range ids {
		if content[i].Type != llm.TypeToolResult || content[i].ToolUseID != id {
			return false
		}
	}
	for _, b := range content[len(ids):] {
		if b.Type == llm.TypeToolResult {
			return false
		}
	}
	return true
}

func onlyThinking(blocks []llm.Block) bool {
	for _, b := range blocks {
		if b.Type != llm.TypeThinking && b.Type != llm.TypeRedactedThinking {
			return false
		}
	}
	return true
}
