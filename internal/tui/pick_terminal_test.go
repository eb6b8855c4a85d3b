package tui

import (
	"fmt"
	"os/exec"
	"strings"
	"testing"

	"github.com/tackcode/tack/internal/llm"
	"github.com/tackcode/tack/internal/llm/llmtest"
)

// TestTerminalResumeWithoutValue: tack -r opens the session picker at
// start; Enter resumes the session picked, whose history the next prompt
// carries.
func TestTerminalResumeWithoutValue(t *testing.T) {
	requireTmux(t)
	bin := buildTack(t)
	proj, home := t.TempDir(), t.TempDir()
	srv := llmtest.New(t, llmtest.Reply(llmtest.Text("Noted.")), llmtest.Reply(llmtest.Text("It was 7.")))
	env := terminalEnv(home, srv)
	trustFolder(t, proj, home)
	first := exec.Command(bin, "-p", "remember the number 7", "-n", "number-talk")
	first.Dir, first.Env = proj, env
	if out, err := first.CombinedOutput(); err != nil {
		t.Fatalf("first session: %v\n%s", err, out)
	}
	s := startTmux(t, proj, env, fmt.Sprintf("%s -r; sleep 600", bin))
	screen := s.waitFor("Resume a conversation")
	if !strings.Contains(screen, "number-talk") {
		t.Errorf("the picker does not list the session:\n%s", screen)
	}
	s.keys("Enter")
	s.waitFor("Resumed the conversation")
	s.text("what was the number?")
	s.keys("Enter")
	s.waitFor("It was 7.")
	reqs := srv.Requests()
	if got := reqs[len(reqs)-1].Messages; len(got) != 3 || !strings.Contains(llm.TextOf(got[0].Content), "remember the number 7") {
		t.Errorf("after the pick the model got %d messages: %+v", len(got), got)
	}
}
