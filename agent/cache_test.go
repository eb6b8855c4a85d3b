package agent_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/tackcode/tack/agent"
	"github.com/tackcode/tack/internal/llm"
	"github.com/tackcode/tack/internal/llm/llmtest"
)

// canonicalPrefix serialises a request in the order the API caches it —
// tools, then system, then messages — without cache_control markers, and
// returns the bytes and the offset just after each breakpoint block.
func canonicalPrefix(t *testing.T, r llmtest.Request) (data []byte, breakEnds []int) {
	t.Helper()
	var buf bytes.Buffer
	write := func(v any) {
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		buf.Write(b)
		buf.WriteByte('\n')
	}
	for _, raw := range r.Tools {
		var m map[string]any
		json.Unmarshal(raw, &m)
		_, marked := m["cache_control"]
		delete(m, "cache_control")
		write(m)
		if marked {
			breakEnds = append(breakEnds, buf.Len())
		}
	}
	block := func(b llm.Block) {
		marked := b.CacheControl != nil
		b.CacheControl = nil
		for i := range b.Content {
			if b.Content[i].CacheControl != nil {
				marked = true
				b.Content[i].CacheControl = nil
			}
		}
		write(b)
		if marked {
			breakEnds = append(breakEnds, buf.Len())
		}
	}
	for _, b := range r.System {
		block(b)
	}
	for _, m := range r.Messages {
		write(string(m.Role))
		for _, b := range m.Content {
			block(b)
		}
	}
	return buf.Bytes(), breakEnds
}

// TestPromptCacheStaysWarm runs a 10-turn session with tools and checks
// that every request re-sends, unchanged, what the previous request put in
// the cache, with at most 4 breakpoints; and that the cost is the
// catalogue's prices applied to the usage the API reported.
func TestPromptCacheStaysWarm(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "main.go"), []byte("package main\n\nfunc main() {}\n"), 0o644)
	var turns []llmtest.Turn
	for i := 0; i < 9; i++ {
		var b llm.Block
		switch i % 3 {
		case 0:
			b = llmtest.ToolUse("Read", map[string]any{"file_path": filepath.Join(dir, "main.go"), "limit": 10 + i})
		case 1:
			b = llmtest.ToolUse("Bash", map[string]any{"command": fmt.Sprintf("echo step %d", i)})
		case 2:
			b = llmtest.ToolUse("Grep", map[string]any{"pattern": "func", "path": dir})
		}
		turns = append(turns, llmtest.Turn{Content: []llm.Block{llmtest.Text(fmt.Sprintf("step %d", i)), b},
			Usage: &llm.Usage{InputTokens: 50, CacheCreationInputTokens: 300, CacheReadInputTokens: int64(5000 + 300*i), OutputTokens: 40}})
	}
	turns = append(turns, llmtest.Turn{Content: []llm.Block{llmtest.Text("done")},
		Usage: &llm.Usage{InputTokens: 10, CacheReadInputTokens: 8000, OutputTokens: 5}})
	srv := llmtest.New(t, turns...)
	opts := testOptions(t, srv)
	opts.Cwd = dir
	opts.Model = "sonnet"
	opts.PermissionMode = agent.PermissionBypass
	msgs := collect(t, context.Background(), "walk through the project", opts)
	res := msgs[len(msgs)-1].(*agent.ResultMessage)
	if res.IsError || res.NumTurns != 10 {
		t.Fatalf("result %+v", res)
	}

	reqs := srv.Requests()
	var same, total int
	for i, r := range reqs {
		if n := r.CacheBreakpoints(); n > 4 || n < 2 {
			t.Errorf("request %d has %d breakpoints", i, n)
		}
		if i == 0 {
			continue
		}
		prev, prevEnds := canonicalPrefix(t, reqs[i-1])
		cur, _ := canonicalPrefix(t, r)
		cached := prev[:prevEnds[len(prevEnds)-1]] // what the previous request cached
		n := 0
		for n < len(cached) && n < len(cur) && cached[n] == cur[n] {
			n++
		}
		same += n
		total += len(cached)
		if n != len(cached) {
			t.Errorf("request %d changes the cached prefix of request %d at byte %d of %d", i, i-1, n, len(cached))
		}
	}
	share := float64(same) / float64(total)
	t.Logf("cached-prefix bytes re-sent unchanged: %.2f%% (%d of %d)", 100*share, same, total)
	if share < 0.99 {
		t.Errorf("only %.2f%% of the cached prefix is re-sent unchanged", 100*share)
	}

	// Sonnet 5.5: $2 in, $10 out, $2.50 cache write (5 min), $0.20 cache read, per million.
	var want float64
	for _, turn := range turns {
		u := turn.Usage
		want += (float64(u.InputTokens)*2 + float64(u.OutputTokens)*10 + float64(u.CacheCreationInputTokens)*2.5 + float64(u.CacheReadInputTokens)*0.2) / 1e6
	}
	if math.Abs(res.TotalCostUSD-want) > 1e-9 {
		t.Errorf("cost %v, want %v", res.TotalCostUSD, want)
	}
	mu := res.ModelUsage["claude-sonnet-5-5"]
	if mu.CacheReadInputTokens != res.Usage.CacheReadInputTokens || mu.CacheCreationInputTokens != 2700 || res.Usage.CacheReadInputTokens == 0 {
		t.Errorf("usage %+v / %+v", res.Usage, mu)
	}
}
