package search

import (
	"errors"
	"fmt"
	"regexp"
	"regexp/syntax"
	"slices"
	"unicode"
	"unicode/utf8"
)

// errNewline is the error for a pattern that needs a newline outside
// multiline mode, where no match can contain one.
var errNewline = errors.New("the pattern contains a literal newline, which never matches line by line; set multiline: true to match across lines")

// matcher is a compiled Grep pattern: the regexp, plus literals that every
// match contains, found with fast byte search before the regexp runs.
type matcher struct {
	re *regexp.Regexp
	// lits are literals of which every match contains at least one; nil
	// when the pattern has no such set.
	lits []literal
	// exact means a literal hit is a match: the pattern is nothing but
	// the literals.
	exact bool
	// multiline lets matches span lines; otherwise the regexp has been
	// rewritten so that no match contains a newline (see confine).
	multiline bool
}

// compilePattern compiles a ripgrep-style pattern: Perl syntax, ^ and $
// anchored at line boundaries, case folded with ignoreCase. Outside
// multiline mode nothing matches a newline, as if each line were searched
// alone; in multiline mode . matches newlines too, so matches span lines.
func compilePattern(pattern string, ignoreCase, multiline bool) (*matcher, error) {
	flags := syntax.Perl &^ syntax.OneLine
	if ignoreCase {
		flags |= syntax.FoldCase
	}
	if multiline {
		flags |= syntax.DotNL
	}
	tree, err := syntax.Parse(pattern, flags)
	if err != nil {
		return nil, err
	}
	if !multiline {
		if err := confine(tree); err != nil {
			return nil, err
		}
	}
	tree = tree.Simplify()
	re, err := regexp.Compile(tree.String())
	if err != nil {
		return nil, fmt.Errorf("compiling the rewritten pattern %q: %w", tree.String(), err)
	}
	m := &matcher{re: re, multiline: multiline}
	m.lits = requiredLiterals(tree)
	m.exact = m.lits != nil && isExact(tree)
	return m, nil
}

// confine rewrites tree in place so that it cannot match a newline: the
// line-by-line semantics of grep, kept while the regexp runs over a whole
// buffer. Newlines leave character classes, . stops matching them, \A and
// \z become line anchors, and a literal newline is an error.
func confine(re *syntax.Regexp) error {
	switch re.Op {
	case syntax.OpLiteral:
		if slices.Contains(re.Rune, '\n') {
			return errNewline
		}
	case syntax.OpCharClass:
		re.Rune = withoutNewline(re.Rune)
		if len(re.Rune) == 0 {
			re.Op = syntax.OpNoMatch
		}
	case syntax.OpAnyChar:
		re.Op = syntax.OpAnyCharNotNL
	case syntax.OpBeginText:
		re.Op = syntax.OpBeginLine
	case syntax.OpEndText:
		re.Op = syntax.OpEndLine
		re.Flags &^= syntax.WasDollar
	}
	for _, sub := range re.Sub {
		if err := confine(sub); err != nil {
			return err
		}
	}
	return nil
}

// withoutNewline removes '\n' from a class given as sorted range pairs.
func withoutNewline(ranges []rune) []rune {
	out := make([]rune, 0, len(ranges)+2)
	for i := 0; i+1 < len(ranges); i += 2 {
		lo, hi := ranges[i], ranges[i+1]
		if lo > '\n' || hi < '\n' {
			out = append(out, lo, hi)
			continue
		}
		if lo < '\n' {
			out = append(out, lo, '\n'-1)
		}
		if hi > '\n' {
			out = append(out, '\n'+1, hi)
		}
	}
	return out
}

// literal is a byte string that a match contains. A folded literal is
// lower-case ASCII and matches ASCII case-insensitively; it is only made
// of runes whose case variants are all ASCII, so that byte comparison
// finds every variant.
type literal struct {
	s    []byte
	fold bool
}

// maxLiterals bounds the set of alternatives searched for together.
const maxLiterals = 4

// requiredLiterals returns a set of literals of which every match of re
// contains at least one, choosing the most selective set it can see, or
// nil when there is none.
func requiredLiterals(re *syntax.Regexp) []literal {
	switch re.Op {
	case syntax.OpLiteral:
		if l, ok := literalOf(re); ok {
			return []literal{l}
		}
	case syntax.OpCapture, syntax.OpPlus:
		return requiredLiterals(re.Sub[0])
	case syntax.OpRepeat:
		if re.Min >= 1 {
			return requiredLiterals(re.Sub[0])
		}
	case syntax.OpConcat:
		var best []literal
		for _, sub := range re.Sub {
			if set := requiredLiterals(sub); better(set, best) {
				best = set
			}
		}
		return best
	case syntax.OpAlternate:
		var all []literal
		for _, sub := range re.Sub {
			set := requiredLiterals(sub)
			if set == nil || len(all)+len(set) > maxLiterals {
				return nil
			}
			all = append(all, set...)
		}
		return all
	}
	return nil
}

// literalOf returns the searchable part of a literal node: all of it, or
// for a case-folded literal its longest run of runes with only ASCII case
// variants ('k' and 's' have non-ASCII ones: K, ſ).
func literalOf(re *syntax.Regexp) (literal, bool) {
	if re.Flags&syntax.FoldCase == 0 {
		return literal{s: []byte(string(re.Rune))}, len(re.Rune) > 0
	}
	var best, run []byte
	for _, r := range re.Rune {
		if !asciiFoldOnly(r) {
			run = nil
			continue
		}
		run = append(run, byte(unicode.ToLower(r)))
		if len(run) > len(best) {
			best = slices.Clone(run)
		}
	}
	return literal{s: best, fold: true}, len(best) > 0
}

// asciiFoldOnly reports whether r and all its case variants are ASCII.
func asciiFoldOnly(r rune) bool {
	if r >= utf8.RuneSelf {
		return false
	}
	for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
		if f >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// better reports whether literal set a is more selective than b: its
// shortest literal is longer, or as long with fewer alternatives.
func better(a, b []literal) bool {
	if a == nil {
		return false
	}
	if b == nil {
		return true
	}
	la, lb := minLen(a), minLen(b)
	return la > lb || (la == lb && len(a) < len(b))
}

func minLen(set []literal) int {
	n := len(set[0].s)
	for _, l := range set[1:] {
		n = min(n, len(l.s))
	}
	return n
}

// isExact reports whether re matches exactly its required literals, so a
// literal hit needs no confirmation by the regexp.
func isExact(re *syntax.Regexp) bool {
	switch re.Op {
	case syntax.OpLiteral:
		l, ok := literalOf(re)
		return ok && len(l.s) == len(string(re.Rune))
	case syntax.OpAlternate:
		for _, sub := range re.Sub {
			if !isExact(sub) {
				return false
			}
		}
		return true
	}
	return false
}
