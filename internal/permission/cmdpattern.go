package permission

import (
	"errors"
	"strings"

	"github.com/tackcode/tack/internal/shellcmd"
)

// cmdPattern is a compiled Bash rule specifier. It is matched against one
// simple command rendered by renderWords: its words joined by single
// spaces, each quoted when it holds blanks or quotes, and every part the
// shell would expand at run time (parameters, substitutions, globs) turned
// into a NUL byte that only a wildcard of the pattern can match.
type cmdPattern struct {
	w wildcard
	// bare is the pattern without its trailing " *", which also matches:
	// `ls *` matches `ls` as well as `ls -la`, but not `lsof`.
	bare *wildcard
}

// compileCmdPattern compiles a Bash specifier such as `npm run test *`,
// `git log --format=*`, `ls*`, or the legacy `npm:*` (= `npm *`). Quotes in
// the pattern group words as in the shell ('*' inside quotes is literal);
// an unquoted '*' is a wildcard.
func compileCmdPattern(spec string) (*cmdPattern, error) {
	if strings.HasSuffix(spec, ":*") {
		prefix := strings.TrimSpace(strings.TrimSuffix(spec, ":*"))
		if prefix == "" {
			return nil, errors.New("empty command before the legacy \":*\"")
		}
		spec = prefix + " *"
	}
	words, err := tokenizePattern(spec)
	if err != nil {
		return nil, err
	}
	if len(words) == 0 {
		return nil, errors.New("empty command pattern")
	}
	var lits []string
	var cur strings.Builder
	for i, w := range words {
		if i > 0 {
			cur.WriteByte(' ')
		}
		quote := w.needsQuote()
		if quote {
			cur.WriteByte('\'')
		}
		for _, s := range w.segs {
			if s.wild {
				lits = append(lits, cur.String())
				cur.Reset()
				continue
			}
			cur.WriteString(quoteBody(s.text, quote))
		}
		if quote {
			cur.WriteByte('\'')
		}
	}
	lits = append(lits, cur.String())
	p := &cmdPattern{w: wildcard{lits: lits}}
	if n := len(words); n > 1 && words[n-1].isLoneWildcard() {
		bare := append([]string(nil), lits[:len(lits)-1]...)
		bare[len(bare)-1] = strings.TrimSuffix(bare[len(bare)-1], " ")
		p.bare = &wildcard{lits: bare}
	}
	return p, nil
}

// match reports whether the rendered command certainly matches.
func (p *cmdPattern) match(rendered string) bool {
	return p.w.match(rendered) || p.bare != nil && p.bare.match(rendered)
}

// mayMatch reports whether the rendered command could match once its
// run-time parts are known.
func (p *cmdPattern) mayMatch(rendered string) bool {
	return p.w.intersects(rendered) || p.bare != nil && p.bare.intersects(rendered)
}

// firstLiteral is the pattern's text before its first wildcard.
func (p *cmdPattern) firstLiteral() string { return p.w.lits[0] }

// patWord is one word of a pattern: literal text and wildcards.
type patWord struct {
	segs []patSeg
}

type patSeg struct {
	text string
	wild bool
}

func (w patWord) isLoneWildcard() bool { return len(w.segs) == 1 && w.segs[0].wild }

// needsQuote applies renderWords' quoting rule to the literal text.
func (w patWord) needsQuote() bool {
	if len(w.segs) == 0 {
		return true
	}
	for _, s := range w.segs {
		if !s.wild && strings.ContainsAny(s.text, quoteTriggers) {
			return true
		}
	}
	return false
}

// tokenizePattern splits a pattern into words like the shell would, without
// expansions: blanks separate words, quotes group, a backslash escapes the
// next character and an unquoted '*' is a wildcard.
func tokenizePattern(s string) ([]patWord, error) {
	var words []patWord
	var cur patWord
	var lit strings.Builder
	inWord := false
	flush := func() {
		if lit.Len() > 0 {
			cur.segs = append(cur.segs, patSeg{text: lit.String()})
			lit.Reset()
		}
	}
	end := func() {
		if inWord {
			flush()
			words = append(words, cur)
			cur = patWord{}
			inWord = false
		}
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch c {
		case ' ', '\t', '\n':
			end()
		case '*':
			inWord = true
			flush()
			cur.segs = append(cur.segs, patSeg{wild: true})
		case '\\':
			inWord = true
			if i+1 < len(s) {
				i++
				lit.WriteByte(s[i])
			} else {
				lit.WriteByte('\\')
			}
		case '\'':
			inWord = true
			j := strings.IndexByte(s[i+1:], '\'')
			if j < 0 {
				return nil, errors.New("unterminated ' quote in the command pattern")
			}
			lit.WriteString(s[i+1 : i+1+j])
			i += j + 1
		case '"':
			inWord = true
			i++
			for ; i < len(s) && s[i] != '"'; i++ {
				if s[i] == '\\' && i+1 < len(s) && strings.IndexByte("\"\\$`", s[i+1]) >= 0 {
					i++
				}
				lit.WriteByte(s[i])
			}
			if i >= len(s) {
				return nil, errors.New("unterminated \" quote in the command pattern")
			}
		default:
			inWord = true
			lit.WriteByte(c)
		}
	}
	end()
	return words, nil
}

// quoteTriggers are the characters that make renderWords quote a word, so
// that one argument holding blanks never reads as several words.
const quoteTriggers = " \t\n'\""

// quoteBody escapes text for use inside a single-quoted rendering.
func quoteBody(text string, quoted bool) string {
	if !quoted {
		return text
	}
	return strings.ReplaceAll(text, "'", `'\''`)
}

// renderWords joins words for matching against a cmdPattern: single
// spaces between words, and a word holding blanks or quotes (or empty) in
// single quotes, so one argument never reads as several.
func renderWords(ws []shellcmd.Word) string {
	var b strings.Builder
	for i, w := range ws {
		if i > 0 {
			b.WriteByte(' ')
		}
		quote := w.Text == "" || strings.ContainsAny(w.Text, quoteTriggers)
		if quote {
			b.WriteByte('\'')
		}
		b.WriteString(quoteBody(w.Text, quote))
		if quote {
			b.WriteByte('\'')
		}
	}
	return b.String()
}
