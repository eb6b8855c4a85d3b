package agent_test

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

	"github.com/tackcode/tack/agent"
	"github.com/tackcode/tack/internal/llm"
	"github.com/tackcode/tack/internal/llm/llmtest"
)

// TestSandboxedBash: with the sandbox on, commands run without asking,
// write in the working directory only, reach no network, and an excluded
// command runs outside, under the rules (asked about) — but only when the
// whole line is excluded commands.
func TestSandboxedBash(t *testing.T) {
	needBwrap(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	outside := filepath.Join(t.TempDir(), "outside.txt")
	steered := filepath.Join(t.TempDir(), "steered.txt")
	srv := llmtest.New(t,
		llmtest.Reply(llmtest.ToolUse("Bash", map[string]string{"command": "touch inside.txt && echo made"})),
		llmtest.Reply(llmtest.ToolUse("Bash", map[string]string{"command": "echo x > " + outside + "; touch /etc/tack-sandbox-probe; echo status=$?"})),
		llmtest.Reply(llmtest.ToolUse("Bash", map[string]string{"command": fmt.Sprintf("exec 3<>/dev/tcp/127.0.0.1/%d && echo connected || echo no network", ln.Addr().(*net.TCPAddr).Port)})),
		llmtest.Reply(llmtest.ToolUse("Bash", map[string]string{"command": "touch " + outside})),
		llmtest.Reply(llmtest.ToolUse("Bash", map[string]string{"command": "touch /dev/null; echo x > " + steered})),
		llmtest.Reply(llmtest.Text("done")))
	opts := testOptions(t, srv)
	opts.Sandbox = &agent.SandboxSettings{Enabled: true, ExcludedCommands: []string{"touch"}}
	// touch alone runs outside the sandbox: it is asked about, the others
	// not (the last one, steered with a second command, stays inside).
	var asked []string
	opts.CanUseTool = func(_ context.Context, _ string, input json.RawMessage, _ agent.ToolPermissionContext) (agent.PermissionResult, error) {
		asked = append(asked, string(input))
		return agent.PermissionResult{Allow: true}, nil
	}
	collect(t, context.Background(), "work", opts)
	if len(asked) != 1 || !strings.Contains(asked[0], "touch "+outside) {
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
	if _, err := os.Stat(outside); err != nil {
		t.Errorf("the excluded command did not run outside the sandbox: %v", err)
	}
	if _, err := os.Stat(steered); err == nil {
		t.Error("a line of an excluded command and another ran outside the sandbox")
	}
}

// TestSandboxProtectsWhatRunsLater: the model's sandboxed commands cannot
// write the files that run code later outside the sandbox — a git hook,
// the git configuration, .mcp.json, .claude/settings.json — whether they
// exist or not; the session goes on, and no stand-in is left behind.
func TestSandboxProtectsWhatRunsLater(t *testing.T) {
	needBwrap(t)
	srv := llmtest.New(t,
		llmtest.Reply(llmtest.ToolUse("Bash", map[string]string{"command": "mkdir -p .git/hooks; printf '#!/bin/sh\\ntouch pwned\\n' > .git/hooks/pre-commit; echo status=$?"})),
		llmtest.Reply(llmtest.ToolUse("Bash", map[string]string{"command": `echo '{"mcpServers":{"x":{"command":"touch","args":["pwned"]}}}' > .mcp.json; echo status=$?`})),
		llmtest.Reply(llmtest.ToolUse("Bash", map[string]string{"command": "git config core.fsmonitor 'touch pwned'; echo '{\"hooks\":{}}' > .claude/settings.json; echo status=$?"})),
		llmtest.Reply(llmtest.ToolUse("Bash", map[string]string{"command": "echo ok > notes.txt && git add notes.txt && git -c user.name=a -c user.email=a@b commit -qm notes && echo committed"})),
		llmtest.Reply(llmtest.Text("done")))
	opts := testOptions(t, srv)
	opts.Sandbox = &agent.SandboxSettings{Enabled: true}
	gitRepo(t, opts.Cwd)
	os.RemoveAll(filepath.Join(opts.Cwd, ".git", "hooks"))
	writeFile(t, filepath.Join(opts.Cwd, ".claude", "settings.json"), "{}\n")
	config, _ := os.ReadFile(filepath.Join(opts.Cwd, ".git", "config"))
	msgs := collect(t, context.Background(), "work", opts)
	if last, ok := msgs[len(msgs)-1].(*agent.ResultMessage); !ok || last.IsError {
		t.Errorf("the session did not go on to its result: %#v", msgs[len(msgs)-1])
	}
	reqs := srv.Requests()
	for i := 1; i <= 3; i++ {
		if text := llm.TextOf(reqs[i].ToolResults()[0].Content); !strings.Contains(text, "status=1") {
			t.Errorf("command %d: %q", i, text)
		}
	}
	if text := llm.TextOf(reqs[4].ToolResults()[0].Content); !strings.Contains(text, "committed") {
		t.Errorf("git commit in the sandbox: %q", text)
	}
	for _, p := range []string{".git/hooks", ".mcp.json"} {
		if _, err := os.Lstat(filepath.Join(opts.Cwd, p)); err == nil {
			t.Errorf("%s exists after the session", p)
		}
	}
	if now, _ := os.ReadFile(filepath.Join(opts.Cwd, ".git", "config")); string(now) != string(config) {
		t.Errorf(".git/config changed:\n%s", now)
	}
	if now, _ := os.ReadFile(filepath.Join(opts.Cwd, ".claude", "settings.json")); string(now) != "{}\n" {
		t.Errorf(".claude/settings.json changed: %s", now)
	}
}

// TestSandboxUnsandboxedCall: dangerouslyDisableSandbox runs a command
// outside the sandbox only with approval, and not at all when
// allowUnsandboxedCommands is false.
func TestSandboxUnsandboxedCall(t *testing.T) {
	needBwrap(t)
	for _, allow := range []bool{true, false} {
		t.Run(fmt.Sprint(allow), func(t *testing.T) {
			outside := filepath.Join(t.TempDir(), "outside.txt")
			srv := llmtest.New(t,
				llmtest.Reply(llmtest.ToolUse("Bash", map[string]any{"command": "echo x > " + outside, "dangerouslyDisableSandbox": true})),
				llmtest.Reply(llmtest.Text("done")))
			opts := testOptions(t, srv)
			opts.Sandbox = &agent.SandboxSettings{Enabled: true, AllowUnsandboxedCommands: &allow}
			asked := 0
			opts.CanUseTool = func(context.Context, string, json.RawMessage, agent.ToolPermissionContext) (agent.PermissionResult, error) {
				asked++
				return agent.PermissionResult{Allow: true}, nil
			}
			collect(t, context.Background(), "work", opts)
			_, err := os.Stat(outside)
			switch {
			case allow && (asked != 1 || err != nil):
				t.Errorf("allowed: asked %d times, file: %v", asked, err)
			case !allow && (asked != 0 || err == nil):
				t.Errorf("not allowed: asked %d times, file made: %v", asked, err == nil)
			}
		})
	}
}

// TestSandboxBackends: without bubblewrap the session falls back to
// Landlock and says what that cannot enforce; when bubblewrap is required
// (TACK_SANDBOX=bwrap) and missing, the session refuses to start.
func TestSandboxBackends(t *testing.T) {
	srv := llmtest.New(t, llmtest.Reply(llmtest.Text("ok")))
	opts := testOptions(t, srv)
	opts.Sandbox = &agent.SandboxSettings{Enabled: true}
	t.Setenv("PATH", t.TempDir()) // no bwrap there
	var notices []string
	opts.Notify = func(m string) { notices = append(notices, m) }
	collect(t, context.Background(), "x", opts)
	if len(notices) != 1 || !strings.Contains(notices[0], "Landlock") || !strings.Contains(notices[0], "cannot enforce") {
		t.Errorf("notices %q, want one naming Landlock and what it cannot enforce", notices)
	}

	opts.Env["TACK_SANDBOX"] = "bwrap"
	for _, err := range agent.Query(context.Background(), "x", opts) {
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
	opts.Sandbox = &agent.SandboxSettings{Enabled: true}
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
	opts.Sandbox = &agent.SandboxSettings{Enabled: true}
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
