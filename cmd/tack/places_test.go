package main

// End-to-end tests of the hook events of tasks, worktrees, MCP elicitation
// and agent teams: TaskCreated, TaskCompleted, WorktreeCreate,
// WorktreeRemove, Elicitation, ElicitationResult and TeammateIdle.

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/tackcode/tack/internal/hook"
	"github.com/tackcode/tack/internal/hook/hooktest"
	"github.com/tackcode/tack/internal/llm"
	"github.com/tackcode/tack/internal/llm/llmtest"
)

// hooksWith is LoggingHooks(log, events…) with more handlers added after
// the logging ones: extra maps an event to its handlers (settings JSON).
func hooksWith(log string, extra map[hook.Event][]map[string]any, events ...hook.Event) map[string]any {
	hooks := hooktest.LoggingHooks(log, events...)
	for ev, handlers := range extra {
		for _, h := range handlers {
			group := map[string]any{"hooks": []any{h}}
			if m, ok := h["matcher"]; ok {
				group["matcher"] = m
				delete(h, "matcher")
			}
			list, _ := hooks[string(ev)].([]any)
			hooks[string(ev)] = append(list, group)
		}
	}
	return hooks
}

// writeSettings writes the project settings with hooks.
func (e *env) writeSettings(hooks map[string]any) {
	e.t.Helper()
	b, err := json.Marshal(map[string]any{"hooks": hooks})
	if err != nil {
		e.t.Fatal(err)
	}
	e.settings("settings.json", string(b))
}

func needJQ(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("jq"); err != nil {
		t.Skip("jq is not installed (scripts/test installs it)")
	}
}

// toolResult is the result of the call the request before r made: the
// first tool_result block of r.
func toolResult(t *testing.T, r llmtest.Request) llm.Block {
	t.Helper()
	results := r.ToolResults()
	if len(results) == 0 {
		t.Fatalf("request without a tool result: %v", r.LastMessage())
	}
	return results[0]
}

// TestTaskHooksGuardTheTaskList scripts TaskCreate and TaskUpdate calls:
// TaskCreated and TaskCompleted fire with the task's id, subject and
// description; a TaskCreated hook's exit 2 keeps a task out of the list and
// a TaskCompleted hook's decision "block" keeps one open, each reason
// reaching the model as the tool's error.
func TestTaskHooksGuardTheTaskList(t *testing.T) {
	needJQ(t)
	e := newEnv(t)
	create := func(subject, description string) llmtest.Turn {
		return llmtest.Reply(llmtest.ToolUse("TaskCreate", map[string]any{"subject": subject, "description": description}))
	}
	complete := func(id string) llmtest.Turn {
		return llmtest.Reply(llmtest.ToolUse("TaskUpdate", map[string]any{"taskId": id, "status": "completed"}))
	}
	e.srv.Append(
		create("Write the parser", "Parse the grammar into a tree"),
		create("Skip the tests", "Nobody will notice"),
		complete("1"),
		create("Ship it", "Tag and publish"),
		complete("3"),
		llmtest.Reply(llmtest.ToolUse("TaskList", map[string]any{})),
		llmtest.Reply(llmtest.Text("done")),
	)
	log := filepath.Join(t.TempDir(), "hooks.jsonl")
	e.writeSettings(hooksWith(log, map[hook.Event][]map[string]any{
		hook.TaskCreated: {{"type": "command",
			"command": `if jq -e '.task_subject | test("^Skip")' >/dev/null; then echo "tests are not optional" >&2; exit 2; fi`}},
		hook.TaskCompleted: {{"type": "command",
			"command": `if jq -e '.task_subject == "Ship it"' >/dev/null; then echo '{"decision":"block","reason":"not reviewed yet"}'; fi`}},
	}, hook.TaskCreated, hook.TaskCompleted))

	out, errOut := e.run("-p", "plan the work", "--output-format", "json")
	if e.status != 0 {
		t.Fatalf("exit %d: %s\n%s", e.status, out, errOut)
	}
	sessionID, _ := resultOf(t, out)["session_id"].(string)
	reqs := e.srv.Requests()
	if len(reqs) != 7 {
		t.Fatalf("%d requests, want 7", len(reqs))
	}
	for i, want := range map[int]string{
		2: `TaskCreated hook blocked creating task #2 ("Skip the tests"): tests are not optional`,
		5: `TaskCompleted hook blocked completing task #3 ("Ship it"): not reviewed yet`,
	} {
		if r := toolResult(t, reqs[i]); !r.IsError || llm.TextOf(r.Content) != want {
			t.Errorf("request %d: tool result (error %v) %q, want the error %q", i, r.IsError, llm.TextOf(r.Content), want)
		}
	}
	if r := toolResult(t, reqs[3]); r.IsError {
		t.Errorf("completing task #1: %s", llm.TextOf(r.Content))
	}
	if got := llm.TextOf(toolResult(t, reqs[6]).Content); got != "#1 [completed] Write the parser\n#3 [pending] Ship it" {
		t.Errorf("TaskList:\n%s", got)
	}

	got := hooktest.ReadLog(t, log)
	type fired struct{ event, id, subject, description string }
	var seen []fired
	for _, p := range got {
		seen = append(seen, fired{string(p.Event), p.String("task_id"), p.String("task_subject"), p.String("task_description")})
		if p.String("session_id") != sessionID || p.String("permission_mode") != "default" || p.String("cwd") == "" {
			t.Errorf("%s common fields: %s", p.Event, p.Raw)
		}
	}
	want := []fired{
		{"TaskCreated", "1", "Write the parser", "Parse the grammar into a tree"},
		{"TaskCreated", "2", "Skip the tests", "Nobody will notice"},
		{"TaskCompleted", "1", "Write the parser", "Parse the grammar into a tree"},
		{"TaskCreated", "3", "Ship it", "Tag and publish"},
		{"TaskCompleted", "3", "Ship it", "Tag and publish"},
	}
	if !slices.Equal(seen, want) {
		t.Errorf("hooks fired\n got %v\nwant %v", seen, want)
	}
}

// when is a turn for the conversation whose first prompt holds first (the
// main thread's, or a subagent's).
func when(first string, blocks ...llm.Block) llmtest.Turn {
	return llmtest.Turn{Content: blocks, When: llmtest.FirstUserContains(first)}
}

// isolatedAgent scripts a main thread that runs one subagent with isolation
// "worktree", which does job (nil: nothing) and reports.
func isolatedAgent(job ...llm.Block) []llmtest.Turn {
	turns := []llmtest.Turn{when("isolate", llmtest.ToolUse("Agent", map[string]any{
		"description": "isolated job", "prompt": "WT-JOB", "isolation": "worktree"}))}
	if len(job) > 0 {
		turns = append(turns, when("WT-JOB", job...))
	}
	return append(turns, when("WT-JOB", llmtest.Text("job done")), when("isolate", llmtest.Text("ok")))
}

// agentReport is the Agent call's tool result: the request of the main
// thread after it.
func agentReport(t *testing.T, srv *llmtest.Server) llm.Block {
	t.Helper()
	var main []llmtest.Request
	for _, r := range srv.Requests() {
		if llmtest.FirstUserContains("isolate")(&r) {
			main = append(main, r)
		}
	}
	if len(main) < 2 {
		t.Fatalf("the main thread made %d requests", len(main))
	}
	return toolResult(t, main[1])
}

// gitRepo makes dir a git repository with one commit.
func gitRepo(t *testing.T, dir string) {
	t.Helper()
	for _, args := range [][]string{{"init", "-q", "-b", "main"}, {"add", "."},
		{"-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-q", "--allow-empty", "-m", "init"}} {
		if out, err := exec.Command("git", append([]string{"-C", dir}, args...)...).CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
}

// TestWorktreeHooksReplaceGit: with a WorktreeCreate hook, an isolated
// subagent works in the directory the hook made and printed, in a project
// that need not be a git repository; WorktreeRemove fires with that path
// when the agent ends, and tack removes nothing of it. Without one, git
// makes the worktree and WorktreeRemove fires before tack removes it. A
// hook that fails or gives no usable path fails the Agent call, naming the
// hook.
func TestWorktreeHooksReplaceGit(t *testing.T) {
	needJQ(t)
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	makeDir := func(root string) map[string]any {
		return map[string]any{"type": "command", "command": `d='` + root + `'/"$(jq -r .name)" && mkdir -p "$d" && echo "$d"`}
	}

	t.Run("the hook's directory", func(t *testing.T) {
		e := newEnv(t, isolatedAgent(llmtest.ToolUse("Write", map[string]any{"file_path": "made.txt", "content": "in the hook's worktree\n"}))...)
		root := t.TempDir()
		log := filepath.Join(t.TempDir(), "hooks.jsonl")
		e.writeSettings(hooksWith(log, map[hook.Event][]map[string]any{hook.WorktreeCreate: {makeDir(root)}},
			hook.WorktreeCreate, hook.WorktreeRemove, hook.SubagentStart, hook.SubagentStop))
		out, errOut := e.run("-p", "isolate a job", "--output-format", "json", "--permission-mode", "acceptEdits")
		if e.status != 0 {
			t.Fatalf("exit %d: %s\n%s", e.status, out, errOut)
		}
		got := hooktest.ReadLog(t, log)
		if evs := hooktest.Events(got); !slices.Equal(evs, []hook.Event{hook.WorktreeCreate, hook.SubagentStart, hook.SubagentStop, hook.WorktreeRemove}) {
			t.Fatalf("events %v", evs)
		}
		create, remove := got[0], got[3]
		name := create.String("name")
		if !regexp.MustCompile(`^agent-[0-9a-f]{8}$`).MatchString(name) || create.String("cwd") == "" ||
			create.String("session_id") != resultOf(t, out)["session_id"] {
			t.Errorf("WorktreeCreate payload %s", create.Raw)
		}
		dir := filepath.Join(root, name)
		if p := remove.String("worktree_path"); p != dir {
			t.Errorf("WorktreeRemove worktree_path %q, want %q", p, dir)
		}
		if data, err := os.ReadFile(filepath.Join(dir, "made.txt")); err != nil || string(data) != "in the hook's worktree\n" {
			t.Errorf("the agent's file in the hook's worktree: %q %v", data, err)
		}
		if _, err := os.Stat(filepath.Join(e.dir, "made.txt")); err == nil {
			t.Error("the agent's file is in the project")
		}
		if r := agentReport(t, e.srv); r.IsError || strings.Contains(llm.TextOf(r.Content), "still there") {
			t.Errorf("Agent result (error %v): %s", r.IsError, llm.TextOf(r.Content))
		}
	})

	t.Run("a hook's git worktree is not git's to remove", func(t *testing.T) {
		e := newEnv(t, isolatedAgent()...)
		gitRepo(t, e.dir)
		root := t.TempDir()
		e.writeSettings(map[string]any{"WorktreeCreate": []any{map[string]any{"hooks": []any{map[string]any{"type": "command",
			"command": `d='` + root + `'/"$(jq -r .name)" && git worktree add -q --detach "$d" >&2 && echo "$d"`}}}}})
		out, errOut := e.run("-p", "isolate a job", "--output-format", "json")
		if e.status != 0 {
			t.Fatalf("exit %d: %s\n%s", e.status, out, errOut)
		}
		report := llm.TextOf(agentReport(t, e.srv).Content)
		_, rest, ok := strings.Cut(report, "It worked in ")
		dir, _, _ := strings.Cut(rest, ",")
		if !ok || filepath.Dir(dir) != root {
			t.Fatalf("the report does not say where the agent worked: %q", report)
		}
		// Unchanged, but made by the hook: still there, still a worktree.
		list, err := exec.Command("git", "-C", e.dir, "worktree", "list", "--porcelain").Output()
		if err != nil || !strings.Contains(string(list), "worktree "+dir+"\n") {
			t.Errorf("git worktree list (%v):\n%s", err, list)
		}
	})

	t.Run("git's worktree", func(t *testing.T) {
		e := newEnv(t, isolatedAgent()...)
		e.extra = append(e.extra, "XDG_CACHE_HOME="+t.TempDir())
		gitRepo(t, e.dir)
		log := filepath.Join(t.TempDir(), "hooks.jsonl")
		seen := filepath.Join(t.TempDir(), "seen")
		e.writeSettings(hooksWith(log, map[hook.Event][]map[string]any{hook.WorktreeRemove: {{"type": "command",
			"command": `test -e "$(jq -r .worktree_path)/.git" && echo there > '` + seen + `'`}}}, hook.WorktreeRemove))
		out, errOut := e.run("-p", "isolate a job", "--output-format", "json")
		if e.status != 0 {
			t.Fatalf("exit %d: %s\n%s", e.status, out, errOut)
		}
		got := hooktest.Only(hooktest.ReadLog(t, log), hook.WorktreeRemove)
		if len(got) != 1 {
			t.Fatalf("%d WorktreeRemove payloads", len(got))
		}
		path := got[0].String("worktree_path")
		if !strings.Contains(filepath.Base(path), "-general-purpose-") {
			t.Errorf("worktree_path %q is not git's worktree of the agent", path)
		}
		if data, _ := os.ReadFile(seen); string(data) != "there\n" {
			t.Error("the worktree was gone when WorktreeRemove ran")
		}
		if _, err := os.Stat(path); err == nil {
			t.Errorf("git's unchanged worktree %s was not removed", path)
		}
	})

	t.Run("failures", func(t *testing.T) {
		for _, c := range []struct{ name, command, want string }{
			{"exit 1", `echo "no space left" >&2; exit 1`, `command "echo \"no space left\" >&2; exit 1" (SETTINGS:1) exited with status 1: no space left`},
			{"exit 2", `echo refused >&2; exit 2`, `exited with status 2: refused`},
			{"no path", `true`, `gave no worktree path`},
			{"relative path", `echo some/dir`, `gave the worktree path "some/dir", which is not absolute`},
			{"missing path", `echo /nonexistent/worktree`, `gave the worktree path /nonexistent/worktree: stat /nonexistent/worktree: no such file or directory`},
		} {
			t.Run(c.name, func(t *testing.T) {
				e := newEnv(t, isolatedAgent()...)
				log := filepath.Join(t.TempDir(), "hooks.jsonl")
				e.writeSettings(hooksWith(log, map[hook.Event][]map[string]any{hook.WorktreeCreate: {{"type": "command", "command": c.command}}},
					hook.WorktreeCreate, hook.SubagentStart))
				out, errOut := e.run("-p", "isolate a job", "--output-format", "json")
				if e.status != 0 {
					t.Fatalf("exit %d: %s\n%s", e.status, out, errOut)
				}
				r := agentReport(t, e.srv)
				want := strings.ReplaceAll(c.want, "SETTINGS", filepath.Join(e.dir, ".claude", "settings.json"))
				if text := llm.TextOf(r.Content); !r.IsError || !strings.Contains(text, "WorktreeCreate hook") || !strings.Contains(text, want) {
					t.Errorf("Agent result (error %v) %q, want an error with %q", r.IsError, text, want)
				}
				if evs := hooktest.Events(hooktest.ReadLog(t, log)); !slices.Equal(evs, []hook.Event{hook.WorktreeCreate}) {
					t.Errorf("events %v: the agent must not start", evs)
				}
			})
		}
	})
}

// TestElicitationHooks runs server-everything's trigger-elicitation-request,
// which asks the user to fill in a form: an Elicitation hook of the server
// (matched by its name) answers in the user's place and the tool's result
// shows its content reached the server; without one, print mode declines
// (no one to ask) and an ElicitationResult hook, which sees every answer,
// may replace it; a blocking Elicitation hook declines.
func TestElicitationHooks(t *testing.T) {
	needJQ(t)
	// answer is a command hook of the servers matcher matches that
	// answers action, with a form naming name.
	answer := func(event hook.Event, matcher, action, name string) map[string]any {
		out, _ := json.Marshal(map[string]any{"hookSpecificOutput": map[string]any{"hookEventName": event, "action": action,
			"content": map[string]any{"name": name, "check": true}}})
		return map[string]any{"matcher": matcher, "type": "command", "command": "echo '" + string(out) + "'"}
	}
	for _, c := range []struct {
		name  string
		hooks map[hook.Event][]map[string]any
		// want is in the tool's result; action is what ElicitationResult
		// was told; stderr is shown to the user.
		want, action, stderr string
	}{
		{name: "a hook answers",
			hooks: map[hook.Event][]map[string]any{hook.Elicitation: {
				answer(hook.Elicitation, "other", "decline", "nobody"),
				answer(hook.Elicitation, "everything", "accept", "Ada Lovelace"),
			}},
			want: "- Name: Ada Lovelace\n- Agreed to terms: true", action: "accept"},
		{name: "declined with no one to ask, then accepted by ElicitationResult",
			hooks: map[hook.Event][]map[string]any{hook.ElicitationResult: {answer(hook.ElicitationResult, "", "accept", "Grace Hopper")}},
			want:  "- Name: Grace Hopper", action: "decline"},
		{name: "declined by default",
			want: "User declined", action: "decline", stderr: "declined: there is no user to ask in this mode"},
		{name: "a block declines",
			hooks: map[hook.Event][]map[string]any{hook.Elicitation: {{"type": "command", "command": "echo 'not from this server' >&2; exit 2"}}},
			want:  "User declined", action: "decline",
			stderr: `Elicitation hook declined the request of MCP server "everything": not from this server`},
	} {
		t.Run(c.name, func(t *testing.T) {
			e := newEnv(t,
				llmtest.Reply(llmtest.ToolUse("mcp__everything__trigger-elicitation-request", map[string]any{})),
				llmtest.Reply(llmtest.Text("done")))
			log := filepath.Join(t.TempDir(), "hooks.jsonl")
			e.writeSettings(hooksWith(log, c.hooks, hook.Elicitation, hook.ElicitationResult))
			out, errOut := e.run("-p", "ask me", "--mcp-config", mcpConfig(map[string]any{"everything": stdioEverything(t)}),
				"--allowedTools", "mcp__everything", "--output-format", "json")
			if e.status != 0 {
				t.Fatalf("exit %d: %s\n%s", e.status, out, errOut)
			}
			if got := resultText(e.srv.Requests()[1], 0); !strings.Contains(got, c.want) {
				t.Errorf("tool result lacks %q:\n%s", c.want, got)
			}
			if !strings.Contains(errOut, c.stderr) {
				t.Errorf("stderr lacks %q:\n%s", c.stderr, errOut)
			}
			got := hooktest.ReadLog(t, log)
			if evs := hooktest.Events(got); !slices.Equal(evs, []hook.Event{hook.Elicitation, hook.ElicitationResult}) {
				t.Fatalf("events %v", evs)
			}
			asked, answered := got[0], got[1]
			schema, _ := asked.Fields["requested_schema"].(map[string]any)
			if asked.String("mcp_server_name") != "everything" || asked.String("message") != "Please provide inputs for the following fields:" ||
				asked.String("mode") != "form" || schema["type"] != "object" || !slices.Equal(anyStrings(schema["required"]), []string{"name"}) {
				t.Errorf("Elicitation payload %s", asked.Raw)
			}
			if answered.String("mcp_server_name") != "everything" || answered.String("mode") != "form" || answered.String("action") != c.action {
				t.Errorf("ElicitationResult payload %s, want action %s", answered.Raw, c.action)
			}
			if content, _ := answered.Fields["content"].(map[string]any); c.action == "accept" && content["name"] != "Ada Lovelace" {
				t.Errorf("ElicitationResult content %v", answered.Fields["content"])
			}
		})
	}
}

func anyStrings(v any) []string {
	var out []string
	list, _ := v.([]any)
	for _, x := range list {
		s, _ := x.(string)
		out = append(out, s)
	}
	return out
}

// TestTeammateIdleNeverFires: settings written for Claude Code's agent
// teams may configure TeammateIdle. The file loads and its other hooks
// run; tack has no agent teams, so the hook never fires, and the session
// says so, naming where it is configured, as `tack hooks` does.
func TestTeammateIdleNeverFires(t *testing.T) {
	e := newEnv(t, llmtest.Reply(llmtest.Text("done")))
	log := filepath.Join(t.TempDir(), "hooks.jsonl")
	settings, _ := json.MarshalIndent(map[string]any{"hooks": hooktest.LoggingHooks(log, hook.TeammateIdle, hook.Stop)}, "", "  ")
	e.settings("settings.json", string(settings))
	_, errOut := e.run("-p", "hi")
	if e.status != 0 {
		t.Fatalf("exit %d: %s", e.status, errOut)
	}
	if evs := hooktest.Events(hooktest.ReadLog(t, log)); !slices.Equal(evs, []hook.Event{hook.Stop}) {
		t.Errorf("events %v, want the Stop hook's only", evs)
	}
	// The origin is the handler's line in the file.
	file := filepath.Join(e.dir, ".claude", "settings.json")
	notice := regexp.MustCompile(`hooks: tack has no agent teams and never fires TeammateIdle, so the hooks configured for it never run \(` +
		regexp.QuoteMeta(file) + `:\d+\)`)
	if !notice.MatchString(errOut) {
		t.Errorf("stderr lacks %q:\n%s", notice, errOut)
	}
	out, errOut := e.run("hooks")
	if e.status != 0 {
		t.Fatalf("tack hooks: exit %d: %s", e.status, errOut)
	}
	if want := "(never run: tack has no agent teams and never fires TeammateIdle)"; !strings.Contains(out, want) {
		t.Errorf("tack hooks lacks %q:\n%s", want, out)
	}
}
