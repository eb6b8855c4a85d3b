package extension

import (
	"bytes"
	"encoding/json"
	"strconv"

	"github.com/tackcode/tack/internal/config"
	"github.com/tackcode/tack/internal/jsontree"
)

// This file holds the one document tree that YAML frontmatter and the JSON
// files of plugins both parse into, with the line and column of every value,
// so that a problem found while reading a definition is reported where it
// is written. JSON is parsed by jsontree, as settings and MCP configuration
// are, and converted.

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
}

// member is one key of a mapping.
type member struct {
	key       string
	line, col int
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

// parseJSONFile parses src, read from path, into a tree with the line
// and column of every key and value, through the one positional JSON
// parser (jsontree); a syntax error is reported at its line and column. A
// byte order mark is skipped; an empty document is a nil node and no
// error.
func parseJSONFile(src []byte, path string) (*node, *config.Error) {
	src = bytes.TrimPrefix(src, []byte("\xef\xbb\xbf"))
	lines := jsontree.NewLines(src)
	root, serr := jsontree.Parse(src, nil)
	if serr != nil {
		line, col := lines.Pos(serr.Off)
		return nil, &config.Error{Source: config.Source{Path: path, Line: line, Col: col}, Msg: "invalid JSON: " + serr.Msg}
	}
	if root == nil {
		return nil, nil
	}
	return fromJSON(root, lines), nil
}

// fromJSON converts a JSON value to a node.
func fromJSON(v *jsontree.Node, lines *jsontree.Lines) *node {
	n := &node{}
	n.line, n.col = lines.Pos(v.Off)
	switch v.Kind {
	case jsontree.Null:
		n.kind, n.str = kindNull, "null"
	case jsontree.Bool:
		n.kind, n.str = kindBool, strconv.FormatBool(v.Bool)
	case jsontree.Number:
		n.kind, n.str = kindNumber, v.Str
	case jsontree.String:
		n.kind, n.str = kindString, v.Str
	case jsontree.Array:
		n.kind = kindSeq
		n.elems = make([]*node, len(v.Elems))
		for i, e := range v.Elems {
			n.elems[i] = fromJSON(e, lines)
		}
	case jsontree.Object:
		n.kind = kindMap
		n.mems = make([]member, len(v.Members))
		for i, m := range v.Members {
			n.mems[i] = member{key: m.Key, val: fromJSON(m.Value, lines)}
			n.mems[i].line, n.mems[i].col = lines.Pos(m.KeyOff)
		}
	}
	return n
}
