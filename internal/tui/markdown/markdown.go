// Package markdown renders Markdown as text for a terminal: word-wrapped to
// a width, styled with SGR sequences or plain.
//
// It knows CommonMark (parsed by goldmark's core) and GitHub's tables,
// ~~strikethrough~~ and task lists; code blocks are kept verbatim and, in
// colour, highlighted by a small built-in lexer. Nothing is done at package
// initialisation beyond what goldmark's core does: tack pays for the
// renderer only when it renders.
//
// The text of the output does not depend on colour: stripped of its escape
// sequences, coloured output is the plain one.
package markdown

import (
	"strings"
	"unicode/utf8"

	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/parser"
	"github.com/yuin/goldmark/text"
)

// Options configure a Renderer.
type Options struct {
	// Color styles the output with escape sequences; without it the output
	// is plain text.
	Color bool
}

// Renderer renders Markdown. It is not safe for concurrent use.
type Renderer struct {
	parser parser.Parser
	theme  theme
}

// New returns a Renderer.
func New(opts Options) *Renderer {
	return &Renderer{parser: newParser(), theme: newTheme(opts.Color)}
}

// minWidth is the narrowest a block is laid out in.
const minWidth = 8

// Render returns src laid out in lines of at most width cells (code blocks,
// kept verbatim, may be wider), with no blank lines at either end and no
// trailing blanks on any line.
func (r *Renderer) Render(src string, width int) string {
	source := []byte(sanitize(src))
	doc := r.parser.Parse(text.NewReader(source))
	b := &blockRenderer{source: source, theme: &r.theme}
	lines := b.blocks(doc, max(width, minWidth))
	return strings.Join(lines, "\n")
}

// sanitize makes src safe to print: CRLF line endings become LF, invalid
// UTF-8 and control characters (escape sequences would be written to the
// terminal as they are) the replacement character.
func sanitize(src string) string {
	src = strings.ReplaceAll(src, "\r\n", "\n")
	if utf8.ValidString(src) && !strings.ContainsFunc(src, isControl) {
		return src
	}
	return strings.Map(func(r rune) rune {
		if isControl(r) {
			return utf8.RuneError
		}
		return r
	}, strings.ToValidUTF8(src, string(utf8.RuneError)))
}

// isControl says whether r is a control character other than a tab or a
// line feed.
func isControl(r rune) bool {
	return r < 0x20 && r != '\n' && r != '\t' || 0x7f <= r && r < 0xa0
}

// blockRenderer lays out the blocks of one document.
type blockRenderer struct {
	source []byte
	theme  *theme
	inCell bool // laying out a table cell
}

// blocks lays out the children of n, with a blank line between them unless
// n is an item of a tight list.
func (b *blockRenderer) blocks(n ast.Node, width int) []string {
	tight := false
	if _, ok := n.(*ast.ListItem); ok {
		if l, ok := n.Parent().(*ast.List); ok && l.IsTight {
			tight = true
		}
	}
	var out []string
	for c := n.FirstChild(); c != nil; c = c.NextSibling() {
		lines := b.block(c, width)
		if len(lines) == 0 {
			continue
		}
		if len(out) > 0 && !tight {
			out = append(out, "")
		}
		out = append(out, lines...)
	}
	return out
}
