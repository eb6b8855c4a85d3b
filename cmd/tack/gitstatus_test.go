package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tackcode/tack/internal/llm"
	"github.com/tackcode/tack/internal/llm/llmtest"
)

// TestGitStatusInTheSystemPrompt: in a repository, the first request's
// system prompt carries the branch, the main branch, the short status and
// the recent commits; the second request sends the same system prompt and
// tools byte for byte (the snapshot is not taken again), so the cached
// prefix holds.
func TestGitStatusInTheSystemPrompt(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	e := newEnv(t,
		llmtest.Turn{Content: []llm.Block{llmtest.ToolUse("Bash", map[string]any{"command": "git add -A && git -c user.name=t -c user.email=t@example.com commit -qm 'second commit'"})}},
		llmtest.Turn{Content: []llm.Block{llmtest.Text("committed")}})
	e.write("a.txt", "one\n")
	gitRepo(t, e.dir)
	e.write("b.txt", "b\n")
	for _, args := range [][]string{{"add", "b.txt"}, {"-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-qm", "add b.txt"}, {"checkout", "-qb", "feature/x"}} {
		if out, err := exec.Command("git", append([]string{"-C", e.dir}, args...)...).CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	e.write("a.txt", "two\n")
	e.write("new.txt", "new\n")
	if _, errOut := e.run("-p", "commit it", "--dangerously-skip-permissions"); e.status != 0 {
		t.Fatalf("exit %d: %s", e.status, errOut)
	}
	reqs := e.srv.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d requests", len(reqs))
	}
	sys := reqs[0].SystemText()
	for _, want := range []string{"Current branch: feature/x", "Main branch (what pull requests usually target): main", " M a.txt", "?? new.txt", "add b.txt", "init"} {
		if !strings.Contains(sys, want) {
			t.Errorf("the system prompt lacks %q:\n%s", want, sys)
		}
	}
	// The commit made during the turn is not in the second request: the
	// prompt is the one of the start, byte for byte.
	first, _ := json.Marshal(reqs[0].System)
	second, _ := json.Marshal(reqs[1].System)
	if string(first) != string(second) {
		t.Errorf("the system prompt changed between requests:\n%s\n---\n%s", first, second)
	}
	t1, _ := json.Marshal(reqs[0].Tools)
	t2, _ := json.Marshal(reqs[1].Tools)
	if string(t1) != string(t2) {
		t.Error("the tools changed between requests")
	}
	if log, _ := exec.Command("git", "-C", e.dir, "log", "--oneline", "-n", "1").Output(); !strings.Contains(string(log), "second commit") {
		t.Fatalf("the turn's commit did not happen: %s", log)
	}
}

// TestNoGitStatusOutsideARepository: outside a repository the system
// prompt has no git section.
func TestNoGitStatusOutsideARepository(t *testing.T) {
	e := newEnv(t, llmtest.Turn{Content: []llm.Block{llmtest.Text("ok")}})
	if _, errOut := e.run("-p", "hi"); e.status != 0 {
		t.Fatalf("exit %d: %s", e.status, errOut)
	}
	if sys := e.srv.Requests()[0].SystemText(); strings.Contains(sys, "Current branch:") {
		t.Errorf("a git section outside a repository:\n%s", sys)
	}
}

// TestGitInstructionsTurnedOff: includeGitInstructions: false leaves the
// git status out; CLAUDE_CODE_DISABLE_GIT_INSTRUCTIONS decides over the
// setting either way, as in Claude Code.
func TestGitInstructionsTurnedOff(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	e := newEnv(t, llmtest.Reply(llmtest.Text("ok")), llmtest.Reply(llmtest.Text("ok")), llmtest.Reply(llmtest.Text("ok")))
	e.write("a.txt", "one\n")
	gitRepo(t, e.dir)
	has := func(env ...string) bool {
		t.Helper()
		e.extra = env
		if _, errOut := e.run("-p", "hi", "--no-session-persistence"); e.status != 0 {
			t.Fatalf("exit %d: %s", e.status, errOut)
		}
		reqs := e.srv.Requests()
		return strings.Contains(reqs[len(reqs)-1].SystemText(), "Current branch:")
	}
	e.settings("settings.json", `{"includeGitInstructions": false}`)
	if has() {
		t.Error("includeGitInstructions: false kept the git status")
	}
	if !has("CLAUDE_CODE_DISABLE_GIT_INSTRUCTIONS=0") {
		t.Error("CLAUDE_CODE_DISABLE_GIT_INSTRUCTIONS=0 did not bring the git status back")
	}
	e.settings("settings.json", `{}`)
	if has("CLAUDE_CODE_DISABLE_GIT_INSTRUCTIONS=1") {
		t.Error("CLAUDE_CODE_DISABLE_GIT_INSTRUCTIONS=1 kept the git status")
	}
}

// TestResumeResendsTheRecordedPrompt: a resumed session sends the system
// prompt and tools its first request sent (prefix.json), byte for byte,
// though the repository changed since: the prompt cache still holds. A
// resume that asks for another prompt (--append-system-prompt) or another
// model gets a prompt made anew, with the git status of now, and that
// prompt is the one the next resume re-sends.
func TestResumeResendsTheRecordedPrompt(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	e := newEnv(t,
		llmtest.Reply(llmtest.Text("one")), llmtest.Reply(llmtest.Text("two")),
		llmtest.Reply(llmtest.Text("three")), llmtest.Reply(llmtest.Text("four")),
		llmtest.Reply(llmtest.Text("five")), llmtest.Reply(llmtest.Text("six")))
	e.write("a.txt", "one\n")
	gitRepo(t, e.dir)
	_, id := e.sessionRun("-p", "first")
	e.write("later.txt", "made after the session started\n")
	e.sessionRun("-p", "second", "-r", id)
	e.sessionRun("-p", "third", "-r", id, "--append-system-prompt", "Answer in French.")
	e.sessionRun("-p", "fourth", "-r", id, "--model", "haiku")
	// The launch record now says haiku and French: the next resume
	// re-sends the prompt the last one made (without latest.txt), not the
	// first one's.
	e.write("latest.txt", "made after the fourth run\n")
	e.sessionRun("-p", "fifth", "-r", id)
	// Without its launch record, a resume that gives prompt options makes
	// the prompt anew too.
	if err := os.Remove(filepath.Join(e.projectDir(), id, "launch.json")); err != nil {
		t.Fatal(err)
	}
	e.sessionRun("-p", "sixth", "-r", id, "--model", "haiku", "--append-system-prompt", "Be brief.")
	reqs := e.srv.Requests()
	if len(reqs) != 6 {
		t.Fatalf("%d requests", len(reqs))
	}
	if strings.Contains(reqs[0].SystemText(), "later.txt") {
		t.Fatal("the first prompt already names later.txt")
	}
	first, _ := json.Marshal(reqs[0].System)
	resumed, _ := json.Marshal(reqs[1].System)
	if string(first) != string(resumed) {
		t.Errorf("the resumed session's system prompt changed:\n%s\n---\n%s", first, resumed)
	}
	t1, _ := json.Marshal(reqs[0].Tools)
	t2, _ := json.Marshal(reqs[1].Tools)
	if string(t1) != string(t2) {
		t.Error("the resumed session's tools changed")
	}
	for i, want := range map[int]string{2: "Answer in French.", 3: reqs[3].Model} {
		if sys := reqs[i].SystemText(); !strings.Contains(sys, want) || !strings.Contains(sys, "?? later.txt") {
			t.Errorf("request %d: the prompt is not made anew (no %q or no later.txt):\n%s", i, want, sys)
		}
	}
	last, _ := json.Marshal(reqs[3].System)
	if fifth, _ := json.Marshal(reqs[4].System); string(fifth) != string(last) {
		t.Errorf("the fifth request did not re-send the prompt the fourth one made:\n%s\n---\n%s", last, fifth)
	}
	if sys := reqs[5].SystemText(); !strings.Contains(sys, "Be brief.") {
		t.Errorf("the sixth request ignored --append-system-prompt:\n%s", sys)
	}
	if reqs[3].Model == reqs[0].Model {
		t.Fatalf("--model haiku sent %s", reqs[3].Model)
	}
}
