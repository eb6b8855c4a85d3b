package main

// End-to-end tests of MCP: the real binary, the fake Messages API, and real
// MCP servers from npm (test/mcp) over stdio, Streamable HTTP and SSE.

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/tackcode/tack/internal/llm"
	"github.com/tackcode/tack/internal/llm/llmtest"
)

// mcpFixture is test/mcp, with its npm packages installed.
func mcpFixture(t *testing.T) string {
	t.Helper()
	dir, _ := filepath.Abs(filepath.Join("..", "..", "test", "mcp"))
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "@modelcontextprotocol", "server-everything", "package.json")); err != nil {
		t.Fatal("test/mcp/node_modules is missing: run scripts/test")
	}
	return dir
}

func everythingJS(t *testing.T) string {
	return filepath.Join(mcpFixture(t), "node_modules", "@modelcontextprotocol", "server-everything", "dist", "index.js")
}

// mcpConfig is an inline --mcp-config value.
func mcpConfig(servers map[string]any) string {
	b, _ := json.Marshal(map[string]any{"mcpServers": servers})
	return string(b)
}

func stdioEverything(t *testing.T) map[string]any {
	return map[string]any{"command": "node", "args": []string{everythingJS(t), "stdio"}}
}

// startEverything runs server-everything over HTTP or SSE on 127.0.0.1.
func startEverything(t *testing.T, mode string) int {
	t.Helper()
	dir := mcpFixture(t)
	cmd := exec.Command("node", "--require", filepath.Join(dir, "listen-localhost.cjs"), everythingJS(t), mode)
	cmd.Env = append(os.Environ(), "PORT=0")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	stderr, _ := cmd.StderrPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL); cmd.Wait() })
	ports := make(chan int, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			if p, ok := strings.CutPrefix(sc.Text(), "TACK_TEST_LISTENING "); ok {
				n, _ := strconv.Atoi(p)
				select {
				case ports <- n:
				default:
				}
			}
		}
	}()
	select {
	case p := <-ports:
		return p
	case <-time.After(30 * time.Second):
		t.Fatalf("server-everything %s did not start", mode)
	}
	return 0
}

func resultText(r llmtest.Request, i int) string {
	results := r.ToolResults()
	if i >= len(results) {
		return ""
	}
	return llm.TextOf(results[i].Content)
}

func TestMCPToolsOverEveryTransport(t *testing.T) {
	servers := map[string]map[string]any{
		"stdio": stdioEverything(t),
		"http":  {"type": "http", "url": fmt.Sprintf("http://127.0.0.1:%d/mcp", startEverything(t, "streamableHttp"))},
		"sse":   {"type": "sse", "url": fmt.Sprintf("http://127.0.0.1:%d/sse", startEverything(t, "sse"))},
	}
	for transport, srv := range servers {
		t.Run(transport, func(t *testing.T) {
			e := newEnv(t,
				llmtest.Reply(llmtest.ToolUse("mcp__everything__echo", map[string]any{"message": "hello over " + transport}),
					llmtest.ToolUse("mcp__everything__get-sum", map[string]any{"a": 2, "b": 3})),
				llmtest.Reply(llmtest.Text("done")))
			out, errOut := e.run("-p", "use the tools", "--mcp-config", mcpConfig(map[string]any{"everything": srv}),
				"--allowedTools", "mcp__everything", "--output-format", "stream-json", "--verbose")
			if e.status != 0 {
				t.Fatalf("exit %d: %s", e.status, errOut)
			}
			init := lines(t, out)[0]
			status, _ := init["mcp_servers"].([]any)
			if len(status) != 1 || status[0].(map[string]any)["status"] != "connected" {
				t.Errorf("init mcp_servers %v", init["mcp_servers"])
			}
			req := e.srv.Requests()[0]
			if !strings.Contains(strings.Join(req.ToolNames(), ","), "mcp__everything__echo") {
				t.Fatalf("tools offered: %v", req.ToolNames())
			}
			next := e.srv.Requests()[1]
			if got := resultText(next, 0); !strings.Contains(got, "hello over "+transport) {
				t.Errorf("echo result %q", got)
			}
			if got := resultText(next, 1); !strings.Contains(got, "5") {
				t.Errorf("sum result %q", got)
			}
		})
	}
}

func TestMCPResourcePromptAndProgress(t *testing.T) {
	cfg := mcpConfig(map[string]any{"everything": stdioEverything(t)})
	e := newEnv(t,
		llmtest.Reply(llmtest.ToolUse("ReadMcpResourceTool", map[string]any{"server": "everything", "uri": "demo://resource/dynamic/text/1"}),
			llmtest.ToolUse("mcp__everything__trigger-long-running-operation", map[string]any{"duration": 1, "steps": 3})),
		llmtest.Reply(llmtest.Text("done")))
	_, errOut := e.run("-p", "read it", "--mcp-config", cfg, "--dangerously-skip-permissions", "--verbose")
	if e.status != 0 {
		t.Fatalf("exit %d: %s", e.status, errOut)
	}
	next := e.srv.Requests()[1]
	if got := resultText(next, 0); !strings.Contains(got, "demo://resource/dynamic/text/1") {
		t.Errorf("resource read %q", got)
	}
	if got := resultText(next, 1); !strings.Contains(strings.ToLower(got), "long running operation completed") {
		t.Errorf("long-running result %q", got)
	}
	if !strings.Contains(errOut, "progress") {
		t.Errorf("no progress shown: %q", errOut)
	}
	// A prompt of the server is a command.
	e2 := newEnv(t, llmtest.Reply(llmtest.Text("ok")))
	e2.run("-p", "/mcp__everything__simple-prompt", "--mcp-config", cfg)
	if e2.status != 0 || !strings.Contains(e2.srv.Requests()[0].LastUserText(), "This is a simple prompt without arguments.") {
		t.Errorf("prompt command: exit %d, sent %q", e2.status, e2.srv.Requests()[0].LastUserText())
	}
}

func TestMCPListChangedAndRestart(t *testing.T) {
	dynamic := map[string]any{"command": "node", "args": []string{filepath.Join(mcpFixture(t), "dynamic-server.mjs")}}
	// A marker the server ignores, so that pkill stops this test's server
	// and not those other tests run at the same time.
	marker := fmt.Sprintf("tack-restart-test-%d", os.Getpid())
	everything := map[string]any{"command": "node", "args": []string{everythingJS(t), "stdio", marker}}
	e := newEnv(t,
		llmtest.Reply(llmtest.ToolUse("mcp__dynamic__unlock", map[string]any{})),
		llmtest.Reply(llmtest.ToolUse("mcp__dynamic__secret", map[string]any{})),
		// The stdio server is killed; the next call restarts it.
		// [t]… matches the server's command line but not the shell's own.
		llmtest.Reply(llmtest.ToolUse("Bash", map[string]any{"command": "pkill -f 'index.js stdio [t]" + marker[1:] + "'; sleep 0.3"})),
		llmtest.Reply(llmtest.ToolUse("mcp__everything__echo", map[string]any{"message": "after restart"})),
		llmtest.Reply(llmtest.Text("done")))
	cfg := mcpConfig(map[string]any{"dynamic": dynamic, "everything": everything})
	_, errOut := e.run("-p", "go", "--mcp-config", cfg, "--dangerously-skip-permissions")
	if e.status != 0 {
		t.Fatalf("exit %d: %s", e.status, errOut)
	}
	reqs := e.srv.Requests()
	if strings.Contains(strings.Join(reqs[0].ToolNames(), ","), "mcp__dynamic__secret") {
		t.Fatal("secret offered before unlock")
	}
	if !strings.Contains(strings.Join(reqs[1].ToolNames(), ","), "mcp__dynamic__secret") {
		t.Errorf("list_changed did not reach the next request's tools: %v", reqs[1].ToolNames())
	}
	if got := resultText(reqs[2], 0); got != "the secret is 42" {
		t.Errorf("secret result %q", got)
	}
	if got := resultText(reqs[4], 0); !strings.Contains(got, "after restart") {
		t.Errorf("call after the crash: %q", got)
	}
}

func TestMCPBadServersDoNotStopTheSession(t *testing.T) {
	e := newEnv(t, llmtest.Reply(llmtest.Text("still here")))
	e.write("exits.sh", "#!/bin/sh\necho 'cannot start: missing token' >&2\nexit 3\n")
	os.Chmod(filepath.Join(e.dir, "exits.sh"), 0o755)
	cfg := mcpConfig(map[string]any{
		"missing": map[string]any{"command": "/nonexistent/mcp-server"},
		"exits":   map[string]any{"command": filepath.Join(e.dir, "exits.sh")},
		"silent":  map[string]any{"command": "sleep", "args": []string{"300"}},
	})
	e.extra = []string{"TACK_MCP_STARTUP_DEADLINE_MS=1500", "MCP_TIMEOUT=60000"}
	start := time.Now()
	out, errOut := e.run("-p", "hi", "--mcp-config", cfg, "--output-format", "stream-json", "--verbose")
	elapsed := time.Since(start)
	if e.status != 0 || !strings.Contains(out, "still here") {
		t.Fatalf("exit %d: %s %s", e.status, out, errOut)
	}
	for _, want := range []string{"missing", "cannot start: missing token"} {
		if !strings.Contains(errOut, want) {
			t.Errorf("stderr lacks %q:\n%s", want, errOut)
		}
	}
	statuses := map[string]string{}
	for _, s := range lines(t, out)[0]["mcp_servers"].([]any) {
		m := s.(map[string]any)
		statuses[m["name"].(string)] = m["status"].(string)
	}
	if statuses["missing"] != "failed" || statuses["exits"] != "failed" || statuses["silent"] != "failed" {
		t.Errorf("statuses %v", statuses)
	}
	// The silent server held the first request back by the deadline at
	// most (generous bound: only a hang fails this), and was reported:
	// which server, what it did not answer, after how long, what to set.
	if elapsed > 30*time.Second {
		t.Errorf("the session waited %s", elapsed)
	}
	overdue := `MCP server "silent": no answer to the MCP handshake (initialize request) after 1.5s; still waiting for it, up to 1m0s (MCP_TIMEOUT); set MCP_TIMEOUT (milliseconds) to wait longer. The session goes on without its tools until it answers.`
	if !strings.Contains(errOut, overdue) {
		t.Errorf("stderr lacks %q:\n%s", overdue, errOut)
	}

	// A server that reads its input and never answers, with MCP_TIMEOUT
	// set: the session waits for it that long, as Claude Code does, then
	// goes on; init and standard error say it failed, and why.
	e3 := newEnv(t, llmtest.Reply(llmtest.Text("went on")))
	e3.extra = []string{"MCP_TIMEOUT=2000"}
	out, errOut = e3.run("-p", "hi", "--output-format", "stream-json", "--verbose",
		"--mcp-config", mcpConfig(map[string]any{"reader": map[string]any{"command": "sh", "args": []string{"-c", "cat >/dev/null"}}}))
	if e3.status != 0 || !strings.Contains(out, "went on") {
		t.Fatalf("exit %d: %s %s", e3.status, out, errOut)
	}
	const why = "no answer to the MCP handshake (initialize request) within 2s; set MCP_TIMEOUT (milliseconds) to wait longer"
	servers := lines(t, out)[0]["mcp_servers"].([]any)
	if len(servers) != 1 || servers[0].(map[string]any)["status"] != "failed" || servers[0].(map[string]any)["error"] != why {
		t.Errorf("init mcp_servers %v, want reader failed: %s", servers, why)
	}
	if !strings.Contains(errOut, `MCP server "reader" failed: `+why) {
		t.Errorf("stderr lacks the failure:\n%s", errOut)
	}

	// A malformed .mcp.json is reported with its position; the prompt is answered.
	e2 := newEnv(t, llmtest.Reply(llmtest.Text("answered")))
	e2.write(".mcp.json", "{\"mcpServers\": {\"x\": {\"command\": 42}}}")
	e2.settings("settings.json", `{"enableAllProjectMcpServers": true}`)
	out, errOut = e2.run("-p", "hi")
	if e2.status != 0 || out != "answered\n" || !strings.Contains(errOut, ".mcp.json:1:") {
		t.Errorf("malformed .mcp.json: exit %d, %q, %q", e2.status, out, errOut)
	}
}

func TestMCPProjectServersNeedApproval(t *testing.T) {
	cfg := fmt.Sprintf(`{"mcpServers": {"everything": {"command": "node", "args": [%q, "stdio"]}}}`, everythingJS(t))
	e := newEnv(t, llmtest.Reply(llmtest.Text("a")), llmtest.Reply(llmtest.Text("b")))
	e.write(".mcp.json", cfg)
	_, errOut := e.run("-p", "hi")
	if !strings.Contains(errOut, "approval") || strings.Contains(strings.Join(e.srv.Requests()[0].ToolNames(), ","), "mcp__everything") {
		t.Errorf("an unapproved project server started: %q", errOut)
	}
	e.run("mcp", "approve", "everything")
	e.run("-p", "hi")
	if names := strings.Join(e.srv.Requests()[1].ToolNames(), ","); !strings.Contains(names, "mcp__everything__echo") {
		t.Errorf("the approved server did not start: %s", names)
	}
}

func TestMCPCommandsRoundTrip(t *testing.T) {
	e := newEnv(t)
	js := everythingJS(t)
	for _, scope := range []string{"local", "project", "user"} {
		name := "ev-" + scope
		if out, errOut := e.run("mcp", "add", "--scope", scope, name, "--", "node", js, "stdio"); e.status != 0 {
			t.Fatalf("add %s: %s %s", scope, out, errOut)
		}
		if scope == "project" {
			e.run("mcp", "approve", name)
		}
		out, _ := e.run("mcp", "get", name)
		if e.status != 0 || !strings.Contains(out, scope) || !strings.Contains(out, js) {
			t.Errorf("get %s: %q", scope, out)
		}
	}
	out, errOut := e.run("mcp", "list")
	if e.status != 0 || strings.Count(out, "Connected") != 3 {
		t.Errorf("list: %d %q %s", e.status, out, errOut)
	}
	out, _ = e.run("mcp", "call", "ev-user", "echo", `{"message":"direct"}`)
	if !strings.Contains(out, "direct") {
		t.Errorf("call: %q", out)
	}
	for _, scope := range []string{"local", "project", "user"} {
		if _, errOut := e.run("mcp", "remove", "ev-"+scope); e.status != 0 {
			t.Errorf("remove %s: %s", scope, errOut)
		}
	}
	out, _ = e.run("mcp", "list")
	if strings.Contains(out, "ev-") {
		t.Errorf("servers left after remove: %q", out)
	}
}

func TestMCPServe(t *testing.T) {
	e := newEnv(t)
	e.write("note.txt", "served\n")
	cmd := exec.Command(tackBin, "mcp", "serve")
	cmd.Dir = e.dir
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + e.home}
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	var mu sync.Mutex
	send := func(v any) {
		b, _ := json.Marshal(v)
		mu.Lock()
		stdin.Write(append(b, '\n'))
		mu.Unlock()
	}
	sc := bufio.NewScanner(stdout)
	sc.Buffer(nil, 1<<20)
	read := func() map[string]any {
		if !sc.Scan() {
			t.Fatal("no answer from tack mcp serve")
		}
		var m map[string]any
		json.Unmarshal(sc.Bytes(), &m)
		return m
	}
	send(map[string]any{"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": map[string]any{
		"protocolVersion": "2025-06-18", "capabilities": map[string]any{}, "clientInfo": map[string]any{"name": "t", "version": "1"}}})
	if read()["result"] == nil {
		t.Fatal("initialize failed")
	}
	send(map[string]any{"jsonrpc": "2.0", "method": "notifications/initialized"})
	send(map[string]any{"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": map[string]any{
		"name": "Read", "arguments": map[string]any{"file_path": filepath.Join(e.dir, "note.txt")}}})
	res := read()
	if !strings.Contains(fmt.Sprint(res["result"]), "served") {
		t.Errorf("tools/call Read: %v", res)
	}
}

func TestMCPToolsDeferredBehindToolSearch(t *testing.T) {
	e := newEnv(t,
		llmtest.Reply(llmtest.ToolUse("ToolSearch", map[string]any{"query": "select:mcp__everything__echo", "max_results": 1})),
		llmtest.Reply(llmtest.ToolUse("mcp__everything__echo", map[string]any{"message": "loaded on demand"})),
		llmtest.Reply(llmtest.Text("done")))
	e.extra = []string{"ENABLE_TOOL_SEARCH=true"}
	_, errOut := e.run("-p", "go", "--mcp-config", mcpConfig(map[string]any{"everything": stdioEverything(t)}), "--allowedTools", "mcp__everything")
	if e.status != 0 {
		t.Fatalf("exit %d: %s", e.status, errOut)
	}
	first := e.srv.Requests()[0]
	var deferred, eager []string
	for _, raw := range first.Tools {
		var spec struct {
			Name         string `json:"name"`
			DeferLoading bool   `json:"defer_loading"`
		}
		json.Unmarshal(raw, &spec)
		if spec.DeferLoading {
			deferred = append(deferred, spec.Name)
		} else {
			eager = append(eager, spec.Name)
		}
	}
	if len(deferred) == 0 || !strings.HasPrefix(deferred[0], "mcp__everything__") || !strings.Contains(strings.Join(eager, ","), "ToolSearch") {
		t.Fatalf("deferred %v, eager %v", deferred, eager)
	}
	for _, name := range eager {
		if strings.HasPrefix(name, "mcp__everything__") {
			t.Errorf("%s is not deferred", name)
		}
	}
	if !strings.Contains(first.Header.Get("anthropic-beta"), "advanced-tool-use") {
		t.Errorf("beta header %q", first.Header.Get("anthropic-beta"))
	}
	if !strings.Contains(llm.TextOf(first.Messages[0].Content), "mcp__everything__echo") {
		t.Error("the deferred tools are not listed for the model")
	}
	second := e.srv.Requests()[1]
	ref := second.ToolResults()[0]
	if len(ref.Content) == 0 || !strings.Contains(string(ref.Content[0].Raw), `"tool_reference"`) {
		t.Errorf("ToolSearch result %+v", ref.Content)
	}
	if got := resultText(e.srv.Requests()[2], 0); !strings.Contains(got, "loaded on demand") {
		t.Errorf("echo after loading: %q", got)
	}
}

// toolOffer is the tools a request offers, each "name" or "name (deferred)".
func toolOffer(t *testing.T, r llmtest.Request) []string {
	t.Helper()
	var out []string
	for _, raw := range r.Tools {
		var spec struct {
			Name         string `json:"name"`
			DeferLoading bool   `json:"defer_loading"`
		}
		if err := json.Unmarshal(raw, &spec); err != nil {
			t.Fatal(err)
		}
		if spec.DeferLoading {
			spec.Name += " (deferred)"
		}
		out = append(out, spec.Name)
	}
	return out
}

// A session continued with -c is offered, from its first request on, the
// MCP tools (eager, or deferred behind ToolSearch with their catalogue) a
// fresh session with the same servers is offered: the servers it was
// launched with are restored, and the tools array it re-sends is the one
// its first requests sent, not one taken before the servers joined.
func TestContinuedSessionOffersItsMCPTools(t *testing.T) {
	for _, search := range []string{"false", "true"} {
		t.Run("ENABLE_TOOL_SEARCH="+search, func(t *testing.T) {
			e := newEnv(t, llmtest.Reply(llmtest.Text("fresh")), llmtest.Reply(llmtest.Text("continued")))
			e.extra = []string{"ENABLE_TOOL_SEARCH=" + search, "TACK_MCP_STARTUP_DEADLINE_MS=60000"}
			if _, errOut := e.run("-p", "start", "--mcp-config", mcpConfig(map[string]any{"everything": stdioEverything(t)})); e.status != 0 {
				t.Fatalf("exit %d: %s", e.status, errOut)
			}
			if _, errOut := e.run("-p", "-c", "go on"); e.status != 0 {
				t.Fatalf("-c: exit %d: %s", e.status, errOut)
			}
			reqs := e.srv.Requests()
			if len(reqs) != 2 {
				t.Fatalf("%d requests", len(reqs))
			}
			fresh, continued := toolOffer(t, reqs[0]), toolOffer(t, reqs[1])
			if !slices.ContainsFunc(fresh, func(n string) bool { return strings.HasPrefix(n, "mcp__everything__") }) {
				t.Fatalf("the fresh session was not offered the server's tools: %v", fresh)
			}
			if !slices.Equal(continued, fresh) {
				t.Errorf("the continued session's first request offers\n%v\nthe fresh one offered\n%v", continued, fresh)
			} else if string(mustJSON(reqs[1].Tools)) != string(mustJSON(reqs[0].Tools)) {
				t.Error("the continued session's tools array is not the fresh one's, byte for byte (the prompt cache misses)")
			}
			if search == "true" {
				last := reqs[1].Messages[len(reqs[1].Messages)-1]
				if !strings.Contains(llm.TextOf(last.Content), "mcp__everything__echo") {
					t.Errorf("the continued session's first request does not list the deferred tools: %q", llm.TextOf(last.Content))
				}
				if !strings.Contains(reqs[1].Header.Get("anthropic-beta"), "advanced-tool-use") {
					t.Errorf("beta header %q", reqs[1].Header.Get("anthropic-beta"))
				}
			}
		})
	}
}
