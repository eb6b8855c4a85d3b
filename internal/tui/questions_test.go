package tui

import (
	"encoding/json"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
)

const twoQuestions = `{"questions":[
 {"question":"Which database?","header":"Database","multiSelect":false,"options":[{"label":"PostgreSQL","description":"a server"},{"label":"SQLite","description":"a file","preview":"` + "```sql\\nCREATE TABLE t;\\n```" + `"}]},
 {"question":"Which checks?","header":"CI","multiSelect":true,"options":[{"label":"Tests","description":"go test"},{"label":"Lint","description":"staticcheck"}]}]}`

// Esc closes the questions: the call is refused with a message that tells
// the model to wait, and the turn ends (as a rejected tool call does).
func TestQuestionsDeclined(t *testing.T) {
	h := newHarness(t)
	req := permRequestFor("AskUserQuestion", twoQuestions)
	h.send(permRequestMsg{req: req})
	if v := h.view(); !strings.Contains(v, "Which database?") || strings.Contains(v, "Do you want to proceed?") {
		t.Fatalf("not the question dialog:\n%s", v)
	}
	h.press(tea.KeyEscape)
	a := <-req.reply
	if a.allow || !a.interrupt || !strings.Contains(a.message, "without answering") || h.m.question != nil {
		t.Errorf("answer %+v", a)
	}
}

// Arrows move and Enter picks; a highlighted option shows its preview;
// ← goes back to an answered question; Next needs a ticked option; the
// answers replace the input, which keeps the questions.
func TestQuestionsKeys(t *testing.T) {
	h := newHarness(t)
	req := permRequestFor("AskUserQuestion", twoQuestions)
	h.send(permRequestMsg{req: req})
	h.press(tea.KeyDown)
	if v := h.view(); !strings.Contains(v, "CREATE TABLE t;") || !strings.Contains(v, "❯ 2. SQLite") {
		t.Errorf("the highlighted option and its preview:\n%s", v)
	}
	h.enter()
	h.press(tea.KeyLeft)
	if v := h.view(); !strings.Contains(v, "Which database?") {
		t.Fatalf("← did not go back:\n%s", v)
	}
	h.enter()    // PostgreSQL, this time
	h.press('4') // Next, with nothing ticked: stays
	if h.m.question == nil || !strings.Contains(h.view(), "tick at least one option first") {
		t.Fatalf("Next without a tick:\n%s", h.view())
	}
	h.press('1') // ticks Tests
	h.press(tea.KeyDown)
	h.press(tea.KeySpace) // ticks Lint
	h.press('4')
	a := <-req.reply
	if !a.allow {
		t.Fatalf("answer %+v", a)
	}
	var in struct {
		Questions []json.RawMessage `json:"questions"`
		Answers   map[string]string `json:"answers"`
	}
	if err := json.Unmarshal(a.input, &in); err != nil {
		t.Fatal(err)
	}
	if len(in.Questions) != 2 || in.Answers["Which database?"] != "PostgreSQL" || in.Answers["Which checks?"] != "Tests, Lint" {
		t.Errorf("updated input %s", a.input)
	}
}
