package mcpconfig

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/tackcode/tack/internal/jsontree"
	"github.com/tackcode/tack/internal/jsonx"
)

// This file edits JSON text in place. An edit replaces, inserts or deletes
// the bytes of one object member and nothing else, so the rest of the file —
// other keys, their order, spacing, line endings, even the escapes inside
// strings — is byte-for-byte what it was. New text follows the style of the
// object it goes into (its indentation, one line or several, CRLF or LF).

// editor holds one document being edited.
type editor struct {
	hasBOM bool
	src    []byte // without the byte order mark
}

func newEditor(src []byte) *editor {
	e := &editor{src: src}
	if bytes.HasPrefix(src, bom) {
		e.hasBOM, e.src = true, src[len(bom):]
	}
	return e
}

// bytes returns the edited document, its byte order mark restored.
func (e *editor) bytes() []byte {
	if e.hasBOM {
		return append(append([]byte(nil), bom...), e.src...)
	}
	return e.src
}

// along builds the objects on the way to path, and nothing else: members
// elsewhere (prompt history…) are only checked to be valid JSON.
func along(path []string) jsontree.Filter {
	return func(p []string) jsontree.Build {
		if len(p) >= len(path) {
			return jsontree.Shallow
		}
		for i := range p {
			if p[i] != path[i] {
				return jsontree.Shallow
			}
		}
		return jsontree.Filtered
	}
}

// parse parses the current text for an edit at path. An empty document is
// taken as {}.
func (e *editor) parse(path []string) (*jsontree.Node, error) {
	if len(bytes.TrimSpace(e.src)) == 0 {
		e.src = []byte("{}\n")
	}
	root, serr := jsontree.Parse(e.src, along(path))
	if serr != nil {
		line, col := jsontree.NewLines(e.src).Pos(serr.Off)
		return nil, fmt.Errorf("line %d, column %d: invalid JSON: %s", line, col, serr.Msg)
	}
	if root.Kind != jsontree.Object {
		return nil, fmt.Errorf("the file holds %s, not a JSON object", root.Kind)
	}
	return root, nil
}

func pathString(path []string) string {
	s := ""
	for _, k := range path {
		s = joinKey(s, k)
	}
	return s
}

func appendQuoted(dst []byte, s string) []byte { return jsonx.AppendString(dst, s) }

// set makes value (JSON text) the value at path, creating the objects on the
// way that do not exist. An existing member's value is replaced in place;
// a new member goes at the end of its object.
func (e *editor) set(path []string, value []byte) error {
	if !json.Valid(value) {
		return fmt.Errorf("internal error: invalid JSON for %s", pathString(path))
	}
	root, err := e.parse(path)
	if err != nil {
		return err
	}
	obj := root
	for i, key := range path {
		idx := obj.Index(key)
		if idx < 0 {
			return e.insert(obj, key, nest(path[i+1:], value))
		}
		if i == len(path)-1 {
			return e.replace(obj, idx, value)
		}
		switch v := obj.Members[idx].Value; v.Kind {
		case jsontree.Object:
			obj = v
		case jsontree.Null:
			return e.replace(obj, idx, nest(path[i+1:], value))
		default:
			return fmt.Errorf("%s is %s, not an object", pathString(path[:i+1]), v.Kind)
		}
	}
	return nil
}

// nest wraps value in one object per key of path: nest([a b], v) is
// {"a":{"b":v}}.
func nest(path []string, value []byte) []byte {
	var b []byte
	for _, k := range path {
		b = append(appendQuoted(append(b, '{'), k), ':')
	}
	b = append(b, value...)
	for range path {
		b = append(b, '}')
	}
	return b
}

// remove deletes the member at path, every copy of it when the key is
// repeated (deleting only the last would bring an earlier one back to life).
// It reports whether there was one.
func (e *editor) remove(path []string) (bool, error) {
	found := false
	for {
		root, err := e.parse(path)
		if err != nil {
			return false, err
		}
		obj := root
		for _, key := range path[:len(path)-1] {
			if obj = obj.Lookup(key); obj == nil || obj.Kind != jsontree.Object {
				return found, nil
			}
		}
		idx := obj.Index(path[len(path)-1])
		if idx < 0 {
			return found, nil
		}
		found = true
		e.delete(obj, idx)
	}
}

// delete removes member i of obj with the separator that goes with it.
func (e *editor) delete(obj *jsontree.Node, i int) {
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

func (e *editor) splice(from, to int, text []byte) {
	out := make([]byte, 0, len(e.src)-(to-from)+len(text))
	out = append(out, e.src[:from]...)
	out = append(out, text...)
	out = append(out, e.src[to:]...)
	e.src = out
}

// style is how an object lays out its members.
type style struct {
	multiline bool
	indent    string // of the members' lines
	unit      string // one level of indentation
	nl        string // "\n" or "\r\n"
	sep       string // between one member and the next key: "," and space
	colon     string // between a key and its value: ":" and space
}

// styleOf works out obj's style from its members, or for an empty object
// from the document around it.
func (e *editor) styleOf(obj *jsontree.Node) style {
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
	if len(obj.Members) > 1 {
		prev := obj.Members[len(obj.Members)-2]
		st.sep = string(e.src[prev.Value.End:last.KeyOff])
		if j := strings.IndexByte(st.sep, ','); j >= 0 {
			st.sep = st.sep[j:]
		}
	} else if st.multiline {
		st.sep = "," + string(lead)
	} else if strings.Contains(st.colon, " ") {
		st.sep = ", " // {"a": 1}: spaced like its colon
	} else {
		st.sep = ","
	}
	if st.multiline {
		st.indent = lineIndent(e.src, last.KeyOff)
		if outer := lineIndent(e.src, obj.Off); strings.HasPrefix(st.indent, outer) && len(st.indent) > len(outer) {
			st.unit = st.indent[len(outer):]
		}
	}
	return st
}

// unit is the document's indentation step: that of the root object's first
// member, or two spaces (what JSON.stringify(…, null, 2) writes).
func (e *editor) unit() string {
	// The root is an object (parse checked): look at the first line after
	// its opening brace that is not blank.
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

// render lays value out in style st, for a member whose line starts with
// indent.
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
func (e *editor) insert(obj *jsontree.Node, key string, value []byte) error {
	st := e.styleOf(obj)
	var text []byte
	member := func(indent string) []byte {
		b := appendQuoted(nil, key)
		b = append(b, st.colon...)
		return append(b, render(value, st, indent)...)
	}
	if len(obj.Members) == 0 {
		if st.multiline {
			outer := lineIndent(e.src, obj.Off)
			text = append([]byte("{"+st.nl+st.indent), member(st.indent)...)
			text = append(text, st.nl+outer+"}"...)
		} else {
			text = append(append([]byte("{"), member("")...), '}')
		}
		e.splice(obj.Off, obj.End, text)
		return nil
	}
	last := obj.Members[len(obj.Members)-1]
	text = append([]byte(st.sep), member(st.indent)...)
	e.splice(last.Value.End, last.Value.End, text)
	return nil
}

// replace makes value the value of member i of obj.
func (e *editor) replace(obj *jsontree.Node, i int, value []byte) error {
	st := e.styleOf(obj)
	m := obj.Members[i]
	e.splice(m.Value.Off, m.Value.End, render(value, st, lineIndent(e.src, m.KeyOff)))
	return nil
}
