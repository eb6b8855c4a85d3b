package jsontree

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/tackcode/tack/internal/jsonx"
)

// This file edits JSON text in place. An edit replaces, inserts or deletes
// the bytes of one object member or list element and nothing else, so the
// rest of the document — other keys, their order, spacing, line endings,
// even the escapes inside strings — is byte for byte what it was. New text
// follows the style of the object it goes into (its indentation, one line
// or several, CRLF or LF).

// bom is the UTF-8 byte order mark some Windows editors write. An Editor
// keeps it, and works on the text after it.
const bom = "\xef\xbb\xbf"

// Editor holds one JSON document, whose top-level value is an object, being
// edited in place. A document of only whitespace is taken as {}.
//
// An Editor parses its text again for each call, building only the objects
// on the way to the path concerned: editing one key of a large file (Claude
// Code's ~/.claude.json holds the whole prompt history) costs little more
// than checking that the file is valid JSON.
type Editor struct {
	hasBOM bool
	src    []byte // the document after the byte order mark
}

// NewEditor returns an editor of src. It does not change src; Bytes returns
// the edited document.
func NewEditor(src []byte) *Editor {
	e := &Editor{src: src}
	if bytes.HasPrefix(src, []byte(bom)) {
		e.hasBOM, e.src = true, src[len(bom):]
	}
	return e
}

// Bytes returns the document as edited, its byte order mark, if it had one,
// restored.
func (e *Editor) Bytes() []byte {
	if e.hasBOM {
		return append([]byte(bom), e.src...)
	}
	return e.src
}

// Text returns the document as edited, without its byte order mark: the
// offsets of the nodes Lookup returns are offsets into it.
func (e *Editor) Text() []byte { return e.src }

// along builds the objects on the way to path, and the value at path as
// leaf says; members elsewhere are only checked to be valid JSON.
func along(path []string, leaf Build) Filter {
	return func(p []string) Build {
		if len(p) > len(path) {
			return Shallow
		}
		for i := range p {
			if p[i] != path[i] {
				return Shallow
			}
		}
		if len(p) == len(path) {
			return leaf
		}
		return Filtered
	}
}

// parse parses the current text for an edit at path, the value at path
// built as leaf says. A blank document becomes {} first.
func (e *Editor) parse(path []string, leaf Build) (*Node, error) {
	if len(bytes.TrimSpace(e.src)) == 0 {
		e.src = []byte("{}\n")
	}
	var keep Filter // nil builds the whole document
	if len(path) > 0 || leaf != Full {
		keep = along(path, leaf)
	}
	root, serr := Parse(e.src, keep)
	if serr != nil {
		line, col := NewLines(e.src).Pos(serr.Off)
		return nil, fmt.Errorf("line %d, column %d: invalid JSON: %s", line, col, serr.Msg)
	}
	if root.Kind != Object {
		return nil, fmt.Errorf("the file holds %s, not a JSON object", root.Kind)
	}
	return root, nil
}

// walk returns the value at path below n, or nil when a key is missing or
// a value on the way is not an object.
func walk(n *Node, path []string) *Node {
	for _, k := range path {
		if n = n.Lookup(k); n == nil {
			return nil
		}
	}
	return n
}

// Lookup returns the value at path (keys from the top-level object down),
// built in full, or nil when there is none. Its offsets are into Text(). An
// empty path gives the top-level object, which builds the whole document.
// The error is for a document that is not valid JSON or not an object.
func (e *Editor) Lookup(path []string) (*Node, error) {
	orig := e.src
	defer func() { e.src = orig }() // a blank document stays as it was
	root, err := e.parse(path, Full)
	if err != nil {
		return nil, err
	}
	return walk(root, path), nil
}

// PathString writes path for a message as a JavaScript expression would:
// a.b, or a["b c"] for a key that is not a plain name.
func PathString(path []string) string {
	var b []byte
	for _, k := range path {
		switch {
		case !plainKey(k):
			b = append(jsonx.AppendString(append(b, '['), k), ']')
		case len(b) == 0:
			b = append(b, k...)
		default:
			b = append(append(b, '.'), k...)
		}
	}
	return string(b)
}

// plainKey reports whether k is made of ASCII letters, digits, '_' and '-'
// only, like the names of MCP servers and most settings.
func plainKey(k string) bool {
	for _, c := range []byte(k) {
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', c == '_', c == '-':
		default:
			return false
		}
	}
	return k != ""
}

var errEmptyPath = errors.New("jsontree: an edit needs a path of one key or more")

// Set makes value (JSON text) the value at path, creating the objects on
// the way that do not exist and replacing a null on the way by one. An
// existing member's value is replaced in place; a new member goes at the
// end of its object. Value is laid out in the style of the object it goes
// into, its own key order, escapes and number literals kept. On error the
// document is unchanged.
func (e *Editor) Set(path []string, value []byte) (err error) {
	if len(path) == 0 {
		return errEmptyPath
	}
	if !json.Valid(value) {
		return fmt.Errorf("jsontree: the value for %s is not valid JSON", PathString(path))
	}
	orig := e.src
	defer func() {
		if err != nil {
			e.src = orig
		}
	}()
	root, err := e.parse(path, Shallow)
	if err != nil {
		return err
	}
	obj := root
	for i, key := range path {
		idx := obj.Index(key)
		if idx < 0 {
			e.insert(obj, key, nest(path[i+1:], value))
			return nil
		}
		if i == len(path)-1 {
			e.replace(obj, idx, value)
			return nil
		}
		switch v := obj.Members[idx].Value; v.Kind {
		case Object:
			obj = v
		case Null:
			e.replace(obj, idx, nest(path[i+1:], value))
			return nil
		default:
			return fmt.Errorf("%s is %s, not an object", PathString(path[:i+1]), v.Kind)
		}
	}
	return nil
}

// nest wraps value in one object per key of path: nest([a b], v) is
// {"a":{"b":v}}.
func nest(path []string, value []byte) []byte {
	var b []byte
	for _, k := range path {
		b = append(jsonx.AppendString(append(b, '{'), k), ':')
	}
	b = append(b, value...)
	for range path {
		b = append(b, '}')
	}
	return b
}

// Remove deletes the member at path, every copy of it when the key is
// repeated (deleting only the last would bring an earlier one back to
// life), and reports whether there was one. A path that leads through a
// missing key or a value that is not an object is not an error: there is
// nothing to remove.
func (e *Editor) Remove(path []string) (bool, error) {
	if len(path) == 0 {
		return false, errEmptyPath
	}
	orig := e.src
	found := false
	for {
		root, err := e.parse(path, Shallow)
		if err != nil {
			e.src = orig
			return false, err
		}
		obj := walk(root, path[:len(path)-1])
		idx := obj.Index(path[len(path)-1])
		if idx < 0 {
			if !found {
				e.src = orig // a blank document stays as it was
			}
			return found, nil
		}
		found = true
		e.delete(obj, idx)
	}
}

// AppendUnique appends value (JSON text) to the list at path, creating the
// list, and the objects on the way, when they are missing or null. It
// reports false, and changes nothing, when the list already holds an
// element equal to value (see Equal). A new list, or an empty one, is
// written on one line; an element added to a list that has some follows
// their layout. On error the document is unchanged.
func (e *Editor) AppendUnique(path []string, value []byte) (added bool, err error) {
	if len(path) == 0 {
		return false, errEmptyPath
	}
	elem, serr := Parse(value, nil)
	if serr != nil || elem == nil {
		return false, fmt.Errorf("jsontree: the element for %s is not valid JSON", PathString(path))
	}
	orig := e.src
	defer func() {
		if err != nil || !added {
			e.src = orig
		}
	}()
	root, err := e.parse(path, Full)
	if err != nil {
		return false, err
	}
	list := walk(root, path)
	if list == nil || list.Kind == Null {
		if err := e.Set(path, []byte("[]")); err != nil {
			return false, err
		}
		if root, err = e.parse(path, Full); err != nil {
			return false, err
		}
		list = walk(root, path)
	}
	if list.Kind != Array {
		return false, fmt.Errorf("%s is %s, not a list", PathString(path), list.Kind)
	}
	for _, el := range list.Elems {
		if Equal(el, elem) {
			return false, nil
		}
	}
	e.push(walk(root, path[:len(path)-1]), list, value)
	return true, nil
}

// Equal reports whether a and b, built in full, are the same JSON value:
// strings of the same text (whatever their escapes), numbers of the same
// value (1, 1.0 and 1e0 are equal), lists of equal elements in the same
// order, and objects with equal values for the same keys, in any order (of
// a repeated key, the last counts).
func Equal(a, b *Node) bool {
	if a == nil || b == nil || a.Kind != b.Kind {
		return a == b
	}
	switch a.Kind {
	case Null:
		return true
	case Bool:
		return a.Bool == b.Bool
	case String:
		return a.Str == b.Str
	case Number:
		if a.Str == b.Str {
			return true
		}
		x, errX := strconv.ParseFloat(a.Str, 64)
		y, errY := strconv.ParseFloat(b.Str, 64)
		return errX == nil && errY == nil && x == y
	case Array:
		if len(a.Elems) != len(b.Elems) {
			return false
		}
		for i := range a.Elems {
			if !Equal(a.Elems[i], b.Elems[i]) {
				return false
			}
		}
		return true
	}
	keys := 0
	for i, m := range a.Members {
		if a.Index(m.Key) != i {
			continue // an earlier copy of a repeated key
		}
		keys++
		if !Equal(m.Value, b.Lookup(m.Key)) {
			return false
		}
	}
	for i, m := range b.Members {
		if b.Index(m.Key) == i {
			keys--
		}
	}
	return keys == 0
}

// delete removes member i of obj with the separator that goes with it.
func (e *Editor) delete(obj *Node, i int) {
	mems := obj.Members
	switch {
	case len(mems) == 1:
		e.splice(obj.Off+1, obj.End-1, nil) // {} on one line, like JSON.stringify
	case i < len(mems)-1:
		// The member, its comma and the space up to the next key: the next
		// member takes its place and its indentation.
		e.splice(mems[i].KeyOff, mems[i+1].KeyOff, nil)
	default:
		// The last member and the comma before it; what followed it (the
		// newline and indentation of the closing brace) stays.
		e.splice(mems[i-1].Value.End, mems[i].Value.End, nil)
	}
}

func (e *Editor) splice(from, to int, text []byte) {
	out := make([]byte, 0, len(e.src)-(to-from)+len(text))
	out = append(out, e.src[:from]...)
	out = append(out, text...)
	out = append(out, e.src[to:]...)
	e.src = out
}

// style is how an object or a list lays out its members or elements.
type style struct {
	multiline bool
	indent    string // of the members' lines
	unit      string // one level of indentation
	nl        string // "\n" or "\r\n"
	sep       string // between one member and the next: "," and space
	colon     string // between a key and its value: ":" and space
}

// styleOf works out obj's style from its members, or for an empty object
// from the document around it.
func (e *Editor) styleOf(obj *Node) style {
	st := style{nl: "\n", unit: e.unit(), colon: ": ", sep: ", "}
	if bytes.Contains(e.src, []byte("\r\n")) {
		st.nl = "\r\n"
	}
	if len(obj.Members) == 0 {
		st.multiline = bytes.ContainsAny(e.src, "\n\r")
		st.indent = lineIndent(e.src, obj.Off) + st.unit
		if !st.multiline {
			st.colon, st.sep = ":", ","
		}
		return st
	}
	first := obj.Members[0]
	lead := e.src[obj.Off+1 : first.KeyOff]
	st.multiline = bytes.ContainsAny(lead, "\n\r")
	last := obj.Members[len(obj.Members)-1]
	st.colon = string(e.src[last.KeyEnd:last.Value.Off])
	switch {
	case len(obj.Members) > 1:
		prev := obj.Members[len(obj.Members)-2]
		st.sep = fromComma(e.src[prev.Value.End:last.KeyOff])
	case st.multiline:
		st.sep = "," + string(lead)
	default:
		st.sep = oneLineSep(st.colon)
	}
	if st.multiline {
		st.indent = lineIndent(e.src, last.KeyOff)
		if outer := lineIndent(e.src, obj.Off); strings.HasPrefix(st.indent, outer) && len(st.indent) > len(outer) {
			st.unit = st.indent[len(outer):]
		}
	}
	return st
}

// fromComma is the separator between two members or elements: the text
// between them from the comma on.
func fromComma(between []byte) string {
	if j := bytes.IndexByte(between, ','); j >= 0 {
		between = between[j:]
	}
	return string(between)
}

// oneLineSep is the separator of a one-line object or list whose only
// member does not show it: spaced like the colon ({"a": 1}), else none.
func oneLineSep(colon string) string {
	if strings.Contains(colon, " ") {
		return ", "
	}
	return ","
}

// unit is the document's indentation step: that of the top-level object's
// first member, or two spaces (what JSON.stringify(…, null, 2) writes).
func (e *Editor) unit() string {
	// The top-level value is an object (parse checked): look at the first
	// line after its opening brace that is not blank.
	rest := bytes.TrimLeft(e.src, " \t\r\n")
	if len(rest) > 0 && rest[0] == '{' {
		rest = rest[1:]
		if i := bytes.IndexAny(rest, "\n\r"); i >= 0 {
			line := bytes.TrimLeft(rest[i:], "\r\n")
			if ind := line[:len(line)-len(bytes.TrimLeft(line, " \t"))]; len(ind) > 0 {
				return string(ind)
			}
		}
	}
	return "  "
}

// lineIndent returns the spaces and tabs that start the line holding off.
func lineIndent(src []byte, off int) string {
	start := off
	for start > 0 && src[start-1] != '\n' && src[start-1] != '\r' {
		start--
	}
	end := start
	for end < len(src) && (src[end] == ' ' || src[end] == '\t') {
		end++
	}
	return string(src[start:end])
}

// render lays value out in style st, for a member or element whose line
// starts with indent.
func render(value []byte, st style, indent string) []byte {
	var buf bytes.Buffer
	if st.multiline {
		_ = json.Indent(&buf, value, indent, st.unit) // value is valid JSON
	} else {
		_ = json.Compact(&buf, value)
	}
	out := buf.Bytes()
	if !st.multiline && strings.HasPrefix(st.sep, ", ") {
		out = spaced(out)
	}
	if st.nl == "\r\n" {
		out = bytes.ReplaceAll(out, []byte("\n"), []byte("\r\n"))
	}
	return out
}

// spaced puts a space after each ',' and ':' of compact JSON, as a
// hand-written one-line object has them.
func spaced(compact []byte) []byte {
	out := make([]byte, 0, len(compact)+len(compact)/8)
	inString, escaped := false, false
	for _, c := range compact {
		out = append(out, c)
		switch {
		case escaped:
			escaped = false
		case inString && c == '\\':
			escaped = true
		case c == '"':
			inString = !inString
		case !inString && (c == ',' || c == ':'):
			out = append(out, ' ')
		}
	}
	return out
}

// insert adds "key": value at the end of obj.
func (e *Editor) insert(obj *Node, key string, value []byte) {
	st := e.styleOf(obj)
	member := func(indent string) []byte {
		b := jsonx.AppendString(nil, key)
		b = append(b, st.colon...)
		return append(b, render(value, st, indent)...)
	}
	if len(obj.Members) == 0 {
		var text []byte
		if st.multiline {
			outer := lineIndent(e.src, obj.Off)
			text = append([]byte("{"+st.nl+st.indent), member(st.indent)...)
			text = append(text, st.nl+outer+"}"...)
		} else {
			text = append(append([]byte("{"), member("")...), '}')
		}
		e.splice(obj.Off, obj.End, text)
		return
	}
	last := obj.Members[len(obj.Members)-1]
	text := append([]byte(st.sep), member(st.indent)...)
	e.splice(last.Value.End, last.Value.End, text)
}

// replace makes value the value of member i of obj.
func (e *Editor) replace(obj *Node, i int, value []byte) {
	st := e.styleOf(obj)
	m := obj.Members[i]
	e.splice(m.Value.Off, m.Value.End, render(value, st, lineIndent(e.src, m.KeyOff)))
}

// push appends value to list, a member of obj. An empty list gets it on
// one line; otherwise the element follows the list's layout: on a line of
// its own when the elements are, after the last one when they share lines.
func (e *Editor) push(obj, list *Node, value []byte) {
	st := e.styleOf(obj) // the unit and line ending of the object around
	st.sep = oneLineSep(st.colon)
	if len(list.Elems) == 0 {
		st.multiline = false
		e.splice(list.Off+1, list.End-1, render(value, st, ""))
		return
	}
	lead := e.src[list.Off+1 : list.Elems[0].Off]
	last := list.Elems[len(list.Elems)-1]
	st.multiline = bytes.ContainsAny(lead, "\n\r")
	switch {
	case len(list.Elems) > 1:
		st.sep = fromComma(e.src[list.Elems[len(list.Elems)-2].End:last.Off])
	case st.multiline:
		st.sep = "," + string(lead)
	}
	text := append([]byte(st.sep), render(value, st, lineIndent(e.src, last.Off))...)
	e.splice(last.End, last.End, text)
}
