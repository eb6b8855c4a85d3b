package cmdio

import "strings"

// Dash is s, or "-" for an empty value in a table.
func Dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// OneLine is s on one line, its runs of white space made single spaces,
// cut to n characters.
func OneLine(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}
