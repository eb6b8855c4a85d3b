package agent_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tackcode/tack/agent"
	"github.com/tackcode/tack/internal/llm"
	"github.com/tackcode/tack/internal/llm/llmtest"
)

func testOptions(t *testing.T, srv *llmtest.Server) agent.Options {
	return agent.Options{
		Cwd: t.TempDir(),
		Env: map[string]string{"ANTHROPIC_API_KEY": "k", "ANTHROPIC_BASE_URL": srv.URL(),
			"CLAUDE_CONFIG_DIR": t.TempDir(), "ANTHROPIC_MODEL": ""},
	}
}

func collect(t *testing.T, ctx context.Context, prompt string, opts agent.Options) []agent.Message {
	t.Helper()
	var msgs []agent.Message
	for m, err := range agent.Query(ctx, prompt, opts) {
		if err != nil {
			t.Fatal(err)
		}
		msgs = append(msgs, m)
	}
	return msgs
}

func TestQueryNoCredentials(t *testing.T) {
	t.Setenv("ANTHROPIC_API_KEY", "")
	t.Setenv("ANTHROPIC_AUTH_TOKEN", "")
	var got error
	for _, err := range agent.Query(context.Background(), "hi", agent.Options{}) {
		got = err
	}
	if !errors.Is(got, agent.ErrNoCredentials) {
		t.Fatalf("err %v", got)
	}
}

func TestQueryBadOptions(t *testing.T) {
	srv := llmtest.New(t)
	for name, mutate := range map[string]func(*agent.Options){
		"mode":       func(o *agent.Options) { o.PermissionMode = "yolo" },
		"session id": func(o *agent.Options) { o.SessionID = "not-a-uuid" },
		"cwd":        func(o *agent.Options) { o.Cwd = filepath.Join(o.Cwd, "missing") },
		"tool":       func(o *agent.Options) { o.Tools = []string{"Teleport"} },
	} {
		opts := testOptions(t, srv)
		mutate(&opts)
		var got error
		for _, err := range agent.Query(context.Background(), "hi", opts) {
			got = err
		}
		if got == nil {
			t.Errorf("%s: no error", name)
		}
	}
}

func TestCanUseToolDecides(t *testing.T) {
	srv := llmtest.New(t,
		llmtest.Reply(llmtest.ToolUse("Write", map[string]string{"file_path": "a.txt", "content": "A"}),
			llmtest.ToolUse("Write", map[string]string{"file_path": "b.txt", "content": "B"})),
		llmtest.Reply(llmtest.Text("done")))
	opts := testOptions(t, srv)
	var asked []string
	opts.CanUseTool = func(_ context.Context, name string, input json.RawMessage, info agent.ToolPermissionContext) (agent.PermissionResult, error) {
		asked = append(asked, name+" "+string(input))
		if strings.Contains(string(input), "b.txt") {
			return agent.PermissionResult{Message: "not b"}, nil
		}
		// Allowed with a rewritten input.
		return agent.PermissionResult{Allow: true, UpdatedInput: json.RawMessage(`{"file_path":"a.txt","content":"rewritten"}`)}, nil
	}
	msgs := collect(t, context.Background(), "write", opts)
	res := msgs[len(msgs)-1].(*agent.ResultMessage)
	if len(asked) != 2 || len(res.PermissionDenials) != 1 || res.PermissionDenials[0].ToolName != "Write" {
		t.Fatalf("asked %v, denials %+v", asked, res.PermissionDenials)
	}
	if b, err := os.ReadFile(filepath.Join(opts.Cwd, "a.txt")); err != nil || string(b) != "rewritten" {
		t.Errorf("a.txt = %q, %v", b, err)
	}
	if _, err := os.Stat(filepath.Join(opts.Cwd, "b.txt")); err == nil {
		t.Errorf("b.txt was written")
	}
	r := srv.Requests()[1].ToolResults()[1]
	if !r.IsError || llm.TextOf(r.Content) != "not b" {
		t.Errorf("denied result %+v", r)
	}
}

func TestModesAndLists(t *testing.T) {
	cases := []struct {
		name    string
		mutate  func(*agent.Options)
		allowed bool
	}{
		{"default denies a write", func(o *agent.Options) {}, false},
		{"acceptEdits allows it", func(o *agent.Options) { o.PermissionMode = agent.PermissionAcceptEdits }, true},
		{"allowedTools allows it", func(o *agent.Options) { o.AllowedTools = []string{"Write"} }, true},
		{"plan denies it", func(o *agent.Options) { o.PermissionMode = agent.PermissionPlan; o.AllowedTools = nil }, false},
		{"bypass allows it", func(o *agent.Options) { o.PermissionMode = agent.PermissionBypass }, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			srv := llmtest.New(t,
				llmtest.Reply(llmtest.ToolUse("Write", map[string]string{"file_path": "x.txt", "content": "x"})),
				llmtest.Reply(llmtest.Text("ok")))
			opts := testOptions(t, srv)
			c.mutate(&opts)
			collect(t, context.Background(), "go", opts)
			_, err := os.Stat(filepath.Join(opts.Cwd, "x.txt"))
			if (err == nil) != c.allowed {
				t.Errorf("written=%v, want %v", err == nil, c.allowed)
			}
		})
	}
}

func TestDisallowedToolsAreNotOffered(t *testing.T) {
	srv := llmtest.New(t, llmtest.Reply(llmtest.Text("ok")))
	opts := testOptions(t, srv)
	opts.DisallowedTools = []string{"Bash", "WebFetch"}
	msgs := collect(t, context.Background(), "go", opts)
	init := msgs[0].(*agent.SystemMessage).Init
	for _, name := range append(srv.Requests()[0].ToolNames(), init.Tools...) {
		if name == "Bash" || name == "WebFetch" {
			t.Errorf("%s is offered", name)
		}
	}
	if len(init.Tools) == 0 {
		t.Error("no tools at all")
	}
}

func TestBreakingOutCancelsTheRun(t *testing.T) {
	srv := llmtest.New(t, llmtest.Reply(llmtest.Text("a")))
	opts := testOptions(t, srv)
	n := 0
	for range agent.Query(context.Background(), "go", opts) {
		n++
		break
	}
	if n != 1 {
		t.Fatalf("%d messages", n)
	}
}

func TestHookCallbacks(t *testing.T) {
	srv := llmtest.New(t,
		llmtest.Reply(llmtest.ToolUse("Bash", map[string]string{"command": "echo hi"})),
		llmtest.Reply(llmtest.Text("done")))
	opts := testOptions(t, srv)
	opts.PermissionMode = agent.PermissionBypass
	var seen []string
	opts.Hooks = map[agent.HookEvent][]agent.HookMatcher{
		agent.HookPreToolUse: {{Matcher: "Bash", Hooks: []agent.HookCallback{func(_ context.Context, in agent.HookInput, payload json.RawMessage) (*agent.HookOutput, error) {
			seen = append(seen, string(in.EventName()))
			return &agent.HookOutput{Decision: "block", Reason: "callbacks say no"}, nil
		}}}},
		agent.HookStop: {{Hooks: []agent.HookCallback{func(_ context.Context, in agent.HookInput, payload json.RawMessage) (*agent.HookOutput, error) {
			seen = append(seen, string(in.EventName()))
			return nil, nil
		}}}},
	}
	msgs := collect(t, context.Background(), "go", opts)
	res := msgs[len(msgs)-1].(*agent.ResultMessage)
	if strings.Join(seen, ",") != "PreToolUse,Stop" || len(res.PermissionDenials) != 1 {
		t.Fatalf("seen %v, denials %+v", seen, res.PermissionDenials)
	}
	if got := llm.TextOf(srv.Requests()[1].ToolResults()[0].Content); !strings.Contains(got, "callbacks say no") {
		t.Errorf("result %q", got)
	}
}

// The context given to Query reaches the session's start-up: its
// SessionStart hooks run under it, with its values, and end when it is
// cancelled.
func TestStartUpRunsUnderTheCallersContext(t *testing.T) {
	type key struct{}
	srv := llmtest.New(t, llmtest.Reply(llmtest.Text("one")))
	opts := testOptions(t, srv)
	ctx, cancel := context.WithCancel(context.WithValue(context.Background(), key{}, "the caller's"))
	defer cancel()
	type seen struct {
		value any
		ended error
	}
	got := make(chan seen, 1)
	opts.Hooks = map[agent.HookEvent][]agent.HookMatcher{agent.HookSessionStart: {{TimeoutSeconds: 30, Hooks: []agent.HookCallback{
		func(hookCtx context.Context, _ agent.HookInput, _ json.RawMessage) (*agent.HookOutput, error) {
			value := hookCtx.Value(key{})
			cancel()
			<-hookCtx.Done() // the caller's cancel, not the hook's timeout
			got <- seen{value, context.Cause(hookCtx)}
			return nil, nil
		}}}}}
	for range agent.Query(ctx, "hi", opts) {
	}
	s := <-got
	if s.value != "the caller's" {
		t.Errorf("SessionStart ran with the context value %v, want the caller's", s.value)
	}
	if !errors.Is(s.ended, context.Canceled) {
		t.Errorf("SessionStart ended with %v, want the caller's cancel", s.ended)
	}
}

func TestAddDirsAndOutsidePaths(t *testing.T) {
	outside := t.TempDir()
	if err := os.WriteFile(filepath.Join(outside, "notes.txt"), []byte("far away\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	read := func(opts agent.Options) llm.Block {
		srv := llmtest.New(t,
			llmtest.Reply(llmtest.ToolUse("Read", map[string]string{"file_path": filepath.Join(outside, "notes.txt")})),
			llmtest.Reply(llmtest.Text("done")))
		o := testOptions(t, srv)
		o.AddDirs = opts.AddDirs
		collect(t, context.Background(), "read", o)
		return srv.Requests()[1].ToolResults()[0]
	}
	if r := read(agent.Options{}); !r.IsError {
		t.Errorf("a read outside the working directories ran without approval")
	}
	if r := read(agent.Options{AddDirs: []string{outside}}); r.IsError || !strings.Contains(llm.TextOf(r.Content), "far away") {
		t.Errorf("--add-dir did not let the read run: %+v", r)
	}
}

func TestReadDenyRulesHideFilesFromSearch(t *testing.T) {
	srv := llmtest.New(t,
		llmtest.Reply(llmtest.ToolUse("Grep", map[string]string{"pattern": "TOKEN", "output_mode": "content"}),
			llmtest.ToolUse("Glob", map[string]string{"pattern": "**/*"}),
			llmtest.ToolUse("Read", map[string]string{"file_path": ".env"})),
		llmtest.Reply(llmtest.Text("done")))
	opts := testOptions(t, srv)
	for name, content := range map[string]string{".env": "TOKEN=secret\n", "app.go": "// TOKEN is read from the env\n"} {
		if err := os.WriteFile(filepath.Join(opts.Cwd, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	opts.Settings = `{"permissions": {"deny": ["Read(./.env)"]}}`
	collect(t, context.Background(), "find tokens", opts)
	results := srv.Requests()[1].ToolResults()
	grep, glob, read := llm.TextOf(results[0].Content), llm.TextOf(results[1].Content), results[2]
	if strings.Contains(grep, "secret") || !strings.Contains(grep, "app.go") {
		t.Errorf("grep: %q", grep)
	}
	if strings.Contains(glob, ".env") || !strings.Contains(glob, "app.go") {
		t.Errorf("glob: %q", glob)
	}
	if !read.IsError || strings.Contains(llm.TextOf(read.Content), "secret") {
		t.Errorf("read: %+v", read)
	}
}

func TestNotificationHookWhenAskingForPermission(t *testing.T) {
	srv := llmtest.New(t,
		llmtest.Reply(llmtest.ToolUse("Write", map[string]string{"file_path": "a.txt", "content": "A"})),
		llmtest.Reply(llmtest.Text("done")))
	opts := testOptions(t, srv)
	var notes []string
	opts.Hooks = map[agent.HookEvent][]agent.HookMatcher{agent.HookNotification: {{Matcher: "permission_prompt", Hooks: []agent.HookCallback{
		func(_ context.Context, in agent.HookInput, payload json.RawMessage) (*agent.HookOutput, error) {
			notes = append(notes, string(payload))
			return nil, nil
		}}}}}
	opts.CanUseTool = func(context.Context, string, json.RawMessage, agent.ToolPermissionContext) (agent.PermissionResult, error) {
		return agent.PermissionResult{Allow: true}, nil
	}
	collect(t, context.Background(), "write", opts)
	if len(notes) != 1 || !strings.Contains(notes[0], `"notification_type":"permission_prompt"`) || !strings.Contains(notes[0], "Write") {
		t.Errorf("notifications %v", notes)
	}
}

func TestPromptHookAsksTheModel(t *testing.T) {
	// The Stop hook's model (the small one) answers between the main turns.
	srv := llmtest.New(t,
		llmtest.Reply(llmtest.Text("done")),
		llmtest.Reply(llmtest.Text(`{"ok": false, "reason": "the tests were not run"}`)),
		llmtest.Reply(llmtest.Text("ran the tests: all pass")),
		llmtest.Reply(llmtest.Text(`{"ok": true}`)))
	opts := testOptions(t, srv)
	opts.Settings = `{"hooks": {"Stop": [{"hooks": [{"type": "prompt", "prompt": "Did the assistant run the tests? $ARGUMENTS"}]}]}}`
	msgs := collect(t, context.Background(), "fix it", opts)
	res := msgs[len(msgs)-1].(*agent.ResultMessage)
	if res.IsError || res.Text() != "ran the tests: all pass" {
		t.Fatalf("result %+v", res)
	}
	reqs := srv.Requests()
	if reqs[1].Model != "claude-haiku-4-5" || !strings.Contains(reqs[1].LastUserText(), "Did the assistant run the tests?") ||
		!strings.Contains(reqs[1].LastUserText(), `"last_assistant_message":"done"`) {
		t.Errorf("hook request: model %s, %q", reqs[1].Model, reqs[1].LastUserText())
	}
	if !strings.Contains(reqs[2].LastUserText(), "the tests were not run") {
		t.Errorf("feedback %q", reqs[2].LastUserText())
	}
	if _, ok := res.ModelUsage["claude-haiku-4-5"]; !ok {
		t.Errorf("the hook's model call is not counted: %+v", res.ModelUsage)
	}
}

// approverIn is what a --permission-prompt-tool is called with.
type approverIn struct {
	ToolName  string         `json:"tool_name"`
	Input     map[string]any `json:"input"`
	ToolUseID string         `json:"tool_use_id"`
}

// approver is an in-process MCP server whose tool decide speaks the
// --permission-prompt-tool protocol; calls records what it is called with.
func approver(calls *[]string) agent.MCPSDKServer {
	return agent.NewSDKServer("approver", agent.Tool("decide", "approves calls", func(_ context.Context, in approverIn) (string, error) {
		b, _ := json.Marshal(in)
		*calls = append(*calls, string(b))
		if strings.Contains(string(b), "forbidden") {
			return `{"behavior":"deny","message":"the approver says no"}`, nil
		}
		return `{"behavior":"allow","updatedInput":{"file_path":"approved.txt","content":"ok"}}`, nil
	}))
}

func TestPermissionPromptTool(t *testing.T) {
	srv := llmtest.New(t,
		llmtest.Reply(llmtest.ToolUse("Write", map[string]string{"file_path": "a.txt", "content": "A"}),
			llmtest.ToolUse("Write", map[string]string{"file_path": "forbidden.txt", "content": "B"})),
		llmtest.Reply(llmtest.Text("done")))
	opts := testOptions(t, srv)
	var calls []string
	opts.MCPServers = map[string]agent.MCPServerConfig{"approver": approver(&calls)}
	opts.PermissionPromptTool = "mcp__approver__decide"
	msgs := collect(t, context.Background(), "write", opts)
	res := msgs[len(msgs)-1].(*agent.ResultMessage)
	if len(calls) != 2 || !strings.Contains(calls[0], `"tool_name":"Write"`) || !strings.Contains(calls[0], `"tool_use_id":"toolu_`) {
		t.Fatalf("approver calls %v", calls)
	}
	if b, err := os.ReadFile(filepath.Join(opts.Cwd, "approved.txt")); err != nil || string(b) != "ok" {
		t.Errorf("the approved, rewritten write did not happen: %q %v", b, err)
	}
	if len(res.PermissionDenials) != 1 || llm.TextOf(srv.Requests()[1].ToolResults()[1].Content) != "the approver says no" {
		t.Errorf("denials %+v", res.PermissionDenials)
	}
	// An approver that is not a tool is a setup error; an MCP approver that
	// never connected denies what it would have approved.
	opts.MCPServers, opts.PermissionPromptTool = nil, "NoSuchApprover"
	var got error
	for _, err := range agent.Query(context.Background(), "x", opts) {
		got = err
	}
	if got == nil || !strings.Contains(got.Error(), "NoSuchApprover") {
		t.Errorf("err %v", got)
	}
	srv2 := llmtest.New(t,
		llmtest.Reply(llmtest.ToolUse("Write", map[string]string{"file_path": "c.txt", "content": "C"})),
		llmtest.Reply(llmtest.Text("done")))
	opts2 := testOptions(t, srv2)
	opts2.PermissionPromptTool = "mcp__nobody__home"
	collect(t, context.Background(), "write", opts2)
	if r := srv2.Requests()[1].ToolResults()[0]; !r.IsError || !strings.Contains(llm.TextOf(r.Content), "mcp__nobody__home") {
		t.Errorf("result %+v", r)
	}
}

func TestMaxToolResultSizeClipsWhatTheCallerSees(t *testing.T) {
	srv := llmtest.New(t,
		llmtest.Reply(llmtest.ToolUse("Bash", map[string]string{"command": "printf 'x%.0s' $(seq 500)"})),
		llmtest.Reply(llmtest.Text("done")))
	opts := testOptions(t, srv)
	opts.AllowedTools = []string{"Bash(printf *)"}
	opts.MaxToolResultSize = 100
	var seen string
	for _, m := range collect(t, context.Background(), "print", opts) {
		if u, ok := m.(*agent.UserMessage); ok {
			seen = agent.TextOf(u.Message.Content[0].Content)
			if u.ToolUseResult != nil {
				t.Error("the structured result was left whole")
			}
		}
	}
	if !strings.HasPrefix(seen, strings.Repeat("x", 100)+"\n… [400 more characters not shown]") {
		t.Errorf("the caller saw %q", seen)
	}
	if got := llm.TextOf(srv.Requests()[1].ToolResults()[0].Content); !strings.Contains(got, strings.Repeat("x", 500)) {
		t.Errorf("the model did not get the whole result: %q", got)
	}
}

func TestCanUseToolUpdatedPermissionsHoldForTheSession(t *testing.T) {
	srv := llmtest.New(t,
		llmtest.Reply(llmtest.ToolUse("Bash", map[string]string{"command": "touch one"})),
		llmtest.Reply(llmtest.ToolUse("Bash", map[string]string{"command": "touch two"})),
		llmtest.Reply(llmtest.Text("done")))
	opts := testOptions(t, srv)
	asked := 0
	opts.CanUseTool = func(_ context.Context, name string, _ json.RawMessage, _ agent.ToolPermissionContext) (agent.PermissionResult, error) {
		asked++
		return agent.PermissionResult{Allow: true, UpdatedPermissions: []agent.PermissionUpdate{{Type: "addRules", Behavior: "allow",
			Destination: "session", Rules: []agent.PermissionRuleValue{{ToolName: "Bash", RuleContent: "touch *"}}}}}, nil
	}
	collect(t, context.Background(), "touch files", opts)
	if asked != 1 {
		t.Errorf("asked %d times: the rule given with the first answer should have allowed the second call", asked)
	}
	for _, f := range []string{"one", "two"} {
		if _, err := os.Stat(filepath.Join(opts.Cwd, f)); err != nil {
			t.Errorf("%s: %v", f, err)
		}
	}
}

func TestPermissionUpdatesWrittenToTheirSettingsFile(t *testing.T) {
	srv := llmtest.New(t)
	opts := testOptions(t, srv)
	c, err := agent.NewClient(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	local := filepath.Join(opts.Cwd, ".claude", "settings.local.json")
	os.MkdirAll(filepath.Dir(local), 0o755)
	os.WriteFile(local, []byte("{\n  \"model\": \"haiku\"\n}\n"), 0o644)
	err = c.UpdatePermissions(
		agent.PermissionUpdate{Type: "addRules", Behavior: "allow", Destination: "localSettings", Rules: []agent.PermissionRuleValue{{ToolName: "Bash", RuleContent: "npm test"}}},
		agent.PermissionUpdate{Type: "addRules", Behavior: "deny", Destination: "session", Rules: []agent.PermissionRuleValue{{ToolName: "WebFetch"}}})
	if err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(local)
	if !strings.Contains(string(data), `"model": "haiku"`) || !strings.Contains(string(data), `"allow": ["Bash(npm test)"]`) {
		t.Errorf("local settings:\n%s", data)
	}
	if _, err := os.Stat(filepath.Join(opts.Cwd, ".claude", "settings.json")); err == nil {
		t.Error("a session-only update was written to a file")
	}
	if err := c.UpdatePermissions(agent.PermissionUpdate{Type: "addRules", Behavior: "allow", Destination: "elsewhere",
		Rules: []agent.PermissionRuleValue{{ToolName: "Read"}}}); err == nil {
		t.Error("an unknown destination was accepted")
	}
}
