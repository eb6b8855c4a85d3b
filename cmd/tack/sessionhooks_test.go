package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/tackcode/tack/internal/hook"
	"github.com/tackcode/tack/internal/hook/hooktest"
	"github.com/tackcode/tack/internal/llm"
	"github.com/tackcode/tack/internal/llm/llmtest"
)

// The session and prompt events, end to end: Setup under --init,
// --init-only and --maintenance, SessionStart's sources and answers,
// SessionEnd's reason and prompt_id, InstructionsLoaded for the memory
// loaded at start, lazily and after compaction, and UserPromptExpansion of
// a project command, with what each hook's answer changes.

// hookLogs writes the project's settings: every payload of events logged to
// the returned file, and the extra matchers of each event after the logging
// one.
func (e *env) hookLogs(extra map[hook.Event][]any, events ...hook.Event) string {
	e.t.Helper()
	log := filepath.Join(e.t.TempDir(), "hooks.jsonl")
	hooks := hooktest.LoggingHooks(log, events...)
	for ev, ms := range extra {
		prev, _ := hooks[string(ev)].([]any)
		hooks[string(ev)] = append(prev, ms...)
	}
	b, err := json.Marshal(map[string]any{"hooks": hooks})
	if err != nil {
		e.t.Fatal(err)
	}
	e.settings("settings.json", string(b))
	return log
}

// commandHook is a settings matcher running command.
func commandHook(matcher, command string) any {
	return map[string]any{"matcher": matcher, "hooks": []any{map[string]any{"type": "command", "command": command}}}
}

// jsonAnswer is a command printing v as JSON.
func jsonAnswer(v any) string {
	b, _ := json.Marshal(v)
	return "printf '%s' '" + string(b) + "'"
}

// firstUserText is the text of the first user message of the first request.
func firstUserText(t *testing.T, reqs []llmtest.Request) string {
	t.Helper()
	if len(reqs) == 0 || len(reqs[0].Messages) == 0 {
		t.Fatal("no request")
	}
	return llm.TextOf(reqs[0].Messages[0].Content)
}

func TestSetupHooks(t *testing.T) {
	for _, tc := range []struct {
		name    string
		args    []string
		trigger string // "" when Setup must not fire
		prompt  bool   // a conversation follows
	}{
		{"init", []string{"-p", "hello", "--init"}, "init", true},
		{"maintenance", []string{"-p", "hello", "--maintenance"}, "maintenance", true},
		{"init-only", []string{"--init-only"}, "init", false},
		{"none", []string{"-p", "hello"}, "", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, llmtest.Reply(llmtest.Text("hi")))
			marker := filepath.Join(t.TempDir(), "maintained")
			log := e.hookLogs(map[hook.Event][]any{hook.Setup: {
				commandHook("", jsonAnswer(map[string]any{"hookSpecificOutput": map[string]any{
					"hookEventName": "Setup", "additionalContext": "The dependencies are installed."}})),
				commandHook("", "echo 'Plain setup note.'"),
				commandHook("maintenance", "touch "+marker),
			}}, hook.Setup, hook.SessionStart, hook.UserPromptSubmit, hook.SessionEnd)
			out, errOut := e.run(append(tc.args, "--output-format", "json")...)
			if e.status != 0 {
				t.Fatalf("exit %d: %s\n%s", e.status, out, errOut)
			}
			got := hooktest.ReadLog(t, log)
			want := []hook.Event{hook.Setup, hook.SessionStart, hook.UserPromptSubmit, hook.SessionEnd}
			switch {
			case tc.trigger == "":
				want = want[1:]
			case !tc.prompt:
				want = []hook.Event{hook.Setup, hook.SessionStart, hook.SessionEnd}
			}
			if evs := hooktest.Events(got); !slices.Equal(evs, want) {
				t.Fatalf("events %v, want %v", evs, want)
			}
			start := hooktest.Only(got, hook.SessionStart)[0]
			if start.String("source") != "startup" {
				t.Errorf("SessionStart %s", start.Raw)
			}
			_, err := os.Stat(marker)
			if matched := err == nil; matched != (tc.trigger == "maintenance") {
				t.Errorf("the maintenance matcher ran: %v, for trigger %q", matched, tc.trigger)
			}
			reqs := e.srv.Requests()
			if !tc.prompt {
				// Nothing is asked of the model, and nothing is printed.
				if len(reqs) != 0 || out != "" || errOut != "" {
					t.Errorf("--init-only made %d requests, printed %q and %q", len(reqs), out, errOut)
				}
			} else if res := resultOf(t, out); res["session_id"] != start.String("session_id") {
				t.Errorf("result of session %v, SessionStart of %s", res["session_id"], start.String("session_id"))
			}
			if tc.trigger == "" {
				if strings.Contains(firstUserText(t, reqs), "Setup hook") {
					t.Error("Setup context without a Setup flag")
				}
				return
			}
			setup := got[0]
			fields := map[string]string{"session_id": setup.String("session_id"), "cwd": setup.String("cwd"),
				"transcript_path": setup.String("transcript_path"), "trigger": setup.String("trigger")}
			wantFields := map[string]string{"session_id": start.String("session_id"), "cwd": e.realDir(),
				"transcript_path": start.String("transcript_path"), "trigger": tc.trigger}
			if !mapsEqual(fields, wantFields) || setup.Has("permission_mode") || setup.Has("prompt_id") {
				t.Errorf("Setup %s, want %v", setup.Raw, wantFields)
			}
			if tc.prompt {
				// What the Setup hooks said opens the conversation.
				first := firstUserText(t, reqs)
				if !strings.Contains(first, "Setup hook additional context: The dependencies are installed.\nPlain setup note.") {
					t.Errorf("the first message lacks the Setup context:\n%s", first)
				}
			}
		})
	}
	t.Run("init and maintenance", func(t *testing.T) {
		e := newEnv(t)
		_, errOut := e.run("-p", "hello", "--init", "--maintenance")
		if e.status != 1 || !strings.Contains(errOut, "--maintenance cannot be combined with --init") {
			t.Errorf("exit %d: %s", e.status, errOut)
		}
	})
}

// TestSetupHookFailureDoesNotStopInitOnly: Setup hooks cannot block; one
// that fails is reported and --init-only still exits 0.
func TestSetupHookFailureDoesNotStopInitOnly(t *testing.T) {
	e := newEnv(t)
	log := e.hookLogs(map[hook.Event][]any{hook.Setup: {commandHook("", "echo 'no network' >&2; exit 2")}}, hook.SessionStart)
	out, errOut := e.run("--init-only")
	if e.status != 0 || out != "" || !strings.Contains(errOut, "Setup:init hook error: no network") {
		t.Errorf("exit %d: %q %q", e.status, out, errOut)
	}
	if got := hooktest.Events(hooktest.ReadLog(t, log)); !slices.Equal(got, []hook.Event{hook.SessionStart}) {
		t.Errorf("events %v", got)
	}
}

func TestSessionStartSources(t *testing.T) {
	e := newEnv(t)
	log := e.hookLogs(map[hook.Event][]any{hook.SessionStart: {
		commandHook("startup", "echo 'Started fresh.'"),
		commandHook("resume|fork", jsonAnswer(map[string]any{"hookSpecificOutput": map[string]any{
			"hookEventName": "SessionStart", "additionalContext": "Welcome back."}})),
	}}, hook.SessionStart, hook.SessionEnd)
	e.srv.Append(llmtest.Reply(llmtest.Text("one")), llmtest.Reply(llmtest.Text("two")),
		llmtest.Reply(llmtest.Text("three")), llmtest.Reply(llmtest.Text("four")))
	_, first := e.sessionRun("-p", "first", "-n", "my-work")
	_, second := e.sessionRun("-p", "second", "-c")
	_, third := e.sessionRun("-p", "third", "--resume", first)
	_, forked := e.sessionRun("-p", "fourth", "--resume", first, "--fork-session")
	if second != first || third != first || forked == first {
		t.Fatalf("sessions %s %s %s %s", first, second, third, forked)
	}
	starts := hooktest.Only(hooktest.ReadLog(t, log), hook.SessionStart)
	var sources []string
	for _, p := range starts {
		sources = append(sources, p.String("source"))
		if p.String("model") == "" || p.Has("permission_mode") || p.Has("prompt_id") {
			t.Errorf("SessionStart %s", p.Raw)
		}
		// The title the session was given with -n, from the first start
		// on; the fork has a title of its own.
		want := "my-work"
		if p.String("source") == "fork" {
			want = "my-work (fork)"
		}
		if p.String("session_title") != want {
			t.Errorf("SessionStart %s: session_title %q", p.String("source"), p.String("session_title"))
		}
	}
	if want := []string{"startup", "resume", "resume", "fork"}; !slices.Equal(sources, want) {
		t.Errorf("sources %v, want %v", sources, want)
	}
	if starts[3].String("session_id") != forked {
		t.Errorf("the fork's SessionStart is of session %s, want %s", starts[3].String("session_id"), forked)
	}
	// The plain stdout of the startup hook, and the resume hook's context.
	reqs := e.srv.Requests()
	if got := llm.TextOf(reqs[0].Messages[0].Content); !strings.Contains(got, "SessionStart hook additional context: Started fresh.") || strings.Contains(got, "Welcome back.") {
		t.Errorf("first request:\n%s", got)
	}
	for _, r := range reqs[1:] {
		last := r.Messages[len(r.Messages)-1]
		if got := llm.TextOf(last.Content); !strings.Contains(got, "SessionStart hook additional context: Welcome back.") {
			t.Errorf("a resumed session's prompt lacks the resume context:\n%s", got)
		}
	}
}

// TestSessionStartTitleAndFirstMessage: a SessionStart hook's sessionTitle
// names the session as -n does (and it is found by that name), and its
// initialUserMessage is print mode's first turn, with or without a prompt.
func TestSessionStartTitleAndFirstMessage(t *testing.T) {
	e := newEnv(t)
	e.hookLogs(map[hook.Event][]any{hook.SessionStart: {
		commandHook("startup", jsonAnswer(map[string]any{"hookSpecificOutput": map[string]any{
			"hookEventName": "SessionStart", "sessionTitle": "nightly-triage", "initialUserMessage": "Read the triage notes."}})),
	}})
	e.srv.Append(llmtest.Reply(llmtest.Text("Notes read.")), llmtest.Reply(llmtest.Text("Triaged.")),
		llmtest.Reply(llmtest.Text("Resumed by name.")), llmtest.Reply(llmtest.Text("Notes read again.")))
	res, id := e.sessionRun("-p", "now triage")
	if res["result"] != "Triaged." {
		t.Errorf("result %v: the prompt's answer is the run's", res)
	}
	reqs := e.srv.Requests()
	if len(reqs) != 2 || !slices.Equal(userTexts(reqs[0]), []string{"Read the triage notes."}) ||
		!slices.Equal(userTexts(reqs[1]), []string{"Read the triage notes.", "now triage"}) {
		t.Fatalf("requests %d: %q then %q", len(reqs), userTexts(reqs[0]), userTexts(reqs[1]))
	}
	// The title names the session: --resume finds it by it (and the hook,
	// for "startup" only, gives no first message there).
	res, resumed := e.sessionRun("-p", "and then?", "--resume", "nightly-triage")
	if resumed != id || res["result"] != "Resumed by name." {
		t.Errorf("--resume nightly-triage: session %s (%v), want %s", resumed, res["result"], id)
	}
	// No prompt: the hook's message is the run.
	res, _ = e.sessionRun("-p")
	if res["result"] != "Notes read again." {
		t.Errorf("without a prompt: %v", res)
	}
}

// TestSessionEndCarriesThePromptID: a print-mode session ends with reason
// other and the prompt_id of its last prompt.
func TestSessionEndCarriesThePromptID(t *testing.T) {
	e := newEnv(t, llmtest.Reply(llmtest.Text("done")))
	log := e.hookLogs(nil, hook.UserPromptSubmit, hook.SessionEnd)
	e.sessionRun("-p", "do it")
	got := hooktest.ReadLog(t, log)
	submit, end := hooktest.Only(got, hook.UserPromptSubmit), hooktest.Only(got, hook.SessionEnd)
	if len(submit) != 1 || len(end) != 1 {
		t.Fatalf("events %v", hooktest.Events(got))
	}
	if id := submit[0].String("prompt_id"); id == "" || end[0].String("prompt_id") != id || end[0].String("reason") != "other" {
		t.Errorf("SessionEnd %s after UserPromptSubmit %s", end[0].Raw, submit[0].Raw)
	}
}

// memoryFixture writes memory files of every kind tack can load in a test
// (managed memory lives in /etc), and a nested CLAUDE.md with a path-scoped
// rule that a read of sub/x.go brings in.
func memoryFixture(e *env) {
	e.write("CLAUDE.md", "Project rule.\n@docs/extra.md\n")
	e.write("docs/extra.md", "Extra doc.\n")
	e.write("CLAUDE.local.md", "Local note.\n")
	e.write(".claude/rules/style.md", "Style rule.\n")
	e.write(".claude/rules/go.md", "---\npaths:\n  - \"**/*.go\"\n---\nGo rule.\n")
	e.write("sub/CLAUDE.md", "Sub rule.\n")
	e.write("sub/x.go", "package sub\n")
	user := filepath.Join(e.home, ".claude", "CLAUDE.md")
	if err := os.MkdirAll(filepath.Dir(user), 0o755); err != nil {
		e.t.Fatal(err)
	}
	if err := os.WriteFile(user, []byte("User rule.\n"), 0o644); err != nil {
		e.t.Fatal(err)
	}
}

// loaded is what an InstructionsLoaded payload says, paths relative to the
// working directory or the home ("~/…").
func loaded(e *env, p hooktest.Payload) string {
	rel := func(path string) string {
		if path == "" {
			return ""
		}
		if r, err := filepath.Rel(e.realDir(), path); err == nil && !strings.HasPrefix(r, "..") {
			return r
		}
		r, _ := filepath.Rel(e.home, path)
		return "~/" + r
	}
	s := fmt.Sprintf("%s %s %s", rel(p.String("file_path")), p.String("memory_type"), p.String("load_reason"))
	if globs, ok := p.Fields["globs"]; ok {
		s += fmt.Sprintf(" globs=%v", globs)
	}
	if p.Has("trigger_file_path") {
		s += " trigger=" + rel(p.String("trigger_file_path"))
	}
	if p.Has("parent_file_path") {
		s += " parent=" + rel(p.String("parent_file_path"))
	}
	return s
}

func TestInstructionsLoaded(t *testing.T) {
	e := newEnv(t)
	memoryFixture(e)
	// A second logging hook, whose matcher (on load_reason) only lets
	// nested loads through.
	lazyLog := filepath.Join(t.TempDir(), "lazy.jsonl")
	lazy := hooktest.LoggingHooks(lazyLog, hook.InstructionsLoaded)[string(hook.InstructionsLoaded)].([]any)[0].(map[string]any)
	lazy["matcher"] = "nested_traversal"
	log := e.hookLogs(map[hook.Event][]any{hook.InstructionsLoaded: {lazy}},
		hook.SessionStart, hook.InstructionsLoaded, hook.PreToolUse, hook.PostToolUse, hook.SessionEnd)
	read := filepath.Join(e.dir, "sub", "x.go")
	e.srv.Append(llmtest.Reply(llmtest.ToolUse("Read", map[string]any{"file_path": read})), llmtest.Reply(llmtest.Text("ok")))
	e.sessionRun("-p", "read x.go")

	var seq []string
	for _, p := range hooktest.ReadLog(t, log) {
		switch p.Event {
		case hook.InstructionsLoaded:
			seq = append(seq, loaded(e, p))
			if p.Has("permission_mode") || p.String("session_id") == "" || p.String("cwd") != e.realDir() {
				t.Errorf("InstructionsLoaded %s", p.Raw)
			}
		default:
			seq = append(seq, string(p.Event))
		}
	}
	// The memory loaded at start is told of before SessionStart, as Claude
	// Code 2.1.328 does.
	want := []string{
		"~/.claude/CLAUDE.md User session_start",
		"CLAUDE.md Project session_start",
		"docs/extra.md Project include parent=CLAUDE.md",
		".claude/rules/style.md Project session_start",
		"CLAUDE.local.md Local session_start",
		"SessionStart",
		"PreToolUse",
		".claude/rules/go.md Project path_glob_match globs=[**/*.go] trigger=sub/x.go",
		"sub/CLAUDE.md Project nested_traversal trigger=sub/x.go",
		"PostToolUse",
		"SessionEnd",
	}
	if !slices.Equal(seq, want) {
		t.Errorf("events\n got %s\nwant %s", strings.Join(seq, "\n     "), strings.Join(want, "\n     "))
	}
	var nested []string
	for _, p := range hooktest.ReadLog(t, lazyLog) {
		nested = append(nested, loaded(e, p))
	}
	if want := []string{"sub/CLAUDE.md Project nested_traversal trigger=sub/x.go"}; !slices.Equal(nested, want) {
		t.Errorf("the nested_traversal matcher saw %q, want %q", nested, want)
	}
	// The nested memory reached the model with the read.
	reqs := e.srv.Requests()
	if got := llm.TextOf(reqs[1].ToolResults()[0].Content); !strings.Contains(got, "Sub rule.") || !strings.Contains(got, "Go rule.") {
		t.Errorf("the read lacks the nested memory: %q", got)
	}
}

// TestInstructionsLoadedAfterCompaction: /compact reads the root memory
// again, and each file is announced with load_reason compact.
func TestInstructionsLoadedAfterCompaction(t *testing.T) {
	e := newEnv(t, llmtest.Reply(llmtest.Text("noted")), llmtest.Reply(llmtest.Text("<summary>The user said hello.</summary>")))
	e.write("CLAUDE.md", "Project rule.\n@docs/extra.md\n")
	e.write("docs/extra.md", "Extra doc.\n")
	log := e.hookLogs(nil, hook.InstructionsLoaded, hook.PreCompact)
	e.sessionRun("-p", "hello")
	if err := os.Truncate(log, 0); err != nil {
		t.Fatal(err)
	}
	e.sessionRun("-p", "/compact", "-c")
	var seq []string
	for _, p := range hooktest.ReadLog(t, log) {
		if p.Event == hook.PreCompact {
			seq = append(seq, "PreCompact")
			continue
		}
		seq = append(seq, loaded(e, p))
	}
	want := []string{
		"CLAUDE.md Project session_start",
		"docs/extra.md Project include parent=CLAUDE.md",
		"PreCompact",
		"CLAUDE.md Project compact",
		"docs/extra.md Project compact parent=CLAUDE.md",
	}
	if !slices.Equal(seq, want) {
		t.Errorf("events\n got %s\nwant %s", strings.Join(seq, "\n     "), strings.Join(want, "\n     "))
	}
}

// commandFixture writes the project command /x, whose injected command
// leaves a marker when the command is expanded.
func commandFixture(e *env) string {
	marker := filepath.Join(e.t.TempDir(), "expanded")
	e.write(".claude/commands/x.md", "---\ndescription: say x\n---\nSay x about $ARGUMENTS. !`touch "+marker+"`\n")
	return marker
}

func TestUserPromptExpansion(t *testing.T) {
	e := newEnv(t, llmtest.Reply(llmtest.Text("x said")))
	marker := commandFixture(e)
	log := e.hookLogs(map[hook.Event][]any{hook.UserPromptExpansion: {
		commandHook("x", jsonAnswer(map[string]any{"hookSpecificOutput": map[string]any{
			"hookEventName": "UserPromptExpansion", "additionalContext": "The team says x loudly."}})),
		commandHook("other-command", "echo 'never for /x'"),
	}}, hook.UserPromptExpansion, hook.UserPromptSubmit, hook.PreToolUse)
	res, id := e.sessionRun("-p", "/x the plan", "--dangerously-skip-permissions")
	if res["result"] != "x said" {
		t.Fatalf("result %v", res)
	}
	got := hooktest.ReadLog(t, log)
	if evs := hooktest.Events(got); !slices.Equal(evs, []hook.Event{hook.UserPromptExpansion, hook.UserPromptSubmit}) {
		t.Fatalf("events %v", evs)
	}
	exp, submit := got[0], got[1]
	fields := map[string]string{}
	for _, k := range []string{"session_id", "cwd", "permission_mode", "expansion_type", "command_name", "command_args", "command_source", "prompt"} {
		fields[k] = exp.String(k)
	}
	want := map[string]string{"session_id": id, "cwd": e.realDir(), "permission_mode": "bypassPermissions",
		"expansion_type": "slash_command", "command_name": "x", "command_args": "the plan",
		"command_source": "projectSettings", "prompt": "/x the plan"}
	if !mapsEqual(fields, want) {
		t.Errorf("UserPromptExpansion\n got %v\nwant %v", fields, want)
	}
	if pid := exp.String("prompt_id"); pid == "" || submit.String("prompt_id") != pid {
		t.Errorf("prompt_id %q, then %q on UserPromptSubmit", pid, submit.String("prompt_id"))
	}
	// UserPromptSubmit gets the prompt as typed, not its expansion.
	if submit.String("prompt") != "/x the plan" {
		t.Errorf("UserPromptSubmit prompt %q", submit.String("prompt"))
	}
	if _, err := os.Stat(marker); err != nil {
		t.Errorf("the command was not expanded: %v", err)
	}
	msg := e.srv.Requests()[0].Messages[0]
	text := llm.TextOf(msg.Content)
	if !strings.Contains(text, "Say x about the plan.") || !strings.Contains(text, "UserPromptExpansion hook additional context: The team says x loudly.") ||
		strings.Contains(text, "never for /x") {
		t.Errorf("the prompt sent:\n%s", text)
	}
}

func TestUserPromptExpansionBlocks(t *testing.T) {
	for _, tc := range []struct {
		name, hook string
		original   bool // the refusal repeats the prompt
	}{
		{"exit 2", "echo 'x is frozen today' >&2; exit 2", true},
		{"decision", jsonAnswer(map[string]any{"decision": "block", "reason": "x is frozen today",
			"hookSpecificOutput": map[string]any{"hookEventName": "UserPromptExpansion", "suppressOriginalPrompt": true}}), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, llmtest.Reply(llmtest.Text("must not be asked")))
			marker := commandFixture(e)
			log := e.hookLogs(map[hook.Event][]any{hook.UserPromptExpansion: {commandHook("x", tc.hook)}},
				hook.UserPromptExpansion, hook.UserPromptSubmit, hook.Stop)
			out, errOut := e.run("-p", "/x the plan", "--output-format", "json", "--dangerously-skip-permissions")
			if e.status != 1 {
				t.Fatalf("exit %d: %s %s", e.status, out, errOut)
			}
			res := resultOf(t, out)
			errs, _ := res["errors"].([]any)
			if res["is_error"] != true || res["terminal_reason"] != "prompt_blocked" || len(errs) != 1 {
				t.Fatalf("result %v", res)
			}
			msg := errs[0].(string)
			if !strings.HasPrefix(msg, "UserPromptExpansion:x hook blocked /x: x is frozen today") ||
				strings.Contains(msg, "Original prompt: /x the plan") != tc.original {
				t.Errorf("refusal %q", msg)
			}
			if n := len(e.srv.Requests()); n != 0 {
				t.Errorf("%d requests after the block", n)
			}
			if _, err := os.Stat(marker); err == nil {
				t.Error("the blocked command was expanded: its injected command ran")
			}
			if evs := hooktest.Events(hooktest.ReadLog(t, log)); !slices.Equal(evs, []hook.Event{hook.UserPromptExpansion}) {
				t.Errorf("events %v", evs)
			}
		})
	}
}

// TestUserPromptExpansionOfAnMCPPrompt: an MCP server's prompt typed as a
// command fires UserPromptExpansion as an mcp_prompt.
func TestUserPromptExpansionOfAnMCPPrompt(t *testing.T) {
	cfg := mcpConfig(map[string]any{"everything": stdioEverything(t)})
	e := newEnv(t, llmtest.Reply(llmtest.Text("ok")))
	log := e.hookLogs(nil, hook.UserPromptExpansion)
	if out, errOut := e.run("-p", "/mcp__everything__simple-prompt", "--mcp-config", cfg); e.status != 0 {
		t.Fatalf("exit %d: %s %s", e.status, out, errOut)
	}
	got := hooktest.ReadLog(t, log)
	if len(got) != 1 {
		t.Fatalf("events %v", hooktest.Events(got))
	}
	p := got[0]
	if p.String("expansion_type") != "mcp_prompt" || p.String("command_name") != "mcp__everything__simple-prompt" ||
		p.String("command_args") != "" || p.String("command_source") != "mcp" || p.String("prompt") != "/mcp__everything__simple-prompt" {
		t.Errorf("UserPromptExpansion %s", p.Raw)
	}
	if !strings.Contains(e.srv.Requests()[0].LastUserText(), "This is a simple prompt without arguments.") {
		t.Errorf("the prompt was not expanded: %q", e.srv.Requests()[0].LastUserText())
	}
}

// TestStartHooksInTheStream: with --include-hook-events, what the Setup and
// SessionStart hooks did — they ran before the conversation — is in the
// stream after the init message, before the model's answer, and so is a
// refused command's UserPromptExpansion.
func TestStartHooksInTheStream(t *testing.T) {
	e := newEnv(t, llmtest.Reply(llmtest.Text("hi")))
	commandFixture(e)
	b, _ := json.Marshal(map[string]any{"hooks": map[string]any{
		"Setup":               []any{commandHook("", "echo setting up")},
		"SessionStart":        []any{commandHook("", "echo starting")},
		"UserPromptExpansion": []any{commandHook("x", "echo no >&2; exit 2")},
	}})
	e.settings("settings.json", string(b))
	var seq []string
	for _, prompt := range []string{"hello", "/x now"} {
		out, errOut := e.run("-p", prompt, "--init", "--output-format", "stream-json", "--verbose", "--include-hook-events")
		if e.status != 0 && prompt == "hello" {
			t.Fatalf("exit %d: %s", e.status, errOut)
		}
		for _, m := range lines(t, out) {
			switch {
			case m["subtype"] == "hook_started":
			case m["subtype"] == "hook_response":
				seq = append(seq, fmt.Sprintf("%v=%q", m["hook_name"], m["stdout"]))
			case m["type"] == "system" || m["type"] == "assistant" || m["type"] == "result":
				seq = append(seq, fmt.Sprint(m["type"], "/", m["subtype"]))
			}
		}
	}
	want := []string{
		"system/init", `Setup:init="setting up\n"`, `SessionStart:startup="starting\n"`, "assistant/<nil>", "result/success",
		"system/init", `Setup:init="setting up\n"`, `SessionStart:startup="starting\n"`, `UserPromptExpansion:x=""`, "result/error_during_execution",
	}
	if !slices.Equal(seq, want) {
		t.Errorf("stream\n got %s\nwant %s", strings.Join(seq, "\n     "), strings.Join(want, "\n     "))
	}
}
