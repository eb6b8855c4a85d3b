package config

import (
	"strconv"
	"strings"
)

// Error is one problem in one settings file: where it is, which setting it
// concerns and what is wrong. Load returns one per malformed file (the first
// problem found in it); warnings have the same shape.
type Error struct {
	// Source names the file ("--settings" for inline JSON) and, when the
	// problem is at one place in it, the 1-based line and column.
	Source Source
	// Key is the JSON path of the offending setting, such as
	// "permissions.allow[2]" or "hooks.PreToolUse[0].hooks[1].timeout";
	// empty for problems with the file itself (unreadable, invalid JSON).
	Key string
	// Msg says what is wrong and, where it helps, what would be right.
	Msg string
	// Err is the underlying cause, if any: the error of a rule validator, of
	// the file system, of the regular expression compiler.
	Err error
}

// Error formats the problem as path:line:col: key: message[: cause], the form
// editors and terminals turn into a link.
func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString(e.Source.Path)
	if e.Source.Line > 0 {
		b.WriteByte(':')
		b.WriteString(strconv.Itoa(e.Source.Line))
		b.WriteByte(':')
		b.WriteString(strconv.Itoa(e.Source.Col))
	}
	b.WriteString(": ")
	if e.Key != "" {
		b.WriteString(e.Key)
		b.WriteString(": ")
	}
	b.WriteString(e.Msg)
	if e.Err != nil {
		b.WriteString(": ")
		b.WriteString(e.Err.Error())
	}
	return b.String()
}

// Unwrap returns the underlying cause, so errors.Is(err, fs.ErrPermission)
// and errors.As on a validator's error type work.
func (e *Error) Unwrap() error { return e.Err }

// suggest returns the candidate closest to s when it is close enough to be
// the intended spelling (a different case, or at most two edits away), else
// "". Typos in key and event names otherwise disable a policy without a word.
func suggest(s string, candidates []string) string {
	best, bestD := "", 3
	ls := strings.ToLower(s)
	for _, c := range candidates {
		if c == s {
			return ""
		}
		lc := strings.ToLower(c)
		if lc == ls {
			return c
		}
		if len(s) < 4 {
			continue // short words are all "close" to each other
		}
		if d := editDistance(ls, lc, bestD); d < bestD {
			best, bestD = c, d
		}
	}
	return best
}

// editDistance is the Levenshtein distance of a and b, or limit when it is
// limit or more.
func editDistance(a, b string, limit int) int {
	if d := len(a) - len(b); d >= limit || -d >= limit {
		return limit
	}
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		rowMin := cur[0]
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			rowMin = min(rowMin, cur[j])
		}
		if rowMin >= limit {
			return limit
		}
		prev, cur = cur, prev
	}
	return min(prev[len(b)], limit)
}
