package main

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tackcode/tack/internal/llm"
	"github.com/tackcode/tack/internal/llm/llmtest"
)

// End-to-end runs on an OpenAI-compatible provider configured in the
// settings: the fake serves /v1/chat/completions from the same script and
// checks the bearer key.

const chatKey = "sk-local-test"

// newProviderEnv is an env whose user settings configure the provider
// "local" (model qwen: tools, no images, priced) at the fake, with the key
// in LOCAL_KEY and no Anthropic credentials unless anthropicKey.
func newProviderEnv(t *testing.T, anthropicKey bool, turns ...llmtest.Turn) *env {
	t.Helper()
	e := &env{t: t, srv: llmtest.Start(t, llmtest.Options{ChatKey: chatKey, Turns: turns}), dir: t.TempDir(), home: t.TempDir()}
	settings := `{"providers": {"local": {"type": "openai", "baseURL": "` + e.srv.URL() + `/v1", "apiKeyEnv": "LOCAL_KEY",
		"models": {"qwen": {"contextWindow": 32768, "maxOutputTokens": 4096, "inputPrice": 2, "outputPrice": 8, "cacheReadPrice": 0.5}}}}}`
	if err := os.MkdirAll(filepath.Join(e.home, ".claude"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(e.home, ".claude", "settings.json"), []byte(settings), 0o644); err != nil {
		t.Fatal(err)
	}
	e.extra = []string{"LOCAL_KEY=" + chatKey}
	if !anthropicKey {
		e.extra = append(e.extra, "ANTHROPIC_API_KEY=")
	}
	return e
}

type printResult struct {
	Result     string `json:"result"`
	IsError    bool   `json:"is_error"`
	ModelUsage map[string]struct {
		InputTokens          int64   `json:"inputTokens"`
		CacheReadInputTokens int64   `json:"cacheReadInputTokens"`
		CostUSD              float64 `json:"costUSD"`
		ContextWindow        int     `json:"contextWindow"`
	} `json:"modelUsage"`
	TotalCostUSD float64 `json:"total_cost_usd"`
}

func TestProviderTextTurnCostsTheConfiguredPrices(t *testing.T) {
	e := newProviderEnv(t, false, llmtest.Turn{Content: []llm.Block{llmtest.Text("hello from qwen")},
		Usage: &llm.Usage{InputTokens: 1000, CacheReadInputTokens: 2000, OutputTokens: 500}})
	out, errOut := e.run("-p", "say hi", "--model", "local/qwen", "--output-format", "json")
	if e.status != 0 {
		t.Fatalf("exit %d\n%s\n%s", e.status, out, errOut)
	}
	var res printResult
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	// 1000 input at $2, 2000 cached at $0.5, 500 output at $8 per MTok.
	const want = (1000*2 + 2000*0.5 + 500*8) / 1e6
	if res.Result != "hello from qwen" || math.Abs(res.TotalCostUSD-want) > 1e-12 {
		t.Errorf("result %q cost %v, want cost %v", res.Result, res.TotalCostUSD, want)
	}
	if u := res.ModelUsage["local/qwen"]; u.InputTokens != 1000 || u.CacheReadInputTokens != 2000 || u.ContextWindow != 32768 {
		t.Errorf("modelUsage %+v", res.ModelUsage)
	}
	reqs := e.srv.Requests()
	if len(reqs) != 1 || reqs[0].Path != "/v1/chat/completions" || reqs[0].Model != "qwen" || reqs[0].MaxTokens <= 0 || reqs[0].MaxTokens > 4096 {
		t.Fatalf("requests: %d, first %s model %q max_tokens %d", len(reqs), reqs[0].Path, reqs[0].Model, reqs[0].MaxTokens)
	}
	if !strings.Contains(reqs[0].SystemText(), "tack") && reqs[0].SystemText() == "" {
		t.Errorf("no system prompt sent")
	}
}

func TestProviderParallelToolCallsRoundTrip(t *testing.T) {
	e := newProviderEnv(t, false,
		llmtest.Reply(llmtest.Text("Running both."),
			llmtest.ToolUse("Bash", map[string]any{"command": "echo first-output", "description": "one"}),
			llmtest.ToolUse("Bash", map[string]any{"command": "echo second-output", "description": "two"})),
		llmtest.Reply(llmtest.Text("both ran")))
	out, errOut := e.run("-p", "run two commands", "--model", "local/qwen", "--dangerously-skip-permissions",
		"--output-format", "stream-json", "--verbose", "--include-partial-messages")
	if e.status != 0 {
		t.Fatalf("exit %d\n%s\n%s", e.status, out, errOut)
	}
	reqs := e.srv.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d requests, want 2", len(reqs))
	}
	ids := reqs[0].ToolUseIDs()
	for i, want := range []string{"first-output", "second-output"} {
		r, ok := reqs[1].ToolResult(ids[i])
		if !ok || !strings.Contains(llm.TextOf(r.Content), want) {
			t.Errorf("tool call %d (%s): result %+v, want %q", i, ids[i], r, want)
		}
	}
	// stream-json shows the provider's answer as Messages API events.
	var deltas, toolStarts int
	var result string
	for _, m := range lines(t, out) {
		if m["type"] == "result" {
			result, _ = m["result"].(string)
		}
		ev, _ := m["event"].(map[string]any)
		if m["type"] != "stream_event" || ev == nil {
			continue
		}
		if d, _ := ev["delta"].(map[string]any); ev["type"] == "content_block_delta" && d["type"] == "text_delta" {
			deltas++
		}
		if cb, _ := ev["content_block"].(map[string]any); ev["type"] == "content_block_start" && cb["type"] == "tool_use" {
			toolStarts++
		}
	}
	if result != "both ran" || deltas < 2 || toolStarts != 2 {
		t.Errorf("result %q, %d text deltas, %d tool_use starts in stream-json", result, deltas, toolStarts)
	}
}

func TestProviderRetriesRateLimit(t *testing.T) {
	e := newProviderEnv(t, false, llmtest.Turn{Content: []llm.Block{llmtest.Text("after the wait")},
		Faults: []llmtest.Fault{{Status: 429, RetryAfter: "0"}}})
	out, errOut := e.run("-p", "hi", "--model", "local/qwen")
	if e.status != 0 || strings.TrimSpace(out) != "after the wait" {
		t.Fatalf("exit %d\n%s\n%s", e.status, out, errOut)
	}
	if reqs := e.srv.Requests(); len(reqs) != 2 || reqs[0].Fault == nil || reqs[0].Fault.Status != 429 {
		t.Errorf("%d requests, want the 429 then the success", len(reqs))
	}
}

func TestProviderRefusesImagesTheModelCannotTake(t *testing.T) {
	e := newProviderEnv(t, false)
	e.stdin = `{"type":"user","message":{"role":"user","content":[{"type":"text","text":"what is this?"},` +
		`{"type":"image","source":{"type":"base64","media_type":"image/png","data":"iVBORw0KGgo="}}]}}` + "\n"
	out, errOut := e.run("-p", "--model", "local/qwen", "--input-format", "stream-json", "--output-format", "stream-json", "--verbose")
	all := out + errOut
	if e.status == 0 || !strings.Contains(all, `provider \"local\" model \"qwen\" does not take images`) &&
		!strings.Contains(all, `provider "local" model "qwen" does not take images`) {
		t.Fatalf("exit %d, want an error naming the provider, model and images\n%s\n%s", e.status, out, errOut)
	}
	if n := len(e.srv.Requests()); n != 0 {
		t.Errorf("%d requests reached the server", n)
	}
}

// The main thread runs on the Anthropic API, its subagent on the provider.
func TestSubagentRunsOnAnotherProvider(t *testing.T) {
	onMessages := func(r *llmtest.Request) bool { return r.Path == "/v1/messages" }
	e := newProviderEnv(t, true,
		llmtest.Turn{When: func(r *llmtest.Request) bool { return onMessages(r) && len(r.ToolResults()) == 0 },
			Content: []llm.Block{llmtest.ToolUse("Agent", map[string]any{"subagent_type": "local-helper", "description": "a task", "prompt": "CHILD: count"})}},
		llmtest.Turn{When: func(r *llmtest.Request) bool { return !onMessages(r) }, Content: []llm.Block{llmtest.Text("counted to three")},
			Usage: &llm.Usage{InputTokens: 100, OutputTokens: 10}},
		llmtest.Turn{When: func(r *llmtest.Request) bool { return onMessages(r) && len(r.ToolResults()) == 1 },
			Content: []llm.Block{llmtest.Text("the helper counted")}})
	out, errOut := e.run("-p", "delegate", "--model", "haiku", "--output-format", "json",
		"--agents", `{"local-helper": {"description": "Counts", "prompt": "You count.", "model": "local/qwen"}}`)
	if e.status != 0 {
		t.Fatalf("exit %d\n%s\n%s", e.status, out, errOut)
	}
	var res printResult
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	var chat, messages int
	for _, r := range e.srv.Requests() {
		switch r.Path {
		case "/v1/chat/completions":
			chat++
			if r.Model != "qwen" || !strings.Contains(r.LastUserText(), "CHILD: count") {
				t.Errorf("the subagent's request: model %q, last user text %q", r.Model, r.LastUserText())
			}
		case "/v1/messages":
			messages++
		}
	}
	if res.Result != "the helper counted" || chat != 1 || messages != 2 {
		t.Errorf("result %q: %d chat and %d messages requests, want 1 and 2", res.Result, chat, messages)
	}
	if u, ok := res.ModelUsage["local/qwen"]; !ok || u.CostUSD != (100*2+10*8)/1e6 {
		t.Errorf("modelUsage %+v: want the subagent's local/qwen at the configured prices", res.ModelUsage)
	}
}

func TestProviderSettingsErrorsNameTheFileAndKey(t *testing.T) {
	e := newProviderEnv(t, false)
	bad := `{"providers": {"local": {"type": "openai", "baseURL": "127.0.0.1:8080",
		"models": {"qwen": {"contextWindow": 1000}}}}}`
	path := filepath.Join(e.home, ".claude", "settings.json")
	if err := os.WriteFile(path, []byte(bad), 0o644); err != nil {
		t.Fatal(err)
	}
	_, errOut := e.run("-p", "hi", "--model", "local/qwen")
	if e.status == 0 || !strings.Contains(errOut, path) || !strings.Contains(errOut, "providers.local.baseURL") {
		t.Errorf("exit %d, want an error naming %s and providers.local.baseURL:\n%s", e.status, path, errOut)
	}
}
