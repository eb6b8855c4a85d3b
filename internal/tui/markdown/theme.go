package markdown

import "charm.land/lipgloss/v2"

// attr is a set of the ways text is styled.
type attr uint32

const (
	aBold attr = 1 << iota
	aItalic
	aUnderline
	aStrike
	aCode    // inline code
	aLink    // a link's text
	aURL     // a link's destination
	aHTML    // HTML, shown as text
	aRule    // thematic breaks, table rules
	aQuote   // a block quote's bar
	aChecked // a done task's box
	aUnchecked
	aKeyword // in code blocks
	aString
	aNumber
	aComment
)

// aMarker styles list bullets and numbers: not at all.
const aMarker attr = 0

// theme styles text, or leaves it plain.
type theme struct {
	color bool
}

func newTheme(color bool) theme { return theme{color: color} }

// paint returns s styled a.
func (t *theme) paint(a attr, s string) string {
	if !t.color || a == 0 || s == "" {
		return s
	}
	return style(a).Render(s)
}

// style is the lipgloss style of a. Colours are the terminal's own (the
// ANSI sixteen), so that they suit its background.
func style(a attr) lipgloss.Style {
	s := lipgloss.NewStyle()
	if a&aBold != 0 {
		s = s.Bold(true)
	}
	if a&aItalic != 0 {
		s = s.Italic(true)
	}
	if a&aUnderline != 0 {
		s = s.Underline(true)
	}
	if a&aStrike != 0 {
		s = s.Strikethrough(true)
	}
	switch {
	case a&aCode != 0:
		s = s.Foreground(lipgloss.Color("12"))
	case a&aLink != 0:
		// Not underlined: lipgloss underlines grapheme by grapheme.
		s = s.Foreground(lipgloss.Color("4"))
	case a&(aURL|aHTML|aRule|aQuote) != 0:
		s = s.Faint(true)
	case a&aChecked != 0:
		s = s.Foreground(lipgloss.Color("2"))
	case a&aKeyword != 0:
		s = s.Foreground(lipgloss.Color("5"))
	case a&aString != 0:
		s = s.Foreground(lipgloss.Color("2"))
	case a&aNumber != 0:
		s = s.Foreground(lipgloss.Color("3"))
	case a&aComment != 0:
		s = s.Foreground(lipgloss.Color("8")).Italic(true)
	}
	return s
}
