package compact

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/tackcode/tack/internal/llm"
)

// Rebuilt is what a compacted history is made of.
type Rebuilt struct {
	// Memory holds the root memory blocks re-read from disk (CLAUDE.md…).
	// They open the history. Text not already inside <system-reminder> is
	// wrapped in one, so it is never taken for something the user typed.
	Memory []llm.Block
	// Attachments are further context blocks re-injected after the memory,
	// treated the same way: the latest invocation of each skill, output of
	// SessionStart hooks fired with source "compact", a plan file…
	Attachments []llm.Block
	// Summary is the model's summary of the compacted turns.
	Summary string
	// Instructions are the user's own messages (see UserInstructions).
	Instructions []string
	// Tail are the latest messages, kept verbatim after the summary (see
	// SplitTail); the summary may cover them too. It should start with an assistant message; Rebuild repairs
	// any shape, but then what it repairs is lost.
	Tail []llm.Message
}

// Rebuild returns the new history: one user message holding, in order, the
// memory, the attachments, the summary framed as a summary of the earlier
// conversation, and the user's instructions in a <user-instructions> section
// (one <user-instruction> block each); then the tail.
//
// The result is a valid Messages API history whatever the input: it starts
// with a user message, roles alternate, no text block is empty, every
// tool_use is answered by exactly one tool_result in the next message, in
// call order, and no tool_result lacks its tool_use. To get there, tail
// messages of the wrong shape are repaired: consecutive messages of one role
// are merged, orphan tool_results dropped, and a tool_use left unanswered is
// answered with an error result saying the call did not run, so the model
// can make it again. Cache breakpoints are removed: the caller places its own.
func Rebuild(b Rebuilt) []llm.Message {
	var head []llm.Block
	head = append(head, contextBlocks(b.Memory)...)
	head = append(head, contextBlocks(b.Attachments)...)
	head = append(head, llm.Text(summaryText(b.Summary, len(b.Tail) > 0)))
	head = append(head, instructionsSection(b.Instructions)...)
	msgs := make([]llm.Message, 0, 1+len(b.Tail))
	msgs = append(msgs, llm.Message{Role: llm.RoleUser, Content: head})
	msgs = append(msgs, cloneMessages(b.Tail)...)
	return normalize(msgs)
}

// contextBlocks keeps the memory and attachment blocks a user message may
// carry, each text wrapped in a system reminder unless it already is one.
func contextBlocks(blocks []llm.Block) []llm.Block {
	var out []llm.Block
	for _, b := range blocks {
		switch {
		case b.Type == llm.TypeText && len(b.Raw) == 0:
			if strings.TrimSpace(b.Text) == "" {
				continue
			}
			if !strings.HasPrefix(strings.TrimSpace(b.Text), llm.ReminderOpen) {
				b.Text = llm.Reminder("", b.Text).Text
			}
		case b.Type == llm.TypeImage, b.Type == "document":
		default:
			continue // tool blocks and thinking have no place in a context message
		}
		b.CacheControl = nil
		out = append(out, b)
	}
	return out
}

// summaryText frames the summary for the model.
func summaryText(summary string, tail bool) string {
	var b strings.Builder
	b.WriteString(summaryOpen)
	b.WriteString("\nThis session continues an earlier conversation that grew too long for the context window. " +
		"Its turns were replaced by the summary below, written when they were compacted. " +
		"Carry on from where the work stopped: do not ask the user to repeat or confirm anything, " +
		"and do not recap the summary to them.")
	if tail {
		b.WriteString(" The latest messages of the conversation, which the summary also covers, follow this one unchanged.")
	}
	b.WriteString(" The user's own messages from the earlier conversation are listed verbatim after the summary " +
		"in <user-instructions>; they still apply unless a later message changed them.\n\n<summary>\n")
	if s := strings.TrimSpace(summary); s != "" {
		b.WriteString(s)
	} else {
		b.WriteString("(no summary was produced)")
	}
	b.WriteString("\n</summary>\n")
	b.WriteString(summaryClose)
	return b.String()
}

// instructionsSection lists the instructions, one block each so that each
// can be read back exactly, whatever it contains.
func instructionsSection(instructions []string) []llm.Block {
	var kept []string
	for _, s := range instructions {
		if strings.TrimSpace(s) != "" {
			kept = append(kept, s)
		}
	}
	if len(kept) == 0 {
		return nil
	}
	out := make([]llm.Block, 0, len(kept)+2)
	out = append(out, llm.Text(instructionsOpen+"\nEverything the user wrote in the earlier conversation, verbatim and oldest first ("+
		strconv.Itoa(len(kept))+" messages). Where a message was too long to keep whole, part of its middle "+
		"was cut and a marker says so. A later message overrides an earlier one where they conflict."))
	for i, s := range kept {
		out = append(out, instructionBlock(i+1, s))
	}
	out = append(out, llm.Text(instructionsClose))
	return out
}

// SplitTail splits msgs into the part to compact and a tail to keep verbatim:
// at most keepMessages of the latest messages and, when keepTokens > 0, at
// most keepTokens estimated tokens. The tail always starts with an assistant
// message, so it never separates a tool_result from its tool_use and follows
// the rebuilt user message naturally; it may therefore be shorter than asked,
// or empty. The compacted part keeps at least the first message.
func SplitTail(msgs []llm.Message, keepMessages, keepTokens int) (older, tail []llm.Message) {
	if keepMessages <= 0 || len(msgs) < 2 {
		return msgs, nil
	}
	start := max(len(msgs)-keepMessages, 1)
	size := EstimateTokens(msgs[start:])
	for start < len(msgs) && (msgs[start].Role != llm.RoleAssistant || keepTokens > 0 && size > keepTokens) {
		size -= messageTokens(msgs[start])
		start++
	}
	return msgs[:start], msgs[start:]
}

// unrunResult is the result given to a tool call left unanswered.
const unrunResult = "This tool call did not run: the conversation was compacted before its result was recorded. Make the call again if it is still needed."

// normalize returns msgs as a valid history (see Rebuild). It works on
// copies of the messages it changes.
func normalize(msgs []llm.Message) []llm.Message {
	var (
		out      []llm.Message
		pending  []llm.Block // tool_use blocks of out's last message, awaiting results
		userBuf  []llm.Block // user content gathered since the last assistant message
		haveUser bool
		seen     = map[string]bool{} // tool_use ids already in out
	)
	flushUser := func() {
		if !haveUser && len(pending) == 0 {
			return
		}
		content := answer(pending, userBuf)
		pending, userBuf, haveUser = nil, nil, false
		if len(content) > 0 {
			out = append(out, llm.Message{Role: llm.RoleUser, Content: content})
		}
	}
	for _, m := range msgs {
		switch m.Role {
		case llm.RoleUser:
			blocks := keepBlocks(m.Content, llm.RoleUser, seen)
			if len(blocks) > 0 {
				userBuf = append(userBuf, blocks...)
				haveUser = true
			}
		case llm.RoleAssistant:
			blocks := placeThinking(keepBlocks(m.Content, llm.RoleAssistant, seen))
			if len(blocks) == 0 {
				continue
			}
			flushUser()
			if len(out) == 0 {
				out = append(out, llm.Message{Role: llm.RoleUser, Content: []llm.Block{llm.Text("[The conversation continues.]")}})
			}
			if last := &out[len(out)-1]; last.Role == llm.RoleAssistant {
				// Only possible when the previous assistant message had no
				// tool calls: flushUser would have answered them.
				last.Content = placeThinking(append(slices.Clip(last.Content), blocks...))
			} else {
				out = append(out, llm.Message{Role: llm.RoleAssistant, Content: blocks})
			}
			pending = toolUses(blocks)
		}
	}
	flushUser()
	return out
}

// placeThinking drops the thinking blocks of an assistant message when they
// are misplaced: the API refuses them there, while it allows a history to
// leave out the thinking of earlier turns.
func placeThinking(content []llm.Block) []llm.Block {
	if thinkingWellPlaced(content) {
		return content
	}
	return slices.DeleteFunc(content, isThinking)
}

func isThinking(b llm.Block) bool {
	return b.Type == llm.TypeThinking || b.Type == llm.TypeRedactedThinking
}

// thinkingWellPlaced reports whether the thinking blocks of an assistant
// message, if any, all come first and are not all there is: the API refuses
// thinking after other content and a message that ends in thinking.
func thinkingWellPlaced(content []llm.Block) bool {
	lead := 0
	for lead < len(content) && isThinking(content[lead]) {
		lead++
	}
	if lead == len(content) {
		return lead == 0
	}
	return !slices.ContainsFunc(content[lead:], isThinking)
}

// keepBlocks returns the blocks of a message of the given role that the API
// accepts there, without empty text and without repeated tool_use ids, on a
// fresh slice and without cache breakpoints.
func keepBlocks(content []llm.Block, role llm.Role, seen map[string]bool) []llm.Block {
	out := make([]llm.Block, 0, len(content))
	for _, b := range content {
		switch b.Type {
		case "":
			continue
		case llm.TypeText:
			if len(b.Raw) == 0 && strings.TrimSpace(b.Text) == "" {
				continue
			}
		case llm.TypeToolUse:
			if role != llm.RoleAssistant || b.ID == "" || b.Name == "" || seen[b.ID] {
				continue
			}
			seen[b.ID] = true
		case llm.TypeToolResult:
			if role != llm.RoleUser {
				continue
			}
		case llm.TypeServerToolUse, llm.TypeThinking, llm.TypeRedactedThinking:
			if role != llm.RoleAssistant {
				continue
			}
		case llm.TypeImage:
			if role != llm.RoleUser {
				continue
			}
		}
		b.CacheControl = nil
		if b.Type == llm.TypeToolResult {
			b.Content = stripCache(b.Content)
		}
		out = append(out, b)
	}
	return out
}

func stripCache(blocks []llm.Block) []llm.Block {
	if len(blocks) == 0 {
		return blocks
	}
	out := make([]llm.Block, len(blocks))
	for i, b := range blocks {
		b.CacheControl = nil
		out[i] = b
	}
	return out
}

func toolUses(blocks []llm.Block) []llm.Block {
	var out []llm.Block
	for _, b := range blocks {
		if b.Type == llm.TypeToolUse {
			out = append(out, b)
		}
	}
	return out
}

// answer orders a user message after an assistant message whose tool calls
// are uses: one result per call, in call order (an error result for a call
// without one), then the other content. Results for other calls are dropped.
func answer(uses, content []llm.Block) []llm.Block {
	results := map[string]llm.Block{}
	var other []llm.Block
	for _, b := range content {
		if b.Type != llm.TypeToolResult {
			other = append(other, b)
			continue
		}
		if _, dup := results[b.ToolUseID]; !dup {
			results[b.ToolUseID] = b
		}
	}
	out := make([]llm.Block, 0, len(uses)+len(other))
	for _, u := range uses {
		r, ok := results[u.ID]
		if !ok {
			r = llm.ToolResult(u.ID, unrunResult, true)
		}
		out = append(out, r)
	}
	return append(out, other...)
}

// cloneMessages copies msgs down to their content slices (blocks are values;
// only nested tool_result content is shared, and is never written in place).
func cloneMessages(msgs []llm.Message) []llm.Message {
	out := make([]llm.Message, len(msgs))
	for i, m := range msgs {
		out[i] = llm.Message{Role: m.Role, Content: slices.Clone(m.Content)}
	}
	return out
}

// Validate reports how msgs breaks what the Messages API requires of a
// history: it starts with a user message, roles alternate, no content or
// text block is empty, tool_use blocks (in assistant messages only) have
// unique ids and are each answered by exactly one tool_result at the start
// of the next user message, in call order, every tool_result answers a
// tool_use of the message before, and thinking blocks open an assistant
// message without ending it. A final assistant message is allowed when
// it has no tool calls: the next prompt follows it.
func Validate(msgs []llm.Message) error {
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	if len(msgs) == 0 {
		return errors.New("no messages")
	}
	ids := map[string]bool{}
	for i, m := range msgs {
		want := llm.RoleUser
		if i%2 == 1 {
			want = llm.RoleAssistant
		}
		if m.Role != want {
			bad("messages[%d]: role %q, want %q", i, m.Role, want)
		}
		if len(m.Content) == 0 {
			bad("messages[%d]: empty content", i)
		}
		var uses []llm.Block
		if i > 0 && msgs[i-1].Role == llm.RoleAssistant {
			uses = toolUses(msgs[i-1].Content)
		}
		results := 0
		for j, b := range m.Content {
			switch b.Type {
			case llm.TypeText:
				if len(b.Raw) == 0 && strings.TrimSpace(b.Text) == "" {
					bad("messages[%d].content[%d]: blank text", i, j)
				}
			case llm.TypeToolUse:
				if m.Role != llm.RoleAssistant {
					bad("messages[%d].content[%d]: tool_use in a %s message", i, j, m.Role)
				}
				if b.ID == "" || ids[b.ID] {
					bad("messages[%d].content[%d]: tool_use id %q missing or repeated", i, j, b.ID)
				}
				ids[b.ID] = true
			case llm.TypeToolResult:
				if m.Role != llm.RoleUser {
					bad("messages[%d].content[%d]: tool_result in a %s message", i, j, m.Role)
				}
				if results != j {
					bad("messages[%d].content[%d]: tool_result after other content", i, j)
				}
				if results >= len(uses) || uses[results].ID != b.ToolUseID {
					bad("messages[%d].content[%d]: tool_result for %s does not answer the call expected there", i, j, b.ToolUseID)
				}
				results++
			}
		}
		if m.Role == llm.RoleAssistant && !thinkingWellPlaced(m.Content) {
			bad("messages[%d]: thinking blocks must come first and not end the message", i)
		}
		if m.Role == llm.RoleUser && results != len(uses) {
			bad("messages[%d]: %d tool_results for %d tool calls", i, results, len(uses))
		}
	}
	if last := msgs[len(msgs)-1]; last.Role == llm.RoleAssistant && len(toolUses(last.Content)) > 0 {
		bad("messages[%d]: ends with unanswered tool calls", len(msgs)-1)
	}
	return errors.Join(errs...)
}
