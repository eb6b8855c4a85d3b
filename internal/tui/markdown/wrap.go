package markdown

import (
	"strings"

	"github.com/charmbracelet/x/ansi"
)

// word is text between blanks: one or more runs, as "**bold**, plain"
// makes. A break word stands for a hard line break.
type word struct {
	parts []run
	width int
	// space says the word follows a blank, styled spaceAttr.
	space     bool
	spaceAttr attr
	brk       bool
}

// words splits runs into words; runs of blanks collapse to one.
func words(runs []run) []word {
	var (
		out     []word
		cur     word
		pending bool // a blank since the last word
		pAttr   attr
	)
	flush := func() {
		if len(cur.parts) > 0 {
			out = append(out, cur)
		}
		cur = word{}
	}
	add := func(s string, a attr) {
		if len(cur.parts) == 0 {
			cur.space, cur.spaceAttr, pending = pending, pAttr, false
		}
		cur.parts = append(cur.parts, run{s, a})
		cur.width += ansi.StringWidth(s)
	}
	for _, r := range runs {
		s := r.text
		for s != "" {
			i := strings.IndexAny(s, " \t\n")
			if i < 0 {
				add(s, r.a)
				break
			}
			if i > 0 {
				add(s[:i], r.a)
			}
			flush()
			if s[i] == '\n' {
				out = append(out, word{brk: true})
				pending = false
			} else if !pending {
				pending, pAttr = true, r.a
			}
			s = s[i+1:]
		}
	}
	flush()
	return out
}

// layout fills lines of at most width cells with the words of runs,
// styled; a word wider than a line is cut.
func (t *theme) layout(runs []run, width int) []string {
	var (
		out  []string
		line []run
		lw   int
	)
	emit := func() {
		out = append(out, t.paintRuns(line))
		line, lw = line[:0], 0
	}
	for _, w := range words(runs) {
		if w.brk {
			emit()
			continue
		}
		if lw > 0 && lw+1+w.width > width {
			emit()
		}
		if lw > 0 && w.space {
			line = append(line, run{" ", w.spaceAttr})
			lw++
		}
		if w.width <= width {
			line = append(line, w.parts...)
			lw += w.width
			continue
		}
		// Too long for any line: cut it in pieces of width cells.
		for _, p := range w.parts {
			for _, r := range p.text {
				rw := ansi.StringWidth(string(r))
				if lw+rw > width && lw > 0 {
					emit()
				}
				line = appendRune(line, r, p.a)
				lw += rw
			}
		}
	}
	if len(line) > 0 || len(out) > 0 {
		emit()
	}
	// A paragraph ending in a hard break leaves an empty line.
	for len(out) > 0 && out[len(out)-1] == "" {
		out = out[:len(out)-1]
	}
	return out
}

// appendRune appends r, styled a, to the runs of a line.
func appendRune(line []run, r rune, a attr) []run {
	if n := len(line); n > 0 && line[n-1].a == a {
		line[n-1].text += string(r)
		return line
	}
	return append(line, run{string(r), a})
}

// paintRuns styles the runs of a line, merging those styled alike.
func (t *theme) paintRuns(line []run) string {
	var sb strings.Builder
	for i := 0; i < len(line); {
		j := i + 1
		text := line[i].text
		for j < len(line) && line[j].a == line[i].a {
			text += line[j].text
			j++
		}
		sb.WriteString(t.paint(line[i].a, text))
		i = j
	}
	return sb.String()
}

// textWidth is the width of the widest line of runs laid out without
// wrapping.
func textWidth(runs []run) int {
	widest, w := 0, 0
	for _, wd := range words(runs) {
		if wd.brk {
			w = 0
			continue
		}
		if w > 0 && wd.space {
			w++
		}
		w += wd.width
		widest = max(widest, w)
	}
	return widest
}
