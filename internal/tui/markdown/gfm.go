package markdown

import (
	"bytes"

	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/parser"
	"github.com/yuin/goldmark/text"
)

// strikeParser reads ~~struck out~~ text. Unlike GitHub it wants two
// tildes: a single one is too often "about" (~5 ms) or a home (~/src).
type strikeParser struct{}

func (strikeParser) Trigger() []byte { return []byte{'~'} }

func (strikeParser) Parse(parent ast.Node, block text.Reader, pc parser.Context) ast.Node {
	before := block.PrecendingCharacter()
	line, segment := block.PeekLine()
	d := parser.ScanDelimiter(line, before, 2, strikeDelimiter{})
	if d == nil || d.OriginalLength != 2 || before == '~' {
		return nil
	}
	d.Segment = segment.WithStop(segment.Start + d.OriginalLength)
	block.Advance(d.OriginalLength)
	pc.PushDelimiter(d)
	return d
}

// strikeDelimiter pairs the "~~" delimiters.
type strikeDelimiter struct{}

func (strikeDelimiter) IsDelimiter(b byte) bool { return b == '~' }

func (strikeDelimiter) CanOpenCloser(opener, closer *parser.Delimiter) bool {
	return opener.Char == closer.Char
}

func (strikeDelimiter) OnMatch(consumes int) ast.Node { return &strike{} }

// taskParser reads the "[ ]" or "[x]" that starts the first paragraph of a
// list item.
type taskParser struct{}

func (taskParser) Trigger() []byte { return []byte{'['} }

func (taskParser) Parse(parent ast.Node, block text.Reader, pc parser.Context) ast.Node {
	item, ok := parent.Parent().(*ast.ListItem)
	if !ok || item.FirstChild() != parent || parent.HasChildren() {
		return nil
	}
	line, _ := block.PeekLine()
	if len(line) < 3 || line[2] != ']' || (len(line) > 3 && !isBlank(line[3])) {
		return nil
	}
	var checked bool
	switch line[1] {
	case 'x', 'X':
		checked = true
	case ' ', '\t':
	default:
		return nil
	}
	n := 3
	for n < len(line) && isBlank(line[n]) && line[n] != '\n' {
		n++
	}
	block.Advance(n)
	return &checkBox{checked: checked}
}

func isBlank(b byte) bool { return b == ' ' || b == '\t' || b == '\n' || b == '\r' }

// tableTransformer turns a paragraph whose second (or later) line is a
// delimiter row ("| --- | :-: |") into a table: the line before is the
// header, the lines after are the rows; lines before the header stay a
// paragraph.
type tableTransformer struct{}

func (tableTransformer) Transform(para *ast.Paragraph, reader text.Reader, pc parser.Context) {
	lines := para.Lines()
	source := reader.Source()
	for i := 1; i < lines.Len(); i++ {
		delim := lines.At(i)
		aligns := delimiterRow(delim.Value(source))
		if aligns == nil {
			continue
		}
		header := lines.At(i - 1)
		if cells := splitRow(header, source); len(cells) != len(aligns) {
			return
		}
		t := &table{aligns: aligns}
		t.SetPos(header.Start)
		t.AppendChild(t, newRow(header, source, len(aligns)))
		for j := i + 1; j < lines.Len(); j++ {
			t.AppendChild(t, newRow(lines.At(j), source, len(aligns)))
		}
		parent := para.Parent()
		parent.InsertAfter(parent, para, t)
		if i == 1 {
			parent.RemoveChild(parent, para)
			return
		}
		lines.SetSliced(0, i-1)
		last := lines.At(i - 2)
		last.Stop = trimNewline(source, last)
		lines.Set(i-2, last)
		return
	}
}

// newRow makes a row of n cells of a line (cells beyond n are dropped,
// missing ones are empty).
func newRow(line text.Segment, source []byte, n int) *tableRow {
	row := &tableRow{}
	cells := splitRow(line, source)
	for i := range n {
		c := &tableCell{}
		if i < len(cells) && cells[i].Len() > 0 {
			c.Lines().Append(cells[i])
		}
		row.AppendChild(row, c)
	}
	return row
}

// splitRow returns the trimmed cells of a table line; "\|" does not split.
func splitRow(line text.Segment, source []byte) []text.Segment {
	line = line.TrimLeftSpace(source)
	line = line.TrimRightSpace(source)
	start, stop := line.Start, line.Stop
	if start < stop && source[start] == '|' {
		start++
	}
	if stop > start && source[stop-1] == '|' && (stop-1 == start || source[stop-2] != '\\') {
		stop--
	}
	var cells []text.Segment
	from := start
	for i := start; i <= stop; i++ {
		if i == stop || (source[i] == '|' && (i == start || source[i-1] != '\\')) {
			cell := text.NewSegment(from, i)
			cell = cell.TrimLeftSpace(source)
			cell = cell.TrimRightSpace(source)
			cells = append(cells, cell)
			from = i + 1
		}
	}
	return cells
}

// delimiterRow returns the alignments a delimiter row gives its columns, or
// nil if line is not one. It needs at least one pipe.
func delimiterRow(line []byte) []align {
	line = bytes.TrimSpace(line)
	if bytes.IndexByte(line, '|') < 0 {
		return nil
	}
	line = bytes.TrimPrefix(line, []byte{'|'})
	line = bytes.TrimSuffix(line, []byte{'|'})
	var aligns []align
	for cell := range bytes.SplitSeq(line, []byte{'|'}) {
		cell = bytes.TrimSpace(cell)
		left := bytes.HasPrefix(cell, []byte{':'})
		right := bytes.HasSuffix(cell, []byte{':'})
		dashes := bytes.Trim(cell, ":")
		if len(dashes) == 0 || len(bytes.Trim(dashes, "-")) != 0 {
			return nil
		}
		switch {
		case left && right:
			aligns = append(aligns, alignCenter)
		case left:
			aligns = append(aligns, alignLeft)
		case right:
			aligns = append(aligns, alignRight)
		default:
			aligns = append(aligns, alignNone)
		}
	}
	return aligns
}

// trimNewline returns the end of seg without its line ending.
func trimNewline(source []byte, seg text.Segment) int {
	stop := seg.Stop
	for stop > seg.Start && (source[stop-1] == '\n' || source[stop-1] == '\r') {
		stop--
	}
	return stop
}
