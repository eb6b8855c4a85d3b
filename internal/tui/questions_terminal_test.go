package tui

import (
	"strings"
	"testing"

	"github.com/tackcode/tack/internal/llm"
	"github.com/tackcode/tack/internal/llm/llmtest"
)

// TestTerminalAskUserQuestion: the model's questions are shown one at a
// time; the user picks an option by its number, ticks one of a
// multi-select question and adds an answer of their own; the model reads
// the answers under their questions.
func TestTerminalAskUserQuestion(t *testing.T) {
	requireTmux(t)
	bin := buildTack(t)
	proj, home := t.TempDir(), t.TempDir()
	srv := llmtest.New(t,
		llmtest.Reply(llmtest.Text("Two questions first."), llmtest.ToolUse("AskUserQuestion", map[string]any{"questions": []any{
			map[string]any{"question": "Which database should the service use?", "header": "Database", "multiSelect": false,
				"options": []any{
					map[string]any{"label": "PostgreSQL", "description": "A server, for many writers"},
					map[string]any{"label": "SQLite", "description": "A file, for one writer"},
				}},
			map[string]any{"question": "Which checks should CI run?", "header": "CI", "multiSelect": true,
				"options": []any{
					map[string]any{"label": "Tests", "description": "go test"},
					map[string]any{"label": "Lint", "description": "staticcheck"},
					map[string]any{"label": "Fuzz", "description": "go test -fuzz"},
				}},
		}})),
		llmtest.Reply(llmtest.Text("SQLite, with tests and vet in CI.")),
		llmtest.Reply(llmtest.ToolUse("AskUserQuestion", map[string]any{"questions": []any{
			map[string]any{"question": "Which port should it listen on?", "header": "Port", "multiSelect": false,
				"options": []any{
					map[string]any{"label": "8080", "description": "the usual"},
					map[string]any{"label": "443", "description": "behind TLS"},
				}},
		}})),
		llmtest.Reply(llmtest.Text("Port left as it is.")),
	)
	trustFolder(t, proj, home)
	s := startTmux(t, proj, terminalEnv(home, srv), bin+"; sleep 600")
	s.waitFor("/help for commands")
	s.text("set up the service")
	s.keys("Enter")
	screen := s.waitFor("Which database should the service use?")
	for _, want := range []string{"☐ Database", "☐ CI", "1. PostgreSQL", "A server, for many writers", "2. SQLite", "3. Type something else"} {
		if !strings.Contains(screen, want) {
			t.Errorf("the first question lacks %q:\n%s", want, screen)
		}
	}
	s.keys("2")
	screen = s.waitFor("Which checks should CI run?")
	for _, want := range []string{"✔ Database", "1. [ ] Tests", "4. Type something else", "5. Next"} {
		if !strings.Contains(screen, want) {
			t.Errorf("the second question lacks %q:\n%s", want, screen)
		}
	}
	s.keys("1")
	s.waitFor("1. [x] Tests")
	s.keys("4")
	s.waitFor("type your answer")
	s.text("go vet")
	s.keys("Enter")
	s.waitFor("SQLite, with tests and vet in CI.")
	screen = s.waitFor("CI: Tests, go vet")
	if !strings.Contains(screen, "Database: SQLite") {
		t.Errorf("the answers are not in the scrollback:\n%s", screen)
	}
	// Esc declines: the turn ends at the call and the prompt is back; the
	// model hears of it with the next prompt.
	s.text("and the port?")
	s.keys("Enter")
	s.waitFor("Which port should it listen on?")
	s.keys("Escape")
	s.waitFor("Declined to answer the questions")
	s.text("leave it")
	s.keys("Enter")
	s.waitFor("Port left as it is.")
	reqs := srv.Requests()
	if len(reqs) != 4 {
		t.Fatalf("%d requests", len(reqs))
	}
	if body := string(reqs[3].Body); !strings.Contains(body, "without answering") || !strings.Contains(body, "leave it") {
		t.Errorf("the request after the decline: %s", body)
	}

	r := srv.Requests()[1].ToolResults()
	if len(r) != 1 || r[0].IsError {
		t.Fatalf("tool results %+v", r)
	}
	text := llm.TextOf(r[0].Content)
	for _, want := range []string{`"Which database should the service use?": "SQLite"`, `"Which checks should CI run?": "Tests, go vet"`} {
		if !strings.Contains(text, want) {
			t.Errorf("the tool result lacks %s:\n%s", want, text)
		}
	}
}
