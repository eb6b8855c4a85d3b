package markdown

import (
	"slices"
	"strings"
	"unicode/utf8"
)

// lexer describes a language to the highlighter: enough to find its
// comments, strings, numbers and keywords.
type lexer struct {
	names []string // as fences name the language
	line  []string // line comment openers
	block [2]string
	// quotes open strings; those in raw have no escapes and those in multi
	// may span lines.
	quotes, raw, multi string
	triple             bool // """Python's""" strings
	charLit            bool // ' quotes one character ('a', '\n'), else it is plain (Rust lifetimes)
	hashAfterBlank     bool // # opens a comment only at a line's start or after a blank
	directives         bool // #include and the like are keywords
	identExtra         string
	keywords           []string // sorted
}

// lookupLexer returns the lexer of a fence's language, or nil.
func lookupLexer(lang string) *lexer {
	lang = strings.ToLower(lang)
	for i := range lexers {
		if slices.Contains(lexers[i].names, lang) {
			return &lexers[i]
		}
	}
	return nil
}

// span is a token: src[start:end] styled a.
type span struct {
	start, end int
	a          attr
}

// highlight returns the lines of a code block, styled when lang is known.
func (t *theme) highlight(src, lang string) []string {
	lx := lookupLexer(lang)
	if !t.color || lx == nil {
		return strings.Split(src, "\n")
	}
	var (
		lines []string
		line  []run
	)
	for _, sp := range lx.tokens(src) {
		text := src[sp.start:sp.end]
		for {
			i := strings.IndexByte(text, '\n')
			if i < 0 {
				break
			}
			if i > 0 {
				line = append(line, run{text[:i], sp.a})
			}
			lines = append(lines, t.paintRuns(line))
			line = line[:0]
			text = text[i+1:]
		}
		if text != "" {
			line = append(line, run{text, sp.a})
		}
	}
	return append(lines, t.paintRuns(line))
}

// tokens splits src into spans, plain ones included.
func (lx *lexer) tokens(src string) []span {
	var out []span
	plain := 0 // start of the plain text before i
	emit := func(start, end int, a attr) {
		if plain < start {
			out = append(out, span{plain, start, 0})
		}
		out = append(out, span{start, end, a})
		plain = end
	}
	for i := 0; i < len(src); {
		c := src[i]
		if end := lx.comment(src, i); end > i {
			emit(i, end, aComment)
			i = end
			continue
		}
		switch {
		case lx.directives && c == '#' && blankBefore(src, i, false):
			end := identEnd(src, i+1, "")
			emit(i, end, aKeyword)
			i = end
		case lx.triple && (strings.HasPrefix(src[i:], `"""`) || strings.HasPrefix(src[i:], "'''")):
			end := len(src)
			if j := strings.Index(src[i+3:], src[i:i+3]); j >= 0 {
				end = i + 3 + j + 3
			}
			emit(i, end, aString)
			i = end
		case strings.IndexByte(lx.quotes, c) >= 0:
			end := lx.stringEnd(src, i)
			if end < 0 {
				i++
				continue
			}
			emit(i, end, aString)
			i = end
		case isDigit(c) && (i == 0 || !lx.isIdent(src[i-1])):
			end := numberEnd(src, i)
			emit(i, end, aNumber)
			i = end
		case lx.isIdent(c):
			end := identEnd(src, i, lx.identExtra)
			if _, ok := slices.BinarySearch(lx.keywords, src[i:end]); ok {
				emit(i, end, aKeyword)
			}
			i = end
		default:
			i++
		}
	}
	if plain < len(src) {
		out = append(out, span{plain, len(src), 0})
	}
	return out
}

// comment returns the end of the comment that starts at i, or i.
func (lx *lexer) comment(src string, i int) int {
	if open := lx.block[0]; open != "" && strings.HasPrefix(src[i:], open) {
		j := strings.Index(src[i+len(open):], lx.block[1])
		if j < 0 {
			return len(src)
		}
		return i + len(open) + j + len(lx.block[1])
	}
	for _, open := range lx.line {
		if !strings.HasPrefix(src[i:], open) {
			continue
		}
		if open == "#" && lx.hashAfterBlank && !blankBefore(src, i, true) {
			continue
		}
		if j := strings.IndexByte(src[i:], '\n'); j >= 0 {
			return i + j
		}
		return len(src)
	}
	return i
}

// stringEnd returns the end of the string that starts at i, or -1 if the
// quote there opens none.
func (lx *lexer) stringEnd(src string, i int) int {
	q := src[i]
	if q == '\'' && lx.charLit {
		return charEnd(src, i)
	}
	escapes := strings.IndexByte(lx.raw, q) < 0
	multi := strings.IndexByte(lx.multi, q) >= 0
	for j := i + 1; j < len(src); j++ {
		switch src[j] {
		case '\\':
			if escapes {
				j++
			}
		case q:
			return j + 1
		case '\n':
			if !multi {
				return j
			}
		}
	}
	return len(src)
}

// charEnd returns the end of the character literal at i, or -1.
func charEnd(src string, i int) int {
	if i+1 < len(src) && src[i+1] == '\\' {
		if j := strings.IndexByte(src[i+2:min(len(src), i+12)], '\''); j >= 0 {
			return i + 2 + j + 1
		}
		return -1
	}
	_, size := utf8.DecodeRuneInString(src[i+1:])
	if end := i + 1 + size; size > 0 && end < len(src) && src[end] == '\'' {
		return end + 1
	}
	return -1
}

// blankBefore says whether only blanks (or, with oneBlank, a blank)
// are before i on its line.
func blankBefore(src string, i int, oneBlank bool) bool {
	if i == 0 || src[i-1] == '\n' {
		return true
	}
	if oneBlank {
		return src[i-1] == ' ' || src[i-1] == '\t'
	}
	for j := i - 1; j >= 0 && src[j] != '\n'; j-- {
		if src[j] != ' ' && src[j] != '\t' {
			return false
		}
	}
	return true
}

// numberEnd returns the end of the number at i: digits, letters (0x1f,
// 10u64, 1e9), points and the sign of an exponent.
func numberEnd(src string, i int) int {
	hex := strings.HasPrefix(src[i:], "0x") || strings.HasPrefix(src[i:], "0X")
	j := i
	for j < len(src) {
		c := src[j]
		switch {
		case isDigit(c) || isLetter(c) || c == '_':
		case c == '.' && j+1 < len(src) && isDigit(src[j+1]):
		case (c == '+' || c == '-') && !hex && (src[j-1] == 'e' || src[j-1] == 'E'):
		default:
			return j
		}
		j++
	}
	return j
}

// identEnd returns the end of the name at i.
func identEnd(src string, i int, extra string) int {
	j := i
	for j < len(src) && (isLetter(src[j]) || isDigit(src[j]) || src[j] == '_' || src[j] >= utf8.RuneSelf || strings.IndexByte(extra, src[j]) >= 0) {
		j++
	}
	return j
}

func (lx *lexer) isIdent(c byte) bool {
	return isLetter(c) || c == '_' || c >= utf8.RuneSelf || strings.IndexByte(lx.identExtra, c) >= 0
}

func isDigit(c byte) bool  { return '0' <= c && c <= '9' }
func isLetter(c byte) bool { return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' }
