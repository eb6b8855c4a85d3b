package compact

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/tackcode/tack/internal/llm"
)

// Markers of the text blocks this package writes into a rebuilt history. They
// are recognised on a later compaction: the summary and the section frame are
// not user instructions, and each carried instruction is unwrapped back to the
// user's own words.
const (
	summaryOpen       = "<compact-summary>"
	summaryClose      = "</compact-summary>"
	instructionsOpen  = "<user-instructions>"
	instructionsClose = "</user-instructions>"
	instructionPrefix = `<user-instruction index="`
	instructionSuffix = "\n</user-instruction>"
	interruptedPrefix = "[Request interrupted by user"
	omittedPrefix     = "[Earlier part of this conversation omitted"
)

// notUserPrefixes open text blocks that tack or Claude Code put in user
// messages on the user's behalf: context reminders, hook output, output of
// local slash commands, and this package's own sections.
var notUserPrefixes = []string{
	llm.ReminderOpen, summaryOpen, instructionsOpen, instructionsClose,
	"<local-command-stdout>", "<local-command-stderr>", "<local-command-caveat>",
	interruptedPrefix, omittedPrefix,
}

// hookEvents are the events whose output the engine may add to the
// conversation as a plain user message ("Stop hook feedback: …").
var hookEvents = []string{
	"SessionStart", "SessionEnd", "Setup", "InstructionsLoaded", "UserPromptSubmit",
	"PreToolUse", "PermissionRequest", "PostToolUse", "PostToolUseFailure", "PostToolBatch",
	"Notification", "SubagentStart", "SubagentStop", "Stop", "StopFailure",
	"PreCompact", "PostCompact", "FileChanged", "CwdChanged", "WorktreeCreate",
}

// UserInstructions returns what the user wrote in msgs, verbatim and oldest
// first: one string per user message, made of its text blocks joined by a
// blank line. Excluded are tool results, system reminders and hook context
// (<system-reminder> blocks and spans), hook feedback lines ("Stop hook
// feedback: …"), output of local commands, interruption notes
// ("[Request interrupted by user…]"), images, and the summary of an earlier
// compaction. The instructions carried by an earlier compaction are returned
// again one by one, so they survive any number of compactions.
//
// budget is in estimated tokens (4 bytes each; ≤ 0: no limit). When the
// instructions exceed it, the most recent ones are kept whole and the older
// ones are shortened by cutting their middle, replaced by a visible marker
// that says how much was cut; a short message stays whole. No instruction is
// ever dropped: if the budget cannot hold even a stub of each, the stubs
// exceed it.
func UserInstructions(msgs []llm.Message, budget int) []string {
	var all []string
	for _, m := range msgs {
		all = append(all, messageInstructions(m)...)
	}
	return fitInstructions(all, budget*bytesPerToken)
}

// messageInstructions returns the instructions in one message.
func messageInstructions(m llm.Message) []string {
	if m.Role != llm.RoleUser {
		return nil
	}
	var out, parts []string
	flush := func() {
		if len(parts) > 0 {
			out = append(out, strings.Join(parts, "\n\n"))
			parts = nil
		}
	}
	for _, b := range m.Content {
		if b.Type != llm.TypeText {
			continue
		}
		if inner, ok := carriedInstruction(b.Text); ok {
			flush()
			out = append(out, inner)
			continue
		}
		if text, ok := userText(b.Text); ok {
			parts = append(parts, text)
		}
	}
	flush()
	return out
}

// userText returns the part of a user text block that the user wrote, and
// whether there is any.
func userText(s string) (string, bool) {
	if strings.Contains(s, llm.ReminderOpen) {
		s = stripReminders(s)
	}
	trimmed := strings.TrimSpace(s)
	if trimmed == "" {
		return "", false
	}
	for _, p := range notUserPrefixes {
		if strings.HasPrefix(trimmed, p) {
			return "", false
		}
	}
	if isHookOutput(trimmed) {
		return "", false
	}
	return s, true
}

// stripReminders removes <system-reminder>…</system-reminder> spans that
// were appended to (or prepended to) the user's own text.
func stripReminders(s string) string {
	var b strings.Builder
	for {
		i := strings.Index(s, llm.ReminderOpen)
		if i < 0 {
			break
		}
		j := strings.Index(s[i:], llm.ReminderClose)
		if j < 0 {
			s = s[:i] // an unclosed reminder runs to the end
			break
		}
		b.WriteString(s[:i])
		s = s[i+j+len(llm.ReminderClose):]
	}
	b.WriteString(s)
	out := b.String()
	if strings.TrimSpace(out) == "" {
		return ""
	}
	return strings.Trim(out, "\n")
}

// isHookOutput recognises "EVENT[:MATCH] hook feedback: …" and its kin, the
// form in which the engine reports hook output as a user message.
func isHookOutput(s string) bool {
	head, rest, ok := strings.Cut(s, " hook ")
	if !ok {
		return false
	}
	event, _, _ := strings.Cut(head, ":")
	if !slices.Contains(hookEvents, event) || strings.ContainsAny(head, " \n\t") {
		return false
	}
	for _, kind := range []string{"feedback:", "additional context:", "error:", "blocking error:", "blocked"} {
		if strings.HasPrefix(rest, kind) {
			return true
		}
	}
	return false
}

// instructionBlock wraps one instruction for the rebuilt history; index
// counts from 1.
func instructionBlock(index int, text string) llm.Block {
	return llm.Text(instructionPrefix + strconv.Itoa(index) + "\">\n" + text + instructionSuffix)
}

// carriedInstruction unwraps a block written by instructionBlock.
func carriedInstruction(s string) (string, bool) {
	if !strings.HasPrefix(s, instructionPrefix) || !strings.HasSuffix(s, instructionSuffix) {
		return "", false
	}
	nl := strings.IndexByte(s, '\n')
	if nl < 0 || nl+1 > len(s)-len(instructionSuffix) || !strings.HasSuffix(s[:nl], `">`) {
		return "", false
	}
	inner := s[nl+1 : len(s)-len(instructionSuffix)]
	if strings.TrimSpace(inner) == "" {
		return "", false
	}
	return inner, true
}

// minInstructionBytes is the least a cut instruction keeps, marker included:
// enough of its start and end to still tell what it asked.
const minInstructionBytes = 480

// fitInstructions applies UserInstructions' budget (in bytes; ≤ 0: none).
func fitInstructions(all []string, budget int) []string {
	total := 0
	for _, s := range all {
		total += len(s)
	}
	if budget <= 0 || total <= budget {
		return all
	}
	floor := func(s string) int { return min(len(s), minInstructionBytes) }
	floors := make([]int, len(all)+1) // floors[i]: sum of floors of all[:i]
	for i, s := range all {
		floors[i+1] = floors[i] + floor(s)
	}
	out := slices.Clone(all)
	// The most recent instructions stay whole while what is left still
	// holds a stub of every older one.
	remaining := budget
	i := len(all) - 1
	for ; i >= 0; i-- {
		if len(all[i])+floors[i] > remaining {
			break
		}
		remaining -= len(all[i])
	}
	older := all[:i+1]
	level := waterLevel(lengths(older), remaining)
	for j, s := range older {
		limit := max(level, floor(s))
		if len(s) > limit {
			out[j] = cutMiddle(s, limit, "message")
		}
	}
	return out
}

func lengths(ss []string) []int {
	out := make([]int, len(ss))
	for i, s := range ss {
		out[i] = len(s)
	}
	return out
}

// waterLevel returns the largest cap L such that sum(min(size, L)) ≤ budget:
// everything below L stays whole, everything above is cut down to L, so the
// largest items give up the most. With no budget at all it returns 0.
func waterLevel(sizes []int, budget int) int {
	sorted := slices.Clone(sizes)
	slices.Sort(sorted)
	acc := 0
	for j, s := range sorted {
		rest := len(sorted) - j
		if acc+s*rest > budget {
			return max(0, (budget-acc)/rest)
		}
		acc += s
	}
	if len(sorted) == 0 {
		return 0
	}
	return sorted[len(sorted)-1]
}

// cutMiddle shortens s to at most limit bytes (when limit leaves room for the
// marker) by removing a part of its middle, replaced by a marker saying how
// many bytes of what were cut. Cuts fall on UTF-8 boundaries.
func cutMiddle(s string, limit int, what string) string {
	if len(s) <= limit {
		return s
	}
	// The marker's length depends on the number it carries; size it for
	// the largest possible cut, which is never shorter.
	marker := func(n int) string {
		return fmt.Sprintf("\n[… %d bytes of this %s cut here to save context …]\n", n, what)
	}
	keep := max(limit-len(marker(len(s))), 0)
	head := keep / 2
	for head > 0 && !utf8.RuneStart(s[head]) {
		head--
	}
	tail := len(s) - (keep - head)
	for tail < len(s) && !utf8.RuneStart(s[tail]) {
		tail++
	}
	return s[:head] + marker(tail-head) + s[tail:]
}
