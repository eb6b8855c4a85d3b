package agent_test

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/tackcode/tack/agent"
	"github.com/tackcode/tack/internal/llm"
	"github.com/tackcode/tack/internal/llm/llmtest"
)

// The seed examples, verbatim.
const (
	seedCodeReviewer = `---
name: code-reviewer
description: Reviews code for quality and best practices
tools: Read, Glob, Grep
model: sonnet
---

You are a code reviewer. When invoked, analyze the code and provide
specific, actionable feedback on quality, security, and best practices.
`
	seedCommit = `---
description: Stage and commit current changes with a one-line message
argument-hint: [message]
allowed-tools: Bash(git add *) Bash(git commit *) Bash(git status *)
---
Run ` + "`git status`" + `, stage all changes, and commit them with the message: $ARGUMENTS
`
	seedSummarize = `---
name: summarize-changes
description: Summarizes uncommitted changes and flags risks. Use when the user asks what changed, wants a commit message, or wants to review their diff.
allowed-tools: Bash(git *)
---
## Current changes
!` + "`git diff HEAD`" + `

## Instructions
Summarize the diff in 2-3 bullets, then list risks (missing tests,
hardcoded values, error handling). If empty, say so.
`
	seedPluginManifest = `{
  "name": "my-first-plugin",
  "description": "A greeting plugin to learn the basics",
  "version": "1.0.0",
  "author": { "name": "Your Name" }
}
`
)

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o755); err != nil {
		t.Fatal(err)
	}
}

// gitRepo makes dir a repository with one commit of a.go, then changes
// a.go without committing.
func gitRepo(t *testing.T, dir string) {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not installed")
	}
	writeFile(t, filepath.Join(dir, "a.go"), "package a\n\nconst x = 1\n")
	gitIn(t, dir, "init", "-q", "-b", "main")
	gitIn(t, dir, "add", ".")
	gitIn(t, dir, "config", "user.name", "t")
	gitIn(t, dir, "config", "user.email", "t@example.com")
	gitIn(t, dir, "commit", "-q", "-m", "init")
	writeFile(t, filepath.Join(dir, "a.go"), "package a\n\nconst x = 2 // tuned\n")
}

func gitIn(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-C", dir, "-c", "user.name=t", "-c", "user.email=t@example.com"}, args...)...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return string(out)
}

// toolDescription is the description of the tool name offered in r.
func toolDescription(t *testing.T, r llmtest.Request, name string) string {
	t.Helper()
	for _, raw := range r.Tools {
		var spec struct{ Name, Description string }
		json.Unmarshal(raw, &spec)
		if spec.Name == name {
			return spec.Description
		}
	}
	t.Fatalf("tool %s not offered (tools: %v)", name, r.ToolNames())
	return ""
}

func userText(m llm.Message) string {
	var b strings.Builder
	for _, c := range m.Content {
		if c.Type == llm.TypeText {
			b.WriteString(c.Text)
			b.WriteString("\n")
		}
	}
	return b.String()
}

func TestSeedCodeReviewerIsOfferedWithOnlyItsTools(t *testing.T) {
	srv := llmtest.Start(t, llmtest.Options{Turns: []llmtest.Turn{
		turnFor("review main.go", agentCall("code-reviewer", "CHILD-REVIEW: main.go")),
		turnFor("CHILD-REVIEW", llmtest.Text("main.go: fine")),
		turnFor("review main.go", llmtest.Text("done")),
	}})
	opts := testOptions(t, srv)
	writeFile(t, filepath.Join(opts.Cwd, ".claude", "agents", "code-reviewer.md"), seedCodeReviewer)
	collect(t, context.Background(), "review main.go", opts)

	parent := requestsFor(srv, "review main.go")
	if d := toolDescription(t, parent[0], "Agent"); !strings.Contains(d, "code-reviewer") || !strings.Contains(d, "Reviews code for quality and best practices") {
		t.Errorf("the Agent tool does not offer code-reviewer:\n%s", d)
	}
	child := requestsFor(srv, "CHILD-REVIEW")
	if len(child) != 1 {
		t.Fatalf("%d child requests", len(child))
	}
	got := child[0].ToolNames()
	slices.Sort(got)
	if !slices.Equal(got, []string{"Glob", "Grep", "Read"}) {
		t.Errorf("code-reviewer tools %v, want Glob, Grep, Read", got)
	}
	if sys := child[0].SystemText(); !strings.Contains(sys, "You are a code reviewer. When invoked") {
		t.Errorf("code-reviewer system prompt:\n%s", sys)
	}
	if want := llm.Catalogue().Resolve("sonnet", func(string) string { return "" }).ID; child[0].Model != want {
		t.Errorf("code-reviewer model %s, want %s", child[0].Model, want)
	}
	if res := parent[1].ToolResults(); len(res) != 1 || !strings.Contains(llm.TextOf(res[0].Content), "main.go: fine") {
		t.Errorf("parent did not get the report: %+v", res)
	}
}

func TestSeedSummarizeChangesInjectsTheRealDiff(t *testing.T) {
	srv := llmtest.Start(t, llmtest.Options{Turns: []llmtest.Turn{
		turnFor("summarize-changes is running", llmtest.Text("one change")),
		turnFor("what changed?", llmtest.ToolUse("Skill", map[string]string{"skill": "summarize-changes"})),
		turnFor("what changed?", llmtest.Text("one change")),
	}})
	opts := testOptions(t, srv)
	gitRepo(t, opts.Cwd)
	writeFile(t, filepath.Join(opts.Cwd, ".claude", "skills", "summarize-changes", "SKILL.md"), seedSummarize)
	diff := strings.TrimRight(gitIn(t, opts.Cwd, "diff", "HEAD"), "\n")
	if !strings.Contains(diff, "+const x = 2 // tuned") {
		t.Fatalf("unexpected diff:\n%s", diff)
	}

	// Typed by the user.
	msgs := collect(t, context.Background(), "/summarize-changes", opts)
	reqs := requestsFor(srv, "summarize-changes is running")
	if len(reqs) != 1 {
		t.Fatalf("%d requests for /summarize-changes", len(reqs))
	}
	text := userText(reqs[0].Messages[len(reqs[0].Messages)-1])
	if !strings.Contains(text, diff) || !strings.Contains(text, "<command-name>/summarize-changes</command-name>") {
		t.Errorf("the prompt lacks the diff or the command:\n%s", text)
	}
	if strings.Contains(text, "!`git diff HEAD`") {
		t.Error("the injection was left in the prompt")
	}
	init := msgs[0].(*agent.SystemMessage).Init
	if !slices.Contains(init.SlashCommands, "summarize-changes") || !slices.Contains(init.Skills, "summarize-changes") {
		t.Errorf("init slash_commands %v skills %v", init.SlashCommands, init.Skills)
	}

	// Run by the model through the Skill tool, which lists it.
	collect(t, context.Background(), "what changed?", opts)
	reqs = requestsFor(srv, "what changed?")
	if d := toolDescription(t, reqs[0], "Skill"); !strings.Contains(d, "- summarize-changes: Summarizes uncommitted changes") {
		t.Errorf("the Skill tool does not list the skill:\n%s", d)
	}
	res := reqs[1].ToolResults()
	if len(res) != 1 || res[0].IsError || !strings.Contains(llm.TextOf(res[0].Content), diff) {
		t.Errorf("the Skill tool did not return the prepared skill: %+v", res)
	}
}

func TestSeedCommitCommandExpandsArgumentsAndGrantsItsTools(t *testing.T) {
	srv := llmtest.Start(t, llmtest.Options{Turns: []llmtest.Turn{
		turnFor("commit is running", llmtest.ToolUse("Bash", map[string]string{"command": "git add -A"})),
		turnFor("commit is running", llmtest.ToolUse("Bash", map[string]string{"command": "git commit -q -m 'fix typo'"})),
		turnFor("commit is running", llmtest.Text("committed")),
		turnFor("stage it", llmtest.ToolUse("Bash", map[string]string{"command": "git add -A"})),
		turnFor("stage it", llmtest.Text("could not")),
	}})
	opts := testOptions(t, srv)
	gitRepo(t, opts.Cwd)
	writeFile(t, filepath.Join(opts.Cwd, ".claude", "commands", "commit.md"), seedCommit)

	collect(t, context.Background(), "/commit fix typo", opts)
	reqs := requestsFor(srv, "commit is running")
	if len(reqs) != 3 {
		t.Fatalf("%d requests", len(reqs))
	}
	if text := userText(reqs[0].Messages[0]); !strings.Contains(text, "commit them with the message: fix typo") ||
		!strings.Contains(text, "<command-args>fix typo</command-args>") {
		t.Errorf("$ARGUMENTS not expanded:\n%s", text)
	}
	for i := 1; i < 3; i++ {
		if res := reqs[i].ToolResults(); len(res) != 1 || res[0].IsError {
			t.Errorf("call %d was not run under the command's allowed-tools: %+v", i, res)
		}
	}
	if subject := strings.TrimSpace(gitIn(t, opts.Cwd, "log", "-1", "--format=%s")); subject != "fix typo" {
		t.Errorf("last commit %q", subject)
	}

	// Without the command, the same call needs approval: denied in print mode.
	writeFile(t, filepath.Join(opts.Cwd, "b.txt"), "b\n")
	collect(t, context.Background(), "stage it", opts)
	reqs = requestsFor(srv, "stage it")
	if res := reqs[1].ToolResults(); len(res) != 1 || !res[0].IsError {
		t.Errorf("git add ran without the command's grant: %+v", res)
	}
}

func TestSeedPluginFromPluginDir(t *testing.T) {
	if _, err := exec.LookPath("jq"); err != nil {
		t.Skip("jq not installed")
	}
	srv := llmtest.Start(t, llmtest.Options{Turns: []llmtest.Turn{
		turnFor("hello is running", llmtest.ToolUse("Bash", map[string]string{"command": "greet"})),
		turnFor("hello is running", llmtest.Text("greeted")),
	}})
	opts := testOptions(t, srv)
	root := filepath.Join(t.TempDir(), "my-first-plugin")
	writeFile(t, filepath.Join(root, ".claude-plugin", "plugin.json"), seedPluginManifest)
	writeFile(t, filepath.Join(root, "skills", "hello", "SKILL.md"), "---\ndescription: Greet the user\n---\nGreet $ARGUMENTS warmly, then run the greet tool.\n")
	writeFile(t, filepath.Join(root, "hooks", "hooks.json"), `{"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [
		{"type": "command", "command": "jq -r .tool_input.command >> \"${CLAUDE_PLUGIN_ROOT}/hook.log\""}]}]}}`)
	writeFile(t, filepath.Join(root, "bin", "greet"), "#!/bin/sh\necho \"hello from my-first-plugin's bin\"\n")
	opts.PluginDirs = []string{root}
	opts.AllowedTools = []string{"Bash(greet)"}

	msgs := collect(t, context.Background(), "/my-first-plugin:hello Ada", opts)
	reqs := requestsFor(srv, "hello is running")
	if len(reqs) != 2 {
		t.Fatalf("%d requests", len(reqs))
	}
	if text := userText(reqs[0].Messages[0]); !strings.Contains(text, "Greet Ada warmly") {
		t.Errorf("/my-first-plugin:hello not expanded:\n%s", text)
	}
	if res := reqs[1].ToolResults(); len(res) != 1 || res[0].IsError || !strings.Contains(llm.TextOf(res[0].Content), "hello from my-first-plugin's bin") {
		t.Errorf("the plugin's bin/ tool did not run: %+v", res)
	}
	if log, err := os.ReadFile(filepath.Join(root, "hook.log")); err != nil || strings.TrimSpace(string(log)) != "greet" {
		t.Errorf("the plugin's hook did not fire: %q %v", log, err)
	}
	init := msgs[0].(*agent.SystemMessage).Init
	if !slices.Contains(init.SlashCommands, "my-first-plugin:hello") {
		t.Errorf("slash_commands %v", init.SlashCommands)
	}
	if len(init.Plugins) != 1 || init.Plugins[0].Name != "my-first-plugin" || init.Plugins[0].Path != root {
		t.Errorf("plugins %+v", init.Plugins)
	}
}

func TestAgentHooksFireOnlyInThatAgent(t *testing.T) {
	srv := llmtest.Start(t, llmtest.Options{Turns: []llmtest.Turn{
		turnFor("delegate", agentCall("guarded", "GUARDED-JOB")),
		turnFor("GUARDED-JOB", llmtest.ToolUse("Bash", map[string]string{"command": "echo inside"})),
		turnFor("GUARDED-JOB", llmtest.Text("blocked, as expected")),
		turnFor("delegate", llmtest.ToolUse("Bash", map[string]string{"command": "echo outside"})),
		turnFor("delegate", llmtest.Text("done")),
	}})
	opts := testOptions(t, srv)
	opts.AllowedTools = []string{"Bash(echo *)"}
	stopped := filepath.Join(t.TempDir(), "stopped")
	writeFile(t, filepath.Join(opts.Cwd, ".claude", "agents", "guarded.md"), `---
name: guarded
description: Runs with a guard
hooks:
  PreToolUse:
    - matcher: Bash
      hooks:
        - type: command
          command: "echo 'blocked by the agent hook' >&2; exit 2"
  Stop:
    - hooks:
        - type: command
          command: "cat > `+stopped+`"
---
You are guarded.
`)
	collect(t, context.Background(), "delegate", opts)
	child := requestsFor(srv, "GUARDED-JOB")
	if res := child[1].ToolResults(); len(res) != 1 || !res[0].IsError || !strings.Contains(llm.TextOf(res[0].Content), "blocked by the agent hook") {
		t.Errorf("the agent's PreToolUse hook did not block: %+v", res)
	}
	parent := requestsFor(srv, "delegate")
	if res := parent[2].ToolResults(); len(res) != 1 || res[0].IsError {
		t.Errorf("the agent's hook fired outside the agent: %+v", res)
	}
	data, err := os.ReadFile(stopped)
	var p struct {
		Event     string `json:"hook_event_name"`
		AgentType string `json:"agent_type"`
	}
	if err != nil || json.Unmarshal(data, &p) != nil || p.Event != "SubagentStop" || p.AgentType != "guarded" {
		t.Errorf("the agent's Stop hook did not fire as SubagentStop: %s %v", data, err)
	}
}

func TestForkedSkillRunsInItsAgent(t *testing.T) {
	srv := llmtest.Start(t, llmtest.Options{Turns: []llmtest.Turn{
		turnFor("investigate", llmtest.ToolUse("Skill", map[string]string{"skill": "deep-dive", "args": "the parser"})),
		turnFor("DEEP-DIVE on the parser", llmtest.Text("FORK-REPORT: parser is fine")),
		turnFor("investigate", llmtest.Text("done")),
	}})
	opts := testOptions(t, srv)
	writeFile(t, filepath.Join(opts.Cwd, ".claude", "skills", "deep-dive", "SKILL.md"),
		"---\ndescription: Study one part of the code in depth\ncontext: fork\nagent: Explore\n---\nDEEP-DIVE on $ARGUMENTS, then report.\n")
	collect(t, context.Background(), "investigate", opts)
	child := requestsFor(srv, "DEEP-DIVE on the parser")
	if len(child) != 1 {
		t.Fatalf("%d forked requests", len(child))
	}
	if sys := child[0].SystemText(); !strings.Contains(sys, "read-only search agent") {
		t.Errorf("the fork did not run as Explore:\n%s", sys)
	}
	if slices.Contains(child[0].ToolNames(), "Write") {
		t.Error("the Explore fork was offered Write")
	}
	parent := requestsFor(srv, "investigate")
	if res := parent[1].ToolResults(); len(res) != 1 || !strings.Contains(llm.TextOf(res[0].Content), "FORK-REPORT") ||
		strings.Contains(llm.TextOf(res[0].Content), "DEEP-DIVE on") {
		t.Errorf("the parent got %+v, want the report only", res)
	}
}

func TestAgentPreloadsItsSkills(t *testing.T) {
	srv := llmtest.Start(t, llmtest.Options{Turns: []llmtest.Turn{
		turnFor("write docs", agentCall("writer", "WRITER-JOB")),
		turnFor("WRITER-JOB", llmtest.Text("ok")),
		turnFor("write docs", llmtest.Text("done")),
	}})
	opts := testOptions(t, srv)
	writeFile(t, filepath.Join(opts.Cwd, ".claude", "skills", "house-style", "SKILL.md"),
		"---\ndescription: Our writing style\n---\nHOUSE-STYLE: short sentences.\n")
	writeFile(t, filepath.Join(opts.Cwd, ".claude", "agents", "writer.md"),
		"---\nname: writer\ndescription: Writes docs\nskills: [house-style]\n---\nYou write docs.\n")
	collect(t, context.Background(), "write docs", opts)
	child := requestsFor(srv, "WRITER-JOB")
	if len(child) != 1 || !strings.Contains(string(child[0].Body), "HOUSE-STYLE: short sentences.") {
		t.Errorf("the agent's skill was not preloaded")
	}
	for _, r := range requestsFor(srv, "write docs") {
		if strings.Contains(string(r.Body), "HOUSE-STYLE") {
			t.Error("the agent's skill leaked into the parent's context")
		}
	}
}

func TestSkillComesBackAfterCompaction(t *testing.T) {
	srv := llmtest.Start(t, llmtest.Options{Turns: []llmtest.Turn{
		{Content: []llm.Block{llmtest.ToolUse("Skill", map[string]string{"skill": "release"})},
			Usage: &llm.Usage{InputTokens: 150_000, OutputTokens: 10}},
		{Content: []llm.Block{llmtest.Text("SUMMARY of the work so far")}},
		{Content: []llm.Block{llmtest.Text("done")}},
	}})
	opts := testOptions(t, srv)
	opts.Env["CLAUDE_AUTOCOMPACT_PCT_OVERRIDE"] = "5"
	writeFile(t, filepath.Join(opts.Cwd, ".claude", "skills", "release", "SKILL.md"),
		"---\ndescription: How we release\n---\nRELEASE-STEPS: tag, build, publish.\n")
	collect(t, context.Background(), "cut a release", opts)
	reqs := srv.Requests()
	if len(reqs) != 3 {
		t.Fatalf("%d requests", len(reqs))
	}
	after := string(reqs[2].Body)
	if !strings.Contains(after, "SUMMARY of the work so far") {
		t.Fatal("no compaction happened")
	}
	if !strings.Contains(after, "The skill release was loaded earlier") || !strings.Contains(after, "RELEASE-STEPS: tag, build, publish.") {
		t.Errorf("the skill did not survive the compaction:\n%s", after)
	}
}

func TestBrokenDefinitionsAreReportedAndTheRestLoads(t *testing.T) {
	srv := llmtest.Start(t, llmtest.Options{Turns: []llmtest.Turn{{Content: []llm.Block{llmtest.Text("ok")}}}})
	opts := testOptions(t, srv)
	dir := filepath.Join(opts.Cwd, ".claude", "agents")
	writeFile(t, filepath.Join(dir, "good.md"), "---\nname: good\ndescription: A good agent\n---\nGood.\n")
	writeFile(t, filepath.Join(dir, "bad.md"), "---\nname: bad\ndescription: ok\nhooks:\n  PreToolUse:\n   - matcher: Bash\n  - stray\n---\nBad.\n")
	writeFile(t, filepath.Join(dir, "nomodel.md"), "---\nname: nomodel\ndescription: x\nmodel: sonet\n---\nX.\n")
	var notes []string
	opts.Notify = func(m string) { notes = append(notes, m) }
	collect(t, context.Background(), "hi", opts)
	d := toolDescription(t, srv.Requests()[0], "Agent")
	if !strings.Contains(d, "good") || strings.Contains(d, "- bad") || strings.Contains(d, "nomodel") {
		t.Errorf("agents offered:\n%s", d)
	}
	all := strings.Join(notes, "\n")
	if !strings.Contains(all, filepath.Join(dir, "bad.md")+":7") || !strings.Contains(all, filepath.Join(dir, "nomodel.md")+":4") {
		t.Errorf("problems not reported with file and line:\n%s", all)
	}
}

func TestInvokedSkillBringsItsModelAndHooks(t *testing.T) {
	srv := llmtest.Start(t, llmtest.Options{Turns: []llmtest.Turn{
		{Content: []llm.Block{llmtest.ToolUse("Bash", map[string]string{"command": "echo before"})}},
		{Content: []llm.Block{llmtest.ToolUse("Skill", map[string]string{"skill": "deploy"})}},
		{Content: []llm.Block{llmtest.ToolUse("Bash", map[string]string{"command": "echo after"})}},
		{Content: []llm.Block{llmtest.Text("shipped")}},
	}})
	opts := testOptions(t, srv)
	opts.AllowedTools = []string{"Bash(echo *)"}
	log := filepath.Join(t.TempDir(), "hook.log")
	writeFile(t, filepath.Join(opts.Cwd, ".claude", "skills", "deploy", "SKILL.md"), `---
description: Deploys the service
model: haiku
hooks:
  PreToolUse:
    - matcher: Bash
      hooks:
        - type: command
          command: "jq -r .tool_input.command >> `+log+`"
---
DEPLOY-STEPS.
`)
	collect(t, context.Background(), "ship it", opts)
	reqs := srv.Requests()
	if len(reqs) != 4 {
		t.Fatalf("%d requests", len(reqs))
	}
	haiku := llm.Catalogue().Resolve("haiku", func(string) string { return "" }).ID
	if reqs[0].Model == haiku || reqs[1].Model == haiku || reqs[2].Model != haiku || reqs[3].Model != haiku {
		t.Errorf("models %s %s %s %s: want the skill's %s once it is loaded", reqs[0].Model, reqs[1].Model, reqs[2].Model, reqs[3].Model, haiku)
	}
	data, _ := os.ReadFile(log)
	if got := strings.TrimSpace(string(data)); got != "echo after" {
		t.Errorf("the skill's hook saw %q, want only the call made after the skill was loaded", got)
	}
}

func TestSkillWithPathsIsAnnouncedWhenAMatchingFileIsRead(t *testing.T) {
	srv := llmtest.Start(t, llmtest.Options{Turns: []llmtest.Turn{
		{Content: []llm.Block{llmtest.ToolUse("Read", map[string]string{"file_path": "notes.txt"})}},
		{Content: []llm.Block{llmtest.ToolUse("Read", map[string]string{"file_path": "pkg/a.go"})}},
		{Content: []llm.Block{llmtest.ToolUse("Skill", map[string]string{"skill": "go-style"})}},
		{Content: []llm.Block{llmtest.Text("ok")}},
	}})
	opts := testOptions(t, srv)
	writeFile(t, filepath.Join(opts.Cwd, "notes.txt"), "notes\n")
	writeFile(t, filepath.Join(opts.Cwd, "pkg", "a.go"), "package pkg\n")
	writeFile(t, filepath.Join(opts.Cwd, ".claude", "skills", "go-style", "SKILL.md"),
		"---\ndescription: How we write Go\npaths: \"**/*.go\"\n---\nGO-STYLE: wrap errors.\n")
	writeFile(t, filepath.Join(opts.Cwd, ".claude", "skills", "general", "SKILL.md"), "---\ndescription: General advice\n---\nGENERAL.\n")
	collect(t, context.Background(), "tidy up", opts)
	reqs := srv.Requests()
	d := toolDescription(t, reqs[0], "Skill")
	if !strings.Contains(d, "- general") || strings.Contains(d, "go-style") {
		t.Errorf("listing:\n%s", d)
	}
	const note = "The skill go-style applies to files like this one"
	if strings.Contains(string(reqs[1].Body), note) {
		t.Error("go-style was announced for notes.txt")
	}
	if res := reqs[2].ToolResults(); len(res) != 1 || !strings.Contains(string(reqs[2].Body), note) {
		t.Errorf("go-style was not announced when pkg/a.go was read")
	}
	if res := reqs[3].ToolResults(); len(res) != 1 || res[0].IsError || !strings.Contains(llm.TextOf(res[0].Content), "GO-STYLE") {
		t.Errorf("go-style did not run: %+v", res)
	}
}

func TestWhoMayInvokeASkill(t *testing.T) {
	srv := llmtest.Start(t, llmtest.Options{Turns: []llmtest.Turn{
		turnFor("manual is running", llmtest.Text("ran")),
		turnFor("/auto-only now", llmtest.ToolUse("Skill", map[string]string{"skill": "manual"})),
		turnFor("/auto-only now", llmtest.Text("refused")),
	}})
	opts := testOptions(t, srv)
	writeFile(t, filepath.Join(opts.Cwd, ".claude", "skills", "manual", "SKILL.md"),
		"---\ndescription: Only when asked\ndisable-model-invocation: true\n---\nMANUAL-BODY.\n")
	writeFile(t, filepath.Join(opts.Cwd, ".claude", "skills", "auto-only", "SKILL.md"),
		"---\ndescription: Background knowledge\nuser-invocable: false\n---\nAUTO-BODY.\n")
	msgs := collect(t, context.Background(), "/manual", opts)
	init := msgs[0].(*agent.SystemMessage).Init
	if !slices.Equal(init.SlashCommands, []string{"manual"}) || !slices.Equal(init.Skills, []string{"auto-only"}) {
		t.Errorf("slash_commands %v, skills %v", init.SlashCommands, init.Skills)
	}
	if r := requestsFor(srv, "manual is running"); len(r) != 1 || !strings.Contains(string(r[0].Body), "MANUAL-BODY.") {
		t.Error("/manual did not run the skill")
	}
	collect(t, context.Background(), "/auto-only now", opts)
	reqs := requestsFor(srv, "/auto-only now")
	if strings.Contains(string(reqs[0].Body), "AUTO-BODY") {
		t.Error("a skill that is not user-invocable ran as /auto-only")
	}
	d := toolDescription(t, reqs[0], "Skill")
	if !strings.Contains(d, "- auto-only") || strings.Contains(d, "manual") {
		t.Errorf("listing:\n%s", d)
	}
	if res := reqs[1].ToolResults(); len(res) != 1 || !res[0].IsError || strings.Contains(llm.TextOf(res[0].Content), "MANUAL-BODY") {
		t.Errorf("the model ran a disable-model-invocation skill: %+v", res)
	}
}

func TestAgentsFromJSON(t *testing.T) {
	srv := llmtest.Start(t, llmtest.Options{Turns: []llmtest.Turn{
		turnFor("judge this", agentCall("judge", "JUDGE-JOB")),
		turnFor("JUDGE-JOB", llmtest.Text("guilty")),
		turnFor("judge this", llmtest.Text("done")),
	}})
	opts := testOptions(t, srv)
	opts.AgentsJSON = `{"judge": {"description": "Judges code", "prompt": "You are JUDGE.", "tools": ["Read"]}}`
	collect(t, context.Background(), "judge this", opts)
	if d := toolDescription(t, requestsFor(srv, "judge this")[0], "Agent"); !strings.Contains(d, "- judge: Judges code") {
		t.Errorf("judge not offered:\n%s", d)
	}
	child := requestsFor(srv, "JUDGE-JOB")
	if len(child) != 1 || !strings.Contains(child[0].SystemText(), "You are JUDGE.") || !slices.Equal(child[0].ToolNames(), []string{"Read"}) {
		t.Errorf("judge ran with tools %v", child[0].ToolNames())
	}
}

func TestAgentRunsTheMCPServersItDefines(t *testing.T) {
	js, err := filepath.Abs(filepath.Join("..", "test", "mcp", "node_modules", "@modelcontextprotocol", "server-everything", "dist", "index.js"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(js); err != nil {
		t.Fatal("test/mcp/node_modules is missing: run scripts/test (it runs `npm ci --prefix test/mcp`)")
	}
	srv := llmtest.Start(t, llmtest.Options{Turns: []llmtest.Turn{
		turnFor("use the echo agent", agentCall("echoer", "ECHO-JOB")),
		turnFor("ECHO-JOB", llmtest.ToolUse("mcp__everything__echo", map[string]string{"message": "ping from the agent"})),
		turnFor("ECHO-JOB", llmtest.Text("echoed")),
		turnFor("use the echo agent", llmtest.Text("done")),
	}})
	opts := testOptions(t, srv)
	opts.AllowedTools = []string{"mcp__everything"}
	opts.Env["TACK_MCP_STARTUP_DEADLINE_MS"] = "60000" // however busy the machine
	writeFile(t, filepath.Join(opts.Cwd, ".claude", "agents", "echoer.md"), `---
name: echoer
description: Echoes through MCP
tools: Read
mcpServers:
  - everything:
      command: node
      args: ["`+js+`", "stdio"]
---
You echo.
`)
	collect(t, context.Background(), "use the echo agent", opts)
	parent := requestsFor(srv, "use the echo agent")
	if slices.ContainsFunc(parent[0].ToolNames(), func(n string) bool { return strings.HasPrefix(n, "mcp__everything__") }) {
		t.Error("the agent's server's tools were offered to the parent")
	}
	child := requestsFor(srv, "ECHO-JOB")
	if len(child) != 2 || !slices.Contains(child[0].ToolNames(), "mcp__everything__echo") {
		t.Fatalf("the agent was not offered its server's tools: %v", child[0].ToolNames())
	}
	if res := child[1].ToolResults(); len(res) != 1 || res[0].IsError || !strings.Contains(llm.TextOf(res[0].Content), "ping from the agent") {
		t.Errorf("echo through the agent's server: %+v", res)
	}
}

func TestResumeRestoresAgentsAndNotASkillsModel(t *testing.T) {
	srv := llmtest.Start(t, llmtest.Options{Turns: []llmtest.Turn{
		{Content: []llm.Block{llmtest.Text("quick answer")}},
		{Content: []llm.Block{llmtest.Text("resumed")}},
	}})
	opts := testOptions(t, srv)
	opts.AgentsJSON = `{"judge": {"description": "Judges code", "prompt": "You judge."}}`
	writeFile(t, filepath.Join(opts.Cwd, ".claude", "skills", "fast", "SKILL.md"), "---\ndescription: Quick answers\nmodel: haiku\n---\nBe quick.\n")
	msgs := collect(t, context.Background(), "/fast", opts)
	id := msgs[len(msgs)-1].(*agent.ResultMessage).SessionID

	resumed := testOptions(t, srv)
	resumed.Cwd, resumed.Env = opts.Cwd, opts.Env
	resumed.Resume = id
	collect(t, context.Background(), "again", resumed)
	reqs := srv.Requests()
	haiku := llm.Catalogue().Resolve("haiku", func(string) string { return "" }).ID
	if reqs[0].Model != haiku || reqs[1].Model == haiku {
		t.Errorf("models %s then %s: the skill's model should hold for its prompt only", reqs[0].Model, reqs[1].Model)
	}
	if d := toolDescription(t, reqs[1], "Agent"); !strings.Contains(d, "- judge: Judges code") {
		t.Errorf("the --agents agents were not restored:\n%s", d)
	}
}
