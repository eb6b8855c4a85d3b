package session

import (
	"fmt"
	"slices"
	"strings"

	"github.com/tackcode/tack/internal/llm"
)

// DropsError is a truncating resume refused by CheckDrops: what resuming
// at At would discard is not all the turn Turn. Its text starts with the
// prefix the Agent SDK's hosts match to tell a refusal from another error.
type DropsError struct {
	At, Turn string
	// Reason says what in the discarded range is not the turn's.
	Reason string
}

func (e *DropsError) Error() string {
	return fmt.Sprintf("Resume rejected by --resume-drops-turn: resuming at %s would discard entries not attributable to turn %s: %s", e.At, e.Turn, e.Reason)
}

// CheckDrops checks that resuming t at the record at would discard only
// the turn whose prompt is the user record turn (the SDK's prompt uuid):
// the records of t's current chain after at must be that prompt, preceded
// at most by context records (isMeta), and followed by what the turn
// itself produced — assistant messages, tool results, context records,
// interruption notes — and by no other prompt (a message queued while the
// turn ran, which the host may not have seen). Nothing after at passes.
func (t *Transcript) CheckDrops(at, turn string) error {
	chain := t.Chain()
	i := slices.IndexFunc(chain, func(e Entry) bool { return e.UUID == at })
	if i < 0 {
		return &DropsError{At: at, Turn: turn, Reason: "the resume point is not on the session's current chain, so what it discards cannot be told"}
	}
	seen := false
	for n, e := range chain[i+1:] {
		where := fmt.Sprintf("discarded entry %d [type=%s, uuid=%s]", n, e.Type, e.UUID)
		switch {
		case e.UUID == turn && e.Type == TypeUser:
			seen = true
		case e.Type == TypeUser && e.IsMeta:
			// Context sent with a prompt (reminders, hook output).
		case !seen:
			return &DropsError{At: at, Turn: turn, Reason: "the range does not start with the declared turn's prompt; first other " + where}
		case e.Type == TypeSystem && e.Subtype == "compact_boundary", e.IsCompactSummary:
			return &DropsError{At: at, Turn: turn, Reason: "the turn was compacted; " + where}
		case e.Type == TypeUser && isPrompt(e):
			return &DropsError{At: at, Turn: turn, Reason: "another prompt the session took in during or after the turn; " + where}
		}
	}
	return nil
}

// isPrompt reports whether a user record is something someone sent (text,
// a slash command, an image), not a tool result or an interruption note.
func isPrompt(e Entry) bool {
	if e.IsMeta || e.IsCompactSummary {
		return false
	}
	for _, b := range e.Message.Content {
		switch b.Type {
		case llm.TypeToolResult:
			return false
		case llm.TypeImage:
			return true
		case llm.TypeText:
			if t := strings.TrimSpace(b.Text); t != "" && !strings.HasPrefix(t, "[Request interrupted by user") {
				return true
			}
		}
	}
	return false
}
