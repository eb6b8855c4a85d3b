package tui

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tackcode/tack/internal/llm/llmtest"
)

// clonedRepo publishes, in a local bare repository, a project whose
// .claude/settings.json has a SessionStart and a PreToolUse hook and whose
// .mcp.json has a server, each writing a canary in canaries when it runs,
// and returns a fresh clone of it for each name.
func clonedRepo(t *testing.T, canaries string, names ...string) []string {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed: the trust dialog test clones a repository")
	}
	tmp := t.TempDir()
	git := func(dir string, args ...string) {
		t.Helper()
		cmd := exec.Command("git", append([]string{"-c", "user.name=t", "-c", "user.email=t@example.com", "-c", "init.defaultBranch=main"}, args...)...)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	origin := filepath.Join(tmp, "origin.git")
	work := filepath.Join(tmp, "work")
	git(tmp, "init", "-q", "--bare", origin)
	git(tmp, "init", "-q", work)
	touch := func(name string) string { return "touch " + filepath.Join(canaries, name) }
	files := map[string]string{
		".claude/settings.json": `{
  "hooks": {
    "SessionStart": [{"hooks": [{"type": "command", "command": "` + touch("session-start") + `"}]}],
    "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "` + touch("pre-tool-use") + `"}]}]
  },
  "enableAllProjectMcpServers": true
}
`,
		".mcp.json": `{"mcpServers": {"setup": {"command": "sh", "args": ["-c", "` + touch("mcp") + `"]}}}` + "\n",
		"README.md": "A project that runs code when opened.\n",
	}
	for name, content := range files {
		p := filepath.Join(work, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	git(work, "add", ".")
	git(work, "commit", "-q", "-m", "init")
	git(work, "push", "-q", origin, "HEAD:main")
	var clones []string
	for _, n := range names {
		git(tmp, "clone", "-q", origin, n)
		clones = append(clones, filepath.Join(tmp, n))
	}
	return clones
}

// canariesIn lists the canaries that exist.
func canariesIn(dir string) []string {
	var out []string
	for _, n := range []string{"session-start", "pre-tool-use", "mcp"} {
		if _, err := os.Stat(filepath.Join(dir, n)); err == nil {
			out = append(out, n)
		}
	}
	return out
}

// waitForFile polls for path; the deadline only bounds a test that would
// otherwise hang.
func waitForFile(t *testing.T, path string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		if _, err := os.Stat(path); err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s never appeared", path)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// trustedIn reads the trust record of dir in ~/.claude.json.
func trustedIn(t *testing.T, claudeJSON, dir string) bool {
	t.Helper()
	data, err := os.ReadFile(claudeJSON)
	if os.IsNotExist(err) {
		return false
	}
	var doc struct {
		Projects map[string]struct {
			HasTrustDialogAccepted bool `json:"hasTrustDialogAccepted"`
		} `json:"projects"`
	}
	if err != nil || json.Unmarshal(data, &doc) != nil {
		t.Fatalf("~/.claude.json: %v\n%s", err, data)
	}
	return doc.Projects[dir].HasTrustDialogAccepted
}

// TestTerminalTrustDialog opens tack in freshly cloned repositories, in a
// real terminal: nothing of the repository runs before the answer; "trust"
// runs it and is remembered, "no" runs the session with it off, Esc leaves.
func TestTerminalTrustDialog(t *testing.T) {
	requireTmux(t)
	bin := buildTack(t)
	canaries := t.TempDir()
	clones := clonedRepo(t, canaries, "trusted", "declined", "left")
	home := t.TempDir()
	claudeJSON := filepath.Join(home, ".claude", ".claude.json")
	srv := llmtest.New(t,
		llmtest.Reply(llmtest.ToolUse("Bash", map[string]string{"command": "echo from-the-model"})),
		llmtest.Reply(llmtest.Text("Done in the trusted clone.")),
		llmtest.Reply(llmtest.ToolUse("Bash", map[string]string{"command": "echo from-the-model"})),
		llmtest.Reply(llmtest.Text("Done in the declined clone.")),
	)
	env := terminalEnv(home, srv)

	// Trust: the dialog shows, nothing runs while it waits.
	s := startTmux(t, clones[0], env, bin+"; sleep 600")
	screen := s.waitFor("Do you trust the files in this folder?")
	for _, want := range []string{clones[0], "hooks, enableAllProjectMcpServers (.claude/settings.json)", "MCP servers (.mcp.json)", "1. Yes, trust this folder", "2. No"} {
		if !strings.Contains(screen, want) {
			t.Errorf("the dialog lacks %q:\n%s", want, screen)
		}
	}
	if ran := canariesIn(canaries); len(ran) != 0 || trustedIn(t, claudeJSON, clones[0]) {
		t.Fatalf("before the answer: %v ran, trust recorded %v", ran, trustedIn(t, claudeJSON, clones[0]))
	}
	s.keys("Enter")
	s.waitFor("/help for commands")
	waitForFile(t, filepath.Join(canaries, "session-start"))
	waitForFile(t, filepath.Join(canaries, "mcp"))
	if !trustedIn(t, claudeJSON, clones[0]) {
		t.Error("trust was not recorded in ~/.claude.json")
	}
	// echo is read-only: it runs without asking, after the PreToolUse hook.
	s.text("run it")
	s.keys("Enter")
	s.waitFor("Done in the trusted clone.")
	if ran := canariesIn(canaries); !slices.Equal(ran, []string{"session-start", "pre-tool-use", "mcp"}) {
		t.Errorf("trusted: ran %v", ran)
	}
	s.keys("C-c")
	s.waitFor("Press Ctrl-C again to exit")
	s.keys("C-c")

	// A second start asks nothing.
	for _, c := range []string{"session-start", "pre-tool-use", "mcp"} {
		os.Remove(filepath.Join(canaries, c))
	}
	s2 := startTmux(t, clones[0], env, bin+"; sleep 600")
	screen = s2.waitFor("/help for commands")
	if strings.Contains(screen, "Do you trust") {
		t.Errorf("asked again:\n%s", screen)
	}
	waitForFile(t, filepath.Join(canaries, "session-start"))
	for _, c := range []string{"session-start", "pre-tool-use", "mcp"} {
		os.Remove(filepath.Join(canaries, c))
	}
	s2.keys("C-c")
	s2.waitFor("Press Ctrl-C again to exit")
	s2.keys("C-c")

	// No: the session runs, the repository's code never does.
	s3 := startTmux(t, clones[1], env, bin+"; sleep 600")
	s3.waitFor("Do you trust the files in this folder?")
	s3.keys("2")
	s3.waitFor("/help for commands")
	s3.waitFor(clones[1] + " is not a trusted folder, so what it brings is off")
	s3.text("run it")
	s3.keys("Enter")
	screen = s3.waitFor("Done in the declined clone.")
	if !strings.Contains(screen, "from-the-model") {
		t.Errorf("the command did not run:\n%s", screen)
	}
	if ran := canariesIn(canaries); len(ran) != 0 {
		t.Errorf("declined: %v ran", ran)
	}
	if trustedIn(t, claudeJSON, clones[1]) {
		t.Error("declined: trust was recorded")
	}

	// Esc: tack leaves at once, the terminal restored, nothing run.
	status := filepath.Join(t.TempDir(), "after.txt")
	s4 := startTmux(t, clones[2], env, fmt.Sprintf("%s; echo EXIT:$? > %s; stty -a >> %s; echo DONE; sleep 600", bin, status, status))
	s4.waitFor("Do you trust the files in this folder?")
	s4.keys("Escape")
	s4.waitFor("DONE")
	data, err := os.ReadFile(status)
	if err != nil {
		t.Fatal(err)
	}
	after := string(data)
	words := strings.Fields(strings.ReplaceAll(after, ";", " "))
	for _, mode := range []string{"EXIT:0", "icanon", "echo", "isig"} {
		if !slices.Contains(words, mode) {
			t.Errorf("after Esc: %q missing (exit status, terminal mode):\n%s", mode, after)
		}
	}
	if ran := canariesIn(canaries); len(ran) != 0 || trustedIn(t, claudeJSON, clones[2]) {
		t.Errorf("after Esc: %v ran, trust recorded %v", ran, trustedIn(t, claudeJSON, clones[2]))
	}
}
