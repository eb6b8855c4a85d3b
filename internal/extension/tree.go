package extension

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
)

// This file holds the one document tree that YAML frontmatter and the JSON
// files of plugins both parse into, with the line and column of every value,
// so that a problem found while reading a definition is reported where it
// is written. The JSON parser also records byte offsets, which the settings
// editor uses to change one member of a file and nothing else.

type kind uint8

const (
	kindNull kind = iota
	kindString
	kindBool
	kindNumber
	kindMap
	kindSeq
)

func (k kind) String() string {
	switch k {
	case kindNull:
		return "null"
	case kindString:
		return "a string"
	case kindBool:
		return "a boolean"
	case kindNumber:
		return "a number"
	case kindMap:
		return "a mapping"
	case kindSeq:
		return "a list"
	}
	return "?"
}

// node is one value of a document.
type node struct {
	kind      kind
	line, col int // 1-based position of the value
	// str is a string's value, a number's text, or "true"/"false".
	str string
	// flow is the source text of a YAML flow collection ("[a, b]"), so that
	// a field meant as text (argument-hint: [message]) reads as written.
	flow  string
	mems  []member
	elems []*node
	// start and end are the value's byte offsets (JSON documents only).
	start, end int
}

// member is one key of a mapping.
type member struct {
	key       string
	line, col int
	keyStart  int // byte offset of the key (JSON documents only)
	val       *node
}

// get returns the value of key in a mapping, or nil.
func (n *node) get(key string) *node {
	if n == nil || n.kind != kindMap {
		return nil
	}
	for i := len(n.mems) - 1; i >= 0; i-- { // the last of duplicates wins, as in JSON
		if n.mems[i].key == key {
			return n.mems[i].val
		}
	}
	return nil
}

// text renders a scalar as text: a string as is, a number or boolean as
// written, a YAML flow collection as written.
func (n *node) text() (string, bool) {
	switch n.kind {
	case kindString, kindNumber, kindBool:
		return n.str, true
	case kindSeq, kindMap:
		if n.flow != "" {
			return n.flow, true
		}
	}
	return "", false
}

// toAny converts the tree to the values encoding/json produces.
func (n *node) toAny() any {
	switch n.kind {
	case kindString:
		return n.str
	case kindBool:
		return n.str == "true"
	case kindNumber:
		return json.Number(n.str)
	case kindMap:
		m := make(map[string]any, len(n.mems))
		for _, mem := range n.mems {
			m[mem.key] = mem.val.toAny()
		}
		return m
	case kindSeq:
		s := make([]any, len(n.elems))
		for i, e := range n.elems {
			s[i] = e.toAny()
		}
		return s
	}
	return nil
}

// json renders the tree as JSON.
func (n *node) json() json.RawMessage {
	b, err := json.Marshal(n.toAny())
	if err != nil {
		return json.RawMessage("null") // numbers are checked when parsed
	}
	return b
}

// lineIndex turns byte offsets into 1-based lines and columns (counting
// characters).
type lineIndex struct {
	src    []byte
	starts []int
}

func newLineIndex(src []byte) *lineIndex {
	x := &lineIndex{src: src, starts: []int{0}}
	for i, c := range src {
		if c == '\n' {
			x.starts = append(x.starts, i+1)
		}
	}
	return x
}

func (x *lineIndex) pos(off int) (line, col int) {
	lo, hi := 0, len(x.starts)-1
	for lo < hi {
		mid := (lo + hi + 1) / 2
		if x.starts[mid] <= off {
			lo = mid
		} else {
			hi = mid - 1
		}
	}
	end := min(off, len(x.src))
	return lo + 1, utf8.RuneCount(x.src[x.starts[lo]:end]) + 1
}

// jsonSyntaxError is a JSON syntax problem at a byte offset.
type jsonSyntaxError struct {
	off int
	msg string
}

func (e *jsonSyntaxError) Error() string { return e.msg }

// maxDepth bounds nesting so that a hostile file cannot exhaust the stack.
const maxDepth = 500

type jsonParser struct {
	src   []byte
	i     int
	depth int
	lines *lineIndex
}

// parseJSON parses a JSON document into a tree. A byte order mark is
// skipped; an empty document is a nil node and no error.
func parseJSON(src []byte) (*node, *jsonSyntaxError) {
	p := &jsonParser{src: src, lines: newLineIndex(src)}
	if strings.HasPrefix(string(src), "\xef\xbb\xbf") {
		p.i = 3
	}
	p.ws()
	if p.i == len(src) {
		return nil, nil
	}
	n, err := p.value()
	if err != nil {
		return nil, err
	}
	p.ws()
	if p.i < len(src) {
		return nil, p.errf("unexpected %s after the end of the JSON value", p.describe())
	}
	return n, nil
}

func (p *jsonParser) errf(format string, args ...any) *jsonSyntaxError {
	return &jsonSyntaxError{off: p.i, msg: fmt.Sprintf(format, args...)}
}

func (p *jsonParser) describe() string {
	if p.i >= len(p.src) {
		return "end of file"
	}
	r, _ := utf8.DecodeRune(p.src[p.i:])
	return strconv.QuoteRune(r)
}

func (p *jsonParser) ws() {
	for p.i < len(p.src) {
		switch p.src[p.i] {
		case ' ', '\t', '\n', '\r':
			p.i++
		default:
			return
		}
	}
}

func (p *jsonParser) at(n *node) *node {
	n.start = p.i
	n.line, n.col = p.lines.pos(p.i)
	return n
}

func (p *jsonParser) value() (*node, *jsonSyntaxError) {
	if p.i >= len(p.src) {
		return nil, p.errf("unexpected end of file: a value is missing")
	}
	switch c := p.src[p.i]; {
	case c == '{':
		return p.object()
	case c == '[':
		return p.array()
	case c == '"':
		n := p.at(&node{kind: kindString})
		s, err := p.string()
		if err != nil {
			return nil, err
		}
		n.str, n.end = s, p.i
		return n, nil
	case c == '-' || c >= '0' && c <= '9':
		return p.number()
	}
	for _, w := range []struct {
		word string
		k    kind
	}{{"true", kindBool}, {"false", kindBool}, {"null", kindNull}} {
		if strings.HasPrefix(string(p.src[p.i:min(len(p.src), p.i+len(w.word))]), w.word) {
			n := p.at(&node{kind: w.k, str: w.word})
			p.i += len(w.word)
			n.end = p.i
			return n, nil
		}
	}
	return nil, p.errf("unexpected %s: expected a JSON value", p.describe())
}

func (p *jsonParser) number() (*node, *jsonSyntaxError) {
	n := p.at(&node{kind: kindNumber})
	start := p.i
	for p.i < len(p.src) && strings.IndexByte("+-0123456789.eE", p.src[p.i]) >= 0 {
		p.i++
	}
	text := string(p.src[start:p.i])
	if !json.Valid([]byte(text)) {
		p.i = start
		return nil, p.errf("invalid number %q", text)
	}
	n.str, n.end = text, p.i
	return n, nil
}

func (p *jsonParser) string() (string, *jsonSyntaxError) {
	start := p.i
	p.i++ // opening quote
	escaped := false
	for p.i < len(p.src) {
		c := p.src[p.i]
		switch {
		case c == '\\':
			escaped = true
			p.i += 2
			continue
		case c == '"':
			p.i++
			raw := p.src[start:p.i]
			if !escaped {
				return string(raw[1 : len(raw)-1]), nil
			}
			var s string
			if err := json.Unmarshal(raw, &s); err != nil {
				p.i = start
				return "", p.errf("invalid escape in string: %v", err)
			}
			return s, nil
		case c < 0x20:
			return "", p.errf("control character %s in a string (a string cannot span lines)", p.describe())
		}
		p.i++
	}
	p.i = start
	return "", p.errf("string not closed")
}

func (p *jsonParser) enter() *jsonSyntaxError {
	p.depth++
	if p.depth > maxDepth {
		return p.errf("nested too deeply")
	}
	return nil
}

func (p *jsonParser) object() (*node, *jsonSyntaxError) {
	if err := p.enter(); err != nil {
		return nil, err
	}
	defer func() { p.depth-- }()
	n := p.at(&node{kind: kindMap})
	p.i++
	p.ws()
	if p.i < len(p.src) && p.src[p.i] == '}' {
		p.i++
		n.end = p.i
		return n, nil
	}
	for {
		p.ws()
		if p.i >= len(p.src) || p.src[p.i] != '"' {
			if p.i < len(p.src) && p.src[p.i] == '}' {
				return nil, p.errf("trailing comma before \"}\"")
			}
			return nil, p.errf("unexpected %s: expected a key in double quotes", p.describe())
		}
		m := member{keyStart: p.i}
		m.line, m.col = p.lines.pos(p.i)
		k, err := p.string()
		if err != nil {
			return nil, err
		}
		m.key = k
		p.ws()
		if p.i >= len(p.src) || p.src[p.i] != ':' {
			return nil, p.errf("unexpected %s: expected \":\" after the key %q", p.describe(), k)
		}
		p.i++
		p.ws()
		v, err := p.value()
		if err != nil {
			return nil, err
		}
		m.val = v
		n.mems = append(n.mems, m)
		p.ws()
		if p.i >= len(p.src) {
			return nil, p.errf("unexpected end of file: the object is not closed")
		}
		switch p.src[p.i] {
		case ',':
			p.i++
		case '}':
			p.i++
			n.end = p.i
			return n, nil
		default:
			return nil, p.errf("unexpected %s: expected \",\" or \"}\"", p.describe())
		}
	}
}

func (p *jsonParser) array() (*node, *jsonSyntaxError) {
	if err := p.enter(); err != nil {
		return nil, err
	}
	defer func() { p.depth-- }()
	n := p.at(&node{kind: kindSeq})
	p.i++
	p.ws()
	if p.i < len(p.src) && p.src[p.i] == ']' {
		p.i++
		n.end = p.i
		return n, nil
	}
	for {
		p.ws()
		if p.i < len(p.src) && p.src[p.i] == ']' {
			return nil, p.errf("trailing comma before \"]\"")
		}
		v, err := p.value()
		if err != nil {
			return nil, err
		}
		n.elems = append(n.elems, v)
		p.ws()
		if p.i >= len(p.src) {
			return nil, p.errf("unexpected end of file: the list is not closed")
		}
		switch p.src[p.i] {
		case ',':
			p.i++
		case ']':
			p.i++
			n.end = p.i
			return n, nil
		default:
			return nil, p.errf("unexpected %s: expected \",\" or \"]\"", p.describe())
		}
	}
}

// parseJSONFile parses src, read from path, reporting a syntax error with
// its line and column.
func parseJSONFile(src []byte, path string) (*node, *Error) {
	n, err := parseJSON(src)
	if err != nil {
		line, col := newLineIndex(src).pos(err.off)
		return nil, &Error{Path: path, Line: line, Col: col, Msg: "invalid JSON: " + err.msg}
	}
	return n, nil
}
