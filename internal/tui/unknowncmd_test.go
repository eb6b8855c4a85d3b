package tui

import (
	"strings"
	"testing"
)

func TestUnknownCommandIsNotSent(t *testing.T) {
	h := newHarness(t)
	h.typeText("/reviw main.go")
	h.enter()
	h.typeText("/nonexistent")
	h.enter()
	if len(h.be.sent) != 0 {
		t.Fatalf("an unknown command reached the session: %q", h.be.sent)
	}
	out := h.allPrinted()
	for _, want := range []string{
		"Unknown command: /reviw · did you mean /review? (/help lists the commands; nothing was sent)",
		"Unknown command: /nonexistent (/help lists the commands; nothing was sent)",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("missing %q in\n%s", want, out)
		}
	}
	// The session's own commands (skills, .claude/commands), MCP prompts
	// and lines that only start with a slash go to the session.
	for _, line := range []string{"/review main.go", "/mcp__github__pr 12", "/usr/bin is empty", "/ alone"} {
		h.typeText(line)
		h.enter()
	}
	want := []string{"/review main.go", "/mcp__github__pr 12", "/usr/bin is empty", "/ alone"}
	if strings.Join(h.be.sent, "|") != strings.Join(want, "|") {
		t.Errorf("sent %q, want %q", h.be.sent, want)
	}
}
