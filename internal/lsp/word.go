package lsp

import (
	"os"
	"strings"
	"unicode"
)

// wordAt returns the identifier at a 1-based line and character.
func wordAt(path string, line, character int) string {
	data, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	lines := strings.Split(string(data), "\n")
	if line < 1 || line > len(lines) {
		return ""
	}
	r := []rune(lines[line-1])
	i := min(max(character-1, 0), len(r))
	isWord := func(c rune) bool { return c == '_' || unicode.IsLetter(c) || unicode.IsDigit(c) }
	s, e := i, i
	for s > 0 && isWord(r[s-1]) {
		s--
	}
	for e < len(r) && isWord(r[e]) {
		e++
	}
	return string(r[s:e])
}
