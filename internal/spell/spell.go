// Package spell finds what a misspelt name was meant to be: the settings
// keys, hook events, frontmatter fields and file names users type.
package spell

import "strings"

// Suggest returns the candidate closest to s when it is close enough to be
// the intended spelling (a different case, or at most two edits away), else
// "". An exact match suggests nothing.
func Suggest(s string, candidates []string) string {
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
		if d := Distance(ls, lc, bestD); d < bestD {
			best, bestD = c, d
		}
	}
	return best
}

// Distance is the Levenshtein distance of a and b in bytes, or limit when
// it is limit or more (the work stops as soon as that is known).
func Distance(a, b string, limit int) int {
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
