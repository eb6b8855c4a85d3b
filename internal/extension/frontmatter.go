package extension

import (
	"bytes"
	"errors"
	"fmt"
	"strings"

	yaml "github.com/goccy/go-yaml"
	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/parser"

	"github.com/tackcode/tack/internal/config"
	"github.com/tackcode/tack/internal/lazyregexp"
)

// frontmatter is a Markdown file split into its YAML header and its body.
type frontmatter struct {
	// fields is the parsed header: a mapping (empty when there is none).
	fields *node
	// body is the text after the closing "---" line.
	body string
	// bodyLine is the 1-based line of the file where body starts.
	bodyLine int
	// present is false when the file has no header at all.
	present bool
	// lenient is true when the header only parsed once its plain values
	// were quoted, as Claude Code retries (see quoteValues).
	lenient bool
}

// parseFrontmatter splits src, read from path, into its YAML header and
// body. The header is the text between a first line "---" and the next line
// "---". Line numbers in problems are the file's (see parseYAML).
func parseFrontmatter(src []byte, path string) (*frontmatter, *config.Error) {
	text := string(bytes.TrimPrefix(src, []byte("\xef\xbb\xbf")))
	text = strings.ReplaceAll(text, "\r\n", "\n")
	fm := &frontmatter{fields: &node{kind: kindMap, line: 1, col: 1}, body: text, bodyLine: 1}
	first, rest, ok := strings.Cut(text, "\n")
	if strings.TrimRight(first, " \t") != "---" {
		return fm, nil
	}
	if !ok {
		rest = ""
	}
	// Find the closing line.
	header, body, closed := "", "", false
	off, lines := 0, 1
	for off <= len(rest) {
		end := strings.IndexByte(rest[off:], '\n')
		line := rest[off:]
		if end >= 0 {
			line = rest[off : off+end]
		}
		lines++
		if strings.TrimRight(line, " \t") == "---" {
			header = rest[:off]
			if end >= 0 {
				body = rest[off+end+1:]
			}
			closed = true
			break
		}
		if end < 0 {
			break
		}
		off += end + 1
	}
	if !closed {
		return nil, &config.Error{Source: config.Source{Path: path, Line: 1, Col: 1}, Msg: `the frontmatter opened by "---" on line 1 is never closed by a "---" line`}
	}
	fm.present, fm.body, fm.bodyLine = true, body, lines+1
	// A blank line stands for the opening "---", so that the YAML parser
	// numbers lines as the file does, in positions and in its messages
	// ("already defined at [2:1]").
	n, lenient, err := parseYAML([]byte("\n"+header), path)
	if err != nil {
		return nil, err
	}
	fm.lenient = lenient
	if n == nil {
		return fm, nil
	}
	if n.kind != kindMap {
		return nil, errAt(path, n, "", fmt.Sprintf("the frontmatter must be a mapping of fields (name: value), not %s", n.kind), nil)
	}
	fm.fields = n
	return fm, nil
}

// parseYAML parses a YAML document read from path, whose lines are the
// file's. When it does not parse, it is retried with its plain one-line values
// quoted, as Claude Code does, so that headers such as
// "description: Use when: the user asks" load; if that fails too, the
// first error is reported. lenient says the retry was needed.
func parseYAML(src []byte, path string) (n *node, lenient bool, e *config.Error) {
	f, err := parser.ParseBytes(src, 0)
	if err != nil {
		quoted := quoteValues(string(src))
		if quoted != string(src) {
			if f2, err2 := parser.ParseBytes([]byte(quoted), 0); err2 == nil {
				f, err, lenient = f2, nil, true
			}
		}
	}
	if err != nil {
		return nil, false, yamlError(err, path)
	}
	var body ast.Node
	for _, d := range f.Docs {
		if d.Body != nil {
			if body != nil {
				tk := d.Body.GetToken()
				return nil, false, &config.Error{Source: config.Source{Path: path, Line: tk.Position.Line, Col: tk.Position.Column}, Msg: "the frontmatter holds more than one YAML document"}
			}
			body = d.Body
		}
	}
	c := &yamlConverter{path: path, anchors: map[string]*node{}}
	n, e = c.convert(body, 0)
	return n, lenient, e
}

// plainValue matches a one-line "key: value" of the top level.
var plainValue = lazyregexp.New(`^([a-zA-Z_-]+):[ \t]+(\S.*)$`)

// special are the characters that make a plain YAML value mean something
// else, or not parse.
var special = lazyregexp.New("[{}\\[\\]*&#!|>%@`]|: ")

// quoteValues double-quotes the plain top-level values holding characters
// that YAML treats specially, leaving quoted values and valid flow lists
// alone, and turns leading tabs into spaces: Claude Code's second try at a
// header that does not parse.
func quoteValues(src string) string {
	lines := strings.Split(src, "\n")
	for i, l := range lines {
		trimmed := strings.TrimLeft(l, "\t")
		if len(trimmed) != len(l) {
			l = strings.Repeat("  ", len(l)-len(trimmed)) + trimmed
			lines[i] = l
		}
		m := plainValue().FindStringSubmatch(l)
		if m == nil {
			continue
		}
		key, val := m[1], strings.TrimRight(m[2], " \t")
		if len(val) >= 2 && (val[0] == '"' && val[len(val)-1] == '"' || val[0] == '\'' && val[len(val)-1] == '\'') {
			continue
		}
		if strings.HasPrefix(val, "[") && strings.HasSuffix(val, "]") {
			if f, err := parser.ParseBytes([]byte(val), 0); err == nil && len(f.Docs) == 1 {
				if _, ok := f.Docs[0].Body.(*ast.SequenceNode); ok {
					continue
				}
			}
		}
		if special().MatchString(val) {
			val = strings.ReplaceAll(strings.ReplaceAll(val, `\`, `\\`), `"`, `\"`)
			lines[i] = key + `: "` + val + `"`
		}
	}
	return strings.Join(lines, "\n")
}

// yamlError turns a YAML parser error into an *config.Error at its place in the
// file; one the parser does not place is put at the start of the header.
func yamlError(err error, path string) *config.Error {
	e := &config.Error{Source: config.Source{Path: path, Line: 2, Col: 1}, Msg: "invalid YAML", Err: err}
	var ye yaml.Error
	if errors.As(err, &ye) {
		e.Msg, e.Err = "invalid YAML: "+ye.GetMessage(), nil
		if tk := ye.GetToken(); tk != nil && tk.Position != nil {
			e.Source.Line, e.Source.Col = tk.Position.Line, tk.Position.Column
		}
	}
	return e
}

// maxDepth bounds the nesting of a YAML header, so that a hostile file
// cannot exhaust the stack.
const maxDepth = 500

// yamlConverter turns the YAML parser's tree into nodes.
type yamlConverter struct {
	path    string
	anchors map[string]*node
}

func (c *yamlConverter) at(n ast.Node, out *node) *node {
	if tk := n.GetToken(); tk != nil && tk.Position != nil {
		out.line, out.col = tk.Position.Line, tk.Position.Column
	}
	return out
}

func (c *yamlConverter) convert(n ast.Node, depth int) (*node, *config.Error) {
	if n == nil {
		return nil, nil
	}
	if depth > maxDepth {
		return nil, c.fail(n, "nested too deeply")
	}
	switch v := n.(type) {
	case *ast.NullNode:
		return c.at(n, &node{kind: kindNull}), nil
	case *ast.StringNode:
		return c.at(n, &node{kind: kindString, str: v.Value}), nil
	case *ast.LiteralNode:
		return c.at(n, &node{kind: kindString, str: v.Value.Value}), nil
	case *ast.BoolNode:
		return c.at(n, &node{kind: kindBool, str: fmt.Sprint(v.Value)}), nil
	case *ast.IntegerNode, *ast.FloatNode:
		return c.at(n, &node{kind: kindNumber, str: fmt.Sprint(v.(ast.ScalarNode).GetValue())}), nil
	case *ast.InfinityNode, *ast.NanNode:
		return c.at(n, &node{kind: kindString, str: n.GetToken().Value}), nil
	case *ast.TagNode:
		inner, err := c.convert(v.Value, depth+1)
		if err != nil || inner == nil {
			return inner, err
		}
		if v.Start != nil && (v.Start.Value == "!!str" || v.Start.Value == "!str") && inner.kind != kindMap && inner.kind != kindSeq {
			inner.kind = kindString
			if inner.str == "" && v.Value != nil {
				inner.str = v.Value.GetToken().Value
			}
		}
		return inner, nil
	case *ast.AnchorNode:
		inner, err := c.convert(v.Value, depth+1)
		if err != nil {
			return nil, err
		}
		if v.Name != nil {
			c.anchors[v.Name.GetToken().Value] = inner
		}
		return inner, nil
	case *ast.AliasNode:
		name := ""
		if v.Value != nil {
			name = v.Value.GetToken().Value
		}
		target, ok := c.anchors[name]
		if !ok {
			return nil, c.fail(n, fmt.Sprintf("alias *%s names no anchor", name))
		}
		return target, nil
	case *ast.MappingValueNode:
		out := c.at(n, &node{kind: kindMap})
		if err := c.member(out, v, depth); err != nil {
			return nil, err
		}
		out.line, out.col = out.mems[0].line, out.mems[0].col
		return out, nil
	case *ast.MappingNode:
		out := c.at(n, &node{kind: kindMap})
		if v.IsFlowStyle {
			out.flow = v.String()
		}
		for _, mv := range v.Values {
			if err := c.member(out, mv, depth); err != nil {
				return nil, err
			}
		}
		if len(out.mems) > 0 {
			out.line, out.col = out.mems[0].line, out.mems[0].col
		}
		return out, nil
	case *ast.SequenceNode:
		out := c.at(n, &node{kind: kindSeq})
		if v.IsFlowStyle {
			out.flow = v.String()
		}
		for _, e := range v.Values {
			en, err := c.convert(e, depth+1)
			if err != nil {
				return nil, err
			}
			if en == nil {
				en = c.at(e, &node{kind: kindNull})
			}
			out.elems = append(out.elems, en)
		}
		return out, nil
	case *ast.CommentGroupNode, *ast.CommentNode:
		return nil, nil
	}
	return nil, c.fail(n, fmt.Sprintf("unsupported YAML construct (%s)", n.Type()))
}

func (c *yamlConverter) member(out *node, mv *ast.MappingValueNode, depth int) *config.Error {
	if _, merge := mv.Key.(*ast.MergeKeyNode); merge {
		return c.fail(mv, "merge keys (<<) are not supported in frontmatter")
	}
	var key string
	if s, ok := mv.Key.(ast.ScalarNode); ok {
		key = fmt.Sprint(s.GetValue())
		if s.GetValue() == nil {
			key = ""
		}
	} else {
		return c.fail(mv.Key, "a key must be a plain name")
	}
	m := member{key: key}
	if tk := mv.Key.GetToken(); tk != nil && tk.Position != nil {
		m.line, m.col = tk.Position.Line, tk.Position.Column
	}
	val, err := c.convert(mv.Value, depth+1)
	if err != nil {
		return err
	}
	if val == nil {
		val = &node{kind: kindNull, line: m.line, col: m.col}
	}
	m.val = val
	out.mems = append(out.mems, m)
	return nil
}

func (c *yamlConverter) fail(n ast.Node, msg string) *config.Error {
	e := &config.Error{Source: config.Source{Path: c.path}, Msg: msg}
	if tk := n.GetToken(); tk != nil && tk.Position != nil {
		e.Source.Line, e.Source.Col = tk.Position.Line, tk.Position.Column
	}
	return e
}
