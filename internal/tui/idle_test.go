package tui

import (
	"slices"
	"strings"
	"testing"

	"github.com/tackcode/tack/agent"
)

// TestIdlePromptNotifies: after a run ends, a wait the user leaves alone
// fires the Notification hooks once; a key press cancels the wait.
func TestIdlePromptNotifies(t *testing.T) {
	h := newHarness(t)
	h.typeText("hello")
	h.enter()
	h.send(engineMsg{msg: &agent.ResultMessage{Type: "result", Subtype: "success"}})
	wait := idleMsg{seq: h.m.idleSeq}

	// A key press in between: the wait is stale.
	h.typeText("x")
	h.send(wait)
	if len(h.be.notified) != 0 {
		t.Fatalf("notified after the user typed: %v", h.be.notified)
	}

	h.send(engineMsg{msg: &agent.ResultMessage{Type: "result", Subtype: "success"}})
	wait = idleMsg{seq: h.m.idleSeq}
	h.send(wait)
	h.send(wait) // once per wait
	if !slices.Equal(h.be.notified, []string{"idle_prompt: tack is waiting for your input"}) {
		t.Errorf("notified %v", h.be.notified)
	}
	if !strings.Contains(h.allPrinted(), "notified") {
		t.Errorf("the hooks' message was not shown: %q", h.allPrinted())
	}
}

func TestReloadPluginsReopensTheSession(t *testing.T) {
	h := newHarness(t)
	h.typeText("/reload-plugins")
	h.enter()
	if len(h.be.reopened) != 1 {
		t.Fatalf("reopened %d times", len(h.be.reopened))
	}
	if !strings.Contains(h.allPrinted(), "Reloaded the plugins") {
		t.Errorf("printed %q", h.allPrinted())
	}
}

func TestMCPLoginCommand(t *testing.T) {
	h := newHarness(t)
	h.typeText("/mcp login notion")
	h.enter()
	if !slices.Equal(h.be.logins, []string{"notion"}) || !strings.Contains(h.allPrinted(), "Signed in to notion") {
		t.Errorf("logins %v, printed %q", h.be.logins, h.allPrinted())
	}
}

func TestContextCommandShowsTheParts(t *testing.T) {
	h := newHarness(t)
	h.typeText("/context")
	h.enter()
	out := h.allPrinted()
	for _, want := range []string{"Context: about 50.0k of 100.0k tokens (50.0%) with claude-test", "System prompt", "3.0k", "Conversation", "47.0k", "47.0%"} {
		if !strings.Contains(out, want) {
			t.Errorf("no %q in:\n%s", want, out)
		}
	}
}
