package tui

import (
	tea "charm.land/bubbletea/v2"
)

// Vim mode (/vim, or "editorMode": "vim" in the settings): the prompt has
// an insert mode, where keys type as usual, and a normal mode (Esc) with
// the vi motions and edits people reach for most: h j k l, w b e, 0 ^ $,
// gg G, x X, dd D C cc, i a I A o O, p (the last deletion), u is left to
// the terminal's own history (↑/↓). Enter sends in both modes.

type vimMode int

const (
	vimOff vimMode = iota
	vimInsert
	vimNormal
)

// vimState is the prompt's vi state.
type vimState struct {
	mode    vimMode
	pending string // the first key of a two-key command (d, c, g)
	yank    string // the last deleted text, for p
}

// toggleVim turns vim mode on (in insert mode) or off.
func (m *Model) toggleVim() {
	if m.vim.mode == vimOff {
		m.vim = vimState{mode: vimInsert}
		m.out("Vim mode on: Esc for normal mode, i to type again. /vim turns it off.")
		return
	}
	m.vim = vimState{}
	m.out("Vim mode off.")
}

// vimLabel is the mode shown in the status area.
func (m *Model) vimLabel() string {
	switch m.vim.mode {
	case vimInsert:
		return "-- INSERT --"
	case vimNormal:
		return "-- NORMAL --"
	}
	return ""
}

// vimKey handles k in vim mode; handled is false for keys the usual
// handling takes (insert mode, Enter, Ctrl keys…).
func (m *Model) vimKey(k tea.KeyPressMsg) (cmd tea.Cmd, handled bool) {
	ks := k.String()
	switch m.vim.mode {
	case vimInsert:
		if ks == "esc" && !m.compl.open() && !m.busy() {
			m.vim.mode = vimNormal
			m.editKey("left") // vi steps back onto the last character typed
			return nil, true
		}
		return nil, false
	case vimNormal:
	default:
		return nil, false
	}
	if ks == "enter" || ks == "esc" || len(k.Text) != 1 {
		m.vim.pending = ""
		return nil, false // Enter sends, Esc interrupts or rewinds, arrows move
	}
	if p := m.vim.pending; p != "" {
		m.vim.pending = ""
		switch p + ks {
		case "dd":
			m.vim.yank = m.currentLine()
			m.editKeys("end", "ctrl+u", "backspace")
			if m.input.Line() == 0 && m.input.LineCount() > 1 {
				m.editKeys("delete")
			}
		case "cc":
			m.vim.yank = m.currentLine()
			m.editKeys("end", "ctrl+u")
			m.vim.mode = vimInsert
		case "dw":
			m.editKeys("alt+delete")
		case "gg":
			m.editKeys("ctrl+home")
		}
		return nil, true
	}
	switch ks {
	case "h":
		m.editKey("left")
	case "l":
		m.editKey("right")
	case "j":
		m.editKey("down")
	case "k":
		m.editKey("up")
	case "w", "e":
		m.editKey("alt+right")
	case "b":
		m.editKey("alt+left")
	case "0", "^":
		m.editKey("home")
	case "$":
		m.editKey("end")
	case "G":
		m.editKey("ctrl+end")
	case "x":
		m.editKey("delete")
	case "X":
		m.editKey("backspace")
	case "D":
		m.editKey("ctrl+k")
	case "C":
		m.editKey("ctrl+k")
		m.vim.mode = vimInsert
	case "i":
		m.vim.mode = vimInsert
	case "a":
		m.editKey("right")
		m.vim.mode = vimInsert
	case "I":
		m.editKey("home")
		m.vim.mode = vimInsert
	case "A":
		m.editKey("end")
		m.vim.mode = vimInsert
	case "o":
		m.editKey("end")
		m.input.InsertString("\n")
		m.vim.mode = vimInsert
	case "O":
		m.editKey("home")
		m.input.InsertString("\n")
		m.editKey("up")
		m.vim.mode = vimInsert
	case "p":
		m.input.InsertString(m.vim.yank)
	case "d", "c", "g":
		m.vim.pending = ks
	}
	// Any other printable key does nothing in normal mode.
	m.updateCompletion()
	return nil, true
}

// editKey sends the textarea the key named ks (its own bindings do the
// edit).
func (m *Model) editKey(ks string) {
	var k tea.KeyPressMsg
	switch ks {
	case "left":
		k = tea.KeyPressMsg{Code: tea.KeyLeft}
	case "right":
		k = tea.KeyPressMsg{Code: tea.KeyRight}
	case "up":
		k = tea.KeyPressMsg{Code: tea.KeyUp}
	case "down":
		k = tea.KeyPressMsg{Code: tea.KeyDown}
	case "home":
		k = tea.KeyPressMsg{Code: tea.KeyHome}
	case "end":
		k = tea.KeyPressMsg{Code: tea.KeyEnd}
	case "delete":
		k = tea.KeyPressMsg{Code: tea.KeyDelete}
	case "backspace":
		k = tea.KeyPressMsg{Code: tea.KeyBackspace}
	case "alt+right":
		k = tea.KeyPressMsg{Code: tea.KeyRight, Mod: tea.ModAlt}
	case "alt+left":
		k = tea.KeyPressMsg{Code: tea.KeyLeft, Mod: tea.ModAlt}
	case "alt+delete":
		k = tea.KeyPressMsg{Code: tea.KeyDelete, Mod: tea.ModAlt}
	case "ctrl+home":
		k = tea.KeyPressMsg{Code: tea.KeyHome, Mod: tea.ModCtrl}
	case "ctrl+end":
		k = tea.KeyPressMsg{Code: tea.KeyEnd, Mod: tea.ModCtrl}
	case "ctrl+k":
		k = tea.KeyPressMsg{Code: 'k', Mod: tea.ModCtrl}
	case "ctrl+u":
		k = tea.KeyPressMsg{Code: 'u', Mod: tea.ModCtrl}
	default:
		return
	}
	m.input, _ = m.input.Update(k)
}

func (m *Model) editKeys(keys ...string) {
	for _, k := range keys {
		m.editKey(k)
	}
}

// currentLine is the text of the line the cursor is on.
func (m *Model) currentLine() string {
	lines := splitLinesKeep(m.input.Value())
	if l := m.input.Line(); l >= 0 && l < len(lines) {
		return lines[l]
	}
	return ""
}

func splitLinesKeep(s string) []string {
	var out []string
	start := 0
	for i := 0; i < len(s); i++ {
		if s[i] == '\n' {
			out = append(out, s[start:i+1])
			start = i + 1
		}
	}
	return append(out, s[start:])
}
