package tui

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tackcode/tack/internal/llm"
	"github.com/tackcode/tack/internal/llm/llmtest"
)

// TestRewindWithAgentClient: Esc Esc, then Enter on the last prompt, puts
// back the file its turn wrote and resumes the conversation before it.
func TestRewindWithAgentClient(t *testing.T) {
	dir := t.TempDir()
	srv := llmtest.New(t,
		llmtest.Reply(llmtest.Text("Hello.")),
		llmtest.Reply(llmtest.ToolUse("Write", map[string]any{"file_path": filepath.Join(dir, "notes.txt"), "content": "draft\n"})),
		llmtest.Reply(llmtest.Text("Written.")),
		llmtest.Reply(llmtest.Text("Fresh answer.")),
	)
	r := startRun(t, srv, dir, "say hello")
	r.out.waitFor(t, "Hello.")
	r.typeKeys("write the notes\r")
	r.out.waitFor(t, "Do you want to proceed?")
	r.typeKeys("1") // allow once
	r.out.waitFor(t, "Written.")
	if _, err := os.Stat(filepath.Join(dir, "notes.txt")); err != nil {
		t.Fatal(err)
	}
	// Two lone Esc (the reader tells a lone Esc by the pause after it).
	r.typeKeys("\x1b")
	time.Sleep(150 * time.Millisecond)
	r.typeKeys("\x1b")
	r.out.waitFor(t, "Rewind")
	time.Sleep(150 * time.Millisecond) // or Esc and Enter read as Alt+Enter
	r.typeKeys("\r")
	r.out.waitFor(t, "Rewound to before “write the notes”; 1 file(s) restored")
	if _, err := os.Stat(filepath.Join(dir, "notes.txt")); err == nil {
		t.Error("notes.txt is still there after the rewind")
	}
	// The prompt is back in the input: edit it and send.
	r.typeKeys("\x15just say hi\r") // Ctrl-U clears the line first
	r.out.waitFor(t, "Fresh answer.")
	reqs := srv.Requests()
	last := reqs[len(reqs)-1]
	var texts []string
	for _, m := range last.Messages {
		texts = append(texts, llm.TextOf(m.Content))
	}
	got := strings.Join(texts, " | ")
	if strings.Contains(got, "write the notes") || !strings.Contains(got, "say hello") || !strings.Contains(got, "just say hi") {
		t.Errorf("the request after the rewind: %s", got)
	}
	r.quit()
}
