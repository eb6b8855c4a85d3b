package cli

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/fsnotify/fsnotify"

	"github.com/tackcode/tack/internal/llm"
	"github.com/tackcode/tack/internal/llm/llmtest"
)

// The control requests that reach into the running session, each driven
// over stdin as the Agent SDK sends it, with its answer's shape and its
// effect on what follows.

// ask sends a control request and returns the success payload of its
// answer, failing the test on an error answer.
func (p *sdkPeer) ask(id string, req map[string]any) map[string]any {
	p.t.Helper()
	p.controlRequest(id, req)
	r := p.until(isResponseTo(id))["response"].(map[string]any)
	if r["subtype"] != "success" {
		p.t.Fatalf("%v answered %v", req["subtype"], r)
	}
	out, _ := r["response"].(map[string]any)
	return out
}

// askFails sends a control request that must fail and returns its error.
func (p *sdkPeer) askFails(id string, req map[string]any) string {
	p.t.Helper()
	p.controlRequest(id, req)
	r := p.until(isResponseTo(id))["response"].(map[string]any)
	if r["subtype"] != "error" || r["error_code"] == "unsupported_request" {
		p.t.Fatalf("%v answered %v, want an error", req["subtype"], r)
	}
	return r["error"].(string)
}

// everything is the command line of the MCP test server of test/mcp.
func everything(t *testing.T) (string, []string) {
	t.Helper()
	js, err := filepath.Abs(filepath.Join("..", "..", "test", "mcp", "node_modules", "@modelcontextprotocol", "server-everything", "dist", "index.js"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(js); err != nil {
		t.Fatal("test/mcp/node_modules is missing: run scripts/test (it runs `npm ci --prefix test/mcp`)")
	}
	return "node", []string{js, "stdio"}
}

// toolNames are the names of the tools a request offered.
func toolNames(r llmtest.Request) []string {
	var out []string
	for _, raw := range r.Tools {
		var spec struct {
			Name string `json:"name"`
		}
		_ = json.Unmarshal(raw, &spec)
		out = append(out, spec.Name)
	}
	return out
}

func hasPrefix(names []string, prefix string) bool {
	return slices.ContainsFunc(names, func(n string) bool { return strings.HasPrefix(n, prefix) })
}

func TestStreamGetContextUsage(t *testing.T) {
	usage := &llm.Usage{InputTokens: 12000, CacheReadInputTokens: 3000, CacheCreationInputTokens: 500, OutputTokens: 40}
	srv := llmtest.New(t, llmtest.Turn{Content: []llm.Block{llmtest.Text("hi")}, Usage: usage})
	p := startPeer(t, srv)
	writeTestFile(t, filepath.Join(p.dir, ".claude", "skills", "deploy", "SKILL.md"), "---\ndescription: Ship the build\n---\nShip it.\n")
	writeTestFile(t, filepath.Join(p.dir, "CLAUDE.md"), "Use tabs.\n")

	before := p.ask("c0", map[string]any{"subtype": "get_context_usage", "detail": "summary"})
	if before["apiUsage"] != nil {
		t.Errorf("apiUsage before any request: %v", before["apiUsage"])
	}
	p.user("hello")
	p.until(isType("result"))
	got := p.ask("c1", map[string]any{"subtype": "get_context_usage", "detail": "summary"})

	if got["model"] != "claude-opus-5-5" || got["rawMaxTokens"] != float64(1000000) || got["maxTokens"] != float64(1000000) {
		t.Errorf("model %v rawMaxTokens %v maxTokens %v", got["model"], got["rawMaxTokens"], got["maxTokens"])
	}
	// The total is what the last request really took, and its answer.
	if got["totalTokens"] != float64(12000+3000+500+40) {
		t.Errorf("totalTokens %v", got["totalTokens"])
	}
	api := got["apiUsage"].(map[string]any)
	if api["input_tokens"] != float64(12000) || api["cache_read_input_tokens"] != float64(3000) {
		t.Errorf("apiUsage %v", api)
	}
	kinds := map[string]string{}
	sum := 0.0
	for _, c := range got["categories"].([]any) {
		c := c.(map[string]any)
		kinds[c["id"].(string)] = c["kind"].(string)
		if c["name"] == "" || c["color"] == "" {
			t.Errorf("category %v", c)
		}
		if c["kind"] == "used" {
			sum += c["tokens"].(float64)
		}
	}
	for id, kind := range map[string]string{"system_prompt": "used", "system_tools": "used", "memory_files": "used", "skills": "used",
		"messages": "used", "autocompact_buffer": "buffer", "free_space": "free"} {
		if kinds[id] != kind {
			t.Errorf("category %s is %q, want %q (all: %v)", id, kinds[id], kind, kinds)
		}
	}
	if sum != got["totalTokens"] {
		t.Errorf("used categories add up to %v, total %v", sum, got["totalTokens"])
	}
	skills := got["skills"].(map[string]any)
	front := skills["skillFrontmatter"].([]any)
	if skills["totalSkills"] != float64(1) || len(front) != 1 || front[0].(map[string]any)["name"] != "deploy" ||
		front[0].(map[string]any)["source"] != "projectSettings" {
		t.Errorf("skills %v", skills)
	}
	mem := got["memoryFiles"].([]any)
	if len(mem) != 1 || mem[0].(map[string]any)["path"] != filepath.Join(p.dir, "CLAUDE.md") || mem[0].(map[string]any)["type"] != "Project" {
		t.Errorf("memoryFiles %v", mem)
	}
	if sc := got["slashCommands"].(map[string]any); sc["totalCommands"] != float64(1) {
		t.Errorf("slashCommands %v", sc)
	}
	rows := got["gridRows"].([]any)
	if len(rows) != 10 || len(rows[0].([]any)) != 10 {
		t.Errorf("grid of %d rows", len(rows))
	}
	if code := p.finish(); code != 0 {
		t.Fatalf("exit %d: %s", code, p.errOut.String())
	}
}

func TestStreamGenerateSessionTitle(t *testing.T) {
	srv := llmtest.New(t, llmtest.Reply(llmtest.ToolUse("session_title", map[string]string{"title": "Login  redirect bug"})))
	p := startPeer(t, srv)
	got := p.ask("t", map[string]any{"subtype": "generate_session_title", "description": "the login page redirects forever, fix it", "persist": true})
	if got["title"] != "Login redirect bug" {
		t.Errorf("title %v", got["title"])
	}
	reqs := srv.Requests()
	if len(reqs) != 1 {
		t.Fatalf("%d requests", len(reqs))
	}
	if !strings.Contains(reqs[0].Model, "haiku") {
		t.Errorf("the title was asked of %s, not the small model", reqs[0].Model)
	}
	if texts := userTexts(reqs[0]); len(texts) != 1 || !strings.Contains(texts[0], "the login page redirects forever") {
		t.Errorf("request %q", texts)
	}
	// Persisted: the session is named so in its transcript.
	p.controlRequest("s", map[string]any{"subtype": "mcp_status"})
	p.until(isResponseTo("s"))
	if code := p.finish(); code != 0 {
		t.Fatalf("exit %d: %s", code, p.errOut.String())
	}
	files, _ := filepath.Glob(filepath.Join(os.Getenv("CLAUDE_CONFIG_DIR"), "projects", "*", "*.jsonl"))
	found := false
	for _, f := range files {
		b, _ := os.ReadFile(f)
		found = found || strings.Contains(string(b), `"Login redirect bug"`)
	}
	if !found {
		t.Errorf("no transcript of %v names the session", files)
	}
}

func TestStreamGenerateSessionTitleWithoutAnswer(t *testing.T) {
	srv := llmtest.New(t, llmtest.Reply(llmtest.Text("no tool call")))
	p := startPeer(t, srv)
	if got := p.ask("t", map[string]any{"subtype": "generate_session_title", "description": "x"}); got["title"] != nil {
		t.Errorf("title %v, want null", got["title"])
	}
	p.finish()
}

// TestStreamMCPToggleAndReconnect: a server toggled off offers no tools in
// the next request; on again, it does; reconnect connects again.
func TestStreamMCPToggleAndReconnect(t *testing.T) {
	cmd, args := everything(t)
	cfg, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{"everything": map[string]any{"command": cmd, "args": args}}})
	srv := llmtest.New(t, llmtest.Reply(llmtest.Text("one")), llmtest.Reply(llmtest.Text("two")), llmtest.Reply(llmtest.Text("three")))
	t.Setenv("MCP_TIMEOUT", "30000")
	p := startPeer(t, srv, "--mcp-config", string(cfg))
	p.user("first")
	p.until(isType("result"))
	p.ask("off", map[string]any{"subtype": "mcp_toggle", "serverName": "everything", "enabled": false})
	status := p.ask("st", map[string]any{"subtype": "mcp_status"})["mcpServers"].([]any)[0].(map[string]any)
	if status["status"] != "disabled" {
		t.Errorf("status after toggle off: %v", status)
	}
	p.user("second")
	p.until(isType("result"))
	p.ask("on", map[string]any{"subtype": "mcp_toggle", "serverName": "everything", "enabled": true})
	p.ask("re", map[string]any{"subtype": "mcp_reconnect", "serverName": "everything"})
	p.user("third")
	p.until(isType("result"))
	if e := p.askFails("bad", map[string]any{"subtype": "mcp_toggle", "serverName": "nope", "enabled": false}); !strings.Contains(e, "nope") {
		t.Errorf("error %q", e)
	}
	if e := p.askFails("bad2", map[string]any{"subtype": "mcp_reconnect", "serverName": "nope"}); !strings.Contains(e, "nope") {
		t.Errorf("error %q", e)
	}
	if code := p.finish(); code != 0 {
		t.Fatalf("exit %d: %s", code, p.errOut.String())
	}
	reqs := srv.Requests()
	if len(reqs) != 3 {
		t.Fatalf("%d requests", len(reqs))
	}
	for i, want := range []bool{true, false, true} {
		if got := hasPrefix(toolNames(reqs[i]), "mcp__everything__"); got != want {
			t.Errorf("request %d offers the server's tools: %v, want %v", i+1, got, want)
		}
	}
}

// TestStreamMCPSetServers: servers set by the host are started and their
// tools offered; set again without them, they are removed.
func TestStreamMCPSetServers(t *testing.T) {
	cmd, args := everything(t)
	srv := llmtest.New(t, llmtest.Reply(llmtest.Text("one")), llmtest.Reply(llmtest.Text("two")))
	t.Setenv("MCP_TIMEOUT", "30000")
	p := startPeer(t, srv)
	got := p.ask("set", map[string]any{"subtype": "mcp_set_servers", "servers": map[string]any{
		"everything": map[string]any{"type": "stdio", "command": cmd, "args": args},
		"broken":     map[string]any{"type": "stdio", "command": "/bin/false"},
	}})
	if added := got["added"].([]any); len(added) != 2 || added[0] != "broken" || added[1] != "everything" {
		t.Errorf("added %v", got["added"])
	}
	errs := got["errors"].(map[string]any)
	if _, ok := errs["broken"]; !ok || len(errs) != 1 {
		t.Errorf("errors %v", errs)
	}
	p.user("first")
	p.until(isType("result"))
	got = p.ask("set2", map[string]any{"subtype": "mcp_set_servers", "servers": map[string]any{}})
	if removed := got["removed"].([]any); len(removed) != 2 || len(got["added"].([]any)) != 0 {
		t.Errorf("second set answered %v", got)
	}
	p.user("second")
	p.until(isType("result"))
	if n := len(p.ask("st", map[string]any{"subtype": "mcp_status"})["mcpServers"].([]any)); n != 0 {
		t.Errorf("%d servers left", n)
	}
	if code := p.finish(); code != 0 {
		t.Fatalf("exit %d: %s", code, p.errOut.String())
	}
	reqs := srv.Requests()
	if !slices.Contains(toolNames(reqs[0]), "mcp__everything__echo") {
		t.Errorf("first request offers %v", toolNames(reqs[0]))
	}
	if hasPrefix(toolNames(reqs[1]), "mcp__") {
		t.Errorf("second request still offers %v", toolNames(reqs[1]))
	}
}

// TestStreamStopTask stops a background Bash command: its process is gone
// and the task is no longer running.
func TestStreamStopTask(t *testing.T) {
	srv := llmtest.New(t,
		llmtest.Reply(llmtest.ToolUse("Bash", map[string]any{"command": "echo $$ > pid; exec sleep 600", "run_in_background": true})),
		llmtest.Reply(llmtest.Text("started")))
	p := startPeer(t, srv, "--permission-mode", "bypassPermissions")
	p.user("start the server")
	p.until(isType("result"))
	var taskID string
	for _, m := range p.seen {
		if r, ok := m["tool_use_result"].(map[string]any); ok && r["backgroundTaskId"] != nil {
			taskID = r["backgroundTaskId"].(string)
		}
	}
	if taskID == "" {
		t.Fatalf("no background task id in %v", p.kinds())
	}
	pid := waitPID(t, filepath.Join(p.dir, "pid"))
	p.ask("stop", map[string]any{"subtype": "stop_task", "task_id": taskID})
	if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
		t.Errorf("process %d after stop_task: %v", pid, err)
	}
	// Stopping it again is no error, as in Claude Code; an unknown id is.
	p.ask("again", map[string]any{"subtype": "stop_task", "task_id": taskID})
	if e := p.askFails("unknown", map[string]any{"subtype": "stop_task", "task_id": "b0000000"}); !strings.Contains(e, "b0000000") {
		t.Errorf("unknown task: %q", e)
	}
	if code := p.finish(); code != 0 {
		t.Fatalf("exit %d: %s", code, p.errOut.String())
	}
}

// waitPID reads the pid a command wrote: the command may write it after
// the run that started it ended, so it waits on the folder's events.
func waitPID(t *testing.T, path string) int {
	t.Helper()
	w, err := fsnotify.NewWatcher()
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if err := w.Add(filepath.Dir(path)); err != nil {
		t.Fatal(err)
	}
	for {
		if b, err := os.ReadFile(path); err == nil && strings.HasSuffix(string(b), "\n") {
			pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
			if err != nil {
				t.Fatal(err)
			}
			return pid
		}
		select {
		case <-w.Events:
		case err := <-w.Errors:
			t.Fatal(err)
		}
	}
}

// TestStreamReloadPluginsPicksUpANewSkill: a skill written after the
// session started is listed by reload_plugins and offered to the model.
func TestStreamReloadPluginsPicksUpANewSkill(t *testing.T) {
	srv := llmtest.New(t, llmtest.Reply(llmtest.Text("one")), llmtest.Reply(llmtest.Text("two")))
	p := startPeer(t, srv)
	writeTestFile(t, filepath.Join(p.dir, ".claude", "skills", "deploy", "SKILL.md"), "---\ndescription: Ship the build\n---\nShip it.\n")
	p.user("first")
	p.until(isType("result"))
	writeTestFile(t, filepath.Join(p.dir, ".claude", "skills", "rollback", "SKILL.md"), "---\ndescription: Undo the last deploy\n---\nUndo it.\n")
	got := p.ask("r", map[string]any{"subtype": "reload_plugins"})
	var names []string
	for _, c := range got["commands"].([]any) {
		names = append(names, c.(map[string]any)["name"].(string))
	}
	if !slices.Contains(names, "deploy") || !slices.Contains(names, "rollback") {
		t.Errorf("commands %v", names)
	}
	for _, k := range []string{"agents", "plugins", "mcpServers", "error_count"} {
		if _, ok := got[k]; !ok {
			t.Errorf("no %s in %v", k, got)
		}
	}
	p.user("second")
	p.until(isType("result"))
	if code := p.finish(); code != 0 {
		t.Fatalf("exit %d: %s", code, p.errOut.String())
	}
	reqs := srv.Requests()
	skillTool := func(r llmtest.Request) string {
		for _, raw := range r.Tools {
			if strings.Contains(string(raw), `"name":"Skill"`) {
				return string(raw)
			}
		}
		return ""
	}
	if s := skillTool(reqs[0]); !strings.Contains(s, "deploy") || strings.Contains(s, "rollback") {
		t.Errorf("first request's Skill tool: %s", s)
	}
	if s := skillTool(reqs[1]); !strings.Contains(s, "rollback") {
		t.Errorf("second request's Skill tool: %s", s)
	}
}

// TestStreamApplyFlagSettings: rules applied at the flag level allow what
// was denied, and get_settings reports the layer and the merge.
func TestStreamApplyFlagSettings(t *testing.T) {
	srv := llmtest.New(t,
		llmtest.Reply(llmtest.ToolUse("Bash", map[string]any{"command": "touch first"})), llmtest.Reply(llmtest.Text("denied")),
		llmtest.Reply(llmtest.ToolUse("Bash", map[string]any{"command": "touch second"})), llmtest.Reply(llmtest.Text("done")))
	p := startPeer(t, srv, "--settings", `{"permissions": {"allow": ["Read"]}}`)
	writeTestFile(t, filepath.Join(p.dir, ".claude", "settings.json"), `{"permissions": {"allow": ["Glob"]}, "env": {"A": "1"}}`)
	p.user("touch first")
	p.until(isType("result"))
	p.ask("a", map[string]any{"subtype": "apply_flag_settings", "settings": map[string]any{"permissions": map[string]any{"allow": []any{"Bash(touch *)"}}}})
	// A rule that does not parse is refused, and the layer stays as it was.
	if e := p.askFails("bad", map[string]any{"subtype": "apply_flag_settings", "settings": map[string]any{"permissions": map[string]any{"deny": []any{"Bash(("}}}}); !strings.Contains(e, "Bash((") {
		t.Errorf("bad rule: %q", e)
	}
	p.user("touch second")
	p.until(isType("result"))
	got := p.ask("g", map[string]any{"subtype": "get_settings"})
	if code := p.finish(); code != 0 {
		t.Fatalf("exit %d: %s", code, p.errOut.String())
	}
	if _, err := os.Stat(filepath.Join(p.dir, "first")); err == nil {
		t.Error("touch first ran before the rule")
	}
	if _, err := os.Stat(filepath.Join(p.dir, "second")); err != nil {
		t.Errorf("touch second did not run: %v", err)
	}
	eff, _ := json.Marshal(got["effective"])
	if string(eff) != `{"env":{"A":"1"},"permissions":{"allow":["Glob","Bash(touch *)"]}}` {
		t.Errorf("effective %s", eff)
	}
	var sources []string
	for _, s := range got["sources"].([]any) {
		sources = append(sources, s.(map[string]any)["source"].(string))
	}
	if !slices.Equal(sources, []string{"projectSettings", "flagSettings"}) {
		t.Errorf("sources %v", sources)
	}
}

// TestStreamCanUseToolSuggestions: can_use_tool carries the "always allow"
// answers tack's own prompt offers, and the path outside the project.
func TestStreamCanUseToolSuggestions(t *testing.T) {
	outside := filepath.Join(t.TempDir(), "notes.txt")
	srv := llmtest.New(t,
		llmtest.Reply(llmtest.ToolUse("Bash", map[string]any{"command": "touch x"})),
		llmtest.Reply(llmtest.ToolUse("Write", map[string]any{"file_path": outside, "content": "hi"})),
		llmtest.Reply(llmtest.Text("done")))
	p := startPeer(t, srv, "--permission-prompt-tool", "stdio")
	p.user("go")
	isAsk := func(m map[string]any) bool {
		r, _ := m["request"].(map[string]any)
		return m["type"] == "control_request" && r["subtype"] == "can_use_tool"
	}
	bash := p.until(isAsk)
	p.answer(bash["request_id"].(string), map[string]any{"behavior": "deny", "message": "no"})
	write := p.until(isAsk)
	p.answer(write["request_id"].(string), map[string]any{"behavior": "deny", "message": "no"})
	p.until(isType("result"))
	if code := p.finish(); code != 0 {
		t.Fatalf("exit %d: %s", code, p.errOut.String())
	}
	same := func(got any, want string) bool {
		var w any
		if err := json.Unmarshal([]byte(want), &w); err != nil {
			t.Fatal(err)
		}
		return reflect.DeepEqual(got, w)
	}
	// The rule tack's own prompt saves for the command.
	if sug := bash["request"].(map[string]any)["permission_suggestions"]; !same(sug,
		`[{"type":"addRules","rules":[{"toolName":"Bash","ruleContent":"touch x *"}],"behavior":"allow","destination":"localSettings"}]`) {
		t.Errorf("Bash suggestions %v", sug)
	}
	req := write["request"].(map[string]any)
	if sug := req["permission_suggestions"]; !same(sug, `[{"type":"setMode","destination":"session","mode":"acceptEdits"}]`) {
		t.Errorf("Write suggestions %v", sug)
	}
	if req["blocked_path"] != outside {
		t.Errorf("blocked_path %v, want %s", req["blocked_path"], outside)
	}
}

// TestStreamReplaysASteeredMessage: with --replay-user-messages, a message
// sent with priority "now" into the running turn is echoed with its uuid.
func TestStreamReplaysASteeredMessage(t *testing.T) {
	srv := llmtest.New(t,
		llmtest.Reply(llmtest.ToolUse("Bash", map[string]any{"command": "while [ ! -f go ]; do sleep 0.02; done"})),
		llmtest.Reply(llmtest.Text("done")))
	p := startPeer(t, srv, "--permission-mode", "bypassPermissions", "--replay-user-messages")
	p.user("do the work")
	p.until(func(m map[string]any) bool {
		if m["type"] != "assistant" {
			return false
		}
		content := m["message"].(map[string]any)["content"].([]any)
		return content[0].(map[string]any)["type"] == "tool_use"
	})
	const id = "7d0e5a52-0000-4000-8000-00000000000a"
	p.send(map[string]any{"type": "user", "session_id": "", "parent_tool_use_id": nil, "priority": "now", "uuid": id,
		"message": map[string]any{"role": "user", "content": "also note the time"}})
	echo := p.until(func(m map[string]any) bool { return m["type"] == "user" && m["uuid"] == id })
	if echo["isReplay"] != true {
		t.Errorf("echo %v", echo)
	}
	if err := os.WriteFile(filepath.Join(p.dir, "go"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	p.until(isType("result"))
	if code := p.finish(); code != 0 {
		t.Fatalf("exit %d: %s", code, p.errOut.String())
	}
	if texts := userTexts(srv.Requests()[1]); !strings.Contains(texts[len(texts)-1], "also note the time") {
		t.Errorf("the message did not join the turn: %q", texts)
	}
}

// TestStreamStopTaskStopsABackgroundSubagent: stop_task with a background
// subagent's id cancels it, and the command it was running with it.
func TestStreamStopTaskStopsABackgroundSubagent(t *testing.T) {
	srv := llmtest.Start(t, llmtest.Options{Turns: []llmtest.Turn{
		{When: llmtest.FirstUserContains("start it"), Content: []llm.Block{llmtest.ToolUse("Agent",
			map[string]any{"description": "bg", "prompt": "BG-JOB", "subagent_type": "general-purpose", "run_in_background": true})}},
		{When: llmtest.FirstUserContains("BG-JOB"), Content: []llm.Block{llmtest.ToolUse("Bash", map[string]any{"command": "echo $$ > subpid; exec sleep 600"})}},
		{When: llmtest.FirstUserContains("start it"), Content: []llm.Block{llmtest.Text("started")}},
	}})
	p := startPeer(t, srv, "--permission-mode", "bypassPermissions")
	p.user("start it")
	p.until(isType("result"))
	var agentID string
	for _, m := range p.seen {
		if r, ok := m["tool_use_result"].(map[string]any); ok && r["isAsync"] == true {
			agentID, _ = r["agentId"].(string)
		}
	}
	if !strings.HasPrefix(agentID, "agent_") {
		t.Fatalf("no background agent id in %v", p.kinds())
	}
	pid := waitPID(t, filepath.Join(p.dir, "subpid"))
	p.ask("stop", map[string]any{"subtype": "stop_task", "task_id": agentID})
	if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
		t.Errorf("the subagent's command (pid %d) after stop_task: %v", pid, err)
	}
	if code := p.finish(); code != 0 {
		t.Fatalf("exit %d: %s", code, p.errOut.String())
	}
}
