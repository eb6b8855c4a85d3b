package main

// End-to-end tests of the flags and variables of Claude Code's CLI
// reference: --init-only without a key, --bare, --setting-sources "",
// --resume without a value, --debug, CLAUDE_CODE_SKIP_PROMPT_HISTORY.

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/tackcode/tack/internal/hook"
	"github.com/tackcode/tack/internal/hook/hooktest"
	"github.com/tackcode/tack/internal/llm"
	"github.com/tackcode/tack/internal/llm/llmtest"
)

// TestInitOnlyNeedsNoKey: --init-only makes no request, so it runs its
// Setup and SessionStart hooks without credentials; print mode still
// needs them.
func TestInitOnlyNeedsNoKey(t *testing.T) {
	e := newEnv(t)
	log := e.hookLogs(nil, hook.Setup, hook.SessionStart)
	e.extra = []string{"ANTHROPIC_API_KEY="}
	out, errOut := e.run("--init-only")
	if e.status != 0 || out != "" || errOut != "" {
		t.Errorf("exit %d: %q %q", e.status, out, errOut)
	}
	if got := hooktest.Events(hooktest.ReadLog(t, log)); !slices.Equal(got, []hook.Event{hook.Setup, hook.SessionStart}) {
		t.Errorf("events %v", got)
	}
	if _, errOut := e.run("-p", "hi"); e.status != 1 || !strings.Contains(errOut, "no API key") {
		t.Errorf("print mode without a key: exit %d: %s", e.status, errOut)
	}
}

// canaries puts one canary in each place a session reads from files: the
// project's and the user's CLAUDE.md, a settings hook, a project skill, an
// enabled plugin's skill and a user MCP server. present reports which
// canaries the session that made req met.
type canaries struct {
	e                     *env
	hookMarker, mcpMarker string
}

func newCanaries(e *env) *canaries {
	c := &canaries{e: e, hookMarker: filepath.Join(e.t.TempDir(), "hook-ran"), mcpMarker: filepath.Join(e.t.TempDir(), "mcp-started")}
	e.write("CLAUDE.md", "CANARY-PROJECT-MEMORY")
	e.writeHome(".claude/CLAUDE.md", "CANARY-USER-MEMORY")
	e.settings("settings.json", `{"hooks": {"UserPromptSubmit": [{"hooks": [{"type": "command", "command": "touch `+c.hookMarker+`"}]}]}}`)
	e.write(".claude/skills/canary/SKILL.md", "---\nname: canary\ndescription: CANARY-PROJECT-SKILL\n---\nbody\n")
	plugin := filepath.Join(e.t.TempDir(), "canary-plugin")
	e.writeAbs(filepath.Join(plugin, ".claude-plugin", "plugin.json"), `{"name": "canary-plugin", "version": "1.0.0"}`)
	e.writeAbs(filepath.Join(plugin, "skills", "plug", "SKILL.md"), "---\nname: plug\ndescription: CANARY-PLUGIN-SKILL\n---\nbody\n")
	e.writeHome(".claude/plugins/installed_plugins.json", `{"version": 2, "plugins": {"canary-plugin@local": [{"scope": "user", "installPath": "`+plugin+`", "version": "1.0.0"}]}}`)
	e.writeHome(".claude/settings.json", `{"enabledPlugins": {"canary-plugin@local": true}}`)
	e.writeHome(".claude/.claude.json", `{"mcpServers": {"canary": {"command": "sh", "args": ["-c", "touch `+c.mcpMarker+`"]}}}`)
	return c
}

// present lists the canaries the session met: in the request the model
// got, or by the marker files left.
func (c *canaries) present(req llmtest.Request) []string {
	var out []string
	for _, s := range []string{"CANARY-PROJECT-MEMORY", "CANARY-USER-MEMORY", "CANARY-PROJECT-SKILL", "CANARY-PLUGIN-SKILL"} {
		if strings.Contains(string(req.Body), s) {
			out = append(out, s)
		}
	}
	for name, p := range map[string]string{"hook": c.hookMarker, "mcp": c.mcpMarker} {
		if _, err := os.Stat(p); err == nil {
			out = append(out, name)
			os.Remove(p)
		}
	}
	slices.Sort(out)
	return out
}

// TestBareLeavesFilesOut: --bare reads no CLAUDE.md, runs no settings
// hook, loads no skill, plugin or MCP server from files; --mcp-config
// still starts its servers.
func TestBareLeavesFilesOut(t *testing.T) {
	e := newEnv(t, llmtest.Reply(llmtest.Text("a")), llmtest.Reply(llmtest.Text("b")))
	c := newCanaries(e)
	all := []string{"CANARY-PLUGIN-SKILL", "CANARY-PROJECT-MEMORY", "CANARY-PROJECT-SKILL", "CANARY-USER-MEMORY", "hook", "mcp"}
	if _, errOut := e.run("-p", "hi"); e.status != 0 {
		t.Fatalf("exit %d: %s", e.status, errOut)
	}
	if got := c.present(e.srv.Requests()[0]); !slices.Equal(got, all) {
		t.Fatalf("without --bare the session met %v, want every canary %v", got, all)
	}
	flagMarker := filepath.Join(t.TempDir(), "flag-server")
	cfg := `{"mcpServers": {"given": {"command": "sh", "args": ["-c", "touch ` + flagMarker + `"]}}}`
	if _, errOut := e.run("-p", "hi", "--bare", "--mcp-config", cfg); e.status != 0 {
		t.Fatalf("exit %d: %s", e.status, errOut)
	}
	if got := c.present(e.srv.Requests()[1]); len(got) != 0 {
		t.Errorf("--bare met %v", got)
	}
	if _, err := os.Stat(flagMarker); err != nil {
		t.Errorf("--bare did not start the server of --mcp-config: %v", err)
	}
}

// TestNoSettingSourcesLoadNoMemory: --setting-sources "" (the SDK's
// settingSources: []) reads no CLAUDE.md, and "user" reads the user's
// but not the project's, as the Agent SDK documents.
func TestNoSettingSourcesLoadNoMemory(t *testing.T) {
	e := newEnv(t, llmtest.Reply(llmtest.Text("a")), llmtest.Reply(llmtest.Text("b")), llmtest.Reply(llmtest.Text("c")), llmtest.Reply(llmtest.Text("d")))
	e.write("CLAUDE.md", "CANARY-PROJECT-MEMORY")
	e.writeHome(".claude/CLAUDE.md", "CANARY-USER-MEMORY")
	for i, tc := range []struct {
		args []string
		want []string
	}{
		{nil, []string{"CANARY-PROJECT-MEMORY", "CANARY-USER-MEMORY"}},
		{[]string{"--setting-sources", ""}, nil},
		{[]string{"--setting-sources="}, nil}, // what the Agent SDK passes for settingSources: []
		{[]string{"--setting-sources", "user"}, []string{"CANARY-USER-MEMORY"}},
	} {
		if _, errOut := e.run(append([]string{"-p", "hi"}, tc.args...)...); e.status != 0 {
			t.Fatalf("%v: exit %d: %s", tc.args, e.status, errOut)
		}
		var got []string
		for _, s := range []string{"CANARY-PROJECT-MEMORY", "CANARY-USER-MEMORY"} {
			if strings.Contains(string(e.srv.Requests()[i].Body), s) {
				got = append(got, s)
			}
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("%v: the request carried %v, want %v", tc.args, got, tc.want)
		}
	}
}

func (e *env) writeHome(name, content string) {
	e.t.Helper()
	e.writeAbs(filepath.Join(e.home, name), content)
}

func (e *env) writeAbs(p, content string) {
	e.t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		e.t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		e.t.Fatal(err)
	}
}

// TestResumeWithoutValue: in print mode -r without a value lists the
// sessions of the directory and exits 0; -r NAME, -r ID and --resume=ID
// still resume, and the word after -r is its value, as in Claude Code.
func TestResumeWithoutValue(t *testing.T) {
	e := newEnv(t, llmtest.Reply(llmtest.Text("one")), llmtest.Reply(llmtest.Text("two")), llmtest.Reply(llmtest.Text("three")), llmtest.Reply(llmtest.Text("four")))
	_, id := e.sessionRun("-p", "first question", "-n", "my-work")
	for _, args := range [][]string{{"-p", "-r"}, {"-r", "-p"}, {"-p", "--resume"}} {
		out, errOut := e.run(args...)
		if e.status != 0 || !strings.Contains(out, id) || !strings.Contains(out, "my-work") || !strings.Contains(out, "first question") {
			t.Errorf("%v: exit %d: %s %s", args, e.status, out, errOut)
		}
	}
	if n := len(e.srv.Requests()); n != 1 {
		t.Fatalf("listing made requests: %d", n)
	}
	for _, args := range [][]string{{"-p", "-r", "my-work", "again"}, {"-p", "-r", id, "again"}, {"-p", "--resume=" + id, "again"}} {
		if _, got := e.sessionRun(args...); got != id {
			t.Errorf("%v resumed %s, want %s", args, got, id)
		}
	}
	_, errOut := e.run("-p", "-r", "fix the bug")
	if e.status != 1 || !strings.Contains(errOut, `no session "fix the bug"`) {
		t.Errorf("-r PROMPT: exit %d: %s", e.status, errOut)
	}
}

// TestDebugLog: --debug writes to stderr in print mode a line for each API
// request (status, time), each hook (exit code, time), each MCP server
// (start, connect) and each permission decision (with its rule), never
// the key; categories filter, "!x" excludes; --debug-file writes a file.
func TestDebugLog(t *testing.T) {
	e := newEnv(t)
	e.extra = []string{"ANTHROPIC_API_KEY=sk-secret-canary"}
	e.settings("settings.local.json", `{"permissions": {"allow": ["Bash(echo *)"]}, "hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "exit 0"}]}]}}`)
	mcpCfg := `{"mcpServers": {"self": {"command": "` + tackBin + `", "args": ["mcp", "serve"]}}}`
	turns := func() {
		e.srv.Append(llmtest.Reply(llmtest.ToolUse("Bash", map[string]any{"command": "echo hi"})), llmtest.Reply(llmtest.Text("done")))
	}
	e.srv.Append(llmtest.Turn{Faults: []llmtest.Fault{{Status: 529, RetryAfter: "0"}},
		Content: []llm.Block{llmtest.ToolUse("Bash", map[string]any{"command": "echo hi"})}}, llmtest.Reply(llmtest.Text("done")))
	_, errOut := e.run("-p", "go", "--debug", "--mcp-config", mcpCfg)
	if e.status != 0 {
		t.Fatalf("exit %d: %s", e.status, errOut)
	}
	for _, want := range []string{
		"[DEBUG] [api] API response method=POST url=" + e.srv.URL() + "/v1/messages status=529 after=",
		"[DEBUG] [api] API retry attempt=1 max_retries=10 wait=0s status=529",
		"[DEBUG] [api] API response method=POST url=" + e.srv.URL() + "/v1/messages status=200 after=",
		"[DEBUG] [hooks] hook ended event=PreToolUse hook=PreToolUse:Bash",
		"outcome=success exit_code=0 took=",
		"[DEBUG] [mcp] MCP server starting server=self transport=stdio",
		"[DEBUG] [mcp] MCP server connected server=self",
		"[DEBUG] [permissions] permission check tool=Bash",
		`verdict=allow rule="Bash(echo *) (`,
	} {
		if !strings.Contains(errOut, want) {
			t.Errorf("the debug log lacks %q:\n%s", want, errOut)
		}
	}
	if strings.Contains(errOut, "sk-secret-canary") {
		t.Error("the debug log shows the API key")
	}

	turns()
	_, errOut = e.run("-p", "go", "--debug", "api,hooks")
	if !strings.Contains(errOut, "[api]") || !strings.Contains(errOut, "[hooks]") || strings.Contains(errOut, "[permissions]") {
		t.Errorf("--debug api,hooks:\n%s", errOut)
	}
	turns()
	_, errOut = e.run("-p", "go", "--debug=!api,!statsig")
	if strings.Contains(errOut, "[api]") || !strings.Contains(errOut, "[permissions]") || strings.Contains(errOut, "unknown categor") {
		t.Errorf("--debug=!api,!statsig:\n%s", errOut)
	}

	turns()
	file := filepath.Join(t.TempDir(), "debug.txt")
	_, errOut = e.run("-p", "go", "--debug-file", file)
	data, err := os.ReadFile(file)
	if err != nil || !strings.Contains(string(data), "[DEBUG] [api] API response") || strings.Contains(errOut, "[DEBUG]") {
		t.Errorf("--debug-file: %v\nfile:\n%s\nstderr:\n%s", err, data, errOut)
	}
	turns()
	if _, errOut = e.run("-p", "go"); strings.Contains(errOut, "[DEBUG]") {
		t.Errorf("a debug log without --debug:\n%s", errOut)
	}
}
