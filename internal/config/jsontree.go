package config

import (
	"fmt"
	"sort"
	"unicode/utf16"
	"unicode/utf8"
)

// This file holds a small JSON parser that keeps the byte offset of every key
// and value, and the locator that turns an offset into a line and column.
//
// Why not encoding/json: it reports an offset only for the first syntax or
// type error, and nothing for a value that is well typed but wrong (an unknown
// mode, a bad regular expression three levels down). Parsing into a tree of
// offset-carrying nodes lets every later check point at the exact value, in
// one pass and without reflection. The parser accepts exactly what
// encoding/json accepts (a fuzz test compares them) and decodes strings the
// same way (invalid UTF-8 and lone surrogates become U+FFFD).

// kind is the JSON type of a node.
type kind uint8

const (
	kindNull kind = iota
	kindBool
	kindNumber
	kindString
	kindArray
	kindObject
)

// String names the kind as an error message says what it got.
func (k kind) String() string {
	switch k {
	case kindNull:
		return "null"
	case kindBool:
		return "a boolean"
	case kindNumber:
		return "a number"
	case kindString:
		return "a string"
	case kindArray:
		return "a list"
	default:
		return "an object"
	}
}

// node is one JSON value and where it is in the document.
type node struct {
	kind  kind
	off   int    // offset of the value's first byte
	end   int    // offset just past the value
	str   string // kindString: the decoded text; kindNumber: the literal
	b     bool   // kindBool
	elems []*node
	mems  []member // in document order, duplicates included
}

// member is one key of an object.
type member struct {
	key    string
	keyOff int // offset of the key's opening quote
	val    *node
}

// syntaxError is invalid JSON at a byte offset. When open is not -1, msg
// has two %d verbs for the line and column of the bracket at offset open,
// which the parser cannot compute cheaply.
type syntaxError struct {
	off  int
	msg  string
	open int
}

func synErr(off int, msg string) *syntaxError { return &syntaxError{off, msg, -1} }

// mismatch reports a closing bracket that does not match the open one.
func mismatch(off int, found byte, open int, want string) *syntaxError {
	what := map[string]string{"}": "'{'", "]": "'['"}[want]
	return &syntaxError{off, fmt.Sprintf("'%c' does not close the %s at line %%d, column %%d (want '%s')", found, what, want), open}
}

// maxDepth bounds nesting as encoding/json does, so that a hostile file cannot
// exhaust the stack and both parsers accept the same documents.
const maxDepth = 10000

type parser struct {
	src   []byte
	i     int
	depth int
}

// parseJSON parses one JSON document. A document of only whitespace gives a
// nil node and no error.
func parseJSON(src []byte) (*node, *syntaxError) {
	p := parser{src: src}
	p.ws()
	if p.i == len(src) {
		return nil, nil
	}
	v, err := p.value()
	if err != nil {
		return nil, err
	}
	p.ws()
	if p.i < len(src) {
		if c := src[p.i]; c == '}' || c == ']' {
			return nil, synErr(p.i, fmt.Sprintf("unmatched '%c' after the end of the top-level value", c))
		}
		return nil, p.unexpected("after the end of the top-level value")
	}
	return v, nil
}

func (p *parser) ws() {
	for p.i < len(p.src) {
		switch p.src[p.i] {
		case ' ', '\t', '\n', '\r':
			p.i++
		default:
			return
		}
	}
}

// unexpected describes the byte at p.i, which does not fit where it is. The
// usual suspects (comments, single quotes) get a message that says what JSON
// forbids, since "invalid character '/'" does not tell a user what to fix.
func (p *parser) unexpected(where string) *syntaxError {
	if p.i >= len(p.src) {
		return synErr(p.i, "unexpected end of input "+where)
	}
	c := p.src[p.i]
	switch {
	case c == '/' && p.i+1 < len(p.src) && (p.src[p.i+1] == '/' || p.src[p.i+1] == '*'):
		return synErr(p.i, "comments are not allowed in JSON")
	case c == '\'':
		return synErr(p.i, "strings must be in double quotes, not single quotes")
	}
	return synErr(p.i, fmt.Sprintf("invalid character %s %s", describeByte(p.src, p.i), where))
}

// describeByte quotes the character at src[i] for an error message.
func describeByte(src []byte, i int) string {
	r, size := utf8.DecodeRune(src[i:])
	switch {
	case r == utf8.RuneError && size <= 1:
		return fmt.Sprintf("byte 0x%02x (not UTF-8)", src[i])
	case r == '\'':
		return `"'"`
	case r < 0x20 || r == 0x7f || r == 0xfeff || (r >= 0x80 && r <= 0xa0):
		return fmt.Sprintf("U+%04X", r)
	}
	return "'" + string(r) + "'"
}

func (p *parser) value() (*node, *syntaxError) {
	if p.i >= len(p.src) {
		return nil, p.unexpected("where a value was expected")
	}
	switch c := p.src[p.i]; {
	case c == '{':
		return p.object()
	case c == '[':
		return p.array()
	case c == '"':
		off := p.i
		s, err := p.string()
		if err != nil {
			return nil, err
		}
		return &node{kind: kindString, off: off, end: p.i, str: s}, nil
	case c == '-' || (c >= '0' && c <= '9'):
		return p.number()
	case c == '+' || c == '.':
		return nil, synErr(p.i, "invalid number (a JSON number starts with a digit or '-')")
	case isWordByte(c):
		return p.word()
	}
	return nil, p.unexpected("where a value was expected")
}

func isWordByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '$'
}

// word parses true, false or null, and explains the near misses (True, yes,
// NaN, an unquoted string).
func (p *parser) word() (*node, *syntaxError) {
	off := p.i
	end := p.i
	for end < len(p.src) && isWordByte(p.src[end]) {
		end++
	}
	w := string(p.src[off:end])
	n := &node{off: off, end: end}
	switch w {
	case "true":
		n.kind, n.b = kindBool, true
	case "false":
		n.kind = kindBool
	case "null":
		n.kind = kindNull
	default:
		switch lw := toLowerASCII(w); lw {
		case "true", "false", "null":
			return nil, synErr(off, fmt.Sprintf("invalid value %s (JSON literals are lower case: %s)", w, lw))
		case "nan", "infinity", "undefined":
			return nil, synErr(off, fmt.Sprintf("invalid value %s (JSON has no %s)", w, w))
		}
		return nil, synErr(off, fmt.Sprintf("invalid value %s (a string must be in double quotes)", w))
	}
	p.i = end
	return n, nil
}

func toLowerASCII(s string) string {
	b := []byte(s)
	for i, c := range b {
		if c >= 'A' && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

func (p *parser) number() (*node, *syntaxError) {
	src, off := p.src, p.i
	i := off
	if src[i] == '-' {
		i++
	}
	switch {
	case i >= len(src) || !isDigit(src[i]):
		return nil, synErr(off, "invalid number (a digit must follow '-')")
	case src[i] == '0':
		i++
		if i < len(src) && isDigit(src[i]) {
			return nil, synErr(off, "invalid number (JSON does not allow leading zeros)")
		}
	default:
		for i < len(src) && isDigit(src[i]) {
			i++
		}
	}
	if i < len(src) && src[i] == '.' {
		i++
		if i >= len(src) || !isDigit(src[i]) {
			return nil, synErr(off, "invalid number (a digit must follow the decimal point)")
		}
		for i < len(src) && isDigit(src[i]) {
			i++
		}
	}
	if i < len(src) && (src[i] == 'e' || src[i] == 'E') {
		i++
		if i < len(src) && (src[i] == '+' || src[i] == '-') {
			i++
		}
		if i >= len(src) || !isDigit(src[i]) {
			return nil, synErr(off, "invalid number (a digit must follow the exponent)")
		}
		for i < len(src) && isDigit(src[i]) {
			i++
		}
	}
	p.i = i
	return &node{kind: kindNumber, off: off, end: i, str: string(src[off:i])}, nil
}

// string parses the string whose opening quote is at p.i.
func (p *parser) string() (string, *syntaxError) {
	src, open := p.src, p.i
	i := open + 1
	// Fast path: no escapes and valid UTF-8, the common case in settings.
	for i < len(src) {
		c := src[i]
		if c == '"' {
			if raw := src[open+1 : i]; utf8.Valid(raw) {
				p.i = i + 1
				return string(raw), nil
			}
			break
		}
		if c == '\\' || c < 0x20 {
			break
		}
		i++
	}
	buf := make([]byte, 0, i-open+16)
	i = open + 1
	for {
		if i >= len(src) {
			return "", synErr(open, "string is not closed (missing '\"')")
		}
		c := src[i]
		switch {
		case c == '"':
			p.i = i + 1
			return string(buf), nil
		case c == '\n' || c == '\r':
			return "", synErr(open, `string is not closed on its line (a line break inside a string must be written \n)`)
		case c < 0x20:
			return "", synErr(i, fmt.Sprintf("control character U+%04X in string (write it as an escape such as \\t)", c))
		case c == '\\':
			if i+1 >= len(src) {
				return "", synErr(open, "string is not closed (missing '\"')")
			}
			switch e := src[i+1]; e {
			case '"', '\\', '/':
				buf = append(buf, e)
			case 'b':
				buf = append(buf, '\b')
			case 'f':
				buf = append(buf, '\f')
			case 'n':
				buf = append(buf, '\n')
			case 'r':
				buf = append(buf, '\r')
			case 't':
				buf = append(buf, '\t')
			case 'u':
				r, ok := hex4(src, i+2)
				if !ok {
					return "", synErr(i, `invalid \u escape in string (want four hex digits)`)
				}
				if utf16.IsSurrogate(r) {
					// A pair decodes to one rune; anything else is U+FFFD, as in encoding/json.
					if r2, ok := hex4(src, i+8); ok && i+7 < len(src) && src[i+6] == '\\' && src[i+7] == 'u' {
						if dec := utf16.DecodeRune(r, r2); dec != utf8.RuneError {
							buf = utf8.AppendRune(buf, dec)
							i += 12
							continue
						}
					}
					r = utf8.RuneError
				}
				buf = utf8.AppendRune(buf, r)
				i += 6
				continue
			default:
				return "", synErr(i, fmt.Sprintf("invalid escape \\%s in string", describeEscape(src, i+1)))
			}
			i += 2
		case c < utf8.RuneSelf:
			buf = append(buf, c)
			i++
		default:
			r, size := utf8.DecodeRune(src[i:])
			buf = utf8.AppendRune(buf, r) // invalid bytes become U+FFFD one by one
			i += size
		}
	}
}

func describeEscape(src []byte, i int) string {
	r, _ := utf8.DecodeRune(src[i:])
	if r < 0x20 || r == utf8.RuneError {
		return fmt.Sprintf("U+%04X", r)
	}
	return string(r)
}

// hex4 decodes four hex digits at src[i:].
func hex4(src []byte, i int) (rune, bool) {
	if i < 0 || i+4 > len(src) {
		return 0, false
	}
	var r rune
	for _, c := range src[i : i+4] {
		switch {
		case c >= '0' && c <= '9':
			c -= '0'
		case c >= 'a' && c <= 'f':
			c = c - 'a' + 10
		case c >= 'A' && c <= 'F':
			c = c - 'A' + 10
		default:
			return 0, false
		}
		r = r<<4 | rune(c)
	}
	return r, true
}

func (p *parser) enter() *syntaxError {
	p.depth++
	if p.depth > maxDepth {
		return synErr(p.i, fmt.Sprintf("nesting deeper than %d levels", maxDepth))
	}
	return nil
}

// notClosed reports a container the input ends inside, at its opening
// bracket: the place to start looking for the missing one.
func notClosed(open int, bracket string) *syntaxError {
	return synErr(open, fmt.Sprintf("'%s' is not closed before the end of the input", bracket))
}

func (p *parser) object() (*node, *syntaxError) {
	if err := p.enter(); err != nil {
		return nil, err
	}
	defer func() { p.depth-- }()
	open := p.i
	n := &node{kind: kindObject, off: open}
	p.i++
	p.ws()
	if p.i < len(p.src) && p.src[p.i] == '}' {
		p.i++
		n.end = p.i
		return n, nil
	}
	comma := -1
	for {
		if p.i >= len(p.src) {
			return nil, notClosed(open, "{")
		}
		if c := p.src[p.i]; c != '"' {
			switch {
			case c == '}' && comma >= 0:
				return nil, synErr(comma, "trailing comma before '}' (JSON does not allow one)")
			case isWordByte(c):
				return nil, synErr(p.i, "object keys must be strings in double quotes")
			}
			return nil, p.unexpected("where an object key was expected")
		}
		keyOff := p.i
		key, err := p.string()
		if err != nil {
			return nil, err
		}
		p.ws()
		if p.i >= len(p.src) {
			return nil, notClosed(open, "{")
		}
		if p.src[p.i] != ':' {
			if c := p.src[p.i]; c == '"' || c == '{' || c == '[' || c == '-' || isWordByte(c) {
				return nil, synErr(p.i, "missing ':' after the object key")
			}
			return nil, p.unexpected("after an object key (want ':')")
		}
		p.i++
		p.ws()
		if p.i >= len(p.src) {
			return nil, notClosed(open, "{")
		}
		v, err := p.value()
		if err != nil {
			return nil, err
		}
		n.mems = append(n.mems, member{key: key, keyOff: keyOff, val: v})
		p.ws()
		if p.i >= len(p.src) {
			return nil, notClosed(open, "{")
		}
		switch p.src[p.i] {
		case ',':
			comma = p.i
			p.i++
			p.ws()
		case '}':
			p.i++
			n.end = p.i
			return n, nil
		case '"':
			return nil, synErr(p.i, "missing ',' before this key")
		case ']':
			return nil, mismatch(p.i, ']', open, "}")
		default:
			return nil, p.unexpected("after an object member (want ',' or '}')")
		}
	}
}

func (p *parser) array() (*node, *syntaxError) {
	if err := p.enter(); err != nil {
		return nil, err
	}
	defer func() { p.depth-- }()
	open := p.i
	n := &node{kind: kindArray, off: open}
	p.i++
	p.ws()
	if p.i < len(p.src) && p.src[p.i] == ']' {
		p.i++
		n.end = p.i
		return n, nil
	}
	comma := -1
	for {
		if p.i >= len(p.src) {
			return nil, notClosed(open, "[")
		}
		if p.src[p.i] == ']' && comma >= 0 {
			return nil, synErr(comma, "trailing comma before ']' (JSON does not allow one)")
		}
		v, err := p.value()
		if err != nil {
			return nil, err
		}
		n.elems = append(n.elems, v)
		p.ws()
		if p.i >= len(p.src) {
			return nil, notClosed(open, "[")
		}
		switch c := p.src[p.i]; {
		case c == ',':
			comma = p.i
			p.i++
			p.ws()
		case c == ']':
			p.i++
			n.end = p.i
			return n, nil
		case c == '"' || c == '{' || c == '[' || c == '-' || isWordByte(c):
			return nil, synErr(p.i, "missing ',' before this list element")
		case c == '}':
			return nil, mismatch(p.i, '}', open, "]")
		default:
			return nil, p.unexpected("after a list element (want ',' or ']')")
		}
	}
}

// lineIndex converts byte offsets of one document into 1-based lines and
// columns. Columns count characters, not bytes (a tab is one column), as
// editors number them; "\n", "\r\n" and a lone "\r" each end a line.
type lineIndex struct {
	src    []byte
	starts []int // offset of the first byte of each line; built on first use
}

func (x *lineIndex) pos(off int) (line, col int) {
	if x.starts == nil {
		x.starts = append(x.starts, 0)
		for i := 0; i < len(x.src); i++ {
			switch x.src[i] {
			case '\n':
				x.starts = append(x.starts, i+1)
			case '\r':
				if i+1 < len(x.src) && x.src[i+1] == '\n' {
					continue
				}
				x.starts = append(x.starts, i+1)
			}
		}
	}
	off = max(0, min(off, len(x.src)))
	l := sort.Search(len(x.starts), func(i int) bool { return x.starts[i] > off }) - 1
	return l + 1, utf8.RuneCount(x.src[x.starts[l]:off]) + 1
}
