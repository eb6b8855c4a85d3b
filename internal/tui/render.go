package tui

import (
	"fmt"
	"strings"

	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/tackcode/tack/internal/diff"
	mdrender "github.com/tackcode/tack/internal/tui/markdown"
)

// styles are the UI's colours, made once.
type styles struct {
	dim, bold, user, accent, ok, bad, warn lipgloss.Style
	added, removed, context                lipgloss.Style
	box, dialog                            lipgloss.Style
	modeEdits, modePlan, modeBypass        lipgloss.Style
	selected                               lipgloss.Style
}

func newStyles() styles {
	return styles{
		dim:        lipgloss.NewStyle().Faint(true),
		bold:       lipgloss.NewStyle().Bold(true),
		user:       lipgloss.NewStyle().Foreground(lipgloss.Color("7")),
		accent:     lipgloss.NewStyle().Foreground(lipgloss.Color("#d77757")),
		ok:         lipgloss.NewStyle().Foreground(lipgloss.Color("2")),
		bad:        lipgloss.NewStyle().Foreground(lipgloss.Color("1")),
		warn:       lipgloss.NewStyle().Foreground(lipgloss.Color("3")),
		added:      lipgloss.NewStyle().Foreground(lipgloss.Color("2")),
		removed:    lipgloss.NewStyle().Foreground(lipgloss.Color("1")),
		context:    lipgloss.NewStyle().Faint(true),
		box:        lipgloss.NewStyle().Border(lipgloss.RoundedBorder()).BorderForeground(lipgloss.Color("8")).Padding(0, 0),
		dialog:     lipgloss.NewStyle().Border(lipgloss.RoundedBorder()).BorderForeground(lipgloss.Color("4")).Padding(0, 1),
		modeEdits:  lipgloss.NewStyle().Foreground(lipgloss.Color("5")),
		modePlan:   lipgloss.NewStyle().Foreground(lipgloss.Color("6")),
		modeBypass: lipgloss.NewStyle().Foreground(lipgloss.Color("1")),
		selected:   lipgloss.NewStyle().Foreground(lipgloss.Color("4")).Bold(true),
	}
}

// markdown renders finished Markdown, indented by two columns (the
// assistant's bullet takes their place on the first line). Its renderer is
// made on first use. The output is always styled, as everything else the UI
// prints is.
type markdown struct {
	r *mdrender.Renderer
}

func newMarkdown() *markdown { return &markdown{} }

// mdMargin is the indent of rendered Markdown.
const mdMargin = "  "

// render returns md rendered for width columns, with no blank lines at
// either end.
func (g *markdown) render(md string, width int) string {
	if strings.TrimSpace(md) == "" {
		return ""
	}
	if g.r == nil {
		g.r = mdrender.New(mdrender.Options{Color: true})
	}
	lines := strings.Split(g.r.Render(md, max(20, width-2*len(mdMargin))), "\n")
	for i, l := range lines {
		if l != "" {
			lines[i] = mdMargin + l
		}
	}
	return strings.Join(lines, "\n")
}

// wrap wraps plain or styled text to width columns.
func wrap(s string, width int) string {
	if width <= 0 {
		return s
	}
	return ansi.Wrap(s, width, "")
}

// lastLines returns at most n lines from the end of s.
func lastLines(s string, n int) string {
	if n <= 0 {
		return ""
	}
	lines := strings.Split(s, "\n")
	if len(lines) <= n {
		return s
	}
	return strings.Join(lines[len(lines)-n:], "\n")
}

// fold keeps the first n lines of text and says how many were left out.
func fold(text string, n int) (kept []string, more int) {
	lines := strings.Split(strings.TrimRight(text, "\n"), "\n")
	if len(lines) == 1 && lines[0] == "" {
		return nil, 0
	}
	if len(lines) <= n {
		return lines, 0
	}
	return lines[:n], len(lines) - n
}

// truncate cuts s to width columns with an ellipsis.
func truncate(s string, width int) string {
	if width <= 1 {
		return s
	}
	return ansi.Truncate(s, width, "…")
}

// firstLine returns the first line of s, marking that there was more.
func firstLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i] + " …"
	}
	return s
}

// renderHunks renders a diff as coloured lines with line numbers, at most
// maxLines of them.
func (st styles) renderHunks(hunks []diff.Hunk, width, maxLines int) []string {
	var out []string
	shown := 0
	total := 0
	for _, h := range hunks {
		total += len(h.Lines)
	}
	for hi, h := range hunks {
		if hi > 0 && shown < maxLines {
			out = append(out, st.dim.Render("   ..."))
		}
		oldN, newN := h.OldStart, h.NewStart
		for _, l := range h.Lines {
			if shown >= maxLines {
				break
			}
			shown++
			body := ""
			if len(l) > 0 {
				body = l[1:]
			}
			var line string
			switch {
			case strings.HasPrefix(l, "+"):
				line = st.added.Render(truncate(fmt.Sprintf("%5d + %s", newN, expandTabs(body)), width))
				newN++
			case strings.HasPrefix(l, "-"):
				line = st.removed.Render(truncate(fmt.Sprintf("%5d - %s", oldN, expandTabs(body)), width))
				oldN++
			case strings.HasPrefix(l, `\`):
				line = st.dim.Render("        " + l)
			default:
				line = st.context.Render(truncate(fmt.Sprintf("%5d   %s", newN, expandTabs(body)), width))
				oldN++
				newN++
			}
			out = append(out, line)
		}
	}
	if shown < total {
		out = append(out, st.dim.Render(fmt.Sprintf("      … +%d lines", total-shown)))
	}
	return out
}

func expandTabs(s string) string { return strings.ReplaceAll(s, "\t", "    ") }

// indentBlock puts first before the first line of text and pad before the
// others.
func indentBlock(text, first, pad string) string {
	lines := strings.Split(text, "\n")
	for i := range lines {
		if i == 0 {
			lines[i] = first + lines[i]
		} else {
			lines[i] = pad + lines[i]
		}
	}
	return strings.Join(lines, "\n")
}

// tokens writes a count compactly: 950, 12.3k.
func tokens(n int64) string {
	switch {
	case n >= 1_000_000:
		return fmt.Sprintf("%.1fM", float64(n)/1e6)
	case n >= 1000:
		return fmt.Sprintf("%.1fk", float64(n)/1e3)
	}
	return fmt.Sprint(n)
}

// visibleWidth is the width of styled text in cells.
func visibleWidth(s string) int { return ansi.StringWidth(s) }
