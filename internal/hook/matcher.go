package hook

import (
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/tackcode/tack/internal/lazyregexp"
)

// Pattern is a compiled matcher string.
//
// The syntax is Claude Code's (checked against 2.1.328):
//
//   - "", "*" (or no matcher at all): every value fits.
//   - Only letters, digits, '_', '|', ',', ' ' and '-': a list of exact names
//     separated by '|' or ',' ("Bash", "Edit|Write", "Edit, Write",
//     "general-purpose"). Names are compared exactly and case-sensitively.
//   - Anything else is a regular expression (Go RE2 syntax, which agrees with
//     JavaScript's for the patterns people write: "^Notebook",
//     "mcp__memory__.*", "Write|Edit.*"). Like Claude Code's
//     RegExp.test, it is NOT anchored: it fits when it matches anywhere in the
//     value, so "^Notebook" fits NotebookEdit and "mcp__memory__.*" fits
//     mcp__memory__create_entities. Anchor with ^…$ for a full match.
type Pattern struct {
	src   string
	all   bool
	names []string
	re    *regexp.Regexp
}

// listSyntax is what Claude Code treats as a plain name list.
var listSyntax = lazyregexp.New(`^[a-zA-Z0-9_|, -]+$`)

// CompilePattern compiles a matcher string; the error is for a regular
// expression that does not compile (tack refuses it rather than silently
// never matching, as Claude Code does).
func CompilePattern(s string) (Pattern, error) {
	p := Pattern{src: s}
	switch {
	case s == "" || s == "*":
		p.all = true
	case listSyntax().MatchString(s):
		for _, name := range strings.FieldsFunc(s, func(r rune) bool { return r == '|' || r == ',' }) {
			if name = strings.TrimSpace(name); name != "" {
				p.names = append(p.names, name)
			}
		}
		if len(p.names) == 0 { // only separators and blanks
			p.all = true
		}
	default:
		re, err := regexp.Compile(s)
		if err != nil {
			return Pattern{}, fmt.Errorf("matcher %q: %w", s, err)
		}
		p.re = re
	}
	return p, nil
}

// fileNamePattern compiles a FileChanged matcher: file names separated by
// '|' (".envrc|.env"), compared exactly with the changed file's base name.
// Claude Code reads them literally, not as regular expressions, so the dot
// of ".env" matches only a dot.
func fileNamePattern(s string) Pattern {
	p := Pattern{src: s}
	for _, name := range strings.Split(s, "|") {
		if name = strings.TrimSpace(name); name != "" && name != "*" {
			p.names = append(p.names, name)
		}
	}
	p.all = len(p.names) == 0
	return p
}

// patternFor compiles the matcher of a group configured for ev.
func patternFor(ev Event, s string) (Pattern, error) {
	if ev == FileChanged {
		return fileNamePattern(s), nil
	}
	return CompilePattern(s)
}

// String returns the matcher as written.
func (p Pattern) String() string { return p.src }

// Match reports whether value fits the pattern.
func (p Pattern) Match(value string) bool {
	switch {
	case p.all:
		return true
	case p.re != nil:
		return p.re.MatchString(value)
	default:
		return slices.Contains(p.names, value)
	}
}
