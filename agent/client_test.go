package agent_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/tackcode/tack/agent"
	"github.com/tackcode/tack/internal/llm"
	"github.com/tackcode/tack/internal/llm/llmtest"
)

// kinds names the messages: type, or system/subtype(:state).
func kinds(msgs []agent.Message) []string {
	var out []string
	for _, m := range msgs {
		k := m.MessageType()
		if s, ok := m.(*agent.SystemMessage); ok {
			k += "/" + s.Subtype
			if st, ok := s.Fields["state"]; ok {
				k += ":" + st.(string)
			}
		}
		out = append(out, k)
	}
	return out
}

func TestClientRunsQueuedPromptsInOneConversation(t *testing.T) {
	srv := llmtest.New(t, llmtest.Reply(llmtest.Text("one")), llmtest.Reply(llmtest.Text("two")))
	opts := testOptions(t, srv)
	opts.SessionStateMessages = true
	c, err := agent.NewClient(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := c.SendPrompt(agent.Prompt{Text: "first", ID: "u1"}); err != nil {
		t.Fatal(err)
	}
	if err := c.Send("second"); err != nil {
		t.Fatal(err)
	}
	c.CloseSend()
	if err := c.Send("late"); err != agent.ErrClientClosed {
		t.Errorf("Send after CloseSend: %v", err)
	}
	var msgs []agent.Message
	var results []*agent.ResultMessage
	for m, err := range c.Messages() {
		if err != nil {
			t.Fatal(err)
		}
		msgs = append(msgs, m)
		if r, ok := m.(*agent.ResultMessage); ok {
			results = append(results, r)
		}
	}
	if len(results) != 2 || results[0].Text() != "one" || results[1].Text() != "two" || results[0].SessionID != c.SessionID() || results[1].SessionID != c.SessionID() {
		t.Fatalf("results %+v", results)
	}
	k := kinds(msgs)
	if k[0] != "system/session_state_changed:running" || k[1] != "system/init" || k[len(k)-1] != "system/session_state_changed:idle" {
		t.Errorf("order %v", k)
	}
	req := srv.Requests()[1]
	var texts []string
	for _, m := range req.Messages {
		texts = append(texts, llm.TextOf(m.Content))
	}
	if got := strings.Join(texts, "|"); !strings.HasSuffix(got, "first|one|second") {
		t.Errorf("second request %q", got)
	}
}

// runUntilToolUse sends prompts (ids = texts) and calls at once on the
// first tool_use of the first one, while it runs; then it collects the results.
func runUntilToolUse(t *testing.T, c *agent.Client, at func(), prompts ...string) []*agent.ResultMessage {
	t.Helper()
	for _, p := range prompts {
		c.SendPrompt(agent.Prompt{Text: p, ID: p})
	}
	var results []*agent.ResultMessage
	done := false
	for m, err := range c.Messages() {
		if err != nil {
			t.Fatal(err)
		}
		if a, ok := m.(*agent.AssistantMessage); ok && !done && a.Message.Content[0].Type == llm.TypeToolUse {
			done = true
			at()
			c.CloseSend()
		}
		if r, ok := m.(*agent.ResultMessage); ok {
			results = append(results, r)
		}
	}
	return results
}

func TestClientInterruptKeepsTheQueue(t *testing.T) {
	srv := llmtest.New(t,
		llmtest.Reply(llmtest.ToolUse("Bash", map[string]any{"command": "sleep 60"})),
		llmtest.Reply(llmtest.Text("after")))
	opts := testOptions(t, srv)
	opts.AllowedTools = []string{"Bash"}
	c, err := agent.NewClient(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	results := runUntilToolUse(t, c, func() {
		if q := c.Interrupt(); !slices.Equal(q, []string{"next"}) {
			t.Errorf("still queued %v", q)
		}
	}, "sleep", "next")
	if len(results) != 2 || results[0].Subtype != "error_during_execution" || !strings.HasPrefix(results[0].TerminalReason, "aborted") {
		t.Fatalf("results %+v", results)
	}
	if results[1].Text() != "after" {
		t.Errorf("the queued prompt after the interrupt: %+v", results[1])
	}
}

func TestClientCancelQueued(t *testing.T) {
	srv := llmtest.New(t, llmtest.Reply(llmtest.ToolUse("Bash", map[string]any{"command": "sleep 60"})))
	opts := testOptions(t, srv)
	opts.AllowedTools = []string{"Bash"}
	c, err := agent.NewClient(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	results := runUntilToolUse(t, c, func() {
		if got := c.CancelQueued(); !slices.Equal(got, []string{"b", "c"}) {
			t.Errorf("cancelled %v", got)
		}
		if q := c.Interrupt(); len(q) != 0 {
			t.Errorf("still queued %v", q)
		}
	}, "a", "b", "c")
	if len(results) != 1 || !results[0].IsError {
		t.Fatalf("results %+v", results)
	}
}

func TestClientSetModelAndMode(t *testing.T) {
	srv := llmtest.New(t, llmtest.Reply(llmtest.Text("ok")))
	c, err := agent.NewClient(context.Background(), testOptions(t, srv))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if id, err := c.SetModel("haiku"); err != nil || id != "claude-haiku-4-5" {
		t.Errorf("SetModel gave %s, %v", id, err)
	}
	// A name that is no model is refused with the aliases, and the model
	// stays haiku (the request below).
	if id, err := c.SetModel("hiaku"); err == nil || !strings.Contains(err.Error(), "haiku") {
		t.Errorf("SetModel of a misspelt name gave %q, %v", id, err)
	}
	if err := c.SetPermissionMode("yolo"); err == nil {
		t.Error("an unknown mode was accepted")
	}
	if err := c.SetPermissionMode(agent.PermissionAcceptEdits); err != nil {
		t.Fatal(err)
	}
	info := c.Info()
	if info.Model != "claude-haiku-4-5" || info.PermissionMode != agent.PermissionAcceptEdits || info.SessionID != c.SessionID() || len(info.Agents) == 0 {
		t.Errorf("info %+v", info)
	}
	c.Send("hi")
	c.CloseSend()
	for range c.Messages() {
	}
	if got := srv.Requests()[0].Model; got != "claude-haiku-4-5" {
		t.Errorf("request model %s", got)
	}
}

// A model outside availableModels is refused when switched to, as it is
// at start; the default stays allowed.
func TestClientSetModelHonoursAvailableModels(t *testing.T) {
	srv := llmtest.New(t, llmtest.Reply(llmtest.Text("ok")))
	opts := testOptions(t, srv)
	opts.Settings = `{"availableModels": ["haiku"]}`
	c, err := agent.NewClient(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.SetModel("sonnet"); err == nil || !strings.Contains(err.Error(), "availableModels") {
		t.Errorf("sonnet outside availableModels: %v", err)
	}
	if id, err := c.SetModel("haiku"); err != nil || id != "claude-haiku-4-5" {
		t.Errorf("haiku: %s, %v", id, err)
	}
	if _, err := c.SetModel(""); err != nil {
		t.Errorf("the default: %v", err)
	}
}

func TestClientInjectJoinsTheRunningPrompt(t *testing.T) {
	srv := llmtest.Start(t, llmtest.Options{Turns: []llmtest.Turn{
		{Content: []llm.Block{llmtest.ToolUse("Bash", map[string]string{"command": "while [ ! -f go ]; do sleep 0.02; done; echo waited"})}},
		{Content: []llm.Block{llmtest.Text("done, and it is sunny")}},
		{Content: []llm.Block{llmtest.Text("queued one ran")}},
	}})
	opts := testOptions(t, srv)
	opts.PermissionMode = agent.PermissionBypass
	c, err := agent.NewClient(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := c.Send("do the work"); err != nil {
		t.Fatal(err)
	}
	for m, err := range c.ReceiveResponse() {
		if err != nil {
			t.Fatal(err)
		}
		if a, ok := m.(*agent.AssistantMessage); ok && a.Message.Content[0].Type == llm.TypeToolUse {
			// The Bash call is waiting for "go": the prompt is running.
			delivered, err := c.Inject("also tell me the weather")
			if err != nil || !delivered {
				t.Fatalf("Inject while running: %v %v", delivered, err)
			}
			if err := os.WriteFile(filepath.Join(opts.Cwd, "go"), nil, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	reqs := srv.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d requests", len(reqs))
	}
	last := reqs[1].Messages[len(reqs[1].Messages)-1]
	if last.Role != llm.RoleUser || last.Content[0].Type != llm.TypeToolResult || !strings.Contains(userText(last), "also tell me the weather") {
		t.Errorf("the injected message did not join the tool results: %+v", last)
	}

	// With nothing running, it is queued as a prompt of its own.
	delivered, err := c.Inject("queued question")
	if err != nil || delivered {
		t.Fatalf("Inject while idle: %v %v", delivered, err)
	}
	for m, err := range c.ReceiveResponse() {
		if err != nil {
			t.Fatal(err)
		}
		if r, ok := m.(*agent.ResultMessage); ok && r.Text() != "queued one ran" {
			t.Errorf("result %q", r.Text())
		}
	}
	if reqs := srv.Requests(); len(reqs) != 3 || !strings.Contains(string(reqs[2].Body), "queued question") {
		t.Error("the message injected while idle did not run")
	}
}

func TestClientBetasAndThinking(t *testing.T) {
	srv := llmtest.New(t, llmtest.Reply(llmtest.Text("a")), llmtest.Reply(llmtest.Text("b")), llmtest.Reply(llmtest.Text("c")))
	opts := testOptions(t, srv)
	opts.Betas = []string{"context-1m-2025-08-07"}
	c, err := agent.NewClient(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	run := func(p string) {
		t.Helper()
		if err := c.Send(p); err != nil {
			t.Fatal(err)
		}
		for _, err := range c.ReceiveResponse() {
			if err != nil {
				t.Fatal(err)
			}
		}
	}
	run("one")
	c.SetMaxThinkingTokens(4096)
	run("two")
	c.SetMaxThinkingTokens(0)
	run("three")
	reqs := srv.Requests()
	for i, r := range reqs {
		if !strings.Contains(r.Header.Get("anthropic-beta"), "context-1m-2025-08-07") {
			t.Errorf("request %d betas %q", i, r.Header.Get("anthropic-beta"))
		}
	}
	if len(reqs[0].Thinking) != 0 || !strings.Contains(string(reqs[1].Thinking), `"budget_tokens":4096`) || len(reqs[2].Thinking) != 0 {
		t.Errorf("thinking %s / %s / %s", reqs[0].Thinking, reqs[1].Thinking, reqs[2].Thinking)
	}
}

func TestClientPromptWithAnImage(t *testing.T) {
	srv := llmtest.New(t, llmtest.Reply(llmtest.Text("a red dot")))
	c, err := agent.NewClient(context.Background(), testOptions(t, srv))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	png := []byte("\x89PNG\r\n\x1a\nfake")
	if err := c.SendPrompt(agent.Prompt{Text: "what is this?", Content: []agent.ContentBlock{agent.TextBlock("what is this?"), agent.ImageBlock("image/png", png)}}); err != nil {
		t.Fatal(err)
	}
	for _, err := range c.ReceiveResponse() {
		if err != nil {
			t.Fatal(err)
		}
	}
	msg := srv.Requests()[0].Messages[0]
	var img *llm.Block
	for i := range msg.Content {
		if msg.Content[i].Type == llm.TypeImage {
			img = &msg.Content[i]
		}
	}
	if img == nil || img.Source.MediaType != "image/png" || img.Source.Data != "iVBORw0KGgpmYWtl" || !strings.Contains(userText(msg), "what is this?") {
		t.Errorf("first message %+v", msg.Content)
	}
}

func TestClientSetNameAddDirAndNotify(t *testing.T) {
	srv := llmtest.New(t, llmtest.Reply(llmtest.Text("ok")), llmtest.Reply(llmtest.Text("again")))
	opts := testOptions(t, srv)
	var notified []string
	opts.Hooks = map[agent.HookEvent][]agent.HookMatcher{agent.HookNotification: {{Hooks: []agent.HookCallback{
		func(_ context.Context, in agent.HookInput, _ json.RawMessage) (*agent.HookOutput, error) {
			n := in.(*agent.NotificationHookInput)
			notified = append(notified, n.NotificationType+": "+n.Message)
			return &agent.HookOutput{SystemMessage: "bell"}, nil
		}}}}}
	c, err := agent.NewClient(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Send("hi"); err != nil {
		t.Fatal(err)
	}
	for _, err := range c.ReceiveResponse() {
		if err != nil {
			t.Fatal(err)
		}
	}
	extra := t.TempDir()
	if err := c.SetName("release-prep"); err != nil {
		t.Fatal(err)
	}
	// The SDK's rename is in the workflow record at once, which still
	// matches the seed's schema.
	record, err := agent.SessionWorkflow(opts, "release-prep")
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	json.Unmarshal(record, &doc)
	if err := validateSchema(agent.WorkflowSchema(), doc); err != nil || doc["name"] != "release-prep" || fmt.Sprint(doc["resume"]) != "[--resume release-prep]" {
		t.Errorf("record after SetName: %v\n%s", err, record)
	}
	if err := c.AddDir(extra); err != nil {
		t.Fatal(err)
	}
	if err := c.AddDir(filepath.Join(extra, "missing")); err == nil {
		t.Error("a missing directory was added")
	}
	if msgs := c.Notify(context.Background(), "idle_prompt", "tack", "waiting for you"); !slices.Equal(msgs, []string{"bell"}) || !slices.Equal(notified, []string{"idle_prompt: waiting for you"}) {
		t.Errorf("notify: %v %v", msgs, notified)
	}
	id := c.SessionID()
	c.Close()

	// A resume by the name finds the session and keeps the directory.
	again := testOptions(t, srv)
	again.Cwd, again.Env = opts.Cwd, opts.Env
	again.Resume = "release-prep"
	msgs := collect(t, context.Background(), "more", again)
	init := msgs[0].(*agent.SystemMessage).Init
	if init.SessionID != id || !slices.Contains(init.AdditionalDirs, extra) {
		t.Errorf("resumed %s with dirs %v, want %s with %s", init.SessionID, init.AdditionalDirs, id, extra)
	}
}

func TestClientContextUsage(t *testing.T) {
	srv := llmtest.New(t, llmtest.Reply(llmtest.Text(strings.Repeat("long answer ", 400))))
	opts := testOptions(t, srv)
	if err := os.WriteFile(filepath.Join(opts.Cwd, "CLAUDE.md"), []byte(strings.Repeat("Project rule.\n", 100)), 0o644); err != nil {
		t.Fatal(err)
	}
	c, err := agent.NewClient(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	before := c.ContextUsage()
	if err := c.Send("hi"); err != nil {
		t.Fatal(err)
	}
	for _, err := range c.ReceiveResponse() {
		if err != nil {
			t.Fatal(err)
		}
	}
	after := c.ContextUsage()
	part := func(u agent.ContextUsage, name string) int {
		for _, p := range u.Categories {
			if p.Name == name {
				return p.Tokens
			}
		}
		t.Fatalf("no %s in %+v", name, u)
		return 0
	}
	if part(before, "System prompt") == 0 || part(before, "Built-in tools") == 0 || part(before, "Memory files") < 300 || before.Window == 0 {
		t.Errorf("before: %+v", before)
	}
	if grew := part(after, "Conversation") - part(before, "Conversation"); grew < 1000 {
		t.Errorf("the conversation grew by %d tokens after a 4800-byte answer", grew)
	}
}

// While CanUseTool decides a call, the client says the session requires
// action; once it has, that it runs again: a host sees why the run waits.
func TestClientStateWhileCanUseToolDecides(t *testing.T) {
	srv := llmtest.New(t,
		llmtest.Reply(llmtest.ToolUse("Write", map[string]string{"file_path": "a.txt", "content": "A"})),
		llmtest.Reply(llmtest.Text("written")))
	opts := testOptions(t, srv)
	opts.SessionStateMessages = true
	var c *agent.Client
	var mu sync.Mutex
	var msgs []agent.Message
	var lastBeforeAsk string
	opts.CanUseTool = func(ctx context.Context, _ string, _ json.RawMessage, _ agent.ToolPermissionContext) (agent.PermissionResult, error) {
		// What the client said before asking has been read by now.
		if err := c.Flush(ctx); err != nil {
			return agent.PermissionResult{}, err
		}
		mu.Lock()
		lastBeforeAsk = kinds(msgs)[len(msgs)-1]
		mu.Unlock()
		return agent.PermissionResult{Allow: true}, nil
	}
	c, err := agent.NewClient(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := c.Send("write a.txt"); err != nil {
		t.Fatal(err)
	}
	c.CloseSend()
	for m, err := range c.Messages() {
		if err != nil {
			t.Fatal(err)
		}
		mu.Lock()
		msgs = append(msgs, m)
		mu.Unlock()
	}
	got := kinds(msgs)
	i := slices.Index(got, "system/session_state_changed:requires_action")
	if i < 0 || i+1 >= len(got) || got[i+1] != "system/session_state_changed:running" || lastBeforeAsk != got[i] {
		t.Errorf("messages %v (the last before the question: %s)", got, lastBeforeAsk)
	}
}

// validateSchema checks doc against a JSON Schema.
func validateSchema(schema []byte, doc any) error {
	var sch jsonschema.Schema
	if err := json.Unmarshal(schema, &sch); err != nil {
		return err
	}
	res, err := sch.Resolve(nil)
	if err != nil {
		return err
	}
	return res.Validate(doc)
}
