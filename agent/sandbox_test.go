package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tackcode/tack/internal/llm"
	"github.com/tackcode/tack/internal/llm/llmtest"
)

// TestSandboxedBash: with the sandbox on, commands run without asking,
// write in the working directory only, reach no network, and an excluded
// command runs outside.
func TestSandboxedBash(t *testing.T) {
	needBwrap(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	outside := filepath.Join(t.TempDir(), "outside.txt")
	srv := llmtest.New(t,
		llmtest.Reply(llmtest.ToolUse("Bash", map[string]string{"command": "touch inside.txt && echo made"})),
		llmtest.Reply(llmtest.ToolUse("Bash", map[string]string{"command": "touch " + outside + " /etc/tack-sandbox-probe; echo status=$?"})),
		llmtest.Reply(llmtest.ToolUse("Bash", map[string]string{"command": fmt.Sprintf("exec 3<>/dev/tcp/127.0.0.1/%d && echo connected || echo no network", ln.Addr().(*net.TCPAddr).Port)})),
		llmtest.Reply(llmtest.ToolUse("Bash", map[string]string{"command": "printf x > " + outside})),
		llmtest.Reply(llmtest.Text("done")))
	opts := testOptions(t, srv)
	opts.Sandbox = &SandboxSettings{Enabled: true, ExcludedCommands: []string{"printf"}}
	// printf runs outside the sandbox: it is asked about, the others not.
	var asked []string
	opts.CanUseTool = func(_ context.Context, _ string, input json.RawMessage, _ ToolPermissionContext) (PermissionResult, error) {
		asked = append(asked, string(input))
		return PermissionResult{Allow: true}, nil
	}
	collect(t, context.Background(), "work", opts)
	if len(asked) != 1 || !strings.Contains(asked[0], "printf") {
		t.Errorf("asked about %q, want only the excluded command", asked)
	}
	reqs := srv.Requests()
	result := func(i int) llm.Block {
		t.Helper()
		res := reqs[i].ToolResults()
		if len(res) != 1 {
			t.Fatalf("request %d: %d results", i, len(res))
		}
		return res[0]
	}
	if r := result(1); r.IsError || !strings.Contains(llm.TextOf(r.Content), "made") {
		t.Errorf("a sandboxed command needed approval or failed: %+v", r)
	}
	if _, err := os.Stat(filepath.Join(opts.Cwd, "inside.txt")); err != nil {
		t.Errorf("the working directory is not writable: %v", err)
	}
	if text := llm.TextOf(result(2).Content); !strings.Contains(text, "Read-only file system") {
		t.Errorf("writing outside: %q", text)
	}
	if _, err := os.Stat("/etc/tack-sandbox-probe"); err == nil {
		os.Remove("/etc/tack-sandbox-probe")
		t.Error("the sandbox let a command write /etc")
	}
	if text := llm.TextOf(result(3).Content); !strings.Contains(text, "no network") {
		t.Errorf("network: %q", text)
	}
	if r := result(4); r.IsError {
		t.Errorf("the excluded command failed: %+v", r)
	}
	if data, err := os.ReadFile(outside); err != nil || string(data) != "x" {
		t.Errorf("the excluded command did not run outside the sandbox: %q %v", data, err)
	}
}

func TestSandboxWithoutBwrapRefusesToStart(t *testing.T) {
	srv := llmtest.New(t)
	opts := testOptions(t, srv)
	opts.Sandbox = &SandboxSettings{Enabled: true}
	opts.Env["PATH"] = t.TempDir() // no bwrap there
	t.Setenv("PATH", t.TempDir())
	for _, err := range Query(context.Background(), "x", opts) {
		if err == nil || !strings.Contains(err.Error(), "bubblewrap") {
			t.Errorf("err %v", err)
		}
		break
	}
}

// TestSandboxedWorktreeAgentWritesItsWorktree: a worktree subagent's
// sandbox lets it write its own worktree.
func TestSandboxedWorktreeAgentWritesItsWorktree(t *testing.T) {
	needBwrap(t)
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not installed")
	}
	srv := llmtest.Start(t, llmtest.Options{Turns: []llmtest.Turn{
		turnFor("isolate", llmtest.ToolUse("Agent", map[string]any{"description": "edit", "prompt": "WT-SANDBOX", "isolation": "worktree"})),
		turnFor("WT-SANDBOX", llmtest.ToolUse("Bash", map[string]string{"command": "echo sandboxed > made.txt && cat made.txt"})),
		turnFor("WT-SANDBOX", llmtest.Text("made")),
		turnFor("isolate", llmtest.Text("ok")),
	}})
	opts := testOptions(t, srv)
	opts.Env["XDG_CACHE_HOME"] = t.TempDir()
	opts.Sandbox = &SandboxSettings{Enabled: true}
	gitRepo(t, opts.Cwd)
	collect(t, context.Background(), "isolate", opts)
	child := requestsFor(srv, "WT-SANDBOX")
	if res := child[1].ToolResults(); len(res) != 1 || res[0].IsError || !strings.Contains(llm.TextOf(res[0].Content), "sandboxed") {
		t.Errorf("the sandboxed worktree agent could not write its worktree: %+v", res)
	}
	if _, err := os.Stat(filepath.Join(opts.Cwd, "made.txt")); err == nil {
		t.Error("the file appeared in the main tree")
	}
}

// TestSandboxedSkillInjection: a skill's !`command` runs in the sandbox too
// (its /tmp is private: a file of the real /tmp is not there).
func TestSandboxedSkillInjection(t *testing.T) {
	needBwrap(t)
	marker, err := os.CreateTemp("", "tack-sandbox-marker-*")
	if err != nil {
		t.Fatal(err)
	}
	marker.Close()
	defer os.Remove(marker.Name())
	srv := llmtest.Start(t, llmtest.Options{Turns: []llmtest.Turn{turnFor("probe is running", llmtest.Text("seen"))}})
	opts := testOptions(t, srv)
	opts.Sandbox = &SandboxSettings{Enabled: true}
	writeFile(t, filepath.Join(opts.Cwd, ".claude", "commands", "probe.md"),
		"---\ndescription: Probe\n---\nResult: !`ls "+marker.Name()+" 2>&1`\n")
	collect(t, context.Background(), "/probe", opts)
	reqs := requestsFor(srv, "probe is running")
	if len(reqs) != 1 || !strings.Contains(string(reqs[0].Body), "No such file or directory") {
		t.Errorf("the injection did not run in the sandbox: %s", llm.TextOf(reqs[0].Messages[0].Content))
	}
}

// needBwrap fails the test without bubblewrap, and skips it where the
// machine forbids the namespaces bubblewrap needs (some containers).
func needBwrap(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("bwrap"); err != nil {
		t.Fatal("bubblewrap is not installed: scripts/test installs it (apt-get install bubblewrap)")
	}
	if out, err := exec.Command("bwrap", "--ro-bind", "/", "/", "--unshare-net", "true").CombinedOutput(); err != nil {
		t.Skipf("bubblewrap cannot make a sandbox on this machine: %v: %s", err, out)
	}
}
