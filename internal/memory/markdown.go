package memory

import (
	"path/filepath"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// importRefs returns the @import references of a memory file, in order, as
// written after the @ (escaped spaces undone, #fragment removed). See the
// package documentation for the grammar.
func importRefs(content string) []string {
	var refs, para []string
	flush := func() {
		if len(para) > 0 {
			refs = scanParagraph(strings.Join(para, "\n"), refs)
			para = para[:0]
		}
	}
	var fence fenceState
	for line := range strings.SplitSeq(content, "\n") {
		line = strings.TrimSuffix(line, "\r")
		if fence.open {
			fence.next(line)
			continue
		}
		if fence.next(line) {
			flush()
			continue
		}
		if strings.TrimSpace(line) == "" {
			flush()
			continue
		}
		para = append(para, line)
	}
	flush()
	return refs
}

// fenceState follows fenced code blocks line by line.
type fenceState struct {
	open bool
	ch   byte // '`' or '~'
	n    int  // length of the opening run
}

// next consumes one line and reports whether it belongs to a fenced block
// (opening and closing lines included). A fence opens on a line whose
// first non-blank characters are three or more backticks or tildes (a
// backtick fence's info string holds no backtick) and closes on a line
// holding only a run of the same character at least as long.
func (f *fenceState) next(line string) bool {
	t := strings.TrimSpace(line)
	if f.open {
		if len(t) >= f.n && strings.Count(t, string(f.ch)) == len(t) {
			f.open = false
		}
		return true
	}
	if len(t) < 3 || (t[0] != '`' && t[0] != '~') {
		return false
	}
	n := 0
	for n < len(t) && t[n] == t[0] {
		n++
	}
	if n < 3 || (t[0] == '`' && strings.IndexByte(t[n:], '`') >= 0) {
		return false
	}
	f.open, f.ch, f.n = true, t[0], n
	return true
}

// scanParagraph appends the imports of one paragraph (consecutive non-blank
// lines outside fences) to refs, skipping code spans.
func scanParagraph(text string, refs []string) []string {
	for i := 0; i < len(text); {
		switch c := text[i]; {
		case c == '\\':
			i += 2 // an escaped character starts neither a code span nor an import
		case c == '`':
			n := runLen(text, i)
			if end := closingRun(text, i+n, n); end >= 0 {
				i = end
			} else {
				i += n // no closing run: the backticks are literal
			}
		case c == '@' && startsWord(text, i):
			tok, next := importToken(text, i+1)
			i = next
			if ref, ok := cleanRef(tok); ok {
				refs = append(refs, ref)
			}
		default:
			i++
		}
	}
	return refs
}

func runLen(s string, i int) int {
	n := 0
	for i+n < len(s) && s[i+n] == s[i] {
		n++
	}
	return n
}

// closingRun returns the index just past the next run of exactly n
// backticks at or after from, or -1.
func closingRun(s string, from, n int) int {
	for j := from; j < len(s); {
		if s[j] != '`' {
			j++
			continue
		}
		m := runLen(s, j)
		if m == n {
			return j + m
		}
		j += m
	}
	return -1
}

// startsWord reports whether the @ at i begins its text or follows white
// space: me@example.com is no import.
func startsWord(s string, i int) bool {
	if i == 0 {
		return true
	}
	r, _ := utf8.DecodeLastRuneInString(s[:i])
	return unicode.IsSpace(r)
}

// importToken reads the path after an @: up to white space, a backtick or a
// backslash, where a backslash followed by a space escapes the space.
func importToken(s string, i int) (tok string, next int) {
	j := i
	for j < len(s) {
		if s[j] == '\\' {
			if j+1 < len(s) && s[j+1] == ' ' {
				j += 2
				continue
			}
			break
		}
		r, size := utf8.DecodeRuneInString(s[j:])
		if unicode.IsSpace(r) || r == '`' {
			break
		}
		j += size
	}
	return s[i:j], j
}

// cleanRef turns an import token into a path reference, or false when it
// is no path: it must start with ./ ../ ~/ or / (not / alone), or an ASCII
// letter, digit, '.', '_' or '-'.
func cleanRef(tok string) (string, bool) {
	tok = strings.ReplaceAll(tok, `\ `, " ")
	if i := strings.IndexByte(tok, '#'); i >= 0 {
		tok = tok[:i]
	}
	switch {
	case tok == "" || tok == "/":
		return "", false
	case strings.HasPrefix(tok, "~/"), tok[0] == '/':
		return tok, true
	}
	c := tok[0]
	if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-' {
		return tok, true
	}
	return "", false
}

// resolveImport makes ref absolute: ~/ is the home directory, other
// relative paths are relative to dir, the importing file's directory. False
// when ref needs a home directory and none is known.
func resolveImport(ref, dir, home string) (string, bool) {
	switch {
	case strings.HasPrefix(ref, "~/"):
		if home == "" {
			return "", false
		}
		return filepath.Join(home, filepath.FromSlash(ref[2:])), true
	case filepath.IsAbs(ref):
		return filepath.Clean(ref), true
	}
	return filepath.Join(dir, filepath.FromSlash(ref)), true
}

// stripBlockComments removes block-level HTML comments: a comment opening
// on a line of its own (after any indentation), outside fenced code blocks,
// up to its closing -->. Text after the --> on its last line is kept. An
// unclosed comment and comments inside a paragraph line are left alone.
func stripBlockComments(s string) string {
	if !strings.Contains(s, "<!--") {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	var fence fenceState
	for pos := 0; pos < len(s); {
		next := len(s)
		if i := strings.IndexByte(s[pos:], '\n'); i >= 0 {
			next = pos + i + 1
		}
		line := s[pos:next]
		body := strings.TrimRight(line, "\r\n")
		t := strings.TrimLeft(body, " \t")
		if !fence.open && strings.HasPrefix(t, "<!--") {
			start := pos + len(body) - len(t) + len("<!--")
			if end := strings.Index(s[start:], "-->"); end >= 0 {
				after := start + end + len("-->")
				tailEnd := len(s)
				if i := strings.IndexByte(s[after:], '\n'); i >= 0 {
					tailEnd = after + i + 1
				}
				if strings.TrimSpace(s[after:tailEnd]) != "" {
					pos = after // what follows the comment is read as a line
				} else {
					pos = tailEnd
				}
				continue
			}
		}
		fence.next(body)
		b.WriteString(line)
		pos = next
	}
	return b.String()
}

// splitFrontmatter separates a leading YAML frontmatter block, between two
// lines of ---, from the body. False when there is none (also when the
// block never closes: then it is all body).
func splitFrontmatter(s string) (fm, body string, ok bool) {
	t := strings.TrimPrefix(s, "\uFEFF")
	first, rest, found := strings.Cut(t, "\n")
	if !found || strings.TrimRight(first, " \t\r") != "---" {
		return "", s, false
	}
	for pos := 0; pos < len(rest); {
		next := len(rest)
		if i := strings.IndexByte(rest[pos:], '\n'); i >= 0 {
			next = pos + i + 1
		}
		if strings.TrimRight(rest[pos:next], " \t\r\n") == "---" {
			return rest[:pos], rest[next:], true
		}
		pos = next
	}
	return "", s, false
}

// parsePaths reads the paths: key of a rule's frontmatter: a block list
// (- a), a flow list ([a, b]) or a string, where commas outside braces
// separate patterns ("src/**/*.ts, lib/**"). Quotes are removed, a leading
// ./ dropped, empty entries ignored.
func parsePaths(fm string) []string {
	lines := strings.Split(fm, "\n")
	for i, line := range lines {
		key, val, ok := strings.Cut(strings.TrimRight(line, " \t\r"), ":")
		if !ok || key != "paths" {
			continue
		}
		val = strings.TrimSpace(val)
		if val != "" {
			return cleanGlobs(splitFlow(val))
		}
		var items []string
		for _, l := range lines[i+1:] {
			t := strings.TrimSpace(l)
			if t == "" || t[0] == '#' {
				continue
			}
			if t[0] != '-' {
				break
			}
			items = append(items, splitFlow(strings.TrimSpace(t[1:]))...)
		}
		return cleanGlobs(items)
	}
	return nil
}

// splitFlow splits one YAML value into patterns: a flow list's items, or a
// string's comma-separated parts.
func splitFlow(v string) []string {
	v = stripYAMLComment(v)
	if len(v) >= 2 && v[0] == '[' && v[len(v)-1] == ']' {
		var out []string
		for _, item := range splitCommas(v[1 : len(v)-1]) {
			out = append(out, splitCommas(unquote(strings.TrimSpace(item)))...)
		}
		return out
	}
	return splitCommas(unquote(v))
}

// stripYAMLComment drops a # comment that follows white space outside
// quotes.
func stripYAMLComment(v string) string {
	var quote byte
	for i := 0; i < len(v); i++ {
		switch c := v[i]; {
		case quote != 0:
			if c == quote {
				quote = 0
			}
		case c == '"' || c == '\'':
			quote = c
		case c == '#' && (i == 0 || v[i-1] == ' ' || v[i-1] == '\t'):
			return strings.TrimSpace(v[:i])
		}
	}
	return strings.TrimSpace(v)
}

// splitCommas splits at commas outside braces and quotes, so src/*.{ts,tsx}
// stays one pattern.
func splitCommas(v string) []string {
	var out []string
	depth, start := 0, 0
	var quote byte
	for i := 0; i < len(v); i++ {
		switch c := v[i]; {
		case quote != 0:
			if c == quote {
				quote = 0
			}
		case c == '"' || c == '\'':
			quote = c
		case c == '{':
			depth++
		case c == '}':
			if depth > 0 {
				depth--
			}
		case c == ',' && depth == 0:
			out = append(out, v[start:i])
			start = i + 1
		}
	}
	return append(out, v[start:])
}

func unquote(v string) string {
	if len(v) >= 2 && (v[0] == '"' && v[len(v)-1] == '"' || v[0] == '\'' && v[len(v)-1] == '\'') {
		if v[0] == '"' {
			if u, err := strconv.Unquote(v); err == nil {
				return u
			}
		}
		return v[1 : len(v)-1]
	}
	return v
}

func cleanGlobs(items []string) []string {
	var out []string
	for _, g := range items {
		g = strings.TrimPrefix(unquote(strings.TrimSpace(g)), "./")
		if g != "" {
			out = append(out, g)
		}
	}
	return out
}
