package tui

import (
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/exp/teatest/v2"

	"github.com/tackcode/tack/agent"
)

// TestProgramPrintsInOrder runs the model in a real Bubble Tea program
// (teatest): the pieces of a streamed answer and the tool calls between
// them reach the terminal's scrollback in the order they happened, each
// once, and the program ends on /exit.
func TestProgramPrintsInOrder(t *testing.T) {
	be := &fakeBackend{info: agent.ClientInfo{SessionID: "s1", Model: "claude-opus-5-5"}}
	m := newModel(modelConfig{backend: be, cwd: t.TempDir(), noTimers: true})
	tm := teatest.NewTestModel(t, m, teatest.WithInitialTermSize(100, 30))
	tm.Type("count")
	tm.Send(tea.KeyPressMsg{Code: tea.KeyEnter})
	var want []string
	for i := range 20 {
		p := fmt.Sprintf("paragraph-%02d", i)
		want = append(want, p)
		tm.Send(engineMsg{msg: event(`{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`)})
		tm.Send(engineMsg{msg: textDelta(0, p+"\n\n")})
		tm.Send(engineMsg{msg: event(`{"type":"content_block_stop","index":0}`)})
		tm.Send(engineMsg{msg: assistant(agent.TextBlock(p + "\n\n"))})
		id := fmt.Sprintf("t%d", i)
		tool := fmt.Sprintf("tool-%02d", i)
		want = append(want, tool)
		tm.Send(engineMsg{msg: assistant(agent.ContentBlock{Type: agent.BlockToolUse, ID: id, Name: "Bash", Input: []byte(`{"command":"echo ` + tool + `"}`)})})
		tm.Send(engineMsg{msg: toolResult(id, "", false, nil)})
	}
	tm.Send(engineMsg{msg: result(0.25)})
	tm.Type("/exit")
	tm.Send(tea.KeyPressMsg{Code: tea.KeyEnter})
	final := tm.FinalModel(t, teatest.WithFinalTimeout(30*time.Second)).(*Model)
	if final.busy() || len(be.sent) != 1 || be.sent[0] != "count" {
		t.Errorf("busy %v sent %q", final.busy(), be.sent)
	}
	out, err := io.ReadAll(tm.FinalOutput(t))
	if err != nil {
		t.Fatal(err)
	}
	text := ansi.Strip(string(out))
	pos := 0
	for _, w := range want {
		i := strings.Index(text[pos:], w)
		if i < 0 {
			t.Fatalf("%q missing or out of order in\n%s", w, text)
		}
		pos += i + len(w)
		// A paragraph is printed once (a tool's title is also drawn in the
		// live region while it runs).
		if strings.HasPrefix(w, "paragraph") && strings.Count(text, w) != 1 {
			t.Errorf("%q printed %d times", w, strings.Count(text, w))
		}
	}
}
