package tui

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tackcode/tack/internal/llm/llmtest"
)

// TestRejectedPermissionEndsTheTurn: Esc in the permission dialog ends the
// turn at the call — no further request — and gives the prompt back; the
// next prompt's request carries the denial. A "No" with a message instead
// lets the model go on with what the user said.
func TestRejectedPermissionEndsTheTurn(t *testing.T) {
	dir := t.TempDir()
	write := func(name string) llmtest.Turn {
		return llmtest.Reply(llmtest.ToolUse("Write", map[string]any{"file_path": filepath.Join(dir, name), "content": "x\n"}))
	}
	srv := llmtest.New(t, write("a.txt"))
	r := startRun(t, srv, dir, "write a.txt")
	r.out.waitFor(t, "Do you want to proceed?")
	r.typeKeys("\x1b") // Esc: No
	r.out.waitFor(t, "Interrupted · what should tack do instead?")
	if n := len(srv.Requests()); n != 1 {
		t.Fatalf("%d requests after the rejection, want 1 (the turn should end at the call)", n)
	}

	// The prompt is back: the next one is sent, after the denial.
	srv.Append(write("b.txt"), llmtest.Reply(llmtest.Text("Done as you said.")))
	r.typeKeys("try b.txt then\r")
	r.out.waitFor(t, "Create file b.txt")
	r.typeKeys("3")
	r.typeKeys("use c.txt instead\r")
	r.out.waitFor(t, "Done as you said.")
	reqs := srv.Requests()
	if len(reqs) != 3 {
		t.Fatalf("%d requests, want 3", len(reqs))
	}
	if text := jsonText(t, reqs[1].Messages); !strings.Contains(text, "The user stopped the turn here") || !strings.Contains(text, "try b.txt then") {
		t.Errorf("the second request lacks the first denial or the new prompt:\n%s", text)
	}
	if res := reqs[2].ToolResults(); len(res) != 1 || !strings.Contains(jsonText(t, res), "use c.txt instead") {
		t.Errorf("the model was not told what the user said: %s", jsonText(t, res))
	}
	r.quit()
}

// jsonText is v as JSON, to look for what the model was sent.
func jsonText(t *testing.T, v any) string {
	t.Helper()
	data, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}
