package tui

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/tackcode/tack/agent"
	"github.com/tackcode/tack/internal/diff"
)

func TestPromptIsSentAndEchoed(t *testing.T) {
	h := newHarness(t)
	h.typeText("fix the bug")
	h.enter()
	if len(h.be.sent) != 1 || h.be.sent[0] != "fix the bug" {
		t.Fatalf("sent %q", h.be.sent)
	}
	if !strings.Contains(h.allPrinted(), "> fix the bug") {
		t.Errorf("the prompt is not echoed: %q", h.printed)
	}
	if h.m.input.Value() != "" {
		t.Errorf("input not cleared: %q", h.m.input.Value())
	}
	if v := h.view(); !strings.Contains(v, "Working…") || !strings.Contains(v, "esc to interrupt") {
		t.Errorf("no spinner while the model works:\n%s", v)
	}
}

func TestStreamingPrintsFinishedParagraphsOnce(t *testing.T) {
	h := newHarness(t)
	h.typeText("hi")
	h.enter()
	h.printed = nil
	h.send(engineMsg{msg: event(`{"type":"message_start","message":{}}`)})
	h.send(engineMsg{msg: event(`{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`)})
	h.send(engineMsg{msg: textDelta(0, "Hello **wor")})
	if len(h.printed) != 0 {
		t.Fatalf("printed before a paragraph ended: %q", h.printed)
	}
	if v := h.view(); !strings.Contains(v, "Hello **wor") {
		t.Errorf("the streaming text is not shown live:\n%s", v)
	}
	h.send(engineMsg{msg: textDelta(0, "ld**\n\n```go\nx := 1\n\ny := 2\n")})
	if len(h.printed) != 1 || !strings.Contains(h.printed[0], "Hello world") || strings.Contains(h.printed[0], "**") {
		t.Fatalf("the finished paragraph is not printed as Markdown: %q", h.printed)
	}
	if v := h.view(); strings.Contains(v, "Hello") || !strings.Contains(v, "x := 1") {
		t.Errorf("live region after the paragraph:\n%s", v)
	}
	// A blank line inside a code fence does not end a paragraph.
	h.send(engineMsg{msg: textDelta(0, "```\n\nBye.")})
	if len(h.printed) != 2 || !strings.Contains(h.printed[1], "y := 2") {
		t.Fatalf("the code block: %q", h.printed)
	}
	h.send(engineMsg{msg: event(`{"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":321}}`)})
	if v := h.view(); !strings.Contains(v, "321 tokens") {
		t.Errorf("no token count:\n%s", v)
	}
	h.send(engineMsg{msg: event(`{"type":"content_block_stop","index":0}`)})
	if len(h.printed) != 3 || !strings.Contains(h.printed[2], "Bye.") {
		t.Fatalf("the rest is not printed at the block's end: %q", h.printed)
	}
	// The assistant message repeats the streamed block: not printed again.
	h.send(engineMsg{msg: assistant(agent.TextBlock("Hello **world**\n\n```go\nx := 1\n\ny := 2\n```\n\nBye."))})
	if len(h.printed) != 3 {
		t.Fatalf("printed twice: %q", h.printed)
	}
	h.send(engineMsg{msg: result(0.0123)})
	if h.m.busy() {
		t.Error("still busy after the result")
	}
	if v := h.view(); strings.Contains(v, "Working") || !strings.Contains(v, "$0.0123") {
		t.Errorf("after the result:\n%s", v)
	}
}

func TestUnstreamedTextIsPrinted(t *testing.T) {
	h := newHarness(t)
	h.send(engineMsg{msg: assistant(agent.TextBlock("just *this*"))})
	if !strings.Contains(h.allPrinted(), "just this") {
		t.Errorf("printed %q", h.printed)
	}
}

func TestBashCallShowsFoldedOutputAndExitCode(t *testing.T) {
	h := newHarness(t)
	h.send(engineMsg{msg: assistant(agent.ContentBlock{Type: agent.BlockToolUse, ID: "t1", Name: "Bash", Input: json.RawMessage(`{"command":"make test"}`)})})
	if v := h.view(); !strings.Contains(v, "Bash(make test)") {
		t.Errorf("the running call is not shown:\n%s", v)
	}
	h.send(engineMsg{msg: toolResult("t1", "Exit code 2\nl1\nl2\nl3\nl4\nl5\nl6", true, nil)})
	out := h.allPrinted()
	for _, want := range []string{"Bash(make test)", "l1", "l4", "… +2 lines", "exit 2"} {
		if !strings.Contains(out, want) {
			t.Errorf("missing %q in\n%s", want, out)
		}
	}
	if strings.Contains(out, "l5") {
		t.Errorf("long output not folded:\n%s", out)
	}
	if strings.Contains(h.view(), "Bash(make test)") {
		t.Error("the finished call is still in the live region")
	}
}

func TestEditCallShowsDiff(t *testing.T) {
	h := newHarness(t)
	path := filepath.Join(h.m.cfg.cwd, "a.go")
	h.send(engineMsg{msg: assistant(agent.ContentBlock{Type: agent.BlockToolUse, ID: "t1", Name: "Edit", Input: json.RawMessage(`{"file_path":"` + path + `","old_string":"old","new_string":"new"}`)})})
	h.send(engineMsg{msg: toolResult("t1", "ok", false, map[string]any{"structuredPatch": diff.Patch("a\nold\nb\n", "a\nnew\nb\n")})})
	out := h.allPrinted()
	for _, want := range []string{"Update(a.go)", "1 addition", "1 removal", "- old", "+ new"} {
		if !strings.Contains(out, want) {
			t.Errorf("missing %q in\n%s", want, out)
		}
	}
}

func TestSubagentProgress(t *testing.T) {
	h := newHarness(t)
	h.send(engineMsg{msg: assistant(agent.ContentBlock{Type: agent.BlockToolUse, ID: "a1", Name: "Agent", Input: json.RawMessage(`{"description":"explore","prompt":"p","subagent_type":"Explore"}`)})})
	parent := "a1"
	sub := assistant(agent.ContentBlock{Type: agent.BlockToolUse, ID: "x", Name: "Read", Input: json.RawMessage(`{"file_path":"/x/y.go"}`)})
	sub.ParentToolUseID = &parent
	h.send(engineMsg{msg: sub})
	if v := h.view(); !strings.Contains(v, "Explore(explore)") || !strings.Contains(v, "1 tool use · Read(/x/y.go)") {
		t.Errorf("no subagent progress:\n%s", v)
	}
	h.send(engineMsg{msg: toolResult("a1", "found it", false, nil)})
	if out := h.allPrinted(); !strings.Contains(out, "Done (1 tool use)") || !strings.Contains(out, "found it") {
		t.Errorf("printed %s", out)
	}
}

func permRequestFor(tool, input string) *permRequest {
	return &permRequest{tool: tool, input: json.RawMessage(input), reply: make(chan permAnswer, 1)}
}

func TestPermissionAllowOnce(t *testing.T) {
	h := newHarness(t)
	req := permRequestFor("Bash", `{"command":"rm -rf build","description":"clean"}`)
	h.send(permRequestMsg{req: req})
	v := h.view()
	for _, want := range []string{"Bash command", "rm -rf build", "1. Yes", "2. Yes, and don't ask again for Bash(rm *)", "3. No"} {
		if !strings.Contains(v, want) {
			t.Errorf("dialog lacks %q:\n%s", want, v)
		}
	}
	h.enter() // the default: allow once
	if a := <-req.reply; !a.allow {
		t.Errorf("answer %+v", a)
	}
	if h.m.dialog != nil || len(h.be.rules) != 0 {
		t.Errorf("dialog %v rules %v", h.m.dialog, h.be.rules)
	}
	if _, err := os.Stat(filepath.Join(h.m.cfg.cwd, ".claude", "settings.local.json")); !os.IsNotExist(err) {
		t.Error("allow once wrote settings")
	}
}

func TestPermissionAllowAlwaysWritesRule(t *testing.T) {
	h := newHarness(t)
	req := permRequestFor("Bash", `{"command":"go test ./..."}`)
	h.send(permRequestMsg{req: req})
	h.press(tea.KeyDown)
	h.enter()
	if a := <-req.reply; !a.allow {
		t.Errorf("answer %+v", a)
	}
	// The session takes the rule and saves it to the local settings
	// (host.AllowRule; TestRunWithAgentClient reads the file it writes).
	if len(h.be.rules) != 1 || h.be.rules[0] != "Bash(go test *)" {
		t.Errorf("session rules %q", h.be.rules)
	}
	if !strings.Contains(h.allPrinted(), "Added Bash(go test *) to .claude/settings.local.json") {
		t.Errorf("printed %q", h.printed)
	}
}

func TestPermissionDenyWithMessage(t *testing.T) {
	h := newHarness(t)
	path := filepath.Join(h.m.cfg.cwd, "f.txt")
	if err := os.WriteFile(path, []byte("one\ntwo\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	req := permRequestFor("Edit", `{"file_path":"`+path+`","old_string":"two","new_string":"deux"}`)
	h.send(permRequestMsg{req: req})
	v := h.view()
	for _, want := range []string{"Edit file f.txt", "- two", "+ deux"} {
		if !strings.Contains(v, want) {
			t.Errorf("dialog lacks %q:\n%s", want, v)
		}
	}
	h.typeText("3")
	h.typeText("use French everywhere")
	h.enter()
	a := <-req.reply
	if a.allow || !strings.Contains(a.message, "use French everywhere") {
		t.Errorf("answer %+v", a)
	}
	if !strings.Contains(h.allPrinted(), "Denied Update(f.txt): use French everywhere") {
		t.Errorf("printed %q", h.printed)
	}
}

func TestPermissionEscDenies(t *testing.T) {
	h := newHarness(t)
	req := permRequestFor("Write", `{"file_path":"/tmp/x","content":"x"}`)
	h.send(permRequestMsg{req: req})
	h.press(tea.KeyEscape)
	if a := <-req.reply; a.allow || a.message == "" {
		t.Errorf("answer %+v", a)
	}
}

func TestPermissionCancelledClosesDialog(t *testing.T) {
	h := newHarness(t)
	req := permRequestFor("Bash", `{"command":"ls"}`)
	h.send(permRequestMsg{req: req})
	h.send(permCancelMsg{req: req})
	if h.m.dialog != nil {
		t.Error("the dialog of a withdrawn request stays open")
	}
}

func TestShiftTabCyclesModes(t *testing.T) {
	h := newHarness(t)
	want := []struct {
		mode agent.PermissionMode
		show string
	}{
		{agent.PermissionAcceptEdits, "accept edits on"},
		{agent.PermissionPlan, "plan mode on"},
		{agent.PermissionDefault, "shift+tab to cycle modes"},
	}
	for i, w := range want {
		h.press(tea.KeyTab, tea.ModShift)
		if len(h.be.modes) != i+1 || h.be.modes[i] != w.mode {
			t.Fatalf("step %d: modes %v", i, h.be.modes)
		}
		if v := h.view(); !strings.Contains(v, w.show) {
			t.Errorf("step %d: status does not show %q:\n%s", i, w.show, v)
		}
	}
}

// A session started in auto mode keeps auto in the cycle, after plan.
func TestShiftTabCyclesThroughAutoWhenStartedInIt(t *testing.T) {
	h := newHarness(t, func(c *modelConfig) { c.backend.(*fakeBackend).info.PermissionMode = agent.PermissionAuto })
	if v := h.view(); !strings.Contains(v, "auto mode on") {
		t.Fatalf("status does not show auto mode:\n%s", v)
	}
	for range 4 {
		h.press(tea.KeyTab, tea.ModShift)
	}
	want := []agent.PermissionMode{agent.PermissionDefault, agent.PermissionAcceptEdits, agent.PermissionPlan, agent.PermissionAuto}
	if !slices.Equal(h.be.modes, want) {
		t.Errorf("modes %v, want %v", h.be.modes, want)
	}
}

func TestEscInterruptsRun(t *testing.T) {
	h := newHarness(t)
	h.typeText("go")
	h.enter()
	h.press(tea.KeyEscape)
	if h.be.interrupts != 1 {
		t.Errorf("interrupts %d", h.be.interrupts)
	}
	h.send(engineMsg{msg: &agent.ResultMessage{Type: "result", Subtype: "error_during_execution", IsError: true, TerminalReason: "aborted_streaming"}})
	if !strings.Contains(h.allPrinted(), "Interrupted") || h.m.busy() {
		t.Errorf("printed %q busy %v", h.printed, h.m.busy())
	}
}

func TestCtrlCTwiceQuits(t *testing.T) {
	h := newHarness(t)
	h.typeText("draft")
	h.press('c', tea.ModCtrl)
	if h.m.quitting || h.m.input.Value() != "" || !strings.Contains(h.view(), ctrlCHint) {
		t.Fatalf("first Ctrl-C: quitting %v input %q", h.m.quitting, h.m.input.Value())
	}
	h.press('c', tea.ModCtrl)
	if !h.m.quitting {
		t.Error("second Ctrl-C does not quit")
	}
	// Another key in between disarms it.
	h2 := newHarness(t)
	h2.press('c', tea.ModCtrl)
	h2.typeText("x")
	h2.press('c', tea.ModCtrl)
	if h2.m.quitting {
		t.Error("Ctrl-C, a key, Ctrl-C quits")
	}
}

func TestSlashCommands(t *testing.T) {
	h := newHarness(t)
	h.typeText("/model sonnet")
	h.enter()
	if len(h.be.models) != 1 || h.be.models[0] != "sonnet" || h.m.modelID != "claude-sonnet" {
		t.Errorf("models %v id %s", h.be.models, h.m.modelID)
	}
	if !strings.Contains(h.allPrinted(), "Set the model to claude-sonnet") || !strings.Contains(h.view(), "sonnet") {
		t.Errorf("printed %q", h.printed)
	}
	h.typeText("/model nonsense")
	h.enter()
	if h.m.modelID != "claude-sonnet" || !strings.Contains(h.allPrinted(), "unknown model nonsense") {
		t.Errorf("a refused /model: id %s, printed %q", h.m.modelID, h.printed)
	}
	h.send(engineMsg{msg: result(0.5)})
	h.typeText("/cost")
	h.enter()
	if !strings.Contains(h.allPrinted(), "Total cost:            $0.5000") {
		t.Errorf("cost: %q", h.printed)
	}
	h.typeText("/compact keep the API notes")
	h.enter()
	h.typeText("/review main.go")
	h.enter()
	if len(h.be.sent) != 2 || h.be.sent[0] != "/compact keep the API notes" || h.be.sent[1] != "/review main.go" {
		t.Errorf("sent %q", h.be.sent)
	}
	h.typeText("/help")
	h.enter()
	if !strings.Contains(h.allPrinted(), "/permissions") || !strings.Contains(h.allPrinted(), "/review") {
		t.Errorf("help: %q", h.printed)
	}
	h.typeText("/clear")
	h.enter()
	if h.be.clears != 1 || !strings.Contains(h.allPrinted(), "new conversation") {
		t.Errorf("clears %d", h.be.clears)
	}
	h.typeText("/exit")
	h.enter()
	if !h.m.quitting {
		t.Error("/exit does not quit")
	}
}

func TestSlashCompletion(t *testing.T) {
	h := newHarness(t)
	h.typeText("/rev")
	if v := h.view(); !strings.Contains(v, "/review") {
		t.Fatalf("no completion of the session's command:\n%s", v)
	}
	h.press(tea.KeyTab)
	if got := h.m.input.Value(); got != "/review " {
		t.Errorf("completed to %q", got)
	}
	h.m.input.Reset()
	h.typeText("/he")
	h.enter() // accepts and runs
	if !strings.Contains(h.allPrinted(), "Commands:") {
		t.Errorf("enter on a completion: %q", h.printed)
	}
}

func TestHistoryBrowsePersistSearch(t *testing.T) {
	path := filepath.Join(t.TempDir(), "proj", "prompt-history.jsonl")
	withHistory := func(c *modelConfig) { c.historyPath = path }
	h := newHarness(t, withHistory)
	for _, p := range []string{"first prompt", "second prompt", "third"} {
		h.typeText(p)
		h.enter()
	}
	h.typeText("draft")
	h.press(tea.KeyUp)
	if h.m.input.Value() != "third" {
		t.Fatalf("↑ gives %q", h.m.input.Value())
	}
	h.press(tea.KeyUp)
	h.press(tea.KeyUp)
	if h.m.input.Value() != "first prompt" {
		t.Errorf("↑↑↑ gives %q", h.m.input.Value())
	}
	h.press(tea.KeyDown)
	h.press(tea.KeyDown)
	h.press(tea.KeyDown)
	if h.m.input.Value() != "draft" {
		t.Errorf("back down gives %q", h.m.input.Value())
	}

	// A new session of the project has the history.
	h2 := newHarness(t, withHistory)
	h2.press(tea.KeyUp)
	if h2.m.input.Value() != "third" {
		t.Errorf("history not persisted: %q", h2.m.input.Value())
	}
	// Ctrl-R finds the newest match, again Ctrl-R an older one.
	h2.m.input.Reset()
	h2.press('r', tea.ModCtrl)
	h2.typeText("prompt")
	if v := h2.view(); !strings.Contains(v, "second prompt") {
		t.Errorf("search view:\n%s", v)
	}
	h2.press('r', tea.ModCtrl)
	h2.enter()
	if h2.m.input.Value() != "first prompt" {
		t.Errorf("search gives %q", h2.m.input.Value())
	}
}

func TestMultilineInput(t *testing.T) {
	h := newHarness(t)
	h.typeText(`line one\`)
	h.enter()
	h.typeText("line two")
	h.press(tea.KeyEnter, tea.ModShift)
	h.typeText("line three")
	h.enter()
	if len(h.be.sent) != 1 || h.be.sent[0] != "line one\nline two\nline three" {
		t.Errorf("sent %q", h.be.sent)
	}
}

func TestBangRunsShellAndFeedsNextPrompt(t *testing.T) {
	h := newHarness(t, func(c *modelConfig) { c.getenv = func(string) string { return "" } })
	h.typeText("!echo from-the-shell; exit 4")
	h.enter()
	out := h.allPrinted()
	if !strings.Contains(out, "from-the-shell") || !strings.Contains(out, "exit 4") {
		t.Fatalf("printed %q", out)
	}
	if len(h.be.sent) != 0 {
		t.Fatalf("a shell command was sent to the model: %q", h.be.sent)
	}
	h.typeText("what happened?")
	h.enter()
	if len(h.be.sent) != 1 || !strings.Contains(h.be.sent[0], "<bash-stdout>from-the-shell") || !strings.HasSuffix(h.be.sent[0], "what happened?") {
		t.Errorf("sent %q", h.be.sent)
	}
}

func TestHashAddsToMemory(t *testing.T) {
	h := newHarness(t)
	path := filepath.Join(h.m.cfg.cwd, "CLAUDE.md")
	if err := os.WriteFile(path, []byte("# Project"), 0o644); err != nil {
		t.Fatal(err)
	}
	h.typeText("# always run go vet")
	h.enter()
	data, _ := os.ReadFile(path)
	if string(data) != "# Project\n- always run go vet\n" {
		t.Errorf("CLAUDE.md is %q", data)
	}
	if len(h.be.sent) != 0 {
		t.Errorf("sent %q", h.be.sent)
	}
}

func TestFirstPromptIsSentAtStart(t *testing.T) {
	h := newHarness(t, func(c *modelConfig) { c.prompt = "explain main.go" })
	h.run(h.m.Init())
	if len(h.be.sent) != 1 || h.be.sent[0] != "explain main.go" {
		t.Errorf("sent %q", h.be.sent)
	}
}

func TestStatusLineCommand(t *testing.T) {
	h := newHarness(t)
	dir := h.m.cfg.cwd
	h.be.settings.StatusLine = &agent.StatusLineSettings{Type: "command", Command: "cat > status.json; echo custom-status"}
	h.run(h.m.refreshStatusLine())
	if v := h.view(); !strings.Contains(v, "custom-status") {
		t.Errorf("status line not shown:\n%s", v)
	}
	var in statusInput
	data, err := os.ReadFile(filepath.Join(dir, "status.json"))
	if err != nil || json.Unmarshal(data, &in) != nil || in.SessionID != "s1" || in.Model.ID != "claude-opus-5-5" || in.Workspace.CurrentDir != dir {
		t.Errorf("session JSON %s (%v)", data, err)
	}
}

// An untrusted folder's status line never runs; the user's does. The UI
// shows the settings of the session, which leaves the folder's out.
func TestUntrustedFolderStatusLineDoesNotRun(t *testing.T) {
	h := newHarness(t)
	dir := h.m.cfg.cwd
	canary := filepath.Join(t.TempDir(), "ran")
	writeSettings := func(path, command string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(`{"statusLine": {"type": "command", "command": "`+command+`"}}`), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	writeSettings(filepath.Join(dir, ".claude", "settings.json"), "touch "+canary+"; echo folder-status")
	configDir := t.TempDir()
	sessionSettings := func() agent.Settings {
		t.Helper()
		c, err := agent.NewClient(context.Background(), agent.Options{Cwd: dir, Untrusted: true, NoSessionPersistence: true,
			Env: map[string]string{"ANTHROPIC_API_KEY": "test-key", "HOME": t.TempDir(), "CLAUDE_CONFIG_DIR": configDir}})
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		return c.Settings()
	}
	h.be.settings = sessionSettings()
	if cmd := h.m.statusLineCommand(); cmd != "" {
		t.Fatalf("untrusted: status line %q", cmd)
	}
	h.run(h.m.refreshStatusLine())
	if _, err := os.Stat(canary); err == nil || strings.Contains(h.view(), "folder-status") {
		t.Error("the untrusted folder's status line ran")
	}
	writeSettings(filepath.Join(configDir, "settings.json"), "echo user-status")
	h.be.settings = sessionSettings()
	h.run(h.m.refreshStatusLine())
	if v := h.view(); !strings.Contains(v, "user-status") {
		t.Errorf("the user's status line is not shown:\n%s", v)
	}
}

func TestLargePasteIsFoldedIntoAPlaceholder(t *testing.T) {
	h := newHarness(t)
	big := strings.Repeat("log line\n", 30) + "end"
	h.typeText("look: ")
	h.send(tea.PasteMsg{Content: big})
	if v := h.m.input.Value(); v != "look: [Pasted text #1 +31 lines]" {
		t.Fatalf("input %q", v)
	}
	h.enter()
	if len(h.be.sent) != 1 || h.be.sent[0] != "look: "+big {
		t.Errorf("sent %q", h.be.sent)
	}
	if out := h.allPrinted(); !strings.Contains(out, "[Pasted text #1 +31 lines]") || strings.Contains(out, "log line") {
		t.Errorf("echo %q", out)
	}
	h.send(tea.PasteMsg{Content: "small"})
	if v := h.m.input.Value(); v != "small" {
		t.Errorf("a small paste: %q", v)
	}
}

func TestLiveRegionKeepsItsHeightWhileStreaming(t *testing.T) {
	h := newHarness(t)
	h.typeText("go")
	h.enter()
	h.send(engineMsg{msg: event(`{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`)})
	h.send(engineMsg{msg: textDelta(0, "one\ntwo\nthree\n")})
	tall := strings.Count(h.view(), "\n")
	h.send(engineMsg{msg: textDelta(0, "\nfour")}) // the paragraph is printed
	if n := strings.Count(h.view(), "\n"); n != tall {
		t.Errorf("the live region went from %d to %d lines while the model works", tall, n)
	}
	h.send(engineMsg{msg: event(`{"type":"content_block_stop","index":0}`)})
	h.send(engineMsg{msg: result(0)})
	if n := strings.Count(h.view(), "\n"); n >= tall {
		t.Errorf("the live region keeps %d lines after the run (had %d)", n, tall)
	}
}

func TestMentionCompletesPathsAndAttachesTheFile(t *testing.T) {
	h := newHarness(t)
	dir := h.m.cfg.cwd
	if err := os.MkdirAll(filepath.Join(dir, "internal", "tui"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "internal", "tui", "view.go"), []byte("package tui\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	h.typeText("explain @int")
	if v := h.view(); !strings.Contains(v, "@internal/") {
		t.Fatalf("no path completion:\n%s", v)
	}
	h.press(tea.KeyTab) // into the folder
	h.press(tea.KeyTab)
	if got := h.m.input.Value(); got != "explain @internal/tui/" {
		t.Fatalf("input %q", got)
	}
	h.enter() // accepts the only file, does not send
	if got := h.m.input.Value(); got != "explain @internal/tui/view.go " || len(h.be.sent) != 0 {
		t.Fatalf("input %q sent %q", got, h.be.sent)
	}
	h.typeText("please")
	h.enter()
	want := "explain @internal/tui/view.go please\n\n<file path=\"internal/tui/view.go\">\npackage tui\n</file>"
	if len(h.be.sent) != 1 || h.be.sent[0] != want {
		t.Errorf("sent %q, want %q", h.be.sent, want)
	}
}

func TestResumePicker(t *testing.T) {
	h := newHarness(t)
	h.typeText("/resume")
	h.enter()
	if !strings.Contains(h.allPrinted(), "No other conversation") {
		t.Fatalf("printed %q", h.printed)
	}
	const old = "11111111-2222-4333-8444-555555555555"
	// An earlier session, as the SDK lists and loads it.
	saved := []agent.SessionInfo{{ID: old, Summary: "refactor the parser", Messages: 2, Modified: h.clock.Add(-time.Hour)}}
	conversation := map[string][]agent.MessageParam{old: {
		{Role: agent.RoleUser, Content: []agent.ContentBlock{agent.TextBlock("refactor the parser")}},
		{Role: agent.RoleAssistant, Content: []agent.ContentBlock{agent.TextBlock("Done.")}},
	}}
	h.be.sessions, h.be.transcripts = saved, conversation
	h.typeText("/resume")
	h.enter()
	if v := h.view(); !strings.Contains(v, "Resume a conversation") || !strings.Contains(v, "refactor the parser") {
		t.Fatalf("no picker:\n%s", v)
	}
	h.be.info.SessionID = old // what the backend runs once resumed
	h.printed = nil
	h.enter()
	if len(h.be.resumed) != 1 || h.be.resumed[0] != old {
		t.Errorf("resumed %q", h.be.resumed)
	}
	if h.m.picker != nil || !strings.Contains(h.allPrinted(), "Resumed the conversation "+old) {
		t.Errorf("picker %v printed %q", h.m.picker, h.printed)
	}
	// The end of the conversation is shown again.
	if out := h.allPrinted(); !strings.Contains(out, "> refactor the parser") || !strings.Contains(out, "Done.") {
		t.Errorf("replay: %q", out)
	}
	// So it is when tack starts on a resumed session (-c, -r).
	h3 := newHarness(t, func(c *modelConfig) {
		c.resumed = true
		be := c.backend.(*fakeBackend)
		be.info.SessionID, be.sessions, be.transcripts = old, saved, conversation
	})
	if out := h3.allPrinted(); !strings.Contains(out, "> refactor the parser") {
		t.Errorf("replay at start: %q", out)
	}
	h.typeText("/resume my-name")
	h.enter()
	if len(h.be.resumed) != 2 || h.be.resumed[1] != "my-name" {
		t.Errorf("resumed %q", h.be.resumed)
	}
}

func TestExitPlanModeDialogShowsThePlan(t *testing.T) {
	h := newHarness(t)
	h.press(tea.KeyTab, tea.ModShift)
	h.press(tea.KeyTab, tea.ModShift) // plan mode
	req := permRequestFor("ExitPlanMode", `{"plan":"# Plan\n\n1. Add **tests**\n2. Fix the parser"}`)
	h.send(permRequestMsg{req: req})
	v := h.view()
	for _, want := range []string{"The plan:", "Add tests", "Fix the parser", "1. Yes", "2. No, keep planning"} {
		if !strings.Contains(v, want) {
			t.Errorf("dialog lacks %q:\n%s", want, v)
		}
	}
	if strings.Contains(v, "don't ask again") {
		t.Errorf("a plan offers to be allowed always:\n%s", v)
	}
	h.typeText("1")
	if a := <-req.reply; !a.allow {
		t.Errorf("answer %+v", a)
	}
	if h.m.mode != agent.PermissionDefault || strings.Contains(h.view(), "plan mode on") {
		t.Errorf("mode %s after the plan was approved", h.m.mode)
	}
}

func TestTinyTerminalDoesNotBreakTheView(t *testing.T) {
	for _, size := range [][2]int{{1, 1}, {10, 5}, {30, 8}} {
		h := newHarness(t)
		h.send(tea.WindowSizeMsg{Width: size[0], Height: size[1]})
		h.typeText("/")
		_ = h.view()
		h.m.input.Reset()
		h.typeText("go")
		h.enter()
		h.send(engineMsg{msg: event(`{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`)})
		h.send(engineMsg{msg: textDelta(0, strings.Repeat("word ", 40))})
		h.send(engineMsg{msg: assistant(agent.ContentBlock{Type: agent.BlockToolUse, ID: "t", Name: "Bash", Input: json.RawMessage(`{"command":"` + strings.Repeat("x", 200) + `"}`)})})
		_ = h.view()
		h.send(permRequestMsg{req: permRequestFor("Edit", `{"file_path":"/nonexistent/f","old_string":"a","new_string":"b"}`)})
		if v := h.view(); !strings.Contains(v, "Yes") && size[0] >= 30 {
			t.Errorf("%v: %s", size, v)
		}
		h.press(tea.KeyEscape)
		h.send(engineMsg{msg: toolResult("t", strings.Repeat("out\n", 50), false, nil)})
		h.send(engineMsg{msg: result(0)})
		_ = h.view()
	}
}

func TestCompletionShowsCommandDescriptionsAndHints(t *testing.T) {
	// The session reads its commands; the UI shows what it reports.
	var h *harness
	h = newHarness(t, func(c *modelConfig) {
		c.commandDocs = func() map[string]commandDoc { return commandDocsOf(h.be.Info()) }
	})
	h.be.info.CommandDetails = []agent.CommandInfo{{Name: "review", Description: "Review a file for bugs", ArgumentHint: "[file]"}}
	h.run(h.m.Init())
	h.typeText("/rev")
	if v := h.view(); !strings.Contains(v, "/review") || !strings.Contains(v, "[file]  Review a file for bugs") {
		t.Errorf("completion:\n%s", v)
	}
}

func TestEscEscOpensEarlierPrompts(t *testing.T) {
	h := newHarness(t)
	// A new session: the prompts of the history come back to edit.
	h.m.history.entries = []string{"older one", "old two"}
	h.press(tea.KeyEscape)
	if h.m.prompts != nil {
		t.Fatal("one Esc opened the picker")
	}
	h.press(tea.KeyEscape)
	if v := h.view(); !strings.Contains(v, "Earlier prompts") || strings.Index(v, "old two") > strings.Index(v, "older one") {
		t.Fatalf("picker:\n%s", v)
	}
	h.press(tea.KeyDown)
	h.enter()
	if h.m.prompts != nil || h.m.input.Value() != "older one" || len(h.be.sent) != 0 {
		t.Errorf("input %q sent %q", h.m.input.Value(), h.be.sent)
	}
	// Esc, then Esc long after, is not Esc Esc.
	h.m.input.Reset()
	h.press(tea.KeyEscape)
	h.clock = h.clock.Add(time.Second)
	h.press(tea.KeyEscape)
	if h.m.prompts != nil {
		t.Error("two distant Esc opened the picker")
	}
}

// TestEscEscRewindsThisSession: with prompts of its own, Esc Esc lists them
// and choosing one rewinds the files and the conversation to before it.
func TestEscEscRewindsThisSession(t *testing.T) {
	h := newHarness(t)
	for i, p := range []string{"first", "second"} {
		h.typeText(p)
		h.enter()
		h.send(engineMsg{msg: &agent.AssistantMessage{Type: "assistant", UUID: fmt.Sprintf("answer-%d", i),
			Message: assistant(agent.TextBlock("ok")).Message}})
		h.send(engineMsg{msg: result(0)})
	}
	ids := []string{h.be.prompts[0].ID, h.be.prompts[1].ID}
	if ids[0] == "" || ids[0] == ids[1] {
		t.Fatalf("prompt ids %q", ids)
	}
	h.press(tea.KeyEscape)
	h.press(tea.KeyEscape)
	if v := h.view(); !strings.Contains(v, "Rewind") || strings.Index(v, "second") > strings.Index(v, "first") {
		t.Fatalf("picker:\n%s", v)
	}
	h.enter() // the newest: "second"
	if !slices.Equal(h.be.rewound, ids[1:]) || len(h.be.reopened) != 1 || h.be.reopened[0].ResumeSessionAt != "answer-0" {
		t.Fatalf("rewound %q, reopened %+v", h.be.rewound, h.be.reopened)
	}
	if h.m.input.Value() != "second" || !strings.Contains(h.allPrinted(), "Rewound to before “second”") {
		t.Errorf("input %q, printed %q", h.m.input.Value(), h.allPrinted())
	}
	// Back to the first prompt: the conversation starts over.
	h.m.input.Reset()
	h.press(tea.KeyEscape)
	h.press(tea.KeyEscape)
	h.enter()
	if !slices.Equal(h.be.rewound, []string{ids[1], ids[0]}) || h.be.clears != 1 || len(h.m.turns) != 0 {
		t.Errorf("rewound %q, clears %d, turns %d", h.be.rewound, h.be.clears, len(h.m.turns))
	}
}

func TestCtrlCHintOutlivesTheRunsEnd(t *testing.T) {
	h := newHarness(t)
	h.typeText("go")
	h.enter()
	h.press('c', tea.ModCtrl)
	h.send(engineMsg{msg: result(0)})
	if !strings.Contains(h.view(), ctrlCHint) {
		t.Errorf("the run's end hid the Ctrl-C hint:\n%s", h.view())
	}
	h.press('c', tea.ModCtrl)
	if !h.m.quitting {
		t.Error("Ctrl-C, the run ends, Ctrl-C does not quit")
	}
}

func TestRenameAndAddDirReopenTheSession(t *testing.T) {
	h := newHarness(t)
	extra := t.TempDir()
	h.typeText("/rename my-work")
	h.enter()
	h.typeText("/add-dir " + extra)
	h.enter()
	h.typeText("/add-dir /no/such/dir")
	h.enter()
	if len(h.be.reopened) != 2 || h.be.reopened[0].Name != "my-work" || len(h.be.reopened[1].AddDirs) != 1 || h.be.reopened[1].AddDirs[0] != extra {
		t.Fatalf("reopened %+v", h.be.reopened)
	}
	out := h.allPrinted()
	for _, want := range []string{"Named this conversation my-work", "Added " + extra, "/no/such/dir is not a directory"} {
		if !strings.Contains(out, want) {
			t.Errorf("missing %q in %q", want, out)
		}
	}
	// Not while the model works.
	h.typeText("go")
	h.enter()
	h.typeText("/rename other")
	h.enter()
	if len(h.be.reopened) != 2 {
		t.Errorf("renamed during a run: %+v", h.be.reopened)
	}
}

// TestHooksCommandListsTheSessionsHooks: /hooks shows each hook of the
// session under its event, with what it runs, whose it is, the file that
// defines it and why one does not run.
func TestHooksCommandListsTheSessionsHooks(t *testing.T) {
	h := newHarness(t)
	h.typeText("/hooks")
	h.enter()
	if !strings.Contains(h.allPrinted(), "No hooks are configured.") {
		t.Errorf("no hooks: %q", h.printed)
	}
	h.be.hooks = []agent.HookEntry{
		{Event: agent.HookPreToolUse, Matcher: "Bash", Type: "command", Run: "./check.sh\nsecond line", Source: "project", Origin: "/r/.claude/settings.json:4", Runs: true},
		{Event: agent.HookPreToolUse, Type: "http", Run: "http://127.0.0.1:9/h", Source: "plugin:lint", Origin: "/p/hooks/hooks.json:1", Note: "not run: disableAllHooks (project /r/.claude/settings.json:1:2) is set"},
		{Event: agent.HookStop, Type: "callback", Run: "hook_0", Source: "sdk", Runs: true},
	}
	h.printed = nil
	h.typeText("/hooks")
	h.enter()
	got := h.allPrinted()
	for _, want := range []string{
		"PreToolUse", "[Bash] command: ./check.sh", "project /r/.claude/settings.json:4",
		"[*] http: http://127.0.0.1:9/h", "plugin:lint /p/hooks/hooks.json:1 (not run: disableAllHooks",
		"Stop", "[*] callback: hook_0  sdk",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("/hooks lacks %q:\n%s", want, got)
		}
	}
	if strings.Index(got, "PreToolUse") > strings.Index(got, "[Bash]") || strings.Index(got, "Stop") > strings.Index(got, "hook_0") {
		t.Errorf("/hooks does not list each hook under its event:\n%s", got)
	}
	if strings.Contains(got, "second line") || strings.Count(got, "PreToolUse") != 1 {
		t.Errorf("/hooks shows more than one line per hook or repeats the event:\n%s", got)
	}
}

// TestSkipPromptHistory: with CLAUDE_CODE_SKIP_PROMPT_HISTORY set, the
// prompts typed are not written to the history file (the history already
// there is still browsed, and this session's prompts too).
func TestSkipPromptHistory(t *testing.T) {
	path := filepath.Join(t.TempDir(), "proj", "prompt-history.jsonl")
	h := newHarness(t, func(c *modelConfig) { c.historyPath = path })
	h.typeText("kept prompt")
	h.enter()
	skip := func(c *modelConfig) {
		c.historyPath = path
		c.getenv = func(k string) string {
			if k == "CLAUDE_CODE_SKIP_PROMPT_HISTORY" {
				return "1"
			}
			return ""
		}
	}
	h2 := newHarness(t, skip)
	h2.typeText("secret prompt")
	h2.enter()
	h2.press(tea.KeyUp)
	h2.press(tea.KeyUp)
	if h2.m.input.Value() != "kept prompt" {
		t.Errorf("↑↑ gives %q", h2.m.input.Value())
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(data), "secret prompt") || !strings.Contains(string(data), "kept prompt") {
		t.Errorf("history file:\n%s", data)
	}
}

// TestPickerAtStart: tack -r opens the picker as the UI starts; with a
// search term (tack -r WORD naming no session), only the sessions whose
// name or prompts contain it are listed.
func TestPickerAtStart(t *testing.T) {
	saved := []agent.SessionInfo{
		{ID: "11111111-2222-4333-8444-555555555555", Name: "parser-work", Summary: "parser-work", FirstPrompt: "refactor the parser", Messages: 2},
		{ID: "21111111-2222-4333-8444-555555555555", Summary: "fix the flaky test", FirstPrompt: "fix the flaky test", Messages: 4},
	}
	pick := func(search string) func(*modelConfig) {
		return func(c *modelConfig) {
			c.backend.(*fakeBackend).sessions = saved
			c.pickSession, c.pickSearch = true, search
		}
	}
	h := newHarness(t, pick(""))
	h.m.Init()
	if v := h.view(); !strings.Contains(v, "Resume a conversation") || !strings.Contains(v, "parser-work") || !strings.Contains(v, "fix the flaky test") {
		t.Fatalf("no picker of both sessions:\n%s", v)
	}
	h = newHarness(t, pick("FLAKY"))
	h.m.Init()
	if v := h.view(); !strings.Contains(v, "fix the flaky test") || strings.Contains(v, "parser-work") {
		t.Errorf("the search did not filter:\n%s", v)
	}
	h.enter()
	if len(h.be.resumed) != 1 || h.be.resumed[0] != saved[1].ID {
		t.Errorf("resumed %q", h.be.resumed)
	}
	h = newHarness(t, pick("nothing like it"))
	h.m.Init()
	if h.m.picker != nil || !strings.Contains(h.allPrinted(), `No conversation of this directory matches "nothing like it"`) {
		t.Errorf("printed %q", h.printed)
	}
}
