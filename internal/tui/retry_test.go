package tui

import (
	"strings"
	"testing"

	"github.com/tackcode/tack/agent"
)

func TestRetryNoticeSaysWhyAndWhen(t *testing.T) {
	h := newHarness(t)
	h.typeText("hi")
	h.enter()
	h.send(engineMsg{msg: &agent.SystemMessage{Subtype: agent.SubtypeAPIRetry, Attempt: 2, MaxRetries: 10, RetryDelayMS: 1500,
		Error: "unknown", Cause: "API unreachable at http://127.0.0.1:9: connection refused"}})
	want := "API unreachable at http://127.0.0.1:9: connection refused · retrying in 1.5 s (attempt 2 of 10)"
	if v := h.view(); !strings.Contains(v, want) {
		t.Errorf("the view lacks %q:\n%s", want, v)
	}
}
