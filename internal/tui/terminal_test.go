package tui

// Real-terminal tests: the tack binary runs in a tmux session against the
// scripted fake Messages API, driven with send-keys and read with
// capture-pane, as a user at a terminal would.

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tackcode/tack/agent"
	"github.com/tackcode/tack/internal/llm/llmtest"
	"github.com/tackcode/tack/internal/testbin"
)

var (
	buildOnce sync.Once
	tackBin   string
	buildErr  error
)

// buildTack builds the tack binary once for the package's tests.
func buildTack(t *testing.T) string {
	t.Helper()
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "tack-tui-")
		if err != nil {
			buildErr = err
			return
		}
		tackBin = filepath.Join(dir, "tack")
		build := exec.Command("go", "build", "-o", tackBin, "github.com/tackcode/tack/cmd/tack")
		build.Env = testbin.BuildEnv()
		out, err := build.CombinedOutput()
		if err != nil {
			buildErr = fmt.Errorf("build tack: %v\n%s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return tackBin
}

// tmuxSession is tack running in a detached tmux session.
type tmuxSession struct {
	t    *testing.T
	name string
	sock string
}

func requireTmux(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Skip("tmux is not installed: the real-terminal tests of the UI need it (apt-get install tmux)")
	}
	if testing.Short() {
		t.Skip("real-terminal test skipped in -short mode")
	}
}

// startTmux runs command in a new tmux server of its own (a private
// socket), in a window of 100×30 cells.
func startTmux(t *testing.T, dir string, env []string, command string) *tmuxSession {
	t.Helper()
	tmp := t.TempDir()
	s := &tmuxSession{t: t, name: "tack", sock: filepath.Join(tmp, "tmux.sock")}
	// The window has its size from the start: a resize while tack runs
	// would move lines under it. scroll-on-clear is off: with it, tmux
	// pushes the screen into its history when the renderer erases from
	// the top-left corner (which it does while the live region is still on
	// the first row), leaving a copy of the live region there.
	conf := filepath.Join(tmp, "tmux.conf")
	if err := os.WriteFile(conf, []byte("set -g default-size 100x30\nset -g history-limit 5000\nset -g scroll-on-clear off\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	args := []string{"-S", s.sock, "-f", conf, "new-session", "-d", "-s", s.name, "-x", "100", "-y", "30", "-c", dir}
	for _, e := range env {
		args = append(args, "-e", e)
	}
	args = append(args, command)
	if out, err := exec.Command("tmux", args...).CombinedOutput(); err != nil {
		t.Fatalf("tmux new-session: %v\n%s", err, out)
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("screen at the end:\n%s", s.capture())
		}
		_ = exec.Command("tmux", "-S", s.sock, "kill-server").Run()
	})
	return s
}

func (s *tmuxSession) tmux(args ...string) string {
	s.t.Helper()
	out, err := exec.Command("tmux", append([]string{"-S", s.sock}, args...)...).CombinedOutput()
	if err != nil {
		s.t.Fatalf("tmux %v: %v\n%s", args, err, out)
	}
	return string(out)
}

func (s *tmuxSession) capture() string {
	out, _ := exec.Command("tmux", "-S", s.sock, "capture-pane", "-p", "-J", "-S", "-200", "-t", s.name).CombinedOutput()
	return string(out)
}

// keys sends tmux key names (Enter, BTab, C-c) or literal text.
func (s *tmuxSession) keys(keys ...string) {
	s.t.Helper()
	s.tmux(append([]string{"send-keys", "-t", s.name}, keys...)...)
}

func (s *tmuxSession) text(text string) {
	s.t.Helper()
	s.tmux("send-keys", "-t", s.name, "-l", text)
}

// waitFor polls the screen until it shows want. The deadline only bounds a
// test that would otherwise hang; nothing is measured.
func (s *tmuxSession) waitFor(want string) string {
	s.t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		screen := s.capture()
		if strings.Contains(screen, want) {
			return screen
		}
		if time.Now().After(deadline) {
			s.t.Fatalf("the screen never showed %q:\n%s", want, screen)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// terminalEnv is the environment of tack in a terminal test: a home of
// its own, the fake API.
func terminalEnv(home string, srv *llmtest.Server) []string {
	return []string{
		"HOME=" + home,
		"CLAUDE_CONFIG_DIR=" + filepath.Join(home, ".claude"),
		"ANTHROPIC_API_KEY=test-key",
		"ANTHROPIC_BASE_URL=" + srv.URL(),
		"SHELL=/bin/sh",
		"TERM=xterm-256color",
	}
}

// trustFolder records that the user of home trusts dir, as answering yes
// to the trust question does.
func trustFolder(t *testing.T, dir, home string) {
	t.Helper()
	if _, err := agent.TrustWorkspace(agent.Options{Cwd: dir, Env: map[string]string{"HOME": home, "CLAUDE_CONFIG_DIR": filepath.Join(home, ".claude")}}); err != nil {
		t.Fatal(err)
	}
}

func TestTerminalSession(t *testing.T) {
	requireTmux(t)
	bin := buildTack(t)
	proj, home := t.TempDir(), t.TempDir()
	target := filepath.Join(proj, "notes.txt")
	srv := llmtest.New(t,
		llmtest.Reply(llmtest.Text("The answer is **42**.")),
		llmtest.Reply(llmtest.Text("Writing it down."), llmtest.ToolUse("Write", map[string]any{"file_path": target, "content": "forty-two\n"})),
		llmtest.Reply(llmtest.Text("The file is written.")),
		llmtest.Reply(llmtest.Text("<summary>The user asked for the answer and a file.</summary>")),
	)
	env := terminalEnv(home, srv)
	trustFolder(t, proj, home)
	status := filepath.Join(t.TempDir(), "after.txt")
	// After tack exits: its exit code and the terminal's mode, to check it
	// was restored (canonical input and echo back on).
	cmd := fmt.Sprintf("%s; echo EXIT:$? > %s; stty -a >> %s; echo DONE; sleep 600", bin, status, status)
	s := startTmux(t, proj, env, cmd)

	s.waitFor("/help for commands")
	s.text("what is the answer?")
	s.keys("Enter")
	screen := s.waitFor("The answer is 42.")
	if !strings.Contains(screen, "> what is the answer?") {
		t.Errorf("the prompt is not in the scrollback:\n%s", screen)
	}

	s.text("write it to a file")
	s.keys("Enter")
	screen = s.waitFor("Do you want to proceed?")
	for _, want := range []string{"Create file notes.txt", "+ forty-two", "1. Yes"} {
		if !strings.Contains(screen, want) {
			t.Errorf("the dialog lacks %q:\n%s", want, screen)
		}
	}
	s.keys("Enter")
	s.waitFor("The file is written.")
	if data, err := os.ReadFile(target); err != nil || string(data) != "forty-two\n" {
		t.Errorf("the file on disk: %q %v", data, err)
	}

	s.keys("BTab")
	s.waitFor("accept edits on")
	s.keys("BTab")
	s.waitFor("plan mode on")

	s.text("/compact")
	s.keys("Enter")
	s.waitFor("Conversation compacted")

	s.keys("C-c")
	s.waitFor("Press Ctrl-C again to exit")
	s.keys("C-c")
	screen = s.waitFor("DONE")
	data, err := os.ReadFile(status)
	if err != nil {
		t.Fatal(err)
	}
	after := string(data)
	if !strings.Contains(after, "EXIT:0") {
		t.Errorf("tack did not exit cleanly: %s", after)
	}
	words := strings.Fields(strings.ReplaceAll(after, ";", " "))
	for _, mode := range []string{"icanon", "echo", "isig", "icrnl", "opost"} {
		if !slices.Contains(words, mode) {
			t.Errorf("terminal mode %q not restored:\n%s", mode, after)
		}
	}
	// Inline rendering: the conversation stays in the scrollback, and the
	// live region (prompt box, status) is gone.
	if !strings.Contains(screen, "The answer is 42.") || strings.Contains(screen, "shift+tab to cycle") {
		t.Errorf("screen and history after exit:\n%s", screen)
	}
	flags := s.tmux("display-message", "-p", "-t", s.name, "#{alternate_on} #{cursor_flag}")
	if strings.TrimSpace(flags) != "0 1" {
		t.Errorf("alternate screen / cursor visible flags after exit: %q, want \"0 1\"", flags)
	}

	// tack -c "prompt": the conversation goes on, its end shown first, the
	// argument sent as the first prompt.
	srv.Append(llmtest.Reply(llmtest.Text("Continuing where we left off.")))
	s2 := startTmux(t, proj, env, bin+` -c "and now?"; sleep 600`)
	s2.waitFor("> and now?")
	screen = s2.waitFor("Continuing where we left off.")
	for _, want := range []string{"The end of the resumed conversation", "> and now?"} {
		if !strings.Contains(screen, want) {
			t.Errorf("tack -c lacks %q:\n%s", want, screen)
		}
	}
	if strings.Index(screen, "The end of the resumed conversation") > strings.Index(screen, "> and now?") {
		t.Errorf("the new prompt comes before the resumed conversation:\n%s", screen)
	}
}
