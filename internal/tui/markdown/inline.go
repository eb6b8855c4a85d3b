package markdown

import (
	"strings"

	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/util"
)

// run is a piece of inline text in one style.
type run struct {
	text string
	a    attr
}

// wrapInline lays out the inline content of n, styled a, in lines of at
// most width cells.
func (b *blockRenderer) wrapInline(n ast.Node, a attr, width int) []string {
	return b.theme.layout(b.inline(n, a, nil), width)
}

// inline appends the text of the inline children of n to runs.
func (b *blockRenderer) inline(n ast.Node, a attr, runs []run) []run {
	for c := n.FirstChild(); c != nil; c = c.NextSibling() {
		runs = b.inlineNode(c, a, runs)
	}
	return runs
}

func (b *blockRenderer) inlineNode(n ast.Node, a attr, runs []run) []run {
	switch n := n.(type) {
	case *ast.Text:
		v := n.Value(b.source)
		if !n.IsRaw() {
			v = unescape(v)
		}
		runs = append(runs, run{string(v), a})
		switch {
		case n.HardLineBreak():
			runs = append(runs, run{"\n", a})
		case n.SoftLineBreak():
			runs = append(runs, run{" ", a})
		}
		return runs
	case *ast.String:
		return append(runs, run{string(n.Value), a})
	case *ast.CodeSpan:
		return append(runs, run{b.codeSpan(n), a | aCode})
	case *ast.Emphasis:
		if n.Level >= 2 {
			return b.inline(n, a|aBold, runs)
		}
		return b.inline(n, a|aItalic, runs)
	case *strike:
		return b.inline(n, a|aStrike, runs)
	case *ast.Link:
		return b.link(n, string(n.Destination), a, runs)
	case *ast.Image:
		return b.link(n, string(n.Destination), a, runs)
	case *ast.AutoLink:
		return append(runs, run{string(n.Label(b.source)), a | aLink})
	case *ast.RawHTML:
		var sb strings.Builder
		for i := range n.Segments.Len() {
			seg := n.Segments.At(i)
			sb.Write(seg.Value(b.source))
		}
		return append(runs, run{sb.String(), a | aHTML})
	case *checkBox:
		return append(runs, run{checkBoxText(n.checked), a | boxAttr(n.checked)}, run{" ", a})
	}
	return b.inline(n, a, runs)
}

func boxAttr(checked bool) attr {
	if checked {
		return aChecked
	}
	return aUnchecked
}

// codeSpan returns the text of a code span: line endings become spaces and,
// in a table cell, "\|" a pipe.
func (b *blockRenderer) codeSpan(n *ast.CodeSpan) string {
	var sb strings.Builder
	for c := n.FirstChild(); c != nil; c = c.NextSibling() {
		switch c := c.(type) {
		case *ast.Text:
			sb.Write(c.Value(b.source))
		case *ast.String:
			sb.Write(c.Value)
		}
	}
	s := strings.ReplaceAll(sb.String(), "\n", " ")
	if b.inCell {
		s = strings.ReplaceAll(s, `\|`, "|")
	}
	return s
}

// link appends the text of a link (or an image's description) and, unless
// it says the same, its destination in parentheses.
func (b *blockRenderer) link(n ast.Node, dest string, a attr, runs []run) []run {
	start := len(runs)
	runs = b.inline(n, a|aLink, runs)
	var label strings.Builder
	for _, r := range runs[start:] {
		label.WriteString(r.text)
	}
	text := strings.TrimSpace(label.String())
	if dest == "" || dest == text || dest == "mailto:"+text {
		return runs
	}
	if text == "" {
		return append(runs, run{dest, a | aLink})
	}
	return append(runs, run{" ", a}, run{"(" + dest + ")", a | aURL})
}

// unescape resolves the backslash escapes and character references of text.
func unescape(v []byte) []byte {
	return util.ResolveEntityNames(util.ResolveNumericReferences(util.UnescapePunctuations(v)))
}
