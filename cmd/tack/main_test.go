package main

// End-to-end tests: they build the real tack binary and run it against the
// scripted fake Messages API, the way users, scripts and SDKs run it.

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tackcode/tack/internal/llm"
	"github.com/tackcode/tack/internal/llm/llmtest"
	"github.com/tackcode/tack/internal/session"
	"github.com/tackcode/tack/internal/testbin"
)

var tackBin string

func TestMain(m *testing.M) {
	var flags []string
	if raceEnabled {
		flags = append(flags, "-race")
	}
	testbin.Main(m, &tackBin, flags...)
}

// env is a sandboxed environment for one run: its own HOME and config dir.
type env struct {
	t      *testing.T
	srv    *llmtest.Server
	dir    string // the working directory
	home   string
	extra  []string
	stdin  string
	status int
}

func newEnv(t *testing.T, turns ...llmtest.Turn) *env {
	t.Helper()
	return &env{t: t, srv: llmtest.New(t, turns...), dir: t.TempDir(), home: t.TempDir()}
}

// run runs tack with args and returns stdout and stderr.
func (e *env) run(args ...string) (string, string) {
	e.t.Helper()
	cmd := exec.Command(tackBin, args...)
	cmd.Dir = e.dir
	cmd.Env = append([]string{
		"PATH=" + os.Getenv("PATH"),
		"HOME=" + e.home,
		"CLAUDE_CONFIG_DIR=" + filepath.Join(e.home, ".claude"),
		"ANTHROPIC_API_KEY=test-key",
		"ANTHROPIC_BASE_URL=" + e.srv.URL(),
		"SHELL=/bin/bash",
		// The first request waits for every MCP server to answer or fail,
		// not for the default 3 s: on a loaded machine a Node server can
		// take longer to start, and the tests that count on its tools must
		// not depend on load. Tests of the deadline set their own.
		"TACK_MCP_STARTUP_DEADLINE_MS=120000",
	}, e.extra...)
	cmd.Stdin = strings.NewReader(e.stdin)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	e.status = 0
	if ee, ok := err.(*exec.ExitError); ok {
		e.status = ee.ExitCode()
	} else if err != nil {
		e.t.Fatalf("run tack: %v", err)
	}
	return stdout.String(), stderr.String()
}

func (e *env) write(name, content string) {
	e.t.Helper()
	p := filepath.Join(e.dir, name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		e.t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		e.t.Fatal(err)
	}
}

func (e *env) read(name string) string {
	e.t.Helper()
	b, err := os.ReadFile(filepath.Join(e.dir, name))
	if err != nil {
		e.t.Fatal(err)
	}
	return string(b)
}

// lines parses stream-json output.
func lines(t *testing.T, out string) []map[string]any {
	t.Helper()
	var msgs []map[string]any
	sc := bufio.NewScanner(strings.NewReader(out))
	sc.Buffer(nil, 16<<20)
	for sc.Scan() {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("stream-json line does not parse: %v\n%s", err, sc.Text())
		}
		msgs = append(msgs, m)
	}
	return msgs
}

// fourTools is the scripted session of the Claude Code sample: Bash, Read,
// Write and Edit, then a final answer.
func fourTools(dir string) []llmtest.Turn {
	return []llmtest.Turn{
		{Content: []llm.Block{llmtest.Text("Running a command."), llmtest.ToolUse("Bash", map[string]any{"command": "echo hi", "description": "Print hi"})}},
		{Content: []llm.Block{llmtest.ToolUse("Read", map[string]any{"file_path": filepath.Join(dir, "hello.py")})}},
		{Content: []llm.Block{llmtest.ToolUse("Write", map[string]any{"file_path": filepath.Join(dir, "new.txt"), "content": "created by mock\n"})}},
		{Content: []llm.Block{llmtest.ToolUse("Edit", map[string]any{"file_path": filepath.Join(dir, "hello.py"),
			"old_string": "print('hello')", "new_string": "print('hello, edited')", "replace_all": false})}},
		{Content: []llm.Block{llmtest.Text("All done: ran echo, read hello.py, wrote new.txt, edited hello.py.")}},
	}
}

func TestScriptedSessionLeavesFilesAsScripted(t *testing.T) {
	e := newEnv(t)
	e.write("hello.py", "print('hello')\n")
	e.srv.Append(fourTools(e.dir)...)
	out, errOut := e.run("-p", "do the four things", "--output-format", "stream-json", "--verbose", "--dangerously-skip-permissions")
	if e.status != 0 {
		t.Fatalf("exit %d\n%s\n%s", e.status, out, errOut)
	}
	if got := e.read("hello.py"); got != "print('hello, edited')\n" {
		t.Errorf("hello.py = %q", got)
	}
	if got := e.read("new.txt"); got != "created by mock\n" {
		t.Errorf("new.txt = %q", got)
	}
	msgs := lines(t, out)
	// Documented order: init first, then assistant/user messages, result last.
	if msgs[0]["type"] != "system" || msgs[0]["subtype"] != "init" {
		t.Fatalf("first message %v", msgs[0])
	}
	last := msgs[len(msgs)-1]
	if last["type"] != "result" || last["subtype"] != "success" || last["result"] != "All done: ran echo, read hello.py, wrote new.txt, edited hello.py." {
		t.Fatalf("last message %v", last)
	}
	var kinds []string
	for _, m := range msgs[1 : len(msgs)-1] {
		kinds = append(kinds, m["type"].(string))
	}
	want := "assistant assistant user assistant user assistant user assistant user assistant"
	if got := strings.Join(kinds, " "); got != want {
		t.Errorf("message order\n got %s\nwant %s", got, want)
	}
	sid := msgs[0]["session_id"].(string)
	for i, m := range msgs {
		if m["session_id"] != sid {
			t.Errorf("message %d has session_id %v", i, m["session_id"])
		}
		if u, _ := m["uuid"].(string); u == "" {
			t.Errorf("message %d has no uuid", i)
		}
	}
	init := msgs[0]
	for _, k := range []string{"cwd", "tools", "mcp_servers", "model", "permissionMode", "slash_commands", "apiKeySource", "output_style", "agents", "skills", "plugins"} {
		if _, ok := init[k]; !ok {
			t.Errorf("init lacks %s", k)
		}
	}
	if init["permissionMode"] != "bypassPermissions" || init["apiKeySource"] != "ANTHROPIC_API_KEY" {
		t.Errorf("init %v", init)
	}
	// The Bash result carries the structured tool_use_result of the sample.
	bash := msgs[3]
	tur, _ := bash["tool_use_result"].(map[string]any)
	if tur["stdout"] != "hi" || tur["interrupted"] != false {
		t.Errorf("bash tool_use_result %v", bash["tool_use_result"])
	}
	// The Edit result carries a structured patch.
	edit := msgs[len(msgs)-3]
	patch, _ := edit["tool_use_result"].(map[string]any)["structuredPatch"].([]any)
	if len(patch) != 1 {
		t.Errorf("edit structuredPatch %v", edit["tool_use_result"])
	}
	// The transcript is where the Agent SDK looks for it, and chained.
	real, _ := filepath.EvalSymlinks(e.dir)
	path := filepath.Join(e.home, ".claude", "projects", session.Slug(real), sid+".jsonl")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("transcript: %v", err)
	}
	prev := ""
	recs := conversation(lines(t, string(data)))
	for i, r := range recs {
		parent, _ := r["parentUuid"].(string)
		if parent != prev {
			t.Errorf("record %d parentUuid %q, want %q", i, parent, prev)
		}
		prev = r["uuid"].(string)
		if r["sessionId"] != sid || r["cwd"] != real {
			t.Errorf("record %d: %v", i, r)
		}
	}
	if len(recs) != 11 { // the prompt, 6 assistant blocks, 4 tool results
		t.Errorf("%d transcript records", len(recs))
	}
}

func TestJSONResultHasEveryField(t *testing.T) {
	e := newEnv(t, llmtest.Turn{Content: []llm.Block{llmtest.Text("hi")}, Usage: &llm.Usage{InputTokens: 100, OutputTokens: 8}})
	out, errOut := e.run("-p", "say hi", "--output-format", "json", "--model", "opus")
	if e.status != 0 {
		t.Fatalf("exit %d: %s", e.status, errOut)
	}
	var res map[string]any
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("not one JSON object: %v\n%s", err, out)
	}
	for _, k := range []string{"type", "subtype", "is_error", "result", "session_id", "uuid", "num_turns", "duration_ms",
		"duration_api_ms", "total_cost_usd", "usage", "modelUsage", "permission_denials", "stop_reason"} {
		if _, ok := res[k]; !ok {
			t.Errorf("result lacks %q", k)
		}
	}
	usage := res["usage"].(map[string]any)
	for _, k := range []string{"input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens", "output_tokens"} {
		if _, ok := usage[k]; !ok {
			t.Errorf("usage lacks %q", k)
		}
	}
	mu := res["modelUsage"].(map[string]any)["claude-opus-5-5"].(map[string]any)
	for _, k := range []string{"inputTokens", "outputTokens", "cacheReadInputTokens", "cacheCreationInputTokens", "costUSD", "contextWindow", "maxOutputTokens"} {
		if _, ok := mu[k]; !ok {
			t.Errorf("modelUsage lacks %q", k)
		}
	}
	// opus 5.5 is $4/$20 per million tokens.
	if cost := res["total_cost_usd"].(float64); cost < 0.000559 || cost > 0.000561 {
		t.Errorf("total_cost_usd %v", cost)
	}
	if res["result"] != "hi" || res["subtype"] != "success" || res["is_error"] != false || res["num_turns"] != 1.0 || res["stop_reason"] != "end_turn" {
		t.Errorf("result %v", res)
	}
	if got := e.srv.Requests()[0].Model; got != "claude-opus-5-5" {
		t.Errorf("model sent %q", got)
	}
}

func TestTextOutputAndPipedStdin(t *testing.T) {
	e := newEnv(t, llmtest.Turn{Content: []llm.Block{llmtest.Text("nothing odd")}})
	e.stdin = "line one\nERROR disk full\n"
	out, errOut := e.run("-p", "anything odd?")
	if e.status != 0 || out != "nothing odd\n" {
		t.Fatalf("exit %d, out %q, err %q", e.status, out, errOut)
	}
	got := e.srv.Requests()[0].LastUserText()
	if !strings.Contains(got, "ERROR disk full") || !strings.HasSuffix(got, "anything odd?") {
		t.Errorf("prompt sent %q", got)
	}
	// Standard input alone is a prompt too.
	e2 := newEnv(t, llmtest.Turn{Content: []llm.Block{llmtest.Text("ok")}})
	e2.stdin = "summarise this"
	if out, _ := e2.run("-p"); e2.status != 0 || out != "ok\n" {
		t.Fatalf("stdin-only prompt: exit %d, %q", e2.status, out)
	}
	if got := e2.srv.Requests()[0].LastUserText(); got != "summarise this" {
		t.Errorf("prompt sent %q", got)
	}
}

func TestMaxTurnsOnToolTurn(t *testing.T) {
	e := newEnv(t, llmtest.Turn{Content: []llm.Block{llmtest.ToolUse("Read", map[string]any{"file_path": "/etc/hostname"})}})
	out, _ := e.run("-p", "read it", "--max-turns", "1", "--output-format", "json")
	if e.status != 1 {
		t.Fatalf("exit %d, want 1", e.status)
	}
	var res map[string]any
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatal(err)
	}
	if res["subtype"] != "error_max_turns" || res["is_error"] != true || res["num_turns"] != 2.0 {
		t.Errorf("result %v", res)
	}
	if errs, _ := res["errors"].([]any); len(errs) != 1 || errs[0] != "Reached maximum number of turns (1)" {
		t.Errorf("errors %v", res["errors"])
	}
	if _, ok := res["result"]; ok {
		t.Errorf("an error result carries result text")
	}
}

// countingTurns scripts one Bash call that appends to a file, then an answer.
func countingTurns(first llmtest.Turn) []llmtest.Turn {
	first.Content = []llm.Block{llmtest.ToolUse("Bash", map[string]any{"command": "echo ran >> count.txt"})}
	return []llmtest.Turn{first, {Content: []llm.Block{llmtest.Text("done")}}}
}

func TestOverloadedThenSuccessRunsToolOnce(t *testing.T) {
	e := newEnv(t, countingTurns(llmtest.Turn{Faults: []llmtest.Fault{{Status: 529, RetryAfter: "0"}}})...)
	out, errOut := e.run("-p", "go", "--allowedTools", "Bash", "--output-format", "stream-json", "--verbose")
	if e.status != 0 {
		t.Fatalf("exit %d: %s %s", e.status, out, errOut)
	}
	if got := e.read("count.txt"); got != "ran\n" {
		t.Errorf("count.txt = %q: the tool ran more or less than once", got)
	}
	var retried bool
	for _, m := range lines(t, out) {
		if m["subtype"] == "api_retry" && m["error_status"] == 529.0 {
			retried = true
		}
	}
	if !retried {
		t.Errorf("no api_retry message")
	}
}

func TestStreamCutMidToolInputRunsToolOnce(t *testing.T) {
	// The tool_use block streams its input in several chunks; cutting after
	// six events lands inside it.
	e := newEnv(t, countingTurns(llmtest.Turn{Faults: []llmtest.Fault{{CutAfter: 6}, {CutAfter: 5}}})...)
	out, errOut := e.run("-p", "go", "--allowedTools", "Bash")
	if e.status != 0 || out != "done\n" {
		t.Fatalf("exit %d: %q %s", e.status, out, errOut)
	}
	if got := e.read("count.txt"); got != "ran\n" {
		t.Errorf("count.txt = %q: the tool ran more or less than once", got)
	}
	if n := len(e.srv.Requests()); n != 4 {
		t.Errorf("%d requests, want 4 (two cut, one whole, one final)", n)
	}
}

func TestPermissionDenialInPrintMode(t *testing.T) {
	e := newEnv(t,
		llmtest.Turn{Content: []llm.Block{llmtest.ToolUse("Write", map[string]any{"file_path": "x.txt", "content": "x"})}},
		llmtest.Turn{Content: []llm.Block{llmtest.Text("could not write")}},
	)
	out, _ := e.run("-p", "write x", "--output-format", "json")
	if e.status != 0 {
		t.Fatalf("a denial is not an error: exit %d", e.status)
	}
	if _, err := os.Stat(filepath.Join(e.dir, "x.txt")); err == nil {
		t.Fatal("the denied write happened")
	}
	var res map[string]any
	json.Unmarshal([]byte(out), &res)
	denials, _ := res["permission_denials"].([]any)
	if len(denials) != 1 || denials[0].(map[string]any)["tool_name"] != "Write" {
		t.Errorf("permission_denials %v", res["permission_denials"])
	}
	r := e.srv.Requests()[1].ToolResults()[0]
	if !r.IsError || !strings.Contains(llm.TextOf(r.Content), "permission") {
		t.Errorf("tool result %+v", r)
	}
}

func TestNoAPIKey(t *testing.T) {
	e := newEnv(t)
	cmd := exec.Command(tackBin, "-p", "hi")
	cmd.Dir = e.dir
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + e.home}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	ee, ok := err.(*exec.ExitError)
	if !ok || ee.ExitCode() != 1 {
		t.Fatalf("err %v", err)
	}
	msg := stderr.String()
	if strings.Count(msg, "\n") != 1 || !strings.Contains(msg, "ANTHROPIC_API_KEY") || stdout.Len() != 0 {
		t.Errorf("stderr %q stdout %q", msg, stdout.String())
	}
	if len(e.srv.Requests()) != 0 {
		t.Errorf("a request was made without a key")
	}
}

func TestUsageErrors(t *testing.T) {
	e := newEnv(t)
	for _, args := range [][]string{
		{"-p", "hi", "--no-such-flag"},
		{"-p", "hi", "--output-format", "xml"},
		{"-p", "hi", "--permission-mode", "yolo"},
		{"-p", "hi", "--max-turns", "many"},
	} {
		out, errOut := e.run(args...)
		if e.status != 1 || out != "" || !strings.Contains(errOut, "tack --help") {
			t.Errorf("%v: exit %d, out %q, err %q", args, e.status, out, errOut)
		}
	}
	if len(e.srv.Requests()) != 0 {
		t.Errorf("usage errors made requests")
	}
}

func TestVersionAndHelp(t *testing.T) {
	e := newEnv(t)
	out, _ := e.run("--version")
	if e.status != 0 || !strings.HasSuffix(out, "(tack)\n") {
		t.Errorf("--version: %d %q", e.status, out)
	}
	out, _ = e.run("--help")
	if e.status != 0 || !strings.Contains(out, "--output-format") || !strings.Contains(out, "--print") {
		t.Errorf("--help: %d %q", e.status, out)
	}
}

func TestInterruptKillsToolAndRecordsIt(t *testing.T) {
	e := newEnv(t, llmtest.Turn{Content: []llm.Block{llmtest.ToolUse("Bash",
		map[string]any{"command": "sleep 300 & echo $! > child.pid; wait"})}})
	cmd := exec.Command(tackBin, "-p", "wait", "--allowedTools", "Bash", "--output-format", "json")
	cmd.Dir = e.dir
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + e.home, "CLAUDE_CONFIG_DIR=" + filepath.Join(e.home, ".claude"),
		"ANTHROPIC_API_KEY=k", "ANTHROPIC_BASE_URL=" + e.srv.URL(), "SHELL=/bin/bash"}
	var stdout bytes.Buffer
	cmd.Stdout = &stdout
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pidFile := filepath.Join(e.dir, "child.pid")
	var child int
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if b, err := os.ReadFile(pidFile); err == nil && len(bytes.TrimSpace(b)) > 0 {
			child, _ = strconv.Atoi(string(bytes.TrimSpace(b)))
			break
		}
	}
	if child == 0 {
		cmd.Process.Kill()
		t.Fatal("the tool never started")
	}
	if err := cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		cmd.Process.Kill()
		t.Fatal("tack did not stop after Ctrl-C")
	}
	if cmd.ProcessState.ExitCode() != 1 {
		t.Errorf("exit %d", cmd.ProcessState.ExitCode())
	}
	var res map[string]any
	if err := json.Unmarshal(stdout.Bytes(), &res); err != nil {
		t.Fatalf("%v: %s", err, stdout.String())
	}
	if res["subtype"] != "error_during_execution" || res["terminal_reason"] != "aborted_tools" {
		t.Errorf("result %v", res)
	}
	if alive(child) {
		syscall.Kill(child, syscall.SIGKILL)
		t.Errorf("the tool's child process %d survived the interrupt", child)
	}
	real, _ := filepath.EvalSymlinks(e.dir)
	data, err := os.ReadFile(filepath.Join(e.home, ".claude", "projects", session.Slug(real), res["session_id"].(string)+".jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	recs := conversation(lines(t, string(data)))
	last := recs[len(recs)-1]
	if !strings.Contains(fmt.Sprint(last["message"]), "[Request interrupted by user for tool use]") {
		t.Errorf("the transcript does not end with the interruption: %v", last)
	}
	result := recs[len(recs)-2]
	if !strings.Contains(fmt.Sprint(result["message"]), "tool_result") || !strings.Contains(fmt.Sprint(result["message"]), "interrupted") {
		t.Errorf("the interrupted call's result is not recorded: %v", result)
	}
}

func TestPartialMessagesPromptFlagsAndRequestSize(t *testing.T) {
	e := newEnv(t, llmtest.Turn{Content: []llm.Block{llmtest.Thinking("let me think"), llmtest.Text("hello")}})
	out, errOut := e.run("-p", "hi", "--output-format", "stream-json", "--verbose", "--include-partial-messages",
		"--append-system-prompt", "Always answer in French.", "--tools", "Read,Grep")
	if e.status != 0 {
		t.Fatalf("exit %d: %s", e.status, errOut)
	}
	msgs := lines(t, out)
	var events []string
	firstAssistant := -1
	for i, m := range msgs {
		switch m["type"] {
		case "stream_event":
			ev := m["event"].(map[string]any)
			events = append(events, ev["type"].(string))
		case "assistant":
			if firstAssistant < 0 {
				firstAssistant = i
			}
		}
	}
	if len(events) == 0 || events[0] != "message_start" || events[len(events)-1] != "message_stop" {
		t.Fatalf("stream events %v", events)
	}
	if !slices.Contains(events, "content_block_delta") {
		t.Errorf("no deltas in %v", events)
	}
	if msgs[1]["type"] != "stream_event" || firstAssistant < 0 {
		t.Errorf("stream events do not come before the assistant messages")
	}
	req := e.srv.Requests()[0]
	if got := strings.Join(req.ToolNames(), ","); got != "Grep,Read" {
		t.Errorf("tools offered: %s", got)
	}
	if sys := req.SystemText(); !strings.HasSuffix(sys, "Always answer in French.") || !strings.Contains(sys, "tack") {
		t.Errorf("system prompt %q", sys)
	}
	// --system-prompt replaces the main prompt.
	e2 := newEnv(t, llmtest.Turn{Content: []llm.Block{llmtest.Text("ok")}})
	e2.run("-p", "hi", "--system-prompt", "You are a pirate.")
	if sys := e2.srv.Requests()[0].SystemText(); !strings.Contains(sys, "You are a pirate.") || strings.Contains(sys, "# Using tools") {
		t.Errorf("replaced system prompt %q", sys)
	}
	// With every default tool, the first request stays small.
	e3 := newEnv(t, llmtest.Turn{Content: []llm.Block{llmtest.Text("ok")}})
	e3.run("-p", "say hi")
	if n := len(e3.srv.Requests()[0].Body); n > 25*1024 {
		t.Errorf("first request is %d bytes, over 25 KB", n)
	}
}

// alive reports whether pid is a running process, waiting a little for one
// being killed to go. A zombie (dead, not yet reaped by init) is not alive.
func alive(pid int) bool {
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if syscall.Kill(pid, 0) != nil {
			return false
		}
		stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil {
			return false
		}
		// The state follows the parenthesised command name.
		if i := bytes.LastIndexByte(stat, ')'); i >= 0 && i+2 < len(stat) && stat[i+2] == 'Z' {
			return false
		}
	}
	return true
}

// conversation keeps the user and assistant records of a transcript (not
// metadata such as last-prompt).
func conversation(recs []map[string]any) []map[string]any {
	var out []map[string]any
	for _, r := range recs {
		if r["type"] == "user" || r["type"] == "assistant" {
			out = append(out, r)
		}
	}
	return out
}

// Once a first Ctrl-C has been caught, a second one kills tack the default
// way, even while it is still finishing (here, a SessionEnd hook that would
// take a minute).
func TestASecondInterruptKillsTack(t *testing.T) {
	e := newEnv(t, llmtest.Turn{Content: []llm.Block{llmtest.ToolUse("Bash", map[string]any{"command": "touch started; sleep 300"})}})
	hook := `echo $$ > hook.pid; sleep 60`
	settings := `{"hooks":{"SessionEnd":[{"hooks":[{"type":"command","command":` + strconv.Quote(hook) + `}]}]}}`
	if err := os.MkdirAll(filepath.Join(e.home, ".claude"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(e.home, ".claude", "settings.json"), []byte(settings), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(tackBin, "-p", "wait", "--allowedTools", "Bash")
	cmd.Dir = e.dir
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + e.home, "ANTHROPIC_API_KEY=k", "ANTHROPIC_BASE_URL=" + e.srv.URL(), "SHELL=/bin/bash"}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		if b, err := os.ReadFile(filepath.Join(e.dir, "hook.pid")); err == nil {
			if pid, err := strconv.Atoi(string(bytes.TrimSpace(b))); err == nil {
				_ = syscall.Kill(pid, syscall.SIGKILL)
			}
		}
	})
	waitFor := func(name string) {
		t.Helper()
		for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
			if b, err := os.ReadFile(filepath.Join(e.dir, name)); err == nil && (name == "started" || len(bytes.TrimSpace(b)) > 0) {
				return
			}
		}
		t.Fatalf("%s never appeared", name)
	}
	waitFor("started")
	if err := cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	waitFor("hook.pid") // the run stopped; the SessionEnd hook runs
	if err := cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		t.Fatal("tack did not die at the second Ctrl-C")
	}
	ws, _ := cmd.ProcessState.Sys().(syscall.WaitStatus)
	if !ws.Signaled() || ws.Signal() != syscall.SIGINT {
		t.Errorf("tack ended with %v, not killed by the second Ctrl-C", cmd.ProcessState)
	}
}
