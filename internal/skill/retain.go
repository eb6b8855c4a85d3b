package skill

import (
	"slices"
	"unicode/utf8"
)

// The compaction budget of skills, as Claude Code documents it: after a
// compaction the latest invocation of each skill is put back, each within
// RetainedTokensEach tokens and all within RetainedTokensTotal.
const (
	RetainedTokensEach  = 5_000
	RetainedTokensTotal = 25_000
	// bytesPerToken is the estimate used for the budget: the size of a
	// token in English prose and code is close to four bytes.
	bytesPerToken = 4
	// minRetained is the least of a skill worth putting back: below it the
	// budget is considered spent.
	minRetained = 500
)

// truncationNote ends a retained body that was cut.
const truncationNote = "\n\n[… the rest of this skill was cut when the conversation was compacted]"

// Tokens estimates the tokens of s.
func Tokens(s string) int { return (len(s) + bytesPerToken - 1) / bytesPerToken }

// Retained chooses what to put back after a compaction: the latest
// invocation of each skill (by Seq), newest first while the total budget
// lasts, each cut to RetainedTokensEach tokens; the one that would overflow
// the total is cut to what remains (when that is worth it) and older ones
// are dropped. The result is in invocation order, and its Content fields
// are the cut texts.
func Retained(invs []Invocation) []Invocation {
	latest := map[string]Invocation{}
	for _, in := range invs {
		if cur, ok := latest[in.Name]; !ok || in.Seq > cur.Seq {
			latest[in.Name] = in
		}
	}
	list := make([]Invocation, 0, len(latest))
	for _, in := range latest {
		list = append(list, in)
	}
	slices.SortFunc(list, func(a, b Invocation) int { return b.Seq - a.Seq }) // newest first
	var out []Invocation
	left := RetainedTokensTotal
	for _, in := range list {
		limit := min(RetainedTokensEach, left)
		if limit < minRetained {
			break
		}
		in.Content = cut(in.Content, limit)
		left -= Tokens(in.Content)
		out = append(out, in)
	}
	slices.SortFunc(out, func(a, b Invocation) int { return a.Seq - b.Seq })
	return out
}

// cut shortens s to at most tokens tokens (estimated), on a character
// boundary, with a note saying so.
func cut(s string, tokens int) string {
	if Tokens(s) <= tokens {
		return s
	}
	n := tokens*bytesPerToken - len(truncationNote)
	if n < 0 {
		n = 0
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + truncationNote
}
