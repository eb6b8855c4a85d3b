// Package compact replaces the old turns of a conversation that nears the
// model's context window with a summary, without losing what the user asked.
//
// The pieces, which the engine may also use one by one:
//
//   - ShouldCompact (with Threshold and EstimateTokens) decides when;
//   - SplitTail sets aside the latest messages to keep verbatim;
//   - Summarize has the model write a structured handover summary with tack's
//     own prompt, trimming the conversation first if even the summarisation
//     request would not fit;
//   - UserInstructions extracts, verbatim, everything the user wrote, which a
//     summary alone would paraphrase or forget;
//   - Rebuild assembles the new history: re-read memory, summary, the user's
//     instructions, then the kept tail, valid for the Messages API.
//
// Compact does all of it. What stays with the caller: firing PreCompact before
// (trigger "manual" or "auto", the custom instructions) and PostCompact after
// (with Compacted.Summary), re-reading the root memory from disk to pass in
// CompactRequest.Memory, counting Compacted.Usage, and recording the compact
// boundary in the transcript. The package keeps no state.
package compact

import (
	"context"

	"github.com/tackcode/tack/internal/llm"
)

// CompactRequest asks for a conversation to be compacted.
type CompactRequest struct {
	// SummaryRequest says how to summarise; its Messages is the whole
	// conversation, which is summarised, and whose tail is also kept.
	SummaryRequest
	// Memory and Attachments go into the new history (see Rebuilt).
	Memory      []llm.Block
	Attachments []llm.Block
	// KeepMessages and KeepTokens bound the tail kept verbatim (see
	// SplitTail); KeepMessages 0 keeps none. KeepTokens 0 means a tenth of
	// ContextWindow (no limit when the window is unknown), so that one huge
	// tool result in the tail cannot fill the new history; negative means
	// no limit.
	KeepMessages int
	KeepTokens   int
	// InstructionTokens bounds the user's instructions carried over (see
	// UserInstructions). 0 means a tenth of ContextWindow, or no limit when
	// the window is unknown; negative means no limit.
	InstructionTokens int
}

// Compacted is a compacted conversation.
type Compacted struct {
	// Messages is the new history, to replace the old one.
	Messages []llm.Message
	// Result is the summary, its usage, and what was trimmed to make it.
	Result
	// Instructions are the user's messages carried over verbatim.
	Instructions []string
	// Kept is the number of messages of the old history kept verbatim.
	Kept int
	// TokensBefore and TokensAfter estimate the history before and after.
	TokensBefore, TokensAfter int
}

// Compact summarises req.Messages and rebuilds the history from the memory,
// the summary, the user's instructions from before the tail, and the tail.
//
// The summary covers the whole conversation, tail included: it then describes
// the state the tail ends in, the request is the session's last one plus the
// prompt (so it reads from the prompt cache when System, Tools and Cache match
// the session's), and it carries the session's latest tool calls as the
// Messages API expects. The tail repeats its last messages in full detail.
//
// On error the returned Compacted carries the usage of any response that
// arrived; the old history should then be kept.
func Compact(ctx context.Context, p llm.Provider, req CompactRequest) (Compacted, error) {
	older, tail := SplitTail(req.Messages, req.KeepMessages, orTenth(req.KeepTokens, req.ContextWindow))
	res, err := Summarize(ctx, p, req.SummaryRequest)
	out := Compacted{Result: res, TokensBefore: EstimateTokens(req.Messages)}
	if err != nil {
		return out, err
	}
	out.Instructions = UserInstructions(older, orTenth(req.InstructionTokens, req.ContextWindow))
	out.Messages = Rebuild(Rebuilt{
		Memory: req.Memory, Attachments: req.Attachments, Summary: res.Summary,
		Instructions: out.Instructions, Tail: tail,
	})
	out.Kept = len(tail)
	out.TokensAfter = EstimateTokens(out.Messages)
	return out, nil
}

// orTenth resolves a token budget: 0 means a tenth of the window (0, no
// limit, when the window is unknown), negative means no limit (0).
func orTenth(budget, window int) int {
	switch {
	case budget < 0:
		return 0
	case budget == 0:
		return max(window, 0) / 10
	}
	return budget
}
