package permission

import (
	"strconv"
	"strings"
	"unicode/utf8"

	"mvdan.cc/sh/v3/syntax"
)

// runtime marks, in a word's text, a part only known when the command runs
// (a parameter, a substitution, a glob character). Rule patterns cannot
// contain it, so only their wildcards match it.
const runtime = "\x00"

// word is one argument of a simple command.
type word struct {
	// text is the argument with quotes removed and each part the shell
	// expands at run time replaced by the runtime mark.
	text string
	// dynamic: the argument holds a parameter, command, arithmetic or
	// process substitution, or something else whose value is unknown.
	dynamic bool
	// glob: the argument holds unquoted pathname-expansion characters.
	glob bool
	// tilde: the argument starts with an unquoted "~" or "~/", which the
	// shell replaces with the home directory.
	tilde bool
	// procSubst: the argument is exactly one process substitution, which
	// the command sees as a /dev/fd path.
	procSubst bool
	// unsafe names a construct no allow rule may vouch for: extended globs,
	// which zsh reads as glob qualifiers able to run code, and zsh's $~x.
	unsafe string
	// equals: the argument starts with an unquoted '=', which zsh replaces
	// with the path of the command named after it.
	equals bool
	// split: an unquoted expansion, which may become several words or
	// none.
	split bool
	// pattern is the parsed word of a glob without run-time parts, which
	// the checker expands against the file system.
	pattern *syntax.Word
	// found stands for each path a walk of the same command finds (find's
	// {}): the walk is checked, not the word.
	found bool
	// values are the words a for-loop variable takes ("$f" in
	// `for f in *.go`), when the loop does not change it.
	values []word
}

// loopPaths reports whether a run-time argument is a for-loop variable
// whose values are all known and none an option.
func (w word) loopPaths() bool {
	if w.values == nil {
		return false
	}
	for _, v := range w.values {
		if v.dynamic || strings.HasPrefix(v.text, "-") {
			return false
		}
	}
	return true
}

// static reports whether the argument is known exactly: text is its value.
func (w word) static() bool { return !w.dynamic && !w.glob }

// lit returns the argument's value and whether it is known exactly.
func (w word) lit() (string, bool) { return w.text, w.static() }

// prefix is the text before the first run-time part.
func (w word) prefix() string {
	if i := strings.Index(w.text, runtime); i >= 0 {
		return w.text[:i]
	}
	return w.text
}

// plainWord makes a word from a known string.
func plainWord(s string) word { return word{text: s} }

// convertWord turns a parsed word into a word.
func convertWord(w *syntax.Word) word {
	var out word
	var b strings.Builder
	for i, part := range w.Parts {
		switch p := part.(type) {
		case *syntax.Lit:
			v := p.Value
			if i == 0 && strings.HasPrefix(v, "~") {
				end := strings.IndexByte(v, '/')
				if end < 0 {
					end = len(v)
				}
				if end == 1 && (len(w.Parts) == 1 || end < len(v)) {
					out.tilde = true
				} else {
					out.dynamic = true // ~user, ~+, ~-: resolved at run time
				}
			}
			if i == 0 && len(v) > 1 && v[0] == '=' {
				out.equals = true
			}
			unquoteLit(v, &b, &out)
		case *syntax.SglQuoted:
			if !p.Dollar {
				b.WriteString(p.Value)
				continue
			}
			s, ok := decodeANSIC(p.Value)
			if !ok {
				out.dynamic = true
				b.WriteString(runtime)
				continue
			}
			b.WriteString(s)
		case *syntax.DblQuoted:
			for _, dp := range p.Parts {
				if lit, ok := dp.(*syntax.Lit); ok {
					unquoteDouble(lit.Value, &b)
					continue
				}
				out.dynamic = true
				b.WriteString(runtime)
			}
		case *syntax.ProcSubst:
			out.dynamic = true
			out.procSubst = len(w.Parts) == 1
			b.WriteString(runtime)
		case *syntax.ExtGlob:
			out.glob, out.unsafe = true, "uses an extended glob (a glob qualifier able to run code in zsh)"
			b.WriteString(runtime)
		default: // ParamExp, CmdSubst, ArithmExp, BraceExp
			out.dynamic, out.split = true, true
			b.WriteString(runtime)
		}
	}
	out.text = b.String()
	if out.glob && !out.dynamic && out.unsafe == "" {
		out.pattern = w
	}
	if !out.dynamic && hasBraceExpansion(out.text) {
		// Brace expansion was done before; braces left over that still
		// look expandable are not trusted to be literal.
		out.dynamic = true
	}
	return out
}

// unquoteLit appends an unquoted literal: a backslash escapes the next
// character; unescaped glob characters become runtime marks.
func unquoteLit(v string, b *strings.Builder, out *word) {
	for i := 0; i < len(v); i++ {
		c := v[i]
		switch c {
		case '\\':
			if i+1 < len(v) {
				i++
				b.WriteByte(v[i])
			} else {
				b.WriteByte('\\')
			}
		case '*', '?':
			out.glob = true
			b.WriteString(runtime)
		case '$':
			// A '$' left literal by the parser may start an expansion in
			// zsh ($~x, $=x, $^x, $+x; $~x globs the value, qualifiers
			// included). The parser may also split it from what follows:
			// the analyzer checks whole words for that.
			if i+1 < len(v) && strings.IndexByte("~=^+", v[i+1]) >= 0 {
				out.dynamic, out.split = true, true
				out.unsafe = "uses a zsh expansion ($~, $=, $^ or $+)"
				b.WriteString(runtime)
				continue
			}
			b.WriteByte(c)
		case '[':
			if strings.IndexByte(v[i+1:], ']') >= 0 {
				out.glob = true
				b.WriteString(runtime)
			} else {
				b.WriteByte(c)
			}
		default:
			b.WriteByte(c)
		}
	}
}

// unquoteDouble appends a literal from inside double quotes, where a
// backslash only escapes $ ` " \ and newline.
func unquoteDouble(v string, b *strings.Builder) {
	for i := 0; i < len(v); i++ {
		c := v[i]
		if c == '\\' && i+1 < len(v) {
			switch v[i+1] {
			case '$', '`', '"', '\\':
				i++
				b.WriteByte(v[i])
				continue
			case '\n':
				i++
				continue
			}
		}
		b.WriteByte(c)
	}
}

// hasBraceExpansion reports whether s has a {…,…} or {…..…} group.
func hasBraceExpansion(s string) bool {
	open := strings.IndexByte(s, '{')
	if open < 0 {
		return false
	}
	rest := s[open+1:]
	end := strings.LastIndexByte(rest, '}')
	if end < 0 {
		return false
	}
	inner := rest[:end]
	return strings.Contains(inner, ",") || strings.Contains(inner, "..")
}

// decodeANSIC decodes the body of a $'…' string. It reports false for an
// escape it does not know, so that the word is treated as unknown rather
// than misread.
func decodeANSIC(s string) (string, bool) {
	if !strings.Contains(s, `\`) {
		return s, true
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '\\' || i+1 >= len(s) {
			b.WriteByte(c)
			continue
		}
		i++
		switch e := s[i]; e {
		case 'a':
			b.WriteByte('\a')
		case 'b':
			b.WriteByte('\b')
		case 'e', 'E':
			b.WriteByte(0x1b)
		case 'f':
			b.WriteByte('\f')
		case 'n':
			b.WriteByte('\n')
		case 'r':
			b.WriteByte('\r')
		case 't':
			b.WriteByte('\t')
		case 'v':
			b.WriteByte('\v')
		case '\\', '\'', '"', '?':
			b.WriteByte(e)
		case 'c':
			if i+1 >= len(s) {
				return "", false
			}
			i++
			b.WriteByte(s[i] & 0x1f)
		case 'x', 'u', 'U':
			max := 2
			switch e {
			case 'u':
				max = 4
			case 'U':
				max = 8
			}
			j := i + 1
			for j < len(s) && j-i-1 < max && isHex(s[j]) {
				j++
			}
			if j == i+1 {
				return "", false
			}
			n, err := strconv.ParseUint(s[i+1:j], 16, 32)
			if err != nil {
				return "", false
			}
			if e == 'x' {
				b.WriteByte(byte(n))
			} else {
				if !utf8.ValidRune(rune(n)) {
					return "", false
				}
				b.WriteRune(rune(n))
			}
			i = j - 1
		case '0', '1', '2', '3', '4', '5', '6', '7':
			j := i
			for j < len(s) && j-i < 3 && s[j] >= '0' && s[j] <= '7' {
				j++
			}
			n, _ := strconv.ParseUint(s[i:j], 8, 16)
			b.WriteByte(byte(n))
			i = j - 1
		default:
			b.WriteByte('\\')
			b.WriteByte(e)
		}
	}
	out := b.String()
	if strings.IndexByte(out, 0) >= 0 {
		// bash truncates at a NUL; do not guess.
		return "", false
	}
	return out, true
}

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

// renderWords joins words for matching against a cmdPattern: single
// spaces between words, and a word holding blanks or quotes (or empty) in
// single quotes, so one argument never reads as several.
func renderWords(ws []word) string {
	var b strings.Builder
	for i, w := range ws {
		if i > 0 {
			b.WriteByte(' ')
		}
		quote := w.text == "" || strings.ContainsAny(w.text, quoteTriggers)
		if quote {
			b.WriteByte('\'')
		}
		b.WriteString(quoteBody(w.text, quote))
		if quote {
			b.WriteByte('\'')
		}
	}
	return b.String()
}
