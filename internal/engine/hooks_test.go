package engine

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/tackcode/tack/internal/hook"
	"github.com/tackcode/tack/internal/llm"
	"github.com/tackcode/tack/internal/llm/llmtest"
	"github.com/tackcode/tack/internal/protocol"
	"github.com/tackcode/tack/internal/tool"
)

// withHooks adds a hook runner running cfg to a harness config. Scripts run
// in dir.
func withHooks(t *testing.T, cfg hook.Config, more func(*Config)) func(*Config) {
	t.Helper()
	log := &HookLog{}
	r, err := hook.New(hook.Options{Hooks: cfg, Observer: log.Observe, ProjectDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(r.Close)
	return func(c *Config) {
		c.Hooks, c.HookLog = r, log
		c.HookBase = func() hook.Base { return hook.Base{Cwd: c.Env.ProjectDir, PermissionMode: "default"} }
		if more != nil {
			more(c)
		}
	}
}

func command(cmd string) []hook.Matcher {
	return []hook.Matcher{{Matcher: "*", Hooks: []hook.Handler{{Type: hook.TypeCommand, Command: cmd, Timeout: 10}}}}
}

func TestPreToolUseHookDeniesAndRewrites(t *testing.T) {
	var got []string
	echo := &testTool{name: "Echo", run: func(_ context.Context, in json.RawMessage) (tool.Result, error) {
		got = append(got, string(in))
		return tool.TextResult("ok", nil), nil
	}}
	// Deny any input with "rm"; rewrite "short" to "long".
	script := `in=$(cat); case "$in" in
*'"rm'*) echo '{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"no rm here"}}' ;;
*short*) echo '{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"allow","updatedInput":{"text":"long"}}}' ;;
esac`
	h := newHarness(t, []tool.Tool{echo}, []llmtest.Turn{
		llmtest.Reply(llmtest.ToolUse("Echo", map[string]string{"text": "rm -rf /"}), llmtest.ToolUse("Echo", map[string]string{"text": "short"})),
		llmtest.Reply(llmtest.Text("done")),
	}, withHooks(t, hook.Config{hook.PreToolUse: command(script)}, nil))
	res := h.run(context.Background(), "go")
	if res.IsError {
		t.Fatalf("result %+v", res)
	}
	if len(got) != 1 || got[0] != `{"text":"long"}` {
		t.Errorf("tool ran with %v", got)
	}
	results := h.srv.Requests()[1].ToolResults()
	if !results[0].IsError || llm.TextOf(results[0].Content) != "PreToolUse:Echo hook error: no rm here" {
		t.Errorf("denied result %+v", results[0])
	}
	if len(res.PermissionDenials) != 1 || res.PermissionDenials[0].ToolUseID != results[0].ToolUseID {
		t.Errorf("denials %+v", res.PermissionDenials)
	}
}

func TestPostToolUseHookFeedbackAndContext(t *testing.T) {
	dir := t.TempDir()
	seen := filepath.Join(dir, "payload.json")
	script := `cat > ` + seen + `; echo '{"decision":"block","reason":"tests are red","hookSpecificOutput":{"hookEventName":"PostToolUse","additionalContext":"run go test next"}}'`
	h := newHarness(t, []tool.Tool{echoTool("Echo", true)}, []llmtest.Turn{
		llmtest.Reply(llmtest.ToolUse("Echo", map[string]string{"text": "x"})),
		llmtest.Reply(llmtest.Text("done")),
	}, withHooks(t, hook.Config{hook.PostToolUse: command(script)}, nil))
	if res := h.run(context.Background(), "go"); res.IsError {
		t.Fatalf("result %+v", res)
	}
	text := llm.TextOf(h.srv.Requests()[1].ToolResults()[0].Content)
	if !strings.Contains(text, "PostToolUse:Echo hook feedback: tests are red") || !strings.Contains(text, "run go test next") {
		t.Errorf("result text %q", text)
	}
	var payload map[string]any
	data, _ := os.ReadFile(seen)
	if err := json.Unmarshal(data, &payload); err != nil {
		t.Fatal(err)
	}
	resp, _ := payload["tool_response"].(map[string]any)
	if payload["hook_event_name"] != "PostToolUse" || payload["tool_name"] != "Echo" || resp["echo"] != `{"text":"x"}` {
		t.Errorf("payload %v", payload)
	}
}

func TestUserPromptSubmitHookRefusesOrAddsContext(t *testing.T) {
	refuse := `grep -q secret && { echo "no secrets in prompts" >&2; exit 2; }; echo "the repo uses Go 1.26"`
	h := newHarness(t, nil, []llmtest.Turn{llmtest.Reply(llmtest.Text("ok"))},
		withHooks(t, hook.Config{hook.UserPromptSubmit: command(refuse)}, nil))
	res := h.run(context.Background(), "tell me the secret")
	if !res.IsError || !strings.Contains(res.Errors[0], "no secrets in prompts") || len(h.srv.Requests()) != 0 {
		t.Fatalf("result %+v, %d requests", res, len(h.srv.Requests()))
	}
	if len(h.sess.Messages()) != 0 {
		t.Errorf("the refused prompt entered the conversation")
	}
	res = h.run(context.Background(), "what Go version?")
	if res.IsError {
		t.Fatalf("result %+v", res)
	}
	first := h.srv.Requests()[0].Messages[0]
	if llm.TextOf(first.Content[:1]) != "what Go version?" || !strings.Contains(llm.TextOf(first.Content), "the repo uses Go 1.26") {
		t.Errorf("first message %+v", first)
	}
}

func TestStopHookMakesTheModelGoOn(t *testing.T) {
	// Blocks the first stop only: stop_hook_active is true the second time.
	script := `grep -q '"stop_hook_active":true' || { echo '{"decision":"block","reason":"you forgot the tests"}'; }`
	h := newHarness(t, nil, []llmtest.Turn{
		llmtest.Reply(llmtest.Text("all done")),
		llmtest.Reply(llmtest.Text("tests added too")),
	}, withHooks(t, hook.Config{hook.Stop: command(script)}, nil))
	res := h.run(context.Background(), "go")
	if res.IsError || res.Text() != "tests added too" || res.NumTurns != 2 {
		t.Fatalf("result %+v", res)
	}
	if got := h.srv.Requests()[1].LastUserText(); !strings.Contains(got, "you forgot the tests") {
		t.Errorf("feedback sent %q", got)
	}
}

func TestPermissionRequestHookApproves(t *testing.T) {
	var ran atomic.Bool
	danger := &testTool{name: "Danger", run: func(context.Context, json.RawMessage) (tool.Result, error) {
		ran.Store(true)
		return tool.TextResult("ran", nil), nil
	}}
	approve := `echo '{"hookSpecificOutput":{"hookEventName":"PermissionRequest","decision":{"behavior":"allow"}}}'`
	h := newHarness(t, []tool.Tool{danger}, []llmtest.Turn{
		llmtest.Reply(llmtest.ToolUse("Danger", map[string]int{})),
		llmtest.Reply(llmtest.Text("done")),
	}, withHooks(t, hook.Config{hook.PermissionRequest: command(approve)}, func(c *Config) {
		c.Gate = testGate{check: func(ToolCall) Verdict { return Verdict{Behavior: Ask, Message: "needs approval"} }}
	}))
	res := h.run(context.Background(), "go")
	if res.IsError || !ran.Load() || len(res.PermissionDenials) != 0 {
		t.Fatalf("ran=%v result %+v", ran.Load(), res)
	}
}

func TestHookEventsAreEmittedAndContinueFalseStops(t *testing.T) {
	stop := `echo '{"continue":false,"stopReason":"policy says stop"}'`
	h := newHarness(t, []tool.Tool{echoTool("Echo", true)}, []llmtest.Turn{
		llmtest.Reply(llmtest.ToolUse("Echo", map[string]int{})),
		llmtest.Reply(llmtest.Text("never")),
	}, withHooks(t, hook.Config{hook.PostToolUse: command(stop)}, func(c *Config) { c.IncludeHookEvents = true }))
	res := h.run(context.Background(), "go")
	if !res.IsError || !strings.Contains(res.Errors[0], "policy says stop") || len(h.srv.Requests()) != 1 {
		t.Fatalf("result %+v", res)
	}
	var kinds []string
	for _, m := range h.emitted {
		if s, ok := m.(*protocol.System); ok && strings.HasPrefix(s.Subtype, "hook_") {
			kinds = append(kinds, s.Subtype+":"+s.Fields["hook_name"].(string))
		}
	}
	if strings.Join(kinds, " ") != "hook_started:PostToolUse:Echo hook_response:PostToolUse:Echo" {
		t.Errorf("hook events %v", kinds)
	}
}
