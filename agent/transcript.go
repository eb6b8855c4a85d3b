package agent

import (
	"encoding/json"

	"github.com/tackcode/tack/internal/session"
)

// ResumeRejectedError is the error of a truncating resume refused by
// ResumeDropsTurn: what resuming at ResumeSessionAt would discard is not
// all the named turn's. Its text starts with "Resume rejected by
// --resume-drops-turn:", the prefix the Agent SDK's hosts match.
type ResumeRejectedError = session.DropsError

// transcriptMirror adapts OnTranscriptWrite to the runtime's callback.
func transcriptMirror(fn func(path string, lines []json.RawMessage)) func(string, [][]byte) {
	if fn == nil {
		return nil
	}
	return func(path string, lines [][]byte) {
		raw := make([]json.RawMessage, len(lines))
		for i, l := range lines {
			raw[i] = l
		}
		fn(path, raw)
	}
}
