// Package sdk holds the interop tests in which the official Claude Agent SDK
// (@anthropic-ai/claude-agent-sdk, installed in node_modules by
// scripts/test) drives the tack binary over the stream-json protocol,
// against the scripted fake Messages API.
package sdk

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/tackcode/tack/internal/llm"
	"github.com/tackcode/tack/internal/llm/llmtest"
	"github.com/tackcode/tack/internal/testbin"
)

// tackBin is the tack binary built for the tests.
var tackBin string

func TestMain(m *testing.M) { testbin.Main(m, &tackBin) }

// queryOutput is what query.mjs prints.
type queryOutput struct {
	Messages        []map[string]any `json:"messages"`
	PermissionCalls []struct {
		ToolName  string         `json:"toolName"`
		Input     map[string]any `json:"input"`
		ToolUseID string         `json:"toolUseID"`
	} `json:"permissionCalls"`
	HookCalls []struct {
		CallbackInput map[string]any `json:"callbackInput"`
		ToolUseID     string         `json:"toolUseID"`
	} `json:"hookCalls"`
	Described struct {
		Models   []map[string]any `json:"models"`
		Agents   []map[string]any `json:"agents"`
		Commands []map[string]any `json:"commands"`
		Account  map[string]any   `json:"account"`
	} `json:"described"`
	Rewound struct {
		DryRun, Real struct {
			CanRewind    bool     `json:"canRewind"`
			Error        string   `json:"error"`
			FilesChanged []string `json:"filesChanged"`
		}
	} `json:"rewound"`
	Error  string   `json:"error"`
	Stderr []string `json:"stderr"`
}

func (o queryOutput) results() []map[string]any {
	var out []map[string]any
	for _, m := range o.Messages {
		if m["type"] == "result" {
			out = append(out, m)
		}
	}
	return out
}

// runQuery runs query.mjs's scenario with tack against srv, in a fresh
// working directory, and returns what the SDK yielded.
func runQuery(t *testing.T, srv *llmtest.Server, scenario string) (queryOutput, string) {
	t.Helper()
	return runQueryWith(t, srv, scenario, nil)
}

// runQueryWith is runQuery with prepare, when set, laying out the working
// directory first and returning more environment for query.mjs.
func runQueryWith(t *testing.T, srv *llmtest.Server, scenario string, prepare func(cwd string) []string) (queryOutput, string) {
	t.Helper()
	cwd := workDir(t)
	var extra []string
	if prepare != nil {
		extra = prepare(cwd)
	}
	var out queryOutput
	runScript(t, srv, &out, extra, "query.mjs", scenario, tackBin, cwd)
	if out.Error != "" && scenario != "max-turns" {
		t.Fatalf("query() threw: %s\ntack's stderr: %s", out.Error, strings.Join(out.Stderr, ""))
	}
	t.Logf("tack's stderr: %s", strings.Join(out.Stderr, ""))
	return out, cwd
}

// workDir is a fresh working directory, symbolic links resolved.
func workDir(t *testing.T) string {
	t.Helper()
	cwd, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return cwd
}

// runScript runs one of this folder's Node scripts on the Agent SDK
// (node SCRIPT ARGS…) with an empty HOME, srv as the API and extra in its
// environment, and decodes what it prints, one JSON value, into out.
func runScript(t *testing.T, srv *llmtest.Server, out any, extra []string, script string, args ...string) {
	t.Helper()
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node is not installed: the Agent SDK interop tests need it (scripts/test installs the rest)")
	}
	sdkDir, err := filepath.Abs(".")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(sdkDir, "node_modules", "@anthropic-ai", "claude-agent-sdk", "package.json")); err != nil {
		t.Fatal("test/sdk/node_modules is missing: run scripts/test (it runs `npm ci --omit=optional` in test/sdk)")
	}
	home := t.TempDir()
	cmd := exec.Command(node, append([]string{filepath.Join(sdkDir, script)}, args...)...)
	cmd.Dir = sdkDir
	cmd.Env = append([]string{
		"PATH=" + os.Getenv("PATH"),
		"HOME=" + home,
		"CLAUDE_CONFIG_DIR=" + filepath.Join(home, ".claude"),
		"ANTHROPIC_API_KEY=test",
		"ANTHROPIC_BASE_URL=" + srv.URL(),
		"SHELL=/bin/bash",
		// No administrator's file from the machine running the tests.
		"TACK_MANAGED_SETTINGS=" + filepath.Join(home, "managed-settings.json"),
	}, extra...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s %v: %v\n%s", script, args, err, stderr.String())
	}
	if err := json.Unmarshal(stdout.Bytes(), out); err != nil {
		t.Fatalf("%s output: %v\n%s", script, err, stdout.String())
	}
}

func TestSDKQueryRunsToolWithCanUseTool(t *testing.T) {
	srv := llmtest.New(t,
		llmtest.Reply(llmtest.Text("Creating it."), llmtest.ToolUse("Bash", map[string]any{"command": "echo made > made-by-sdk.txt"})),
		llmtest.Reply(llmtest.Text("The file is there.")))
	out, cwd := runQuery(t, srv, "allow")
	if len(out.PermissionCalls) != 1 || out.PermissionCalls[0].ToolName != "Bash" ||
		out.PermissionCalls[0].Input["command"] != "echo made > made-by-sdk.txt" || out.PermissionCalls[0].ToolUseID == "" {
		t.Fatalf("canUseTool calls %+v", out.PermissionCalls)
	}
	data, err := os.ReadFile(filepath.Join(cwd, "made-by-sdk.txt"))
	if err != nil || string(data) != "made\n" {
		t.Fatalf("the allowed command did not run: %q %v", data, err)
	}
	res := out.results()
	if len(res) != 1 || res[0]["subtype"] != "success" || res[0]["result"] != "The file is there." || res[0]["num_turns"] != 2.0 {
		t.Fatalf("results %v", res)
	}
	if out.Messages[0]["type"] != "system" || out.Messages[0]["subtype"] != "init" {
		t.Errorf("first message %v", out.Messages[0])
	}
	for _, m := range out.Messages {
		if m["subtype"] == "session_state_changed" {
			t.Errorf("a host-only state change reached the app: %v", m)
		}
	}
	// The initialize answer, as the SDK's accessors read it.
	d := out.Described
	var agents []string
	for _, a := range d.Agents {
		agents = append(agents, fmt.Sprint(a["name"]))
	}
	if !slices.Contains(agents, "reviewer") || len(d.Models) == 0 || d.Models[0]["value"] == nil || d.Commands == nil ||
		d.Account["apiKeySource"] != "ANTHROPIC_API_KEY" {
		t.Errorf("described %+v", d)
	}
	// The model saw the command's output as the tool result.
	r := srv.Requests()[1].ToolResults()
	if len(r) != 1 || r[0].IsError || r[0].ToolUseID != out.PermissionCalls[0].ToolUseID {
		t.Errorf("tool result %+v", r)
	}
}

func TestSDKQueryHookAndDeniedCall(t *testing.T) {
	srv := llmtest.New(t,
		llmtest.Reply(llmtest.ToolUse("Bash", map[string]any{"command": "rm -rf build"})),
		llmtest.Reply(llmtest.Text("I was not allowed.")))
	out, _ := runQuery(t, srv, "deny-hook")
	if len(out.HookCalls) != 1 || out.HookCalls[0].CallbackInput["hook_event_name"] != "PreToolUse" ||
		out.HookCalls[0].CallbackInput["tool_name"] != "Bash" || out.HookCalls[0].ToolUseID == "" {
		t.Fatalf("hook calls %+v", out.HookCalls)
	}
	if len(out.PermissionCalls) != 1 || out.PermissionCalls[0].ToolUseID != out.HookCalls[0].ToolUseID {
		t.Fatalf("canUseTool calls %+v", out.PermissionCalls)
	}
	res := out.results()
	if len(res) != 1 || res[0]["result"] != "I was not allowed." {
		t.Fatalf("results %v", res)
	}
	if d, _ := res[0]["permission_denials"].([]any); len(d) != 1 {
		t.Errorf("permission_denials %v", res[0]["permission_denials"])
	}
	r := srv.Requests()[1].ToolResults()[0]
	if !r.IsError || !strings.Contains(llm.TextOf(r.Content), "the test denies Bash") {
		t.Errorf("tool result %+v", r)
	}
}

func TestSDKStreamingInputTwoTurns(t *testing.T) {
	srv := llmtest.New(t, llmtest.Reply(llmtest.Text("one")), llmtest.Reply(llmtest.Text("two")))
	out, _ := runQuery(t, srv, "two-turns")
	res := out.results()
	if len(res) != 2 || res[0]["result"] != "one" || res[1]["result"] != "two" || res[0]["session_id"] != res[1]["session_id"] {
		t.Fatalf("results %v", res)
	}
	var texts []string
	for _, m := range srv.Requests()[1].Messages {
		texts = append(texts, llm.TextOf(m.Content))
	}
	if got := strings.Join(texts, "|"); !strings.HasSuffix(got, "first question|one|second question") {
		t.Errorf("second request %q", got)
	}
}

func TestSDKInterruptStopsBashAndSessionGoesOn(t *testing.T) {
	srv := llmtest.New(t,
		llmtest.Reply(llmtest.ToolUse("Bash", map[string]any{"command": "sleep 120"})),
		llmtest.Reply(llmtest.Text("still here")))
	out, _ := runQuery(t, srv, "interrupt")
	res := out.results()
	if len(res) != 2 {
		t.Fatalf("results %v", res)
	}
	if res[0]["subtype"] != "error_during_execution" || res[0]["is_error"] != true {
		t.Errorf("interrupted result %v", res[0])
	}
	if res[1]["subtype"] != "success" || res[1]["result"] != "still here" || res[1]["session_id"] != res[0]["session_id"] {
		t.Errorf("result after the interrupt %v", res[1])
	}
	reqs := srv.Requests()
	if reqs[1].Model != "claude-haiku-4-5" {
		t.Errorf("setModel: the next request used %s", reqs[1].Model)
	}
	var texts []string
	for _, m := range reqs[1].Messages {
		texts = append(texts, llm.TextOf(m.Content))
	}
	if got := strings.Join(texts, "|"); !strings.Contains(got, "[Request interrupted by user for tool use]") || !strings.HasSuffix(got, "are you there?") {
		t.Errorf("the request after the interrupt: %q", got)
	}
}

// TestSIGTERMEndsTheTurnAndExits sends SIGTERM to tack mid-turn, as the SDK
// does when a host closes a query that does not end: the running Bash is
// stopped, the turn's result is written, and tack exits with 143.
func TestSIGTERMEndsTheTurnAndExits(t *testing.T) {
	srv := llmtest.New(t, llmtest.Reply(llmtest.ToolUse("Bash", map[string]any{"command": "sleep 120"})))
	home := t.TempDir()
	cmd := exec.Command(tackBin, "--output-format", "stream-json", "--verbose", "--input-format", "stream-json", "--allowedTools=Bash")
	cmd.Dir = t.TempDir()
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + home, "CLAUDE_CONFIG_DIR=" + filepath.Join(home, ".claude"),
		"ANTHROPIC_API_KEY=test", "ANTHROPIC_BASE_URL=" + srv.URL(), "SHELL=/bin/bash"}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer stdin.Close()
	fmt.Fprintln(stdin, `{"type":"user","session_id":"","parent_tool_use_id":null,"message":{"role":"user","content":"wait"}}`)
	dec := json.NewDecoder(stdout)
	var last map[string]any
	signalled := false
	for {
		var m map[string]any
		if err := dec.Decode(&m); err != nil {
			break
		}
		last = m
		if !signalled && m["type"] == "assistant" {
			signalled = true
			cmd.Process.Signal(syscall.SIGTERM)
		}
	}
	err = cmd.Wait()
	ee, ok := err.(*exec.ExitError)
	if !ok || ee.ExitCode() != 143 {
		t.Fatalf("exit: %v, want code 143\n%s", err, stderr.String())
	}
	if last["type"] != "result" || last["subtype"] != "error_during_execution" {
		t.Errorf("last line %v", last)
	}
}

func TestSDKResumeBySessionID(t *testing.T) {
	srv := llmtest.New(t, llmtest.Reply(llmtest.Text("noted")), llmtest.Reply(llmtest.Text("you said: create the file")))
	out, _ := runQuery(t, srv, "resume")
	res := out.results()
	if len(res) != 2 || res[1]["result"] != "you said: create the file" || res[0]["session_id"] != res[1]["session_id"] {
		t.Fatalf("results %v", res)
	}
	var texts []string
	for _, m := range srv.Requests()[1].Messages {
		texts = append(texts, llm.TextOf(m.Content))
	}
	if got := strings.Join(texts, "|"); !strings.HasSuffix(got, "create the file|noted|what did I say?") {
		t.Errorf("the resumed request %q", got)
	}
}

func TestSDKMaxTurnsIsAnErrorResult(t *testing.T) {
	srv := llmtest.New(t, llmtest.Reply(llmtest.ToolUse("Read", map[string]any{"file_path": "/etc/hostname"})))
	out, _ := runQuery(t, srv, "max-turns")
	res := out.results()
	if len(res) != 1 || res[0]["subtype"] != "error_max_turns" || res[0]["is_error"] != true {
		t.Fatalf("results %v", res)
	}
	// As with Claude Code: the result is yielded, then query() throws with
	// its errors.
	if !strings.Contains(out.Error, "Reached maximum number of turns (1)") {
		t.Errorf("query() error %q", out.Error)
	}
}

func TestSDKPartialMessages(t *testing.T) {
	srv := llmtest.New(t, llmtest.Reply(llmtest.Text("a streamed answer")))
	out, _ := runQuery(t, srv, "partial")
	var events []string
	for _, m := range out.Messages {
		if m["type"] == "stream_event" {
			events = append(events, fmt.Sprint(m["event"].(map[string]any)["type"]))
		}
	}
	if len(events) == 0 || events[0] != "message_start" || !slices.Contains(events, "content_block_delta") || events[len(events)-1] != "message_stop" {
		t.Errorf("stream events %v", events)
	}
	if res := out.results(); len(res) != 1 || res[0]["result"] != "a streamed answer" {
		t.Errorf("results %v", res)
	}
}

func TestSDKStructuredOutput(t *testing.T) {
	srv := llmtest.New(t,
		llmtest.Reply(llmtest.ToolUse("StructuredOutput", map[string]any{"city": "Lyon"})),
		llmtest.Reply(llmtest.Text("done")))
	out, _ := runQuery(t, srv, "structured")
	res := out.results()
	if len(res) != 1 {
		t.Fatalf("results %v", res)
	}
	if got, _ := json.Marshal(res[0]["structured_output"]); string(got) != `{"city":"Lyon"}` {
		t.Errorf("structured_output %s in %v", got, res[0])
	}
	if !slices.Contains(srv.Requests()[0].ToolNames(), "StructuredOutput") {
		t.Errorf("the model was not offered StructuredOutput: %v", srv.Requests()[0].ToolNames())
	}
}

// TestSDKInProcessMCPServer runs a tool of an in-process SDK MCP server
// (createSdkMcpServer), with the manifest the SDK sends in initialize and
// with the MCP handshake run over mcp_message.
func TestSDKInProcessMCPServer(t *testing.T) {
	for _, scenario := range []string{"sdk-mcp", "sdk-mcp-handshake"} {
		t.Run(scenario, func(t *testing.T) {
			srv := llmtest.New(t,
				llmtest.Reply(llmtest.ToolUse("mcp__calc__add", map[string]any{"a": 2, "b": 3})),
				llmtest.Reply(llmtest.Text("2 + 3 = 5")))
			out, _ := runQuery(t, srv, scenario)
			reqs := srv.Requests()
			if len(reqs) != 2 {
				t.Fatalf("%d requests", len(reqs))
			}
			if !slices.Contains(reqs[0].ToolNames(), "mcp__calc__add") {
				t.Fatalf("the SDK server's tool was not offered: %v", reqs[0].ToolNames())
			}
			if res := reqs[1].ToolResults(); len(res) != 1 || res[0].IsError || llm.TextOf(res[0].Content) != "the sum is 5" {
				t.Errorf("tool result %+v", res)
			}
			init := out.Messages[0]
			servers, _ := init["mcp_servers"].([]any)
			if len(servers) != 1 || servers[0].(map[string]any)["name"] != "calc" || servers[0].(map[string]any)["status"] != "connected" {
				t.Errorf("mcp_servers %v", init["mcp_servers"])
			}
		})
	}
}

// TestSDKRewindFiles: with enableFileCheckpointing, rewindFiles() puts the
// files a turn wrote back as they were before it.
func TestSDKRewindFiles(t *testing.T) {
	srv := llmtest.New(t,
		llmtest.Reply(llmtest.ToolUse("Write", map[string]any{"file_path": "notes.txt", "content": "draft\n"})),
		llmtest.Reply(llmtest.Text("written")))
	out, cwd := runQuery(t, srv, "rewind")
	path := filepath.Join(cwd, "notes.txt")
	if d := out.Rewound.DryRun; !d.CanRewind || len(d.FilesChanged) != 1 || d.FilesChanged[0] != path {
		t.Errorf("dry run %+v", d)
	}
	if r := out.Rewound.Real; !r.CanRewind || len(r.FilesChanged) != 1 {
		t.Errorf("rewind %+v", r)
	}
	if _, err := os.Stat(path); err == nil {
		t.Error("notes.txt is still there after the rewind")
	}
}

// TestSDKHookDenies: an SDK PreToolUse hook that denies stops the call even
// though allowedTools allows it.
func TestSDKHookDenies(t *testing.T) {
	srv := llmtest.New(t,
		llmtest.Reply(llmtest.ToolUse("Bash", map[string]any{"command": "touch forbidden"})),
		llmtest.Reply(llmtest.Text("the hook said no")))
	out, cwd := runQuery(t, srv, "hook-deny")
	if len(out.HookCalls) != 1 {
		t.Fatalf("hook calls %+v", out.HookCalls)
	}
	if _, err := os.Stat(filepath.Join(cwd, "forbidden")); err == nil {
		t.Error("the denied command ran")
	}
	r := srv.Requests()[1].ToolResults()[0]
	if !r.IsError || !strings.Contains(llm.TextOf(r.Content), "the hook forbids touch forbidden") {
		t.Errorf("tool result %+v", r)
	}
	if res := out.results(); len(res) != 1 || res[0]["result"] != "the hook said no" {
		t.Errorf("results %v", res)
	}
}

// TestSDKManagedSettings drives tack through the Agent SDK's
// managedSettings, in both deliveries: the deny rule holds against
// allowedTools and bypassPermissions, the keys that would widen access are
// dropped with a notice naming each (the hook does not run), and with
// delivery 'initialize' the SDK gets the confirmation it requires (it ends
// the session otherwise).
func TestSDKManagedSettings(t *testing.T) {
	for _, scenario := range []string{"managed", "managed-init"} {
		t.Run(scenario, func(t *testing.T) {
			srv := llmtest.New(t,
				llmtest.Reply(llmtest.ToolUse("Bash", map[string]any{"command": "echo ran > out.txt"})),
				llmtest.Reply(llmtest.Text("refused")))
			out, cwd := runQuery(t, srv, scenario)
			if res := out.results(); len(res) != 1 || res[0]["result"] != "refused" {
				t.Fatalf("results %v", res)
			}
			if _, err := os.Stat(filepath.Join(cwd, "out.txt")); err == nil {
				t.Error("Bash ran despite the host's deny rule")
			}
			r := srv.Requests()[1].ToolResults()[0]
			if !r.IsError || !strings.Contains(llm.TextOf(r.Content), "Bash(echo *) in managed --managed-settings") {
				t.Errorf("tool result %+v", r)
			}
			if _, err := os.Stat(filepath.Join(cwd, "hook-ran")); err == nil {
				t.Error("the host's hook ran")
			}
			stderr := strings.Join(out.Stderr, "")
			for _, key := range []string{"hooks", "permissions.defaultMode", "model"} {
				if !strings.Contains(stderr, key+": dropped") {
					t.Errorf("no notice that %s was dropped: %s", key, stderr)
				}
			}
			if m := srv.Requests()[0].Model; strings.Contains(m, "haiku") {
				t.Errorf("the host's model was applied: %s", m)
			}
		})
	}
}
