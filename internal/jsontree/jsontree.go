// Package jsontree parses JSON into a tree that keeps the byte offset of
// every key and value, and turns offsets into lines and columns, so that a
// caller can point at the exact place of any problem it finds.
//
// Why not encoding/json: it reports an offset only for the first syntax or
// type error, and nothing for a value that is well formed but wrong (an
// unknown mode, a bad regular expression three levels down), and it cannot
// say where a member starts and ends, which a minimal edit of a file needs.
// Parsing into a tree of offset-carrying nodes does both in one pass and
// without reflection.
//
// The parser accepts exactly what encoding/json accepts (a fuzz test
// compares them, nesting limit included) and decodes strings the same way:
// invalid UTF-8 and lone surrogates become U+FFFD. Its syntax errors say what
// to fix in a hand-edited file (comments, single quotes, trailing commas,
// Python literals…).
//
// Large documents of which the caller needs a small part (~/.claude.json
// holds Claude Code's whole prompt history) can be parsed with a Filter: the
// subtrees it leaves Shallow are checked to be valid JSON and their extent
// recorded, but nothing below them is allocated.
//
// An Editor (edit.go) changes one member of a document's text, or appends
// one element to a list, and leaves every other byte as it was.
//
// The package depends on the standard library and internal/jsonx only.
package jsontree

import (
	"fmt"
	"unicode/utf16"
	"unicode/utf8"
)

// Kind is the JSON type of a node.
type Kind uint8

const (
	Null Kind = iota
	Bool
	Number
	String
	Array
	Object
)

// String names the kind as an error message says what it got: "null",
// "a boolean", "a number", "a string", "a list" or "an object".
func (k Kind) String() string {
	switch k {
	case Null:
		return "null"
	case Bool:
		return "a boolean"
	case Number:
		return "a number"
	case String:
		return "a string"
	case Array:
		return "a list"
	default:
		return "an object"
	}
}

// Node is one JSON value and where it is in the document. Off and End are
// byte offsets into the parsed text: src[Off:End] is the value's JSON text.
//
// A shallow node (see Filter) has its Kind, Off, End and, for a boolean,
// Bool; Str, Elems and Members stay empty.
type Node struct {
	Kind Kind
	Off  int // offset of the value's first byte
	End  int // offset just past the value's last byte
	// Str is, for a String, the decoded text; for a Number, the literal as
	// written ("1e3", "-0").
	Str     string
	Bool    bool     // the value of a Bool
	Elems   []*Node  // the elements of an Array
	Members []Member // the members of an Object, in document order, duplicates included
}

// Member is one key of an object and its value.
type Member struct {
	Key    string // decoded
	KeyOff int    // offset of the key's opening quote
	KeyEnd int    // offset just past the key's closing quote
	Value  *Node
}

// Lookup returns the value of the member named key of object n, or nil when
// n is nil, not an object, or has no such member. When the key is repeated,
// the last one counts, as in encoding/json and JavaScript's JSON.parse.
func (n *Node) Lookup(key string) *Node {
	if i := n.Index(key); i >= 0 {
		return n.Members[i].Value
	}
	return nil
}

// Index returns the index in n.Members of the member Lookup(key) returns,
// or -1.
func (n *Node) Index(key string) int {
	if n == nil || n.Kind != Object {
		return -1
	}
	for i := len(n.Members) - 1; i >= 0; i-- {
		if n.Members[i].Key == key {
			return i
		}
	}
	return -1
}

// Build says how much of a value Parse builds.
type Build uint8

const (
	// Shallow checks the value and records its kind and extent only.
	Shallow Build = iota
	// Filtered builds an object's members, and asks the Filter how to
	// build each member's value. The elements of a list are built Full.
	Filtered
	// Full builds the value and everything below it.
	Full
)

// Filter decides how to build the value of the object member at path: the
// keys from the root down, the member's own key last. It is consulted for
// the members of Filtered objects only. The path is reused afterwards: a
// filter must neither keep nor change it.
type Filter func(path []string) Build

// SyntaxError is invalid JSON at a byte offset.
type SyntaxError struct {
	Off int    // where the problem is: the offending byte, or the bracket or quote left open
	Msg string // what is wrong, for a user editing the file by hand
}

func (e *SyntaxError) Error() string {
	return fmt.Sprintf("invalid JSON at byte offset %d: %s", e.Off, e.Msg)
}

func synErr(off int, msg string) *SyntaxError { return &SyntaxError{off, msg} }

// MaxDepth bounds nesting as encoding/json does, so that a hostile file
// cannot exhaust the stack and both parsers accept the same documents.
const MaxDepth = 10000

type parser struct {
	src   []byte
	i     int
	depth int
	keep  Filter
	path  []string
	// scratch receives the values of shallow containers, which nothing
	// keeps: a 27 MB document is then checked without allocating a node
	// per value.
	scratch Node
	free    []Node // nodes to hand out (see alloc)
	chunk   int    // the size of the last chunk of nodes
	// The members and elements of the containers being parsed, innermost
	// last: each container's are copied out once complete, into a slice
	// of the right size.
	mems  []Member
	elems []*Node
}

// Parse parses one JSON document. With a nil keep the whole tree is built;
// otherwise the top-level value is Filtered. A document of only whitespace
// gives a nil node and no error.
//
// The nodes do not refer to src. They are allocated in chunks: holding on
// to one node keeps its neighbours in memory.
func Parse(src []byte, keep Filter) (*Node, *SyntaxError) {
	p := parser{src: src, keep: keep}
	p.ws()
	if p.i == len(src) {
		return nil, nil
	}
	mode := Full
	if keep != nil {
		mode = Filtered
	}
	v := p.alloc()
	if err := p.value(v, mode); err != nil {
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
func (p *parser) unexpected(where string) *SyntaxError {
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

// describeByte quotes the character at src[i] for an error message,
// invisible ones by code point.
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

// value parses the value at p.i into n, building it as mode says.
func (p *parser) value(n *Node, mode Build) *SyntaxError {
	if p.i >= len(p.src) {
		return p.unexpected("where a value was expected")
	}
	switch c := p.src[p.i]; {
	case c == '{':
		return p.object(n, mode)
	case c == '[':
		return p.array(n, mode)
	case c == '"':
		off := p.i
		s, err := p.string(mode != Shallow)
		if err != nil {
			return err
		}
		*n = Node{Kind: String, Off: off, End: p.i, Str: s}
		return nil
	case c == '-' || isDigit(c):
		return p.number(n, mode)
	case c == '+' || c == '.':
		return synErr(p.i, "invalid number (a JSON number starts with a digit or '-')")
	case isWordByte(c):
		return p.word(n)
	}
	return p.unexpected("where a value was expected")
}

func isWordByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '$'
}

// word parses true, false or null, and explains the near misses (True, yes,
// NaN, an unquoted string).
func (p *parser) word(n *Node) *SyntaxError {
	off := p.i
	end := p.i
	for end < len(p.src) && isWordByte(p.src[end]) {
		end++
	}
	switch w := p.src[off:end]; string(w) {
	case "true":
		*n = Node{Kind: Bool, Off: off, End: end, Bool: true}
	case "false":
		*n = Node{Kind: Bool, Off: off, End: end}
	case "null":
		*n = Node{Kind: Null, Off: off, End: end}
	default:
		switch lw := toLowerASCII(string(w)); lw {
		case "true", "false", "null":
			return synErr(off, fmt.Sprintf("invalid value %s (JSON literals are lower case: %s)", w, lw))
		case "nan", "infinity", "undefined":
			return synErr(off, fmt.Sprintf("invalid value %s (JSON has no %s)", w, w))
		}
		return synErr(off, fmt.Sprintf("invalid value %s (a string must be in double quotes)", w))
	}
	p.i = end
	return nil
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

func (p *parser) number(n *Node, mode Build) *SyntaxError {
	src, off := p.src, p.i
	i := off
	if src[i] == '-' {
		i++
	}
	switch {
	case i >= len(src) || !isDigit(src[i]):
		return synErr(off, "invalid number (a digit must follow '-')")
	case src[i] == '0':
		i++
		if i < len(src) && isDigit(src[i]) {
			return synErr(off, "invalid number (JSON does not allow leading zeros)")
		}
	default:
		for i < len(src) && isDigit(src[i]) {
			i++
		}
	}
	if i < len(src) && src[i] == '.' {
		i++
		if i >= len(src) || !isDigit(src[i]) {
			return synErr(off, "invalid number (a digit must follow the decimal point)")
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
			return synErr(off, "invalid number (a digit must follow the exponent)")
		}
		for i < len(src) && isDigit(src[i]) {
			i++
		}
	}
	p.i = i
	*n = Node{Kind: Number, Off: off, End: i}
	if mode != Shallow {
		n.Str = string(src[off:i])
	}
	return nil
}

// special marks the bytes a string cannot hold as they are: the quote, the
// backslash and control characters.
var special = func() (t [256]bool) {
	for c := range 0x20 {
		t[c] = true
	}
	t['"'], t['\\'] = true, true
	return t
}()

// string parses the string whose opening quote is at p.i and, when decode
// is set, returns its text. The checks, and so the errors, are the same
// either way.
func (p *parser) string(decode bool) (string, *SyntaxError) {
	src, open := p.src, p.i
	i := open + 1
	var buf []byte
	for {
		// A run of bytes that stand for themselves.
		j := i
		for j < len(src) && !special[src[j]] {
			j++
		}
		if j >= len(src) {
			return "", synErr(open, "string is not closed (missing '\"')")
		}
		if decode {
			run := src[i:j]
			if src[j] == '"' && i == open+1 && utf8.Valid(run) {
				// No escapes and valid UTF-8, the common case.
				p.i = j + 1
				return string(run), nil
			}
			buf = appendUTF8(buf, run)
		}
		i = j
		switch c := src[i]; {
		case c == '"':
			p.i = i + 1
			return string(buf), nil
		case c == '\n' || c == '\r':
			return "", synErr(open, `string is not closed on its line (a line break inside a string must be written \n)`)
		case c < 0x20:
			return "", synErr(i, fmt.Sprintf("control character U+%04X in string (write it as an escape such as \\t)", c))
		}
		// A backslash.
		if i+1 >= len(src) {
			return "", synErr(open, "string is not closed (missing '\"')")
		}
		var b byte
		switch e := src[i+1]; e {
		case '"', '\\', '/':
			b = e
		case 'b':
			b = '\b'
		case 'f':
			b = '\f'
		case 'n':
			b = '\n'
		case 'r':
			b = '\r'
		case 't':
			b = '\t'
		case 'u':
			r, ok := hex4(src, i+2)
			if !ok {
				return "", synErr(i, `invalid \u escape in string (want four hex digits)`)
			}
			i += 6
			if !decode {
				continue
			}
			if utf16.IsSurrogate(r) {
				// A pair decodes to one rune; anything else is U+FFFD, as in encoding/json.
				if r2, ok := hex4(src, i+2); ok && i+1 < len(src) && src[i] == '\\' && src[i+1] == 'u' {
					if dec := utf16.DecodeRune(r, r2); dec != utf8.RuneError {
						buf = utf8.AppendRune(buf, dec)
						i += 6
						continue
					}
				}
				r = utf8.RuneError
			}
			buf = utf8.AppendRune(buf, r)
			continue
		default:
			return "", synErr(i, fmt.Sprintf("invalid escape \\%s in string", describeEscape(src, i+1)))
		}
		if decode {
			buf = append(buf, b)
		}
		i += 2
	}
}

// appendUTF8 appends text to buf, each byte of it that is not UTF-8
// replaced by U+FFFD, as encoding/json does.
func appendUTF8(buf, text []byte) []byte {
	if utf8.Valid(text) {
		return append(buf, text...)
	}
	for len(text) > 0 {
		r, size := utf8.DecodeRune(text)
		buf = utf8.AppendRune(buf, r)
		text = text[size:]
	}
	return buf
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

func (p *parser) enter() *SyntaxError {
	p.depth++
	if p.depth > MaxDepth {
		return synErr(p.i, fmt.Sprintf("nesting deeper than %d levels", MaxDepth))
	}
	return nil
}

// notClosed reports a container the input ends inside, at its opening
// bracket: the place to start looking for the missing one.
func notClosed(open int, bracket string) *SyntaxError {
	return synErr(open, fmt.Sprintf("'%s' is not closed before the end of the input", bracket))
}

// mismatch reports a closing bracket at p.i that does not match the one
// open at offset open.
func (p *parser) mismatch(found byte, open int, want string) *SyntaxError {
	what := map[string]string{"}": "'{'", "]": "'['"}[want]
	line, col := NewLines(p.src).Pos(open)
	return synErr(p.i, fmt.Sprintf("'%c' does not close the %s at line %d, column %d (want '%s')", found, what, line, col, want))
}

// child returns where to parse a child of a container built as mode: a new
// node, or the scratch node when the container is shallow and so keeps no
// children.
func (p *parser) child(mode Build) *Node {
	if mode == Shallow {
		return &p.scratch
	}
	return p.alloc()
}

// alloc returns a new node. Nodes are allocated in chunks, which grow with
// the tree, rather than one by one.
func (p *parser) alloc() *Node {
	if len(p.free) == 0 {
		p.chunk = min(max(2*p.chunk, 16), 1024)
		p.free = make([]Node, p.chunk)
	}
	n := &p.free[0]
	p.free = p.free[1:]
	return n
}

// object parses the object at p.i into n. Children may use the scratch
// node, which n may be: n is written once all of them are parsed.
func (p *parser) object(n *Node, mode Build) *SyntaxError {
	if err := p.enter(); err != nil {
		return err
	}
	base := len(p.mems)
	defer func() { p.depth--; p.mems = p.mems[:base] }()
	open := p.i
	p.i++
	p.ws()
	if p.i < len(p.src) && p.src[p.i] == '}' {
		p.i++
		*n = Node{Kind: Object, Off: open, End: p.i}
		return nil
	}
	comma := -1
	for {
		if p.i >= len(p.src) {
			return notClosed(open, "{")
		}
		if c := p.src[p.i]; c != '"' {
			switch {
			case c == '}' && comma >= 0:
				return synErr(comma, "trailing comma before '}' (JSON does not allow one)")
			case isWordByte(c):
				return synErr(p.i, "object keys must be strings in double quotes")
			}
			return p.unexpected("where an object key was expected")
		}
		keyOff := p.i
		key, err := p.string(mode != Shallow)
		if err != nil {
			return err
		}
		keyEnd := p.i
		p.ws()
		if p.i >= len(p.src) {
			return notClosed(open, "{")
		}
		if p.src[p.i] != ':' {
			if c := p.src[p.i]; c == '"' || c == '{' || c == '[' || c == '-' || isWordByte(c) {
				return synErr(p.i, "missing ':' after the object key")
			}
			return p.unexpected("after an object key (want ':')")
		}
		p.i++
		p.ws()
		if p.i >= len(p.src) {
			return notClosed(open, "{")
		}
		sub := mode
		if mode == Filtered {
			p.path = append(p.path, key)
			sub = p.keep(p.path)
		}
		v := p.child(mode)
		err = p.value(v, sub)
		if mode == Filtered {
			p.path = p.path[:len(p.path)-1]
		}
		if err != nil {
			return err
		}
		if mode != Shallow {
			p.mems = append(p.mems, Member{Key: key, KeyOff: keyOff, KeyEnd: keyEnd, Value: v})
		}
		p.ws()
		if p.i >= len(p.src) {
			return notClosed(open, "{")
		}
		switch p.src[p.i] {
		case ',':
			comma = p.i
			p.i++
			p.ws()
		case '}':
			p.i++
			*n = Node{Kind: Object, Off: open, End: p.i}
			if len(p.mems) > base {
				n.Members = append([]Member(nil), p.mems[base:]...)
			}
			return nil
		case '"':
			return synErr(p.i, "missing ',' before this key")
		case ']':
			return p.mismatch(']', open, "}")
		default:
			return p.unexpected("after an object member (want ',' or '}')")
		}
	}
}

// array parses the list at p.i into n, as object does.
func (p *parser) array(n *Node, mode Build) *SyntaxError {
	if err := p.enter(); err != nil {
		return err
	}
	base := len(p.elems)
	defer func() { p.depth--; p.elems = p.elems[:base] }()
	open := p.i
	// The elements of a list below a filtered object are built whole: the
	// filter speaks only of object keys.
	if mode == Filtered {
		mode = Full
	}
	p.i++
	p.ws()
	if p.i < len(p.src) && p.src[p.i] == ']' {
		p.i++
		*n = Node{Kind: Array, Off: open, End: p.i}
		return nil
	}
	comma := -1
	for {
		if p.i >= len(p.src) {
			return notClosed(open, "[")
		}
		if p.src[p.i] == ']' && comma >= 0 {
			return synErr(comma, "trailing comma before ']' (JSON does not allow one)")
		}
		v := p.child(mode)
		if err := p.value(v, mode); err != nil {
			return err
		}
		if mode != Shallow {
			p.elems = append(p.elems, v)
		}
		p.ws()
		if p.i >= len(p.src) {
			return notClosed(open, "[")
		}
		switch c := p.src[p.i]; {
		case c == ',':
			comma = p.i
			p.i++
			p.ws()
		case c == ']':
			p.i++
			*n = Node{Kind: Array, Off: open, End: p.i}
			if len(p.elems) > base {
				n.Elems = append([]*Node(nil), p.elems[base:]...)
			}
			return nil
		case c == '"' || c == '{' || c == '[' || c == '-' || isWordByte(c):
			return synErr(p.i, "missing ',' before this list element")
		case c == '}':
			return p.mismatch('}', open, "]")
		default:
			return p.unexpected("after a list element (want ',' or ']')")
		}
	}
}
