package main

// End-to-end tests of the flags and variables of Claude Code's CLI
// reference: --init-only without a key, --bare, --setting-sources "",
// --resume without a value, --debug, CLAUDE_CODE_SKIP_PROMPT_HISTORY.

import (
	"slices"
	"strings"
	"testing"

	"github.com/tackcode/tack/internal/hook"
	"github.com/tackcode/tack/internal/hook/hooktest"
)

// TestInitOnlyNeedsNoKey: --init-only makes no request, so it runs its
// Setup and SessionStart hooks without credentials; print mode still
// needs them.
func TestInitOnlyNeedsNoKey(t *testing.T) {
	e := newEnv(t)
	log := e.hookLogs(nil, hook.Setup, hook.SessionStart)
	e.extra = []string{"ANTHROPIC_API_KEY="}
	out, errOut := e.run("--init-only")
	if e.status != 0 || out != "" || errOut != "" {
		t.Errorf("exit %d: %q %q", e.status, out, errOut)
	}
	if got := hooktest.Events(hooktest.ReadLog(t, log)); !slices.Equal(got, []hook.Event{hook.Setup, hook.SessionStart}) {
		t.Errorf("events %v", got)
	}
	if _, errOut := e.run("-p", "hi"); e.status != 1 || !strings.Contains(errOut, "no API key") {
		t.Errorf("print mode without a key: exit %d: %s", e.status, errOut)
	}
}
