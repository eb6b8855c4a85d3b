package markdown

import (
	"strings"

	"github.com/charmbracelet/x/ansi"
)

// minColumn is the narrowest a table column is squeezed to.
const minColumn = 3

// table lays out a table in aligned columns, "│" between them and a rule
// under the header; when it is too wide the widest columns are narrowed and
// their cells wrapped.
func (b *blockRenderer) table(t *table, width int) []string {
	b.inCell = true
	defer func() { b.inCell = false }()

	var rows [][][]run // row, column: the cell's runs
	for r := t.FirstChild(); r != nil; r = r.NextSibling() {
		var cells [][]run
		for c := r.FirstChild(); c != nil; c = c.NextSibling() {
			a := attr(0)
			if len(rows) == 0 {
				a = aBold
			}
			cells = append(cells, b.inline(c, a, nil))
		}
		rows = append(rows, cells)
	}
	cols := len(t.aligns)
	widths := make([]int, cols)
	for _, cells := range rows {
		for i, c := range cells {
			widths[i] = max(widths[i], textWidth(c), 1)
		}
	}
	narrow(widths, width-3*(cols-1))

	sep := " " + b.theme.paint(aRule, "│") + " "
	var out []string
	for ri, cells := range rows {
		laid := make([][]string, cols)
		height := 1
		for i, c := range cells {
			laid[i] = b.theme.layout(c, widths[i])
			height = max(height, len(laid[i]))
		}
		for l := range height {
			var sb strings.Builder
			for i := range cols {
				if i > 0 {
					sb.WriteString(sep)
				}
				text := ""
				if l < len(laid[i]) {
					text = laid[i][l]
				}
				sb.WriteString(pad(text, widths[i], t.aligns[i]))
			}
			out = append(out, strings.TrimRight(sb.String(), " "))
		}
		if ri == 0 {
			rules := make([]string, cols)
			for i, w := range widths {
				rules[i] = strings.Repeat("─", w)
			}
			out = append(out, b.theme.paint(aRule, strings.Join(rules, "─┼─")))
		}
	}
	return out
}

// narrow takes a column at a time from the widest columns until they fit
// in room, or are all minColumn wide.
func narrow(widths []int, room int) {
	total := 0
	for _, w := range widths {
		total += w
	}
	for total > room {
		widest := 0
		for i, w := range widths {
			if w > widths[widest] {
				widest = i
			}
		}
		if widths[widest] <= minColumn {
			return
		}
		widths[widest]--
		total--
	}
}

// pad aligns styled text in width cells.
func pad(text string, width int, al align) string {
	gap := max(0, width-ansi.StringWidth(text))
	switch al {
	case alignRight:
		return strings.Repeat(" ", gap) + text
	case alignCenter:
		return strings.Repeat(" ", gap/2) + text + strings.Repeat(" ", gap-gap/2)
	}
	return text + strings.Repeat(" ", gap)
}
