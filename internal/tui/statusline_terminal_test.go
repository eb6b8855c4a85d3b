package tui

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tackcode/tack/internal/llm"
	"github.com/tackcode/tack/internal/llm/llmtest"
)

// ccstatuslineSettings has ccstatusline show two lines of the widgets that
// read the status JSON: the model, the context and its fill, the cost, the
// output style, the version.
const ccstatuslineSettings = `{"version": 4, "colorLevel": 0, "lines": [
 [{"id":"1","type":"model"},{"id":"2","type":"separator"},{"id":"3","type":"context-length"},{"id":"4","type":"separator"},{"id":"5","type":"context-percentage"}],
 [{"id":"6","type":"session-cost"},{"id":"7","type":"separator"},{"id":"8","type":"output-style"},{"id":"9","type":"separator"},{"id":"10","type":"version"}],
 []]}`

// ccstatusline is the status line tool's script, installed by scripts/test.
func ccstatusline(t *testing.T) string {
	t.Helper()
	script, err := filepath.Abs(filepath.Join("..", "..", "test", "statusline", "node_modules", "ccstatusline", "dist", "ccstatusline.js"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(script); err != nil {
		t.Fatal("test/statusline/node_modules is missing: run scripts/test (it runs `npm ci --prefix test/statusline`)")
	}
	if _, err := exec.LookPath("node"); err != nil {
		t.Skip("node is not installed: ccstatusline runs on it")
	}
	return script
}

// The real tack, in a terminal, runs ccstatusline (the npm package written
// for Claude Code) as its statusLine command: both of its lines are shown,
// with the widgets it computes from the JSON, and the JSON tack sent (saved
// by tee) carries the transcript, the lines the Write added and the
// catalogue's model name.
func TestTerminalStatusLineRunsCcstatusline(t *testing.T) {
	requireTmux(t)
	script := ccstatusline(t)
	bin := buildTack(t)
	proj, home := t.TempDir(), t.TempDir()
	saved := filepath.Join(t.TempDir(), "status-in.json")
	srv := llmtest.New(t,
		llmtest.Reply(llmtest.Text("Writing it."), llmtest.ToolUse("Write", map[string]any{"file_path": filepath.Join(proj, "notes.txt"), "content": "one\ntwo\nthree\n"})),
		llmtest.Turn{Content: []llm.Block{llmtest.Text("Written.")}, Usage: &llm.Usage{InputTokens: 30, OutputTokens: 40, CacheReadInputTokens: 50_000}},
	)
	trustFolder(t, proj, home)
	writeFile(t, filepath.Join(home, ".config", "ccstatusline", "settings.json"), ccstatuslineSettings)
	settings, _ := json.Marshal(map[string]any{"statusLine": map[string]any{"type": "command", "padding": 1,
		"command": "tee " + saved + " | node " + script}})
	writeFile(t, filepath.Join(home, ".claude", "settings.json"), string(settings))

	s := startTmux(t, proj, terminalEnv(home, srv), bin+" --permission-mode acceptEdits")
	s.waitFor("/help for commands")
	s.text("write the notes")
	s.keys("Enter")
	s.waitFor("Written.")
	in := waitForStatusInput(t, saved)
	screen := strings.ReplaceAll(s.waitFor("Style:"), "\u00a0", " ")
	for _, want := range []string{" Model: Opus 5.5 | Ctx: 50.0k | Ctx Used: 5.0%", " Cost: $", "Style: default"} {
		if !strings.Contains(screen, want) {
			t.Errorf("the status lines lack %q:\n%s", want, screen)
		}
	}
	if p, _ := in["transcript_path"].(string); p == "" {
		t.Error("no transcript_path")
	} else if _, err := os.Stat(p); err != nil {
		t.Errorf("transcript_path: %v", err)
	}
	if name := field(in, "model.display_name"); name != "Opus 5.5" {
		t.Errorf("model.display_name = %v", name)
	}
	if ms, _ := field(in, "cost.total_duration_ms").(float64); ms <= 0 {
		t.Errorf("cost.total_duration_ms = %v", ms)
	}
}

// waitForStatusInput waits for the status command to have been given the
// state after the Write (3 lines added), and returns that JSON. The
// deadline only bounds a test that would otherwise hang.
func waitForStatusInput(t *testing.T, path string) map[string]any {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		var in map[string]any
		if data, err := os.ReadFile(path); err == nil && json.Unmarshal(data, &in) == nil && field(in, "cost.total_lines_added") == 3.0 && field(in, "context_window.current_usage.cache_read_input_tokens") == 50_000.0 {
			return in
		}
		if time.Now().After(deadline) {
			data, _ := os.ReadFile(path)
			t.Fatalf("the status command never got the state after the Write:\n%s", data)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}
