package compact

import (
	"slices"
	"strconv"
	"strings"

	"github.com/tackcode/tack/internal/jsonx"
	"github.com/tackcode/tack/internal/llm"
)

// Trim reports what was removed from a conversation so that the request to
// summarise it fits the context window. Every cut leaves a marker in the
// text the model reads, so the summary can say what it did not see.
type Trim struct {
	// ToolResultsCut counts tool results shortened, largest first (their
	// middle cut, images dropped).
	ToolResultsCut int
	// MessagesDropped counts the oldest messages replaced by a note and the
	// user's own words from them (see UserInstructions).
	MessagesDropped int
	// BlocksCut counts other blocks shortened or replaced, a last resort
	// when even the latest turns are too large: long texts, tool inputs,
	// images, thinking.
	BlocksCut int
	// TokensBefore and TokensAfter are estimates of the conversation before
	// and after trimming, the summarisation prompt excluded.
	TokensBefore, TokensAfter int
}

// Trimmed reports whether anything was removed.
func (t Trim) Trimmed() bool {
	return t.ToolResultsCut+t.MessagesDropped+t.BlocksCut > 0
}

// Floors of the trimming steps, in estimated tokens.
const (
	minToolResultTokens = 256 // a tool result cut in step one keeps its start and end
	minBlockTokens      = 64  // anything cut in the last resort
	markerTokens        = 16  // a cut marker's own size
)

// fit trims msgs, a valid history, until its estimate is at most target
// tokens (target ≤ 0: no limit). It never changes msgs; the result is a
// valid history of copies. The steps, each taken only if the previous one was
// not enough:
//
//  1. cut the largest tool results down, all to the same size (a water
//     level), but not below minToolResultTokens;
//  2. drop the oldest turns, replacing them with a note and, verbatim, what
//     the user wrote in them (cut in the middle if needed to a third of
//     target); the history then goes on at an assistant message;
//  3. drop thinking, replace images, and cut every long text, tool input and
//     tool result to a common size, not below minBlockTokens.
//
// If even that is too much the result is still over target; the API then
// says so, and Summarize retries with a smaller target.
func fit(msgs []llm.Message, target int) ([]llm.Message, Trim) {
	work := cloneMessages(msgs)
	tr := Trim{TokensBefore: EstimateTokens(work)}
	est := tr.TokensBefore
	if target <= 0 || est <= target {
		tr.TokensAfter = est
		return work, tr
	}

	// 1. The largest tool results.
	var results []place
	for i, m := range work {
		for j, b := range m.Content {
			if b.Type == llm.TypeToolResult {
				results = append(results, place{i, j, blockTokens(b)})
			}
		}
	}
	tr.ToolResultsCut = cutDown(work, results, est-target, minToolResultTokens)
	est = EstimateTokens(work)

	// 2. The oldest turns.
	if est > target {
		var dropped int
		work, dropped = dropOldest(work, target)
		tr.MessagesDropped = dropped
		est = EstimateTokens(work)
	}

	// 3. Everything else that can be cut.
	if est > target {
		first := 0
		if tr.MessagesDropped > 0 {
			first = 1 // the note and the user's words, already sized
		}
		for i := first; i < len(work); i++ {
			before := len(work[i].Content)
			work[i].Content = slices.DeleteFunc(work[i].Content, func(b llm.Block) bool {
				return b.Type == llm.TypeThinking || b.Type == llm.TypeRedactedThinking
			})
			tr.BlocksCut += before - len(work[i].Content)
		}
		var pieces []place
		for i := first; i < len(work); i++ {
			for j, b := range work[i].Content {
				switch b.Type {
				case llm.TypeText, llm.TypeToolResult, llm.TypeToolUse, llm.TypeImage:
					pieces = append(pieces, place{i, j, blockTokens(b)})
				}
			}
		}
		tr.BlocksCut += cutDown(work, pieces, EstimateTokens(work)-target, minBlockTokens)
		work = normalize(work)
	}
	tr.TokensAfter = EstimateTokens(work)
	return work, tr
}

// place is a block of a history and its size in estimated tokens.
type place struct{ msg, block, tokens int }

// cutDown shrinks the blocks at places so that together they lose at least
// excess tokens, cutting the largest first down to a common level that is not
// below floor. It returns how many blocks it changed.
func cutDown(msgs []llm.Message, places []place, excess, floor int) int {
	if excess <= 0 || len(places) == 0 {
		return 0
	}
	sizes := make([]int, len(places))
	total := 0
	for i, p := range places {
		sizes[i] = p.tokens
		total += p.tokens
	}
	// Each cut adds a marker: reserve room for one per block.
	level := max(waterLevel(sizes, total-excess-markerTokens*len(places)), floor)
	n := 0
	for _, p := range places {
		if p.tokens > level+markerTokens {
			cutBlock(&msgs[p.msg].Content[p.block], level)
			n++
		}
	}
	return n
}

// cutBlock shrinks one block to about limit tokens, leaving a marker.
func cutBlock(b *llm.Block, limit int) {
	limitBytes := limit * bytesPerToken
	switch b.Type {
	case llm.TypeText:
		text := b.Text
		*b = llm.Text(cutMiddle(text, limitBytes, "message"))
	case llm.TypeImage:
		*b = llm.Text("[An image was removed here to save context.]")
	case llm.TypeToolUse:
		if len(b.Input) > limitBytes {
			// The input must stay a JSON object; the cut JSON text goes
			// into one string field of it.
			enc, err := jsonx.Marshal(map[string]string{"truncated_input": cutMiddle(string(b.Input), limitBytes, "tool input")})
			if err == nil {
				b.Input = enc
			}
		}
	case llm.TypeToolResult:
		var texts []string
		images := 0
		for _, c := range b.Content {
			switch c.Type {
			case llm.TypeText:
				texts = append(texts, c.Text)
			case llm.TypeImage:
				images++
			}
		}
		text := cutMiddle(strings.Join(texts, "\n"), limitBytes, "tool result")
		if images > 0 {
			text = "[" + strconv.Itoa(images) + " image(s) removed from this tool result to save context.]\n" + text
		}
		if strings.TrimSpace(text) == "" {
			text = "[This tool result was removed to save context.]"
		}
		b.Content = []llm.Block{llm.Text(text)}
	}
}

// dropOldest replaces the oldest messages of msgs (a valid history) with one
// user message: a note saying how many were dropped, then what the user wrote
// in them. It drops as few as fit target, but always keeps the last turn. It
// returns the new history and the number of messages dropped.
func dropOldest(msgs []llm.Message, target int) ([]llm.Message, int) {
	// Candidate cut points are assistant messages, so the kept part starts
	// with one and follows the note's user message.
	var cuts []int
	for k := 1; k < len(msgs); k++ {
		if msgs[k].Role == llm.RoleAssistant {
			cuts = append(cuts, k)
		}
	}
	if len(cuts) == 0 {
		return msgs, 0
	}
	headBudget := max(target/3, 1)
	suffix := make([]int, len(msgs)+1) // suffix[k]: estimate of msgs[k:]
	for i := len(msgs) - 1; i >= 0; i-- {
		suffix[i] = suffix[i+1] + messageTokens(msgs[i])
	}
	// The head's size for a cut at c: the note, the user's words (their
	// text capped at headBudget) and the wrapper of each.
	const noteTokens = 64
	wrapTokens := byteTokens(len(instructionPrefix)+len("000000\">\n")+len(instructionSuffix)) + blockOverhead
	textTokens, count := 0, 0
	k := cuts[len(cuts)-1]
	next := 0
	for _, c := range cuts {
		for ; next < c; next++ {
			for _, s := range messageInstructions(msgs[next]) {
				textTokens += byteTokens(len(s))
				count++
			}
		}
		if messageOverhead+noteTokens+min(textTokens, headBudget)+count*wrapTokens+suffix[c] <= target {
			k = c
			break
		}
	}
	words := UserInstructions(msgs[:k], headBudget)
	head := make([]llm.Block, 0, len(words)+1)
	head = append(head, llm.Text(omittedPrefix+" to fit this request: "+strconv.Itoa(k)+
		" messages. Everything the user wrote in that part follows, verbatim and oldest first.]"))
	for i, s := range words {
		head = append(head, instructionBlock(i+1, s))
	}
	out := make([]llm.Message, 0, len(msgs)-k+1)
	out = append(out, llm.Message{Role: llm.RoleUser, Content: head})
	return append(out, msgs[k:]...), k
}
