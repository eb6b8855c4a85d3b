package agent_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tackcode/tack/agent"
	"github.com/tackcode/tack/internal/llm"
	"github.com/tackcode/tack/internal/llm/llmtest"
)

// The scenarios the Agent SDK interop tests (test/sdk) run against the tack
// binary, here through the Go SDK in-process. Those covered elsewhere in
// this package: a single turn (ExampleQuery), CanUseTool denying
// (TestCanUseToolDecides), a hook callback (TestHookCallbacks), an
// in-process MCP tool (TestGoToolsAndTypedMCPServers), two turns of
// streaming input (TestClientRunsQueuedPromptsInOneConversation), SetModel
// (TestClientSetModelAndMode), structured output
// (TestStructuredOutputIsValidatedAndReturned).

func TestScenarioBashRoundTrip(t *testing.T) {
	srv := llmtest.New(t,
		llmtest.Reply(llmtest.ToolUse("Bash", map[string]string{"command": "echo made > made.txt && cat made.txt"})),
		llmtest.Reply(llmtest.Text("made it")))
	opts := testOptions(t, srv)
	opts.PermissionMode = agent.PermissionBypass
	msgs := collect(t, context.Background(), "make a file", opts)
	if r := msgs[len(msgs)-1].(*agent.ResultMessage); r.Text() != "made it" || r.NumTurns != 2 {
		t.Fatalf("result %+v", r)
	}
	if data, err := os.ReadFile(filepath.Join(opts.Cwd, "made.txt")); err != nil || string(data) != "made\n" {
		t.Errorf("made.txt %q %v", data, err)
	}
	if res := srv.Requests()[1].ToolResults(); len(res) != 1 || res[0].IsError || !strings.Contains(llm.TextOf(res[0].Content), "made") {
		t.Errorf("tool result %+v", res)
	}
}

func TestScenarioResumeBySessionID(t *testing.T) {
	srv := llmtest.New(t, llmtest.Reply(llmtest.Text("noted: PELICAN")), llmtest.Reply(llmtest.Text("PELICAN")))
	opts := testOptions(t, srv)
	msgs := collect(t, context.Background(), "remember PELICAN", opts)
	id := msgs[len(msgs)-1].(*agent.ResultMessage).SessionID
	again := opts
	again.Resume = id
	msgs = collect(t, context.Background(), "which word?", again)
	if r := msgs[len(msgs)-1].(*agent.ResultMessage); r.SessionID != id || r.Text() != "PELICAN" {
		t.Errorf("resumed result %+v", r)
	}
	if body := string(srv.Requests()[1].Body); !strings.Contains(body, "remember PELICAN") {
		t.Error("the resumed request lacks the first turn")
	}
}

func TestScenarioPartialMessages(t *testing.T) {
	srv := llmtest.New(t, llmtest.Reply(llmtest.Text("streamed text")))
	opts := testOptions(t, srv)
	opts.IncludePartialMessages = true
	var deltas strings.Builder
	for _, m := range collect(t, context.Background(), "stream", opts) {
		if e, ok := m.(*agent.StreamEvent); ok {
			var ev struct {
				Type  string `json:"type"`
				Delta struct {
					Text string `json:"text"`
				} `json:"delta"`
			}
			json.Unmarshal(e.Event, &ev)
			if ev.Type == "content_block_delta" {
				deltas.WriteString(ev.Delta.Text)
			}
		}
	}
	if deltas.String() != "streamed text" {
		t.Errorf("the text deltas make %q", deltas.String())
	}
}

func TestScenarioInterruptStopsALongBashPromptly(t *testing.T) {
	srv := llmtest.New(t,
		llmtest.Reply(llmtest.ToolUse("Bash", map[string]string{"command": "sleep 120"})),
		llmtest.Reply(llmtest.Text("still usable")))
	opts := testOptions(t, srv)
	opts.PermissionMode = agent.PermissionBypass
	c, err := agent.NewClient(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := c.Send("wait"); err != nil {
		t.Fatal(err)
	}
	for m, err := range c.ReceiveResponse() {
		if err != nil {
			t.Fatal(err)
		}
		if a, ok := m.(*agent.AssistantMessage); ok && a.Message.Content[0].Type == llm.TypeToolUse {
			c.Interrupt()
		}
		// The command was stopped, not waited for: the run ends aborted
		// while it would still be sleeping.
		if r, ok := m.(*agent.ResultMessage); ok && (!r.IsError || r.TerminalReason != "aborted_tools") {
			t.Errorf("interrupted result %+v", r)
		}
	}
	if err := c.Send("are you there?"); err != nil {
		t.Fatal(err)
	}
	for m, err := range c.ReceiveResponse() {
		if err != nil {
			t.Fatal(err)
		}
		if r, ok := m.(*agent.ResultMessage); ok && r.Text() != "still usable" {
			t.Errorf("after the interrupt: %+v", r)
		}
	}
}

func TestScenarioMaxTurns(t *testing.T) {
	srv := llmtest.New(t,
		llmtest.Reply(llmtest.ToolUse("Bash", map[string]string{"command": "echo again"})),
		llmtest.Reply(llmtest.ToolUse("Bash", map[string]string{"command": "echo again"})))
	opts := testOptions(t, srv)
	opts.PermissionMode = agent.PermissionBypass
	opts.MaxTurns = 1
	msgs := collect(t, context.Background(), "loop", opts)
	r := msgs[len(msgs)-1].(*agent.ResultMessage)
	if r.Subtype != "error_max_turns" || !r.IsError || len(srv.Requests()) != 1 {
		t.Errorf("result %+v after %d requests", r, len(srv.Requests()))
	}
}

func TestScenarioHookThatDenies(t *testing.T) {
	srv := llmtest.New(t,
		llmtest.Reply(llmtest.ToolUse("Bash", map[string]string{"command": "rm -rf build"})),
		llmtest.Reply(llmtest.Text("could not")))
	opts := testOptions(t, srv)
	opts.PermissionMode = agent.PermissionBypass
	var saw string
	opts.Hooks = map[agent.HookEvent][]agent.HookMatcher{agent.HookPreToolUse: {{Matcher: "Bash", Hooks: []agent.HookCallback{
		func(_ context.Context, in agent.HookInput, _ json.RawMessage) (*agent.HookOutput, error) {
			var args struct{ Command string }
			json.Unmarshal(in.(*agent.PreToolUseHookInput).ToolInput, &args)
			saw = args.Command
			return &agent.HookOutput{HookSpecificOutput: &agent.HookSpecificOutput{HookEventName: agent.HookPreToolUse,
				PermissionDecision: "deny", PermissionDecisionReason: "no deleting in this repo"}}, nil
		}}}}}
	if err := os.Mkdir(filepath.Join(opts.Cwd, "build"), 0o755); err != nil {
		t.Fatal(err)
	}
	msgs := collect(t, context.Background(), "clean up", opts)
	if saw != "rm -rf build" {
		t.Errorf("the hook saw %q", saw)
	}
	if _, err := os.Stat(filepath.Join(opts.Cwd, "build")); err != nil {
		t.Error("the denied command ran")
	}
	res := srv.Requests()[1].ToolResults()
	if len(res) != 1 || !res[0].IsError || !strings.Contains(llm.TextOf(res[0].Content), "no deleting in this repo") {
		t.Errorf("tool result %+v", res)
	}
	if r := msgs[len(msgs)-1].(*agent.ResultMessage); len(r.PermissionDenials) != 1 || r.PermissionDenials[0].ToolName != "Bash" {
		t.Errorf("permission_denials %+v", r.PermissionDenials)
	}
}

// An interrupt while CanUseTool is still deciding: the call does not run,
// and the model is told so in plain words, not with a context error.
func TestScenarioInterruptWhileAskingPermission(t *testing.T) {
	srv := llmtest.New(t,
		llmtest.Reply(llmtest.ToolUse("Bash", map[string]string{"command": "touch asked.txt"})),
		llmtest.Reply(llmtest.Text("still usable")))
	opts := testOptions(t, srv)
	asked := make(chan struct{})
	opts.CanUseTool = func(ctx context.Context, _ string, _ json.RawMessage, _ agent.ToolPermissionContext) (agent.PermissionResult, error) {
		close(asked)
		<-ctx.Done()
		return agent.PermissionResult{}, ctx.Err()
	}
	c, err := agent.NewClient(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := c.Send("touch it"); err != nil {
		t.Fatal(err)
	}
	go func() {
		<-asked
		c.Interrupt()
	}()
	for _, err := range c.ReceiveResponse() {
		if err != nil {
			t.Fatal(err)
		}
	}
	if err := c.Send("are you there?"); err != nil {
		t.Fatal(err)
	}
	for _, err := range c.ReceiveResponse() {
		if err != nil {
			t.Fatal(err)
		}
	}
	reqs := srv.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d requests, want 2", len(reqs))
	}
	id := reqs[0].ToolUseIDs()[0]
	res, ok := reqs[1].ToolResult(id)
	text := llm.TextOf(res.Content)
	if !ok || !res.IsError || strings.Contains(text, "context canceled") || !strings.Contains(text, "interrupted") {
		t.Errorf("the interrupted call's result: %q (error %v, sent %v)", text, res.IsError, ok)
	}
	if _, err := os.Stat(filepath.Join(opts.Cwd, "asked.txt")); err == nil {
		t.Error("the call ran")
	}
}
