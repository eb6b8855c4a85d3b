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
	h.m.addDirs = []string{dir, "/other"} // as init lists them: the working directory first
	h.be.info.PromptID, h.be.info.Effort, h.be.info.Thinking = "p1", "medium", true

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
		"exceeds_200k_tokens":             true,
		"prompt_id":                       "p1",
		"effort.level":                    "medium",
		"thinking.enabled":                true,
		"fast_mode":                       false,
		"prompt_cache.requests":           1.0,
		"prompt_cache.cache_write_tokens": 200_000.0,
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
	// No prompt yet, no request yet, a model without effort: the keys
	// Claude Code leaves out; thinking off, fast mode off.
	for _, k := range []string{"prompt_id", "prompt_cache", "effort"} {
		if v, ok := in[k]; ok {
			t.Errorf("%s = %v, want it left out", k, v)
		}
	}
	if v, ok := field(in, "thinking.enabled").(bool); !ok || v {
		t.Errorf("thinking.enabled = %v", field(in, "thinking.enabled"))
	}
	if v, ok := in["fast_mode"].(bool); !ok || v {
		t.Errorf("fast_mode = %v", in["fast_mode"])
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

// prompt_cache follows the main thread's requests as Claude Code's does:
// a first write is cold, a request reading the shared prefix is a hit, one
// that reads far less of it than the last request held is a miss, unless a
// drop was expected (a compaction) within the cache's lifetime; a
// subagent's requests and the other blocks of one API message count for
// nothing; warmth and expiry come from the last request's time and TTL.
func TestStatusLinePromptCache(t *testing.T) {
	h := newHarness(t)
	saved := filepath.Join(h.m.cfg.cwd, "status.json")
	h.be.settings.StatusLine = &agent.StatusLineSettings{Type: "command", Command: "cat > status.json"}
	request := func(id string, input, read, written int64, ttl1h bool) *agent.AssistantMessage {
		msg := assistant(agent.TextBlock("x"))
		msg.Message.ID = id
		msg.Message.Usage = agent.Usage{InputTokens: input, CacheReadInputTokens: read, CacheCreationInputTokens: written}
		if ttl1h {
			msg.Message.Usage.CacheCreation = &agent.CacheCreation{Ephemeral1h: written}
		}
		return msg
	}
	status := func() map[string]any {
		t.Helper()
		h.run(h.m.refreshStatusLine())
		pc, _ := readStatusInput(t, saved)["prompt_cache"].(map[string]any)
		if pc == nil {
			t.Fatal("no prompt_cache")
		}
		return pc
	}
	check := func(step string, pc map[string]any, want map[string]any) {
		t.Helper()
		for k, v := range want {
			if got := pc[k]; got != v {
				t.Errorf("%s: prompt_cache.%s = %v (%T), want %v", step, k, got, got, v)
			}
		}
	}

	start := h.clock
	h.send(engineMsg{msg: request("m1", 100, 0, 10_000, true)})
	h.send(engineMsg{msg: request("m1", 100, 0, 10_000, true)}) // the same API message again
	sub := request("m-sub", 50, 0, 90_000, false)
	parent := "toolu_1"
	sub.ParentToolUseID = &parent
	h.send(engineMsg{msg: sub})
	check("first write", status(), map[string]any{
		"requests": 1.0, "misses": 0.0, "warm": true, "caching_observed": true, "ttl": "1h",
		"cache_write_tokens": 10_000.0, "hit_ratio": 0.0, "recache_tokens_if_cold": 10_100.0,
		"expires_at": float64(start.Add(time.Hour).Unix()), "last_miss_at": nil, "last_miss_cause": nil,
	})
	if mc, ok := status()["miss_causes"].(map[string]any); !ok || len(mc) != 0 {
		t.Errorf("miss_causes = %v, want {}", status()["miss_causes"])
	}

	h.clock = start.Add(time.Minute)
	h.send(engineMsg{msg: request("m2", 50, 10_000, 500, true)})
	check("hit", status(), map[string]any{"requests": 2.0, "misses": 0.0, "ttl": "1h",
		"hit_ratio": 10_000.0 / 20_650.0, "cache_write_tokens": 10_500.0,
		"expires_at": float64(start.Add(61 * time.Minute).Unix())})

	h.clock = start.Add(2 * time.Minute)
	missAt := h.clock
	h.send(engineMsg{msg: request("m3", 50, 0, 10_600, true)})
	check("miss", status(), map[string]any{"requests": 3.0, "misses": 1.0, "expected_rebuilds": 0.0,
		"miss_recache_tokens": 10_600.0, "last_miss_at": float64(missAt.Unix())})

	h.send(engineMsg{msg: &agent.SystemMessage{Subtype: "compact_boundary"}})
	check("drop expected", status(), map[string]any{"recache_tokens_if_cold": nil})
	h.clock = start.Add(3 * time.Minute)
	h.send(engineMsg{msg: request("m4", 3000, 0, 2000, true)})
	check("expected rebuild", status(), map[string]any{"requests": 4.0, "misses": 1.0, "expected_rebuilds": 1.0,
		"recache_tokens_if_cold": 5000.0})

	h.clock = start.Add(3*time.Minute + time.Hour)
	check("idle past the TTL", status(), map[string]any{"warm": false})
}
