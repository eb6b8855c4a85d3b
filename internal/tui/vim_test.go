package tui

import (
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
)

func TestVimMode(t *testing.T) {
	h := newHarness(t)
	h.typeText("/vim")
	h.enter()
	if h.m.vim.mode != vimInsert || !strings.Contains(h.view(), "-- INSERT --") {
		t.Fatalf("vim mode %v\n%s", h.m.vim.mode, h.view())
	}
	h.typeText("hello wrld")
	h.press(tea.KeyEscape)
	if h.m.vim.mode != vimNormal || !strings.Contains(h.view(), "-- NORMAL --") {
		t.Fatalf("Esc did not enter normal mode:\n%s", h.view())
	}
	// b to "wrld", l to "r", i then type "o": "world".
	h.typeText("bli")
	h.typeText("o")
	if v := h.m.input.Value(); v != "hello world" {
		t.Fatalf("after b l i o: %q", v)
	}
	h.press(tea.KeyEscape)
	h.typeText("0x")
	if v := h.m.input.Value(); v != "ello world" {
		t.Errorf("after 0 x: %q", v)
	}
	h.typeText("A!")
	h.press(tea.KeyEscape)
	h.typeText("oline two")
	h.press(tea.KeyEscape)
	if v := h.m.input.Value(); v != "ello world!\nline two" {
		t.Errorf("after A and o: %q", v)
	}
	h.typeText("dd")
	if v := h.m.input.Value(); v != "ello world!" {
		t.Errorf("after dd: %q", v)
	}
	h.typeText("p")
	if v := h.m.input.Value(); !strings.Contains(v, "line two") {
		t.Errorf("after p: %q", v)
	}
	// Enter sends from normal mode.
	h.enter()
	if len(h.be.sent) != 1 || !strings.HasPrefix(h.be.sent[0], "ello world!") {
		t.Errorf("sent %q", h.be.sent)
	}
	h.typeText("i/vim")
	h.enter()
	if h.m.vim.mode != vimOff {
		t.Error("/vim did not turn vim mode off")
	}
}
