package markdown

import (
	"strconv"
	"strings"

	"github.com/yuin/goldmark/ast"
)

// bullets mark the items of bullet lists, by depth.
const bullets = "•◦▪"

// block lays out one block in lines of at most width cells.
func (b *blockRenderer) block(n ast.Node, width int) []string {
	width = max(width, minWidth) // deep down, overflow rather than fold to nothing
	switch n := n.(type) {
	case *ast.Paragraph, *ast.TextBlock:
		return b.wrapInline(n, 0, width)
	case *ast.Heading:
		return b.wrapInline(n, headingAttr(n.Level), width)
	case *ast.ThematicBreak:
		return []string{b.theme.paint(aRule, strings.Repeat("─", width))}
	case *ast.FencedCodeBlock:
		return b.code(n, string(n.Language(b.source)))
	case *ast.CodeBlock:
		return b.code(n, "")
	case *ast.HTMLBlock:
		return b.html(n)
	case *ast.Blockquote:
		return b.quote(n, width)
	case *ast.List:
		return b.list(n, width)
	case *table:
		return b.table(n, width)
	}
	if n.Type() == ast.TypeBlock && !n.HasChildren() {
		return b.rawLines(n, 0)
	}
	return b.blocks(n, width)
}

func headingAttr(level int) attr {
	switch level {
	case 1:
		return aBold | aUnderline
	case 2:
		return aBold
	}
	return aBold | aItalic
}

// rawLines returns the lines of n as they are (tabs expanded), styled a.
func (b *blockRenderer) rawLines(n ast.Node, a attr) []string {
	var sb strings.Builder
	lines := n.Lines()
	for i := range lines.Len() {
		seg := lines.At(i)
		sb.Write(seg.Value(b.source))
	}
	if h, ok := n.(*ast.HTMLBlock); ok && h.HasClosure() {
		sb.Write(h.ClosureLine.Value(b.source))
	}
	text := trimLines(expandTabs(sb.String()))
	if text == "" {
		return nil
	}
	out := strings.Split(text, "\n")
	for i, l := range out {
		out[i] = b.theme.paint(a, l)
	}
	return out
}

// html shows an HTML block as the text it is.
func (b *blockRenderer) html(n *ast.HTMLBlock) []string {
	return b.rawLines(n, aHTML)
}

// codeIndent sets code blocks off from the text.
const codeIndent = "  "

// code lays out a code block verbatim, highlighted when lang is one the
// lexer knows, indented and never wrapped.
func (b *blockRenderer) code(n ast.Node, lang string) []string {
	var sb strings.Builder
	lines := n.Lines()
	for i := range lines.Len() {
		seg := lines.At(i)
		sb.Write(seg.Value(b.source))
	}
	src := trimLines(expandTabs(sb.String()))
	if strings.TrimSpace(src) == "" {
		return nil
	}
	var out []string
	for _, l := range b.theme.highlight(src, lang) {
		if l == "" {
			out = append(out, "")
			continue
		}
		out = append(out, codeIndent+l)
	}
	return out
}

// quote lays out a block quote behind a bar.
func (b *blockRenderer) quote(n *ast.Blockquote, width int) []string {
	lines := b.blocks(n, width-2)
	bar := b.theme.paint(aQuote, "│")
	for i, l := range lines {
		if l == "" {
			lines[i] = bar
		} else {
			lines[i] = bar + " " + l
		}
	}
	return lines
}

// list lays out a list: each item behind its bullet or number, its other
// lines indented under its text.
func (b *blockRenderer) list(n *ast.List, width int) []string {
	depth := 0
	for p := n.Parent(); p != nil; p = p.Parent() {
		if _, ok := p.(*ast.List); ok {
			depth++
		}
	}
	count := n.ChildCount()
	numWidth := len(strconv.Itoa(n.Start + count - 1))
	bulletRunes := []rune(bullets)
	bullet := string(bulletRunes[depth%len(bulletRunes)])

	var out []string
	i := 0
	for item := n.FirstChild(); item != nil; item = item.NextSibling() {
		var marker string
		if n.IsOrdered() {
			num := strconv.Itoa(n.Start + i)
			marker = strings.Repeat(" ", numWidth-len(num)) + num + ". "
		} else if box := leadingCheckBox(item); box != nil {
			// The box takes the bullet's place (and leaves the text).
			marker = checkBoxText(box.checked) + " "
			box.Parent().RemoveChild(box.Parent(), box)
		} else {
			marker = bullet + " "
		}
		mw := len([]rune(marker))
		lines := b.blocks(item, width-mw)
		if len(lines) == 0 {
			lines = []string{""}
		}
		if i > 0 && !n.IsTight {
			out = append(out, "")
		}
		pad := strings.Repeat(" ", mw)
		for j, l := range lines {
			switch {
			case j == 0 && l == "":
				out = append(out, b.theme.paint(markerAttr(marker), strings.TrimRight(marker, " ")))
			case j == 0:
				out = append(out, b.theme.paint(markerAttr(marker), strings.TrimRight(marker, " "))+" "+l)
			case l == "":
				out = append(out, "")
			default:
				out = append(out, pad+l)
			}
		}
		i++
	}
	return out
}

func markerAttr(marker string) attr {
	switch strings.TrimSpace(marker) {
	case checkBoxText(true):
		return aChecked
	case checkBoxText(false):
		return aUnchecked
	}
	return aMarker
}

func checkBoxText(checked bool) string {
	if checked {
		return "[x]"
	}
	return "[ ]"
}

// leadingCheckBox returns the check box that starts a list item, if any.
func leadingCheckBox(item ast.Node) *checkBox {
	first := item.FirstChild()
	if first == nil {
		return nil
	}
	box, _ := first.FirstChild().(*checkBox)
	return box
}

// trimLines drops the trailing blanks of every line of s and its trailing
// newlines.
func trimLines(s string) string {
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = strings.TrimRight(l, " \r")
	}
	return strings.TrimRight(strings.Join(lines, "\n"), "\n")
}

// expandTabs replaces tabs by spaces up to the next multiple of four
// columns.
func expandTabs(s string) string {
	if !strings.Contains(s, "\t") {
		return s
	}
	var sb strings.Builder
	col := 0
	for _, r := range s {
		switch r {
		case '\t':
			n := 4 - col%4
			sb.WriteString(strings.Repeat(" ", n))
			col += n
		case '\n':
			sb.WriteRune(r)
			col = 0
		default:
			sb.WriteRune(r)
			col++
		}
	}
	return sb.String()
}
