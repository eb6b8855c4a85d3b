package runner

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tackcode/tack/cmd/tack-worker/internal/gittest"
	"github.com/tackcode/tack/cmd/tack-worker/store"
	"github.com/tackcode/tack/cmd/tack-worker/task"
	"github.com/tackcode/tack/internal/llm"
	"github.com/tackcode/tack/internal/llm/llmtest"
)

// probeServerEnv makes the test binary the stdio MCP server of the tests'
// repositories (see TestMain).
const probeServerEnv = "TACK_WORKER_TEST_MCP_SERVER"

// TestMain lets the test binary be a stdio MCP server, "probe", with one
// tool, echo.
func TestMain(m *testing.M) {
	if os.Getenv(probeServerEnv) == "1" {
		serveProbe()
		return
	}
	os.Exit(m.Run())
}

func serveProbe() {
	srv := mcp.NewServer(&mcp.Implementation{Name: "probe", Version: "1"}, nil)
	type echoIn struct {
		Text string `json:"text" jsonschema:"what to echo"`
	}
	mcp.AddTool(srv, &mcp.Tool{Name: "echo", Description: "Echoes its text."},
		func(_ context.Context, _ *mcp.CallToolRequest, in echoIn) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "probe echoes " + in.Text}}}, nil, nil
		})
	if err := srv.Run(context.Background(), &mcp.StdioTransport{}); err != nil {
		fmt.Fprintln(os.Stderr, "probe server:", err)
		os.Exit(1)
	}
}

// bwrapWorks reports whether bubblewrap can make a sandbox here. Not
// installed, it fails the test in CI (CI set; scripts/test installs it).
func bwrapWorks(t *testing.T) bool {
	if _, err := exec.LookPath("bwrap"); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("bubblewrap is not installed: scripts/test installs it (apt-get install bubblewrap)")
		}
		return false
	}
	return exec.Command("bwrap", "--ro-bind", "/", "/", "--unshare-net", "true").Run() == nil
}

// repoRun is what a task over a repository with its own configuration
// (see TestRepositoryConfiguration) led to.
type repoRun struct {
	res     *task.Result
	reqs    []llmtest.Request
	repo    string // the task's remote
	hookLog string // what the repository's hook wrote
	outside string // what a sandboxed command tried to write
}

// runRepoTask runs a task (in acceptEdits mode) over a repository that
// brings a PostToolUse hook, a permission rule that denies rm and one that
// allows the MCP server's tools, a skill, a stdio MCP server (probe, which
// the task's settings approve) and, with sandbox, sandbox settings. The
// model runs a command that writes a file, then rm, calls the server's
// tool, and with sandbox writes outside the workspace.
func runRepoTask(t *testing.T, untrusted, sandbox bool) repoRun {
	dir := t.TempDir()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	run := repoRun{hookLog: filepath.Join(dir, "hook.log")}
	settings := map[string]any{
		"hooks": map[string]any{"PostToolUse": []any{map[string]any{"matcher": "Bash",
			"hooks": []any{map[string]any{"type": "command", "command": "cat >> " + run.hookLog + "; echo >> " + run.hookLog}}}}},
		"permissions": map[string]any{"deny": []string{"Bash(rm:*)"}, "allow": []string{"mcp__probe"}},
	}
	if sandbox {
		// Not under /tmp, which the sandbox replaces with its own.
		cache, err := os.UserCacheDir()
		if err != nil {
			t.Fatal(err)
		}
		out, err := os.MkdirTemp(ensureDir(cache), "tack-worker-test-")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { os.RemoveAll(out) })
		run.outside = filepath.Join(out, "outside.txt")
		settings["sandbox"] = map[string]any{"enabled": true}
	}
	settingsJSON, _ := json.MarshalIndent(settings, "", "  ")
	mcpJSON, _ := json.MarshalIndent(map[string]any{"mcpServers": map[string]any{
		"probe": map[string]any{"command": exe, "env": map[string]string{probeServerEnv: "1"}}}}, "", "  ")
	url, repo := gittest.Repo(t, dir, "app", map[string]string{
		"README":                                "app\n",
		"victim.txt":                            "keep me\n",
		".claude/settings.json":                 string(settingsJSON),
		".mcp.json":                             string(mcpJSON),
		".claude/skills/release-notes/SKILL.md": "---\nname: release-notes\ndescription: Writes the release notes of the app\n---\nWrite RELEASE.md.\n",
	})
	run.repo = repo
	st, err := store.Open(filepath.Join(dir, "store"))
	if err != nil {
		t.Fatal(err)
	}
	turns := []llmtest.Turn{
		llmtest.Reply(llmtest.ToolUse("Bash", map[string]string{"command": "echo made > made.txt"})),
		llmtest.Reply(llmtest.ToolUse("Bash", map[string]string{"command": "rm victim.txt"})),
		llmtest.Reply(llmtest.ToolUse("mcp__probe__echo", map[string]string{"text": "ping"})),
	}
	if sandbox {
		turns = append(turns, llmtest.Reply(llmtest.ToolUse("Bash", map[string]string{"command": "echo x > " + run.outside + "; echo status=$?"})))
	}
	srv := llmtest.New(t, append(turns, llmtest.Reply(llmtest.Text("done")))...)
	env := map[string]string{"ANTHROPIC_API_KEY": "k", "ANTHROPIC_BASE_URL": srv.URL(), "ANTHROPIC_MODEL": "",
		"TACK_MCP_STARTUP_DEADLINE_MS": "60000"} // however busy the machine
	in := RunInput{RunID: "fleet-cfg/task-1", Task: task.Task{ID: "task-1", Repo: url, Prompt: "work", PermissionMode: "acceptEdits",
		Settings: `{"enabledMcpjsonServers": ["probe"]}`, Untrusted: untrusted, Branch: "tack/cfg/task-1"}}
	r := &Runner{Store: st, WorkRoot: filepath.Join(dir, "w"), WorkerID: "w1", Env: env}
	if run.res, err = r.RunAgent(context.Background(), in); err != nil {
		t.Fatal(err)
	}
	if run.res.Text != "done" {
		t.Fatalf("result %+v", run.res)
	}
	run.reqs = srv.Requests()
	if len(run.reqs) != len(turns)+1 {
		t.Fatalf("%d requests, want %d", len(run.reqs), len(turns)+1)
	}
	return run
}

// result is the one tool result request i carries.
func (r repoRun) result(t *testing.T, i int) (text string, isError bool) {
	t.Helper()
	res := r.reqs[i].ToolResults()
	if len(res) != 1 {
		t.Fatalf("request %d: %d tool results", i, len(res))
	}
	return llm.TextOf(res[0].Content), res[0].IsError
}

// skillListed reports whether the first request's Skill tool lists the
// repository's skill.
func (r repoRun) skillListed(t *testing.T) bool {
	t.Helper()
	var skill struct{ Description string }
	if err := json.Unmarshal(r.reqs[0].Tool("Skill"), &skill); err != nil {
		t.Fatalf("no Skill tool: %v", err)
	}
	return strings.Contains(skill.Description, "- release-notes: Writes the release notes of the app")
}

// A task's repository brings its own configuration, and it applies inside
// the task as in a terminal in a trusted folder (the one who submitted the
// task named the repository): the hooks and permission rules of its
// .claude/settings.json, its sandbox settings, its skills, and the MCP
// server of its .mcp.json, which the task's settings approve as a flag
// does. The sandbox is checked where bubblewrap can make one.
func TestRepositoryConfiguration(t *testing.T) {
	sandbox := bwrapWorks(t)
	if !sandbox {
		t.Log("bubblewrap cannot make a sandbox here: the repository's sandbox settings are not checked")
	}
	run := runRepoTask(t, false, sandbox)
	if !slices.Contains(run.reqs[0].ToolNames(), "mcp__probe__echo") {
		t.Errorf("the repository's MCP server's tool is not offered: %v", run.reqs[0].ToolNames())
	}
	if !run.skillListed(t) {
		t.Error("the Skill tool does not list the repository's skill")
	}
	// The command ran, and the hook saw it.
	if text, isErr := run.result(t, 1); isErr {
		t.Errorf("the first command failed: %s", text)
	}
	if data, err := os.ReadFile(run.hookLog); err != nil || !strings.Contains(string(data), `"command":"echo made > made.txt"`) {
		t.Errorf("the repository's PostToolUse hook did not run on the command (%v): %q", err, data)
	}
	if text, isErr := run.result(t, 2); !isErr || !strings.Contains(text, "Bash(rm:*) in project") || !strings.Contains(text, "denies `rm victim.txt`") {
		t.Errorf("rm was not denied by the repository's rule: %s", text)
	}
	// The server's tool ran, which only the repository's allow rule lets
	// it do here.
	if text, isErr := run.result(t, 3); isErr || !strings.Contains(text, "probe echoes ping") {
		t.Errorf("the MCP tool's result: %s", text)
	}
	if sandbox {
		if text, _ := run.result(t, 4); !strings.Contains(text, "Read-only file system") || !strings.Contains(text, "status=1") {
			t.Errorf("a sandboxed write outside the workspace: %q", text)
		}
		if _, err := os.Stat(run.outside); err == nil {
			t.Error("the repository's sandbox let a command write outside the workspace")
		}
	}
	// What landed: made.txt, and victim.txt still there.
	if got := gittest.Show(t, run.repo, run.res.Branch, "made.txt"); got != "made" {
		t.Errorf("made.txt on the branch: %q", got)
	}
	if got := gittest.Show(t, run.repo, run.res.Branch, "victim.txt"); got != "keep me" {
		t.Errorf("victim.txt on the branch: %q", got)
	}
}

// An untrusted task runs with the repository's code off: no hook, no MCP
// server; its deny rule and its skill (as text) stay.
func TestUntrustedRepository(t *testing.T) {
	run := runRepoTask(t, true, false)
	if slices.Contains(run.reqs[0].ToolNames(), "mcp__probe__echo") {
		t.Error("an untrusted repository's MCP server started")
	}
	if !run.skillListed(t) {
		t.Error("the Skill tool does not list the repository's skill")
	}
	if text, isErr := run.result(t, 1); isErr {
		t.Errorf("the first command failed: %s", text)
	}
	if _, err := os.Stat(run.hookLog); err == nil {
		t.Error("an untrusted repository's hook ran")
	}
	if text, isErr := run.result(t, 2); !isErr || !strings.Contains(text, "denies `rm victim.txt`") {
		t.Errorf("rm was not denied by the repository's rule: %s", text)
	}
	if got := gittest.Show(t, run.repo, run.res.Branch, "victim.txt"); got != "keep me" {
		t.Errorf("victim.txt on the branch: %q", got)
	}
}
