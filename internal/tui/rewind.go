package tui

import (
	"fmt"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"
)

// escEscWindow is how close two Esc presses must be to count as Esc Esc.
const escEscWindow = 700 * time.Millisecond

// promptPicker lists earlier prompts (Esc Esc on an empty prompt): the one
// chosen comes back into the input, to edit and send again. When the
// session has prompts of its own, those are listed and choosing one
// rewinds to before it (checkpoints.go).
type promptPicker struct {
	prompts []string // newest first
	sel     int
	// rewind: prompts are this session's, turns[i] is prompts[i]'s index
	// in Model.turns.
	rewind bool
	turns  []int
}

// maxPromptPicker bounds the prompts listed.
const maxPromptPicker = 30

// escOnEmpty handles Esc on an empty, idle prompt: the second one in a row
// opens the prompt picker.
func (m *Model) escOnEmpty() {
	now := m.now()
	if !m.lastEsc.IsZero() && now.Sub(m.lastEsc) <= escEscWindow {
		m.lastEsc = time.Time{}
		m.openPromptPicker()
		return
	}
	m.lastEsc = now
}

func (m *Model) openPromptPicker() {
	if len(m.turns) > 0 {
		p := &promptPicker{rewind: true}
		for i := len(m.turns) - 1; i >= 0 && len(p.prompts) < maxPromptPicker; i-- {
			p.prompts = append(p.prompts, m.turns[i].text)
			p.turns = append(p.turns, i)
		}
		m.prompts = p
		return
	}
	var list []string
	for i := len(m.history.entries) - 1; i >= 0 && len(list) < maxPromptPicker; i-- {
		list = append(list, m.history.entries[i])
	}
	if len(list) == 0 {
		m.notice = "No earlier prompt"
		return
	}
	m.prompts = &promptPicker{prompts: list}
}

func (m *Model) promptPickerKey(k tea.KeyPressMsg) tea.Cmd {
	p := m.prompts
	switch k.String() {
	case "up", "k":
		p.sel = (p.sel + len(p.prompts) - 1) % len(p.prompts)
	case "down", "j":
		p.sel = (p.sel + 1) % len(p.prompts)
	case "esc", "q":
		m.prompts = nil
	case "enter":
		m.prompts = nil
		if p.rewind {
			return m.rewindTo(p.turns[p.sel])
		}
		m.setInput(p.prompts[p.sel])
	}
	return nil
}

func (m *Model) renderPromptPicker() string {
	p := m.prompts
	st := m.st
	var b strings.Builder
	if p.rewind {
		b.WriteString(st.bold.Render("Rewind") + st.dim.Render("  ↑/↓ choose · Enter undo this prompt and what followed (files and conversation) · Esc cancel") + "\n\n")
	} else {
		b.WriteString(st.bold.Render("Earlier prompts") + st.dim.Render("  ↑/↓ choose · Enter edit · Esc cancel") + "\n\n")
	}
	n := min(len(p.prompts), max(3, m.height-10))
	start := 0
	if p.sel >= n {
		start = p.sel - n + 1
	}
	for i := start; i < start+n; i++ {
		line := fmt.Sprintf("%2d. %s", i+1, firstLine(p.prompts[i]))
		if i == p.sel {
			b.WriteString(st.selected.Render("❯ "+truncate(line, m.width-6)) + "\n")
		} else {
			b.WriteString("  " + truncate(line, m.width-6) + "\n")
		}
	}
	return st.dialog.Width(m.width).Render(strings.TrimRight(b.String(), "\n"))
}
