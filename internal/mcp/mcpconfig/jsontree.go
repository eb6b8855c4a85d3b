package mcpconfig

import (
	"encoding/json"
	"fmt"
	"sort"
	"unicode/utf8"
)

// This file holds a small JSON parser that keeps the byte offset of every key
// and value, and the locator that turns an offset into a line and column. It
// follows internal/config's parser (whose tree is unexported): encoding/json
// reports a position only for the first syntax error and none for a value
// that is well formed but wrong, and the minimal edits of edit.go need the
// exact extent of every member they touch.
//
// ~/.claude.json is a large file (Claude Code keeps prompt history and
// per-project state in it), so the parser can build a subtree shallowly:
// the value is checked to be valid JSON and its extent recorded, but no
// children or decoded strings are allocated. A filter picks the subtrees
// worth building.

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

// node is one JSON value and where it is in the document. A shallow node
// has its kind and extent only.
type node struct {
	kind  kind
	off   int    // offset of the value's first byte
	end   int    // offset just past the value
	str   string // kindString: the decoded text (built nodes only)
	b     bool   // kindBool
	elems []*node
	mems  []member // in document order, duplicates included
}

// member is one key of an object.
type member struct {
	key    string
	keyOff int // offset of the key's opening quote
	keyEnd int // offset just past the key's closing quote
	val    *node
}

// lookup returns the value of key, the last one when the key is repeated
// (JSON.parse, which Claude Code uses, keeps the last), and its index in
// n.mems.
func (n *node) lookup(key string) (*node, int) {
	if n == nil || n.kind != kindObject {
		return nil, -1
	}
	for i := len(n.mems) - 1; i >= 0; i-- {
		if n.mems[i].key == key {
			return n.mems[i].val, i
		}
	}
	return nil, -1
}

// build says how much of a value to build.
type build uint8

const (
	shallow  build = iota // kind and extent only
	filtered              // an object's members are built as the filter says
	full                  // everything
)

// filter decides how to build the value of the object member at path (the
// keys from the root, the member's own key last). It is consulted only
// below filtered objects.
type filter func(path []string) build

// syntaxError is invalid JSON at a byte offset.
type syntaxError struct {
	off int
	msg string
}

// maxDepth bounds nesting as encoding/json does, so a hostile file cannot
// exhaust the stack.
const maxDepth = 10000

type parser struct {
	src   []byte
	i     int
	depth int
	keep  filter
	path  []string
}

// parseJSON parses one JSON document, building the whole tree when keep is
// nil. A document of only whitespace gives a nil node and no error.
func parseJSON(src []byte, keep filter) (*node, *syntaxError) {
	p := parser{src: src, keep: keep}
	p.ws()
	if p.i == len(src) {
		return nil, nil
	}
	mode := full
	if keep != nil {
		mode = filtered
	}
	v, err := p.value(mode)
	if err != nil {
		return nil, err
	}
	p.ws()
	if p.i < len(src) {
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
// usual suspects in hand-edited files (comments, single quotes) get a message
// that says what JSON forbids.
func (p *parser) unexpected(where string) *syntaxError {
	if p.i >= len(p.src) {
		return &syntaxError{p.i, "unexpected end of input " + where}
	}
	c := p.src[p.i]
	switch {
	case c == '/' && p.i+1 < len(p.src) && (p.src[p.i+1] == '/' || p.src[p.i+1] == '*'):
		return &syntaxError{p.i, "comments are not allowed in JSON"}
	case c == '\'':
		return &syntaxError{p.i, "strings must be in double quotes, not single quotes"}
	}
	r, size := utf8.DecodeRune(p.src[p.i:])
	what := "'" + string(r) + "'"
	if r == utf8.RuneError && size <= 1 {
		what = fmt.Sprintf("byte 0x%02x (not UTF-8)", c)
	} else if r < 0x20 || r == 0x7f || r == 0xfeff {
		what = fmt.Sprintf("U+%04X", r)
	}
	return &syntaxError{p.i, fmt.Sprintf("invalid character %s %s", what, where)}
}

func (p *parser) value(mode build) (*node, *syntaxError) {
	if p.i >= len(p.src) {
		return nil, p.unexpected("where a value was expected")
	}
	switch c := p.src[p.i]; {
	case c == '{':
		return p.object(mode)
	case c == '[':
		return p.array(mode)
	case c == '"':
		off := p.i
		s, err := p.string(mode != shallow)
		if err != nil {
			return nil, err
		}
		return &node{kind: kindString, off: off, end: p.i, str: s}, nil
	case c == '-' || (c >= '0' && c <= '9'):
		return p.number()
	case c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z':
		return p.word()
	}
	return nil, p.unexpected("where a value was expected")
}

// word parses true, false or null.
func (p *parser) word() (*node, *syntaxError) {
	off, end := p.i, p.i
	for end < len(p.src) && (p.src[end] >= 'a' && p.src[end] <= 'z' || p.src[end] >= 'A' && p.src[end] <= 'Z' || p.src[end] >= '0' && p.src[end] <= '9' || p.src[end] == '_') {
		end++
	}
	n := &node{off: off, end: end}
	switch w := string(p.src[off:end]); w {
	case "true":
		n.kind, n.b = kindBool, true
	case "false":
		n.kind = kindBool
	case "null":
		n.kind = kindNull
	case "True", "False", "Null", "TRUE", "FALSE", "NULL", "None":
		return nil, &syntaxError{off, fmt.Sprintf("invalid value %s (JSON literals are true, false and null, in lower case)", w)}
	default:
		return nil, &syntaxError{off, fmt.Sprintf("invalid value %s (a string must be in double quotes)", w)}
	}
	p.i = end
	return n, nil
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
		return nil, &syntaxError{off, "invalid number (a digit must follow '-')"}
	case src[i] == '0':
		i++
		if i < len(src) && isDigit(src[i]) {
			return nil, &syntaxError{off, "invalid number (JSON does not allow leading zeros)"}
		}
	default:
		for i < len(src) && isDigit(src[i]) {
			i++
		}
	}
	if i < len(src) && src[i] == '.' {
		i++
		if i >= len(src) || !isDigit(src[i]) {
			return nil, &syntaxError{off, "invalid number (a digit must follow the decimal point)"}
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
			return nil, &syntaxError{off, "invalid number (a digit must follow the exponent)"}
		}
		for i < len(src) && isDigit(src[i]) {
			i++
		}
	}
	p.i = i
	return &node{kind: kindNumber, off: off, end: i, str: string(src[off:i])}, nil
}

func isHex(c byte) bool { return isDigit(c) || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F' }

// string checks the string whose opening quote is at p.i and, when decode is
// set, returns its text. Decoding is left to encoding/json once the string is
// known to be well formed, so escapes, surrogate pairs and invalid UTF-8 come
// out exactly as encoding/json (and the rest of tack) decode them.
func (p *parser) string(decode bool) (string, *syntaxError) {
	src, open := p.src, p.i
	plain := true
	for i := open + 1; ; {
		if i >= len(src) {
			return "", &syntaxError{open, "string is not closed (missing '\"')"}
		}
		switch c := src[i]; {
		case c == '"':
			p.i = i + 1
			if !decode {
				return "", nil
			}
			if raw := src[open+1 : i]; plain && utf8.Valid(raw) {
				return string(raw), nil
			}
			var s string
			if err := json.Unmarshal(src[open:i+1], &s); err != nil {
				return "", &syntaxError{open, "invalid string: " + err.Error()}
			}
			return s, nil
		case c == '\n' || c == '\r':
			return "", &syntaxError{open, `string is not closed on its line (a line break inside a string must be written \n)`}
		case c < 0x20:
			return "", &syntaxError{i, fmt.Sprintf("control character U+%04X in string (write it as an escape such as \\t)", c)}
		case c == '\\':
			plain = false
			if i+1 >= len(src) {
				return "", &syntaxError{open, "string is not closed (missing '\"')"}
			}
			switch src[i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i += 2
			case 'u':
				if i+6 > len(src) || !isHex(src[i+2]) || !isHex(src[i+3]) || !isHex(src[i+4]) || !isHex(src[i+5]) {
					return "", &syntaxError{i, `invalid \u escape in string (want four hex digits)`}
				}
				i += 6
			default:
				r, _ := utf8.DecodeRune(src[i+1:])
				return "", &syntaxError{i, fmt.Sprintf("invalid escape \\%c in string", r)}
			}
		default:
			i++
		}
	}
}

func (p *parser) enter() *syntaxError {
	p.depth++
	if p.depth > maxDepth {
		return &syntaxError{p.i, fmt.Sprintf("nesting deeper than %d levels", maxDepth)}
	}
	return nil
}

func notClosed(open int, bracket string) *syntaxError {
	return &syntaxError{open, fmt.Sprintf("'%s' is not closed before the end of the input", bracket)}
}

func (p *parser) object(mode build) (*node, *syntaxError) {
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
			if c == '}' && comma >= 0 {
				return nil, &syntaxError{comma, "trailing comma before '}' (JSON does not allow one)"}
			}
			if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_' {
				return nil, &syntaxError{p.i, "object keys must be strings in double quotes"}
			}
			return nil, p.unexpected("where an object key was expected")
		}
		keyOff := p.i
		key, err := p.string(mode != shallow)
		if err != nil {
			return nil, err
		}
		keyEnd := p.i
		p.ws()
		if p.i >= len(p.src) {
			return nil, notClosed(open, "{")
		}
		if p.src[p.i] != ':' {
			return nil, p.unexpected("after an object key (want ':')")
		}
		p.i++
		p.ws()
		child := mode
		if mode == filtered {
			p.path = append(p.path, key)
			child = p.keep(p.path)
		}
		v, err := p.value(child)
		if mode == filtered {
			p.path = p.path[:len(p.path)-1]
		}
		if err != nil {
			return nil, err
		}
		if mode != shallow {
			n.mems = append(n.mems, member{key: key, keyOff: keyOff, keyEnd: keyEnd, val: v})
		}
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
			return nil, &syntaxError{p.i, "missing ',' before this key"}
		default:
			return nil, p.unexpected("after an object member (want ',' or '}')")
		}
	}
}

func (p *parser) array(mode build) (*node, *syntaxError) {
	if err := p.enter(); err != nil {
		return nil, err
	}
	defer func() { p.depth-- }()
	open := p.i
	n := &node{kind: kindArray, off: open}
	// The elements of a list below a filtered object are built whole: the
	// filter speaks only of object keys.
	if mode == filtered {
		mode = full
	}
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
			return nil, &syntaxError{comma, "trailing comma before ']' (JSON does not allow one)"}
		}
		v, err := p.value(mode)
		if err != nil {
			return nil, err
		}
		if mode != shallow {
			n.elems = append(n.elems, v)
		}
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
		case c == '"' || c == '{' || c == '[' || c == '-' || isDigit(c):
			return nil, &syntaxError{p.i, "missing ',' before this list element"}
		default:
			return nil, p.unexpected("after a list element (want ',' or ']')")
		}
	}
}

// lineIndex converts byte offsets of one document into 1-based lines and
// columns. Columns count characters, not bytes, as editors number them;
// "\n", "\r\n" and a lone "\r" each end a line.
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
