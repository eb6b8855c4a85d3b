package main

// End-to-end tests of sessions: continue, resume, fork, resume-at, the
// workflow record that restores launch options, and crash safety.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tackcode/tack/internal/llm"
	"github.com/tackcode/tack/internal/llm/llmtest"
	"github.com/tackcode/tack/internal/session"
)

// sessionID runs tack with a json result and returns the session id.
func (e *env) sessionRun(args ...string) (map[string]any, string) {
	e.t.Helper()
	out, errOut := e.run(append([]string{"--output-format", "json"}, args...)...)
	if e.status != 0 {
		e.t.Fatalf("exit %d: %s %s", e.status, out, errOut)
	}
	res := resultOf(e.t, out)
	return res, res["session_id"].(string)
}

func (e *env) projectDir() string {
	real, _ := filepath.EvalSymlinks(e.dir)
	return filepath.Join(e.home, ".claude", "projects", session.Slug(real))
}

func userTexts(r llmtest.Request) []string {
	var out []string
	for _, m := range r.Messages {
		if m.Role == llm.RoleUser {
			for _, b := range m.Content {
				if b.Type == llm.TypeText && !strings.HasPrefix(b.Text, "<system-reminder>") {
					out = append(out, b.Text)
				}
			}
		}
	}
	return out
}

func TestContinueResumeAndName(t *testing.T) {
	e := newEnv(t,
		llmtest.Reply(llmtest.Text("first answer")),
		llmtest.Reply(llmtest.Text("second answer")),
		llmtest.Reply(llmtest.Text("third answer")))
	_, id := e.sessionRun("-p", "first question", "-n", "my-work")
	_, id2 := e.sessionRun("-p", "second question", "-c")
	if id2 != id {
		t.Fatalf("--continue started %s, not %s", id2, id)
	}
	_, id3 := e.sessionRun("-p", "third question", "-r", "my-work")
	if id3 != id {
		t.Fatalf("--resume NAME started %s", id3)
	}
	reqs := e.srv.Requests()
	if got := strings.Join(userTexts(reqs[2]), "|"); got != "first question|second question|third question" {
		t.Errorf("the resumed conversation sent %q", got)
	}
	// The first request's prefix is re-sent byte for byte.
	for i := 1; i < 3; i++ {
		if string(mustJSON(reqs[i].System)) != string(mustJSON(reqs[0].System)) || string(mustJSON(reqs[i].Tools)) != string(mustJSON(reqs[0].Tools)) {
			t.Errorf("request %d changed the system prompt or the tools", i)
		}
		if a, b := string(mustJSON(unmarked(reqs[i].Messages[0]))), string(mustJSON(unmarked(reqs[0].Messages[0]))); a != b {
			t.Errorf("request %d changed the first message:\n%s\n%s", i, a, b)
		}
	}
	out, _ := e.run("sessions")
	if !strings.Contains(out, id) || !strings.Contains(out, "my-work") || !strings.Contains(out, "third question") {
		t.Errorf("tack sessions:\n%s", out)
	}
}

func TestForkAndResumeAt(t *testing.T) {
	e := newEnv(t,
		llmtest.Reply(llmtest.Text("answer one")),
		llmtest.Reply(llmtest.Text("answer two")),
		llmtest.Reply(llmtest.Text("forked answer")),
		llmtest.Reply(llmtest.Text("rewound answer")))
	_, id := e.sessionRun("-p", "one")
	e.sessionRun("-p", "two", "-r", id)
	before, err := os.ReadFile(filepath.Join(e.projectDir(), id+".jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	_, forked := e.sessionRun("-p", "three", "-r", id, "--fork-session")
	if forked == id {
		t.Fatal("--fork-session kept the id")
	}
	after, _ := os.ReadFile(filepath.Join(e.projectDir(), id+".jsonl"))
	if !bytes.Equal(before, after) {
		t.Error("forking changed the original transcript")
	}
	if got := strings.Join(userTexts(e.srv.Requests()[2]), "|"); got != "one|two|three" {
		t.Errorf("the fork sent %q", got)
	}
	// Resume at the first answer: "two" and what followed are dropped.
	tr, err := session.LoadSession(e.projectDir(), id)
	if err != nil {
		t.Fatal(err)
	}
	var firstAnswer string
	for _, entry := range tr.Chain() {
		if entry.Type == "assistant" {
			firstAnswer = entry.UUID
			break
		}
	}
	e.sessionRun("-p", "instead", "-r", id, "--resume-session-at", firstAnswer)
	if got := strings.Join(userTexts(e.srv.Requests()[3]), "|"); got != "one|instead" {
		t.Errorf("resume-at sent %q", got)
	}
}

func TestResumeRestoresLaunchOptions(t *testing.T) {
	extra := t.TempDir()
	os.WriteFile(filepath.Join(extra, "far.txt"), []byte("far away\n"), 0o644)
	e := newEnv(t,
		llmtest.Reply(llmtest.Text("noted")),
		// The resumed session: a write (acceptEdits restored), a read in the
		// added directory, the settings' env through Bash (allowed by them).
		llmtest.Reply(llmtest.ToolUse("Write", map[string]any{"file_path": "out.txt", "content": "x"}),
			llmtest.ToolUse("Read", map[string]any{"file_path": filepath.Join(extra, "far.txt")}),
			llmtest.ToolUse("Bash", map[string]any{"command": "echo $WORKFLOW_FLAG"})),
		llmtest.Reply(llmtest.Text("done")),
		// Resumed again with --permission-mode default: the flag wins.
		llmtest.Reply(llmtest.ToolUse("Write", map[string]any{"file_path": "out2.txt", "content": "y"})),
		llmtest.Reply(llmtest.Text("done")))
	settings := `{"env": {"WORKFLOW_FLAG": "restored"}, "permissions": {"allow": ["Bash(echo *)"]}}`
	_, id := e.sessionRun("-p", "remember", "--permission-mode", "acceptEdits", "--settings", settings,
		"--add-dir", extra, "--mcp-config", `{"mcpServers":{}}`, "--model", "haiku")
	var wf, launch map[string]any
	data, err := os.ReadFile(filepath.Join(e.projectDir(), id, "launch.json"))
	if err != nil {
		t.Fatal(err)
	}
	json.Unmarshal(data, &launch)
	if launch["settings"] != settings || fmt.Sprint(launch["mcp_config"]) != `[{"mcpServers":{}}]` ||
		fmt.Sprint(launch["add_dirs"]) != "["+extra+"]" || launch["model"] != "claude-haiku-4-5" {
		t.Errorf("launch record %s", data)
	}
	// The workflow record names the files of the seed: the settings and
	// MCP configuration were inline JSON, so the project's files.
	json.Unmarshal(validWorkflow(t, e, id), &wf)
	if wf["permission_mode"] != "acceptEdits" || wf["settings"] != ".claude/settings.json" || wf["mcp_config"] != ".mcp.json" {
		t.Errorf("workflow record %v", wf)
	}
	res, _ := e.sessionRun("-p", "go on", "-r", id)
	reqs := e.srv.Requests()
	if reqs[1].Model != "claude-haiku-4-5" {
		t.Errorf("model not restored: %s", reqs[1].Model)
	}
	results := reqs[2].ToolResults()
	if results[0].IsError {
		t.Errorf("acceptEdits not restored: %s", llm.TextOf(results[0].Content))
	}
	if results[1].IsError || !strings.Contains(llm.TextOf(results[1].Content), "far away") {
		t.Errorf("--add-dir not restored: %s", llm.TextOf(results[1].Content))
	}
	if llm.TextOf(results[2].Content) != "restored" {
		t.Errorf("--settings not restored: %s", llm.TextOf(results[2].Content))
	}
	if d, _ := res["permission_denials"].([]any); len(d) != 0 {
		t.Errorf("denials %v", d)
	}
	e.sessionRun("-p", "again", "-r", id, "--permission-mode", "default")
	if r := e.srv.Requests()[4].ToolResults()[0]; !r.IsError {
		t.Error("a flag given on resume did not override the recorded mode")
	}
}

// A resume asks for the reasoning the session was launched with: its
// thinking mode and display, effort and task budget, unless given again.
func TestResumeRestoresReasoningOptions(t *testing.T) {
	e := newEnv(t, llmtest.Reply(llmtest.Text("one")), llmtest.Reply(llmtest.Text("two")), llmtest.Reply(llmtest.Text("three")))
	_, id := e.sessionRun("-p", "first", "--model", "sonnet", "--thinking", "adaptive", "--thinking-display", "omitted",
		"--effort", "low", "--task-budget", "7000")
	data, err := os.ReadFile(filepath.Join(e.projectDir(), id, "launch.json"))
	if err != nil {
		t.Fatal(err)
	}
	var launch map[string]any
	json.Unmarshal(data, &launch)
	if launch["thinking"] != "adaptive" || launch["thinking_display"] != "omitted" || launch["effort"] != "low" || launch["task_budget"] != 7000.0 {
		t.Errorf("launch record %s", data)
	}
	e.sessionRun("-p", "second", "-r", id)
	e.sessionRun("-p", "third", "-r", id, "--effort", "max")
	reqs := e.srv.Requests()
	for i, want := range []string{`"effort":"low"`, `"effort":"low"`, `"effort":"max"`} {
		body := string(reqs[i].Body)
		for _, w := range []string{want, `"task_budget":{"type":"tokens","total":7000}`, `"display":"omitted"`} {
			if !strings.Contains(body, w) {
				t.Errorf("request %d has no %s: %.600s", i, w, body)
			}
		}
	}
}

// TestKillNineNeverBreaksTheTranscript kills tack at random points of runs
// and checks that every transcript it leaves loads and resumes.
func TestKillNineNeverBreaksTheTranscript(t *testing.T) {
	runs := 12
	if testing.Short() {
		runs = 4
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < runs; i++ {
		var turns []llmtest.Turn
		for j := 0; j < 6; j++ {
			turns = append(turns, llmtest.Reply(llmtest.Text(fmt.Sprintf("step %d", j)),
				llmtest.ToolUse("Bash", map[string]any{"command": fmt.Sprintf("echo %d; sleep 0.0%d", j, j)})))
		}
		turns = append(turns, llmtest.Reply(llmtest.Text("done")))
		srv, err := llmtest.NewServer(llmtest.Options{Turns: turns, Lenient: true, OnViolation: func(error) {}})
		if err != nil {
			t.Fatal(err)
		}
		e := newEnv(t)
		e.srv = srv
		cmd := exec.Command(tackBin, "-p", "work", "--dangerously-skip-permissions", "--session-id", fmt.Sprintf("00000000-0000-4000-8000-%012d", i))
		cmd.Dir = e.dir
		cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + e.home, "CLAUDE_CONFIG_DIR=" + filepath.Join(e.home, ".claude"),
			"ANTHROPIC_API_KEY=k", "ANTHROPIC_BASE_URL=" + srv.URL(), "SHELL=/bin/bash"}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Duration(rng.IntN(120)) * time.Millisecond)
		cmd.Process.Signal(syscall.SIGKILL)
		cmd.Wait()
		srv.Close()

		id := fmt.Sprintf("00000000-0000-4000-8000-%012d", i)
		path := filepath.Join(e.projectDir(), id+".jsonl")
		if fi, err := os.Stat(path); err != nil || fi.Size() == 0 {
			// Killed before the first record: the file may exist, empty,
			// and an empty transcript is no session to resume.
			continue
		}
		tr, err := session.Load(path)
		if err != nil {
			t.Fatalf("run %d: the transcript does not load: %v", i, err)
		}
		if err := validHistory(tr.Messages); err != nil {
			t.Fatalf("run %d: the loaded conversation is invalid: %v", i, err)
		}
		// And it resumes: the strict fake API checks the request.
		e.srv = llmtest.New(t, llmtest.Reply(llmtest.Text("resumed")))
		out, errOut := e.run("-p", "continue", "-r", id)
		if e.status != 0 || out != "resumed\n" {
			t.Fatalf("run %d: resume failed: %d %q %s", i, e.status, out, errOut)
		}
	}
}

// validHistory checks roles alternate from a user message and every
// tool_use is answered in the next message.
func validHistory(msgs []llm.Message) error {
	for i, m := range msgs {
		want := llm.RoleUser
		if i%2 == 1 {
			want = llm.RoleAssistant
		}
		if m.Role != want {
			return fmt.Errorf("message %d is %s", i, m.Role)
		}
		if m.Role != llm.RoleAssistant {
			continue
		}
		for _, b := range m.Content {
			if b.Type != llm.TypeToolUse {
				continue
			}
			if i+1 >= len(msgs) {
				return fmt.Errorf("tool_use %s unanswered at the end", b.ID)
			}
			found := false
			for _, r := range msgs[i+1].Content {
				found = found || (r.Type == llm.TypeToolResult && r.ToolUseID == b.ID)
			}
			if !found {
				return fmt.Errorf("tool_use %s unanswered", b.ID)
			}
		}
	}
	return nil
}

func mustJSON(v any) []byte {
	b, _ := json.Marshal(v)
	return b
}

// unmarked is m without cache breakpoints, which move from request to request.
func unmarked(m llm.Message) llm.Message {
	m.Content = append([]llm.Block(nil), m.Content...)
	for i := range m.Content {
		m.Content[i].CacheControl = nil
	}
	return m
}

// TestCompactionProbe gives ten instructions over ten continued runs, then
// lets the conversation outgrow the window: after compaction the model
// still gets every instruction verbatim, the root memory re-read from
// disk, and the compaction hooks fired.
func TestCompactionProbe(t *testing.T) {
	instructions := []string{
		"Use tabs for indentation.", "Never touch the vendor folder.", "Write commit messages in French.",
		"Run make lint before finishing.", "Keep functions under forty lines.", "Name tests after behaviour.",
		"Do not add dependencies.", "Log with slog, not fmt.", "Prefer table-driven tests.", "Explain each change in one sentence.",
	}
	e := newEnv(t)
	e.write("CLAUDE.md", "Project memory: the service is called Falcon.\n")
	hookLog := filepath.Join(t.TempDir(), "hooks.log")
	e.settings("settings.json", `{"hooks": {
  "PreCompact": [{"hooks": [{"type": "command", "command": "jq -r '.hook_event_name + \" \" + .trigger' >> `+hookLog+`"}]}],
  "PostCompact": [{"hooks": [{"type": "command", "command": "jq -r .hook_event_name >> `+hookLog+`"}]}]}}`)
	for i, in := range instructions {
		e.srv.Append(llmtest.Reply(llmtest.Text(fmt.Sprintf("noted %d", i))))
		args := []string{"-p", in}
		if i > 0 {
			args = append(args, "-c")
		}
		e.sessionRun(args...)
	}
	// Memory changes on disk during the session: compaction re-reads it.
	e.write("CLAUDE.md", "Project memory: the service is called Falcon. Deploys go through Argo.\n")
	e.srv.Append(
		llmtest.Turn{Content: []llm.Block{llmtest.ToolUse("Bash", map[string]any{"command": "echo big"})},
			Usage: &llm.Usage{InputTokens: 900_000, OutputTokens: 10}}, // near the 1M window of opus
		llmtest.Reply(llmtest.Text("<summary>The user set rules for the Falcon service.</summary>")),
		llmtest.Reply(llmtest.Text("All ten rules are noted.")))
	res, _ := e.sessionRun("-p", "What did I ask?", "-c", "--allowedTools", "Bash")
	if res["result"] != "All ten rules are noted." {
		t.Fatalf("result %v", res)
	}
	reqs := e.srv.Requests()
	last := reqs[len(reqs)-1]
	var sb strings.Builder
	for _, m := range last.Messages {
		sb.WriteString(llm.TextOf(m.Content))
	}
	after := sb.String()
	if strings.Count(after, instructions[0]) != 1 || len(last.Messages) > 5 {
		t.Errorf("the history was not compacted: %d messages", len(last.Messages))
	}
	for i, in := range instructions {
		if !strings.Contains(after, in) {
			t.Errorf("instruction %d (%q) was lost in compaction", i, in)
		}
	}
	for _, want := range []string{"Deploys go through Argo.", "The user set rules for the Falcon service.", "What did I ask?"} {
		if !strings.Contains(after, want) {
			t.Errorf("the compacted history lacks %q", want)
		}
	}
	logged, _ := os.ReadFile(hookLog)
	if string(logged) != "PreCompact auto\nPostCompact\n" {
		t.Errorf("hooks logged %q", logged)
	}
}
