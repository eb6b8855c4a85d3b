package tui

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tackcode/tack/agent"
	"github.com/tackcode/tack/internal/diff"
)

// readStatusInput reads what the status command saved of its stdin.
func readStatusInput(t *testing.T, path string) map[string]any {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var in map[string]any
	if err := json.Unmarshal(data, &in); err != nil {
		t.Fatalf("status JSON %s: %v", data, err)
	}
	return in
}

func field(in map[string]any, path string) any {
	var v any = in
	for _, k := range strings.Split(path, ".") {
		obj, _ := v.(map[string]any)
		v = obj[k]
	}
	return v
}

// The status command gets Claude Code's fields, computed from the session:
// the transcript, the catalogue's model name, the time since start, the
// lines the edits changed, the context window's fill; it prints two lines,
// both shown, moved right by the padding.
func TestStatusLineInputAndLines(t *testing.T) {
	h := newHarness(t)
	dir := h.m.cfg.cwd
	saved := filepath.Join(dir, "status.json")
	h.be.info.TranscriptPath = "/sessions/s1.jsonl"
	h.be.info.OutputStyle = "Explanatory"
	h.be.settings.StatusLine = &agent.StatusLineSettings{Type: "command", Padding: 2,
		Command: "cat > status.json; printf 'first line\\nsecond line\\n'"}
	h.m.addDirs = []string{"/other"}

	msg := assistant(agent.TextBlock("done"))
	msg.Message.Usage = agent.Usage{InputTokens: 30, OutputTokens: 40, CacheCreationInputTokens: 200_000, CacheReadInputTokens: 50_000}
	h.clock = h.clock.Add(6500 * time.Millisecond)
	h.send(engineMsg{msg: msg})
	h.send(engineMsg{msg: toolResult("t1", "ok", false, map[string]any{"structuredPatch": diff.Patch("a\nold\nb\n", "a\nnew\nnewer\nb\n")})})
	h.send(engineMsg{msg: toolResult("t2", "ok", false, map[string]any{"type": "create", "content": "x\ny\nz\n", "structuredPatch": []any{}})})
	h.send(engineMsg{msg: toolResult("t3", "failed", true, map[string]any{"structuredPatch": diff.Patch("a\n", "b\n")})})
	h.send(engineMsg{msg: result(0.25)})

	in := readStatusInput(t, saved)
	want := map[string]any{
		"session_id":                                 "s1",
		"transcript_path":                            "/sessions/s1.jsonl",
		"cwd":                                        dir,
		"model.id":                                   "claude-opus-5-5",
		"model.display_name":                         "Opus 5.5",
		"workspace.current_dir":                      dir,
		"workspace.project_dir":                      dir,
		"output_style.name":                          "Explanatory",
		"cost.total_cost_usd":                        0.25,
		"cost.total_duration_ms":                     6500.0,
		"cost.total_lines_added":                     5.0,
		"cost.total_lines_removed":                   1.0,
		"context_window.context_window_size":         1_000_000.0,
		"context_window.total_input_tokens":          100.0,
		"context_window.total_output_tokens":         20.0,
		"context_window.used_percentage":             25.0,
		"context_window.remaining_percentage":        75.0,
		"context_window.current_usage.input_tokens":  30.0,
		"context_window.current_usage.output_tokens": 40.0,
		"context_window.current_usage.cache_creation_input_tokens": 200_000.0,
		"context_window.current_usage.cache_read_input_tokens":     50_000.0,
		"exceeds_200k_tokens": true,
	}
	for k, v := range want {
		if got := field(in, k); got != v {
			t.Errorf("%s = %v (%T), want %v", k, got, got, v)
		}
	}
	if dirs, _ := field(in, "workspace.added_dirs").([]any); len(dirs) != 1 || dirs[0] != "/other" {
		t.Errorf("added_dirs = %v", field(in, "workspace.added_dirs"))
	}
	if v, _ := field(in, "version").(string); v == "" {
		t.Error("no version")
	}
	if _, ok := in["vim"]; ok {
		t.Error("vim sent while vim mode is off")
	}
	v := h.view()
	if !strings.Contains(v, "\n  first line\n  second line") {
		t.Errorf("both lines, padded, not shown:\n%s", v)
	}

	h.m.toggleVim()
	h.run(h.m.refreshStatusLine())
	if got := field(readStatusInput(t, saved), "vim.mode"); got != "INSERT" {
		t.Errorf("vim.mode = %v", got)
	}
}

// Before the first request the context fields are null, as in Claude
// Code, and the size is the model's window.
func TestStatusLineInputBeforeAnyRequest(t *testing.T) {
	h := newHarness(t)
	saved := filepath.Join(h.m.cfg.cwd, "status.json")
	h.be.settings.StatusLine = &agent.StatusLineSettings{Type: "command", Command: "cat > status.json"}
	h.run(h.m.refreshStatusLine())
	in := readStatusInput(t, saved)
	cw, _ := in["context_window"].(map[string]any)
	for _, k := range []string{"current_usage", "used_percentage", "remaining_percentage"} {
		if v, ok := cw[k]; !ok || v != nil {
			t.Errorf("context_window.%s = %v (present %v), want null", k, v, ok)
		}
	}
	if got := field(in, "context_window.context_window_size"); got != 1_000_000.0 {
		t.Errorf("context_window_size = %v", got)
	}
}

// A refresh that comes while the command runs is not lost: the command
// runs once more, on the new state, when the first run ends.
func TestStatusLineRefreshWhileRunningRunsAgain(t *testing.T) {
	h := newHarness(t)
	h.be.settings.StatusLine = &agent.StatusLineSettings{Type: "command", Command: `jq -r .model.id`}
	first := h.m.refreshStatusLine()
	h.m.modelID = "claude-haiku-4-5"
	if again := h.m.refreshStatusLine(); again != nil {
		t.Fatal("a second run started while the first one runs")
	}
	h.run(first)
	if v := h.view(); !strings.Contains(v, "claude-haiku-4-5") {
		t.Errorf("the status line does not show the last state:\n%s", v)
	}
}
