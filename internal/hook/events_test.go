package hook

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/tackcode/tack/internal/config"
)

// emptyInput is ev's payload with every field zero, as ParseInput reads it.
func emptyInput(t *testing.T, ev Event) Input {
	t.Helper()
	in, err := ParseInput([]byte(`{"hook_event_name":"` + string(ev) + `"}`))
	if err != nil {
		t.Fatal(err)
	}
	return in
}

// TestWhatExitTwoDoesPerEvent runs a hook that exits 2 on every event: on
// the events Claude Code lets block it blocks (a deny on the permission
// events), on the others it is a non-blocking error shown to the user.
func TestWhatExitTwoDoesPerEvent(t *testing.T) {
	blocking := []Event{PreToolUse, PermissionRequest, PostToolUse, PostToolUseFailure, PostToolBatch,
		UserPromptSubmit, UserPromptExpansion, Stop, SubagentStop, TeammateIdle, TaskCreated, TaskCompleted,
		PreCompact, ConfigChange, Elicitation, ElicitationResult, WorktreeCreate}
	for _, ev := range Events() {
		t.Run(string(ev), func(t *testing.T) {
			r := newRunner(t, Options{Hooks: on(ev, "", cmd(`echo "not now" >&2; exit 2`))})
			o := r.Run(context.Background(), emptyInput(t, ev))
			want := slices.Contains(blocking, ev)
			if o.Block != want || CanBlock(ev) != want {
				t.Fatalf("Block %v, CanBlock %v, want %v: %+v", o.Block, CanBlock(ev), want, o)
			}
			if want && o.Reason != "not now" {
				t.Errorf("reason %q", o.Reason)
			}
			if !want && (len(o.Errors) != 1 || !strings.Contains(o.Errors[0], "not now")) {
				t.Errorf("a non-blocking exit 2 is reported: %q", o.Errors)
			}
			if perm := ev == PreToolUse || ev == PermissionRequest; perm != (o.Permission == DecisionDeny) {
				t.Errorf("permission %q", o.Permission)
			}
		})
	}
}

// TestPlainStdoutPerEvent: plain exit-0 stdout is context on Setup,
// SessionStart, UserPromptSubmit and UserPromptExpansion, the worktree's
// path on WorktreeCreate, and nothing elsewhere.
func TestPlainStdoutPerEvent(t *testing.T) {
	plain := []Event{Setup, SessionStart, UserPromptSubmit, UserPromptExpansion}
	for _, ev := range Events() {
		t.Run(string(ev), func(t *testing.T) {
			r := newRunner(t, Options{Hooks: on(ev, "", cmd(`echo /tmp/made-by-hook`))})
			o := r.Run(context.Background(), emptyInput(t, ev))
			noErrors(t, o)
			wantContext := slices.Contains(plain, ev)
			if got := o.Context() == "/tmp/made-by-hook"; got != wantContext {
				t.Errorf("context %q, want it: %v", o.Context(), wantContext)
			}
			if got := o.WorktreePath == "/tmp/made-by-hook"; got != (ev == WorktreeCreate) {
				t.Errorf("worktree path %q", o.WorktreePath)
			}
			if o.Block {
				t.Errorf("blocked: %+v", o)
			}
		})
	}
}

func echoJSON(v string) Handler { return cmd(`echo '` + v + `'`) }

func TestSessionStartAnswers(t *testing.T) {
	dir := t.TempDir()
	r := newRunner(t, Options{Hooks: on(SessionStart, "startup",
		echoJSON(`{"hookSpecificOutput":{"hookEventName":"SessionStart","initialUserMessage":"run the tests","sessionTitle":"CI triage","watchPaths":["/r/.envrc","/r/.env"]}}`),
		echoJSON(`{"hookSpecificOutput":{"hookEventName":"SessionStart","sessionTitle":"Other title","watchPaths":["/r/.env","/r/Makefile"]}}`),
	)})
	o := r.Run(context.Background(), SessionStartInput{Base: base(dir), Source: "startup"})
	if o.InitialUserMessage != "run the tests" || o.SessionTitle != "CI triage" {
		t.Errorf("first in configuration order: %+v", o)
	}
	if !slices.Equal(o.WatchPaths, []string{"/r/.envrc", "/r/.env", "/r/Makefile"}) {
		t.Errorf("watch paths, each once, in order: %q", o.WatchPaths)
	}
	if len(o.Errors) != 1 || !strings.Contains(o.Errors[0], "sessionTitle") {
		t.Errorf("the ignored title is reported: %q", o.Errors)
	}
}

func TestPromptAnswers(t *testing.T) {
	dir := t.TempDir()
	r := newRunner(t, Options{Hooks: Config{
		UserPromptSubmit: {{Hooks: []Handler{echoJSON(`{"hookSpecificOutput":{"hookEventName":"UserPromptSubmit","sessionTitle":"Docs","suppressOriginalPrompt":true,"additionalContext":"rewritten"}}`)}}},
		UserPromptExpansion: {{Matcher: "deploy", Hooks: []Handler{
			echoJSON(`{"hookSpecificOutput":{"hookEventName":"UserPromptExpansion","suppressOriginalPrompt":true}}`), cmd(`echo staging is frozen`)}}},
	}})
	o := r.Run(context.Background(), UserPromptSubmitInput{Base: base(dir), Prompt: "docs"})
	noErrors(t, o)
	if o.SessionTitle != "Docs" || !o.SuppressOriginalPrompt || o.Context() != "rewritten" {
		t.Errorf("UserPromptSubmit: %+v", o)
	}
	o = r.Run(context.Background(), UserPromptExpansionInput{Base: base(dir), CommandName: "deploy", Prompt: "Deploy."})
	noErrors(t, o)
	if !o.SuppressOriginalPrompt || o.Context() != "staging is frozen" || o.HookName != "UserPromptExpansion:deploy" {
		t.Errorf("UserPromptExpansion: %+v", o)
	}
	if o := r.Run(context.Background(), UserPromptExpansionInput{Base: base(dir), CommandName: "review"}); len(o.Results) != 0 {
		t.Errorf("matchers test the command name: %+v", o)
	}
}

func TestPermissionDeniedRetryAndIf(t *testing.T) {
	dir := t.TempDir()
	h := echoJSON(`{"hookSpecificOutput":{"hookEventName":"PermissionDenied","retry":true}}`)
	h.If = "Bash(rm *)"
	var asked []string
	r := newRunner(t, Options{Hooks: on(PermissionDenied, "Bash", h), IfMatcher: func(rule, tool string, in json.RawMessage) (bool, error) {
		asked = append(asked, rule+" "+tool+" "+string(in))
		return strings.Contains(string(in), "rm "), nil
	}})
	in := PermissionDeniedInput{Base: base(dir), ToolName: "Bash", ToolInput: json.RawMessage(`{"command":"rm -rf build"}`), ToolUseID: "t1", Reason: "denied by rule"}
	o := r.Run(context.Background(), in)
	noErrors(t, o)
	if !o.Retry || o.Block {
		t.Errorf("retry: %+v", o)
	}
	in.ToolInput = json.RawMessage(`{"command":"ls"}`)
	if o := r.Run(context.Background(), in); o.Retry || len(o.Results) != 0 {
		t.Errorf("the if condition holds on PermissionDenied: %+v", o)
	}
	if len(asked) != 2 || !IsToolEvent(PermissionDenied) {
		t.Errorf("if evaluated %q", asked)
	}
}

func TestElicitationAnswers(t *testing.T) {
	dir := t.TempDir()
	accept := echoJSON(`{"hookSpecificOutput":{"hookEventName":"Elicitation","action":"accept","content":{"name":"Ada"}}}`)
	decline := echoJSON(`{"hookSpecificOutput":{"hookEventName":"Elicitation","action":"decline"}}`)
	cancel := echoJSON(`{"hookSpecificOutput":{"hookEventName":"Elicitation","action":"cancel"}}`)
	in := ElicitationInput{Base: base(dir), MCPServerName: "everything", Message: "Your name?"}
	for _, c := range []struct {
		name    string
		hooks   []Handler
		action  string
		content string
	}{
		{"accept", []Handler{accept}, "accept", `{"name":"Ada"}`},
		{"decline beats accept", []Handler{accept, decline}, "decline", ""},
		{"cancel beats decline, in any order", []Handler{cancel, decline, accept}, "cancel", ""},
		{"a block declines", []Handler{accept, cmd(`exit 2`)}, "decline", ""},
		{"no answer", []Handler{cmd(`true`)}, "", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := newRunner(t, Options{Hooks: on(Elicitation, "everything", c.hooks...)})
			o := r.Run(context.Background(), in)
			if o.ElicitationAction != c.action || string(o.ElicitationContent) != c.content {
				t.Errorf("got %q %s, want %q %s", o.ElicitationAction, o.ElicitationContent, c.action, c.content)
			}
		})
	}
	r := newRunner(t, Options{Hooks: on(ElicitationResult, "other", cancel)})
	if o := r.Run(context.Background(), ElicitationResultInput{Base: base(dir), MCPServerName: "everything", Action: "accept"}); len(o.Results) != 0 {
		t.Errorf("matchers test the server name: %+v", o)
	}
	r = newRunner(t, Options{Hooks: on(ElicitationResult, "", echoJSON(`{"hookSpecificOutput":{"hookEventName":"ElicitationResult","action":"maybe"}}`))})
	if o := r.Run(context.Background(), ElicitationResultInput{Base: base(dir), Action: "accept"}); o.ElicitationAction != "" || len(o.Errors) != 1 {
		t.Errorf("an unknown action is reported: %+v", o)
	}
}

func TestWorktreeCreateAnswers(t *testing.T) {
	dir := t.TempDir()
	in := WorktreeCreateInput{Base: base(dir), Name: "fix-it"}
	for _, c := range []struct {
		name  string
		hooks []Handler
		path  string
		block bool
	}{
		{"plain stdout is the path", []Handler{cmd(`echo "  /wt/fix-it  "`)}, "/wt/fix-it", false},
		{"worktreePath", []Handler{echoJSON(`{"hookSpecificOutput":{"hookEventName":"WorktreeCreate","worktreePath":"/wt/json"}}`)}, "/wt/json", false},
		{"a failure fails the creation", []Handler{cmd(`echo /wt/x; exit 1`)}, "", true},
		{"a path and a failure", []Handler{cmd(`echo /wt/x`), cmd(`exit 3`)}, "/wt/x", true},
		{"no path fails the creation", []Handler{cmd(`true`)}, "", true},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := newRunner(t, Options{Hooks: on(WorktreeCreate, "", c.hooks...)})
			o := r.Run(context.Background(), in)
			if o.WorktreePath != c.path || o.Block != c.block {
				t.Errorf("got %q block=%v (%s), want %q block=%v", o.WorktreePath, o.Block, o.Reason, c.path, c.block)
			}
		})
	}
}

func TestWatchPathsOnDirectoryAndFileChanges(t *testing.T) {
	dir := t.TempDir()
	r := newRunner(t, Options{Hooks: Config{
		CwdChanged:  {{Hooks: []Handler{echoJSON(`{"hookSpecificOutput":{"hookEventName":"CwdChanged","watchPaths":["/r/sub/.envrc"]}}`)}}},
		FileChanged: {{Matcher: "Makefile", Hooks: []Handler{echoJSON(`{"hookSpecificOutput":{"hookEventName":"FileChanged","watchPaths":["/r/Makefile.inc"]}}`)}}},
	}})
	o := r.Run(context.Background(), CwdChangedInput{Base: base(dir), OldCwd: "/r", NewCwd: "/r/sub"})
	if !slices.Equal(o.WatchPaths, []string{"/r/sub/.envrc"}) {
		t.Errorf("CwdChanged: %+v", o)
	}
	o = r.Run(context.Background(), FileChangedInput{Base: base(dir), FilePath: "/r/Makefile", Event: "change"})
	if !slices.Equal(o.WatchPaths, []string{"/r/Makefile.inc"}) || o.HookName != "FileChanged:Makefile" {
		t.Errorf("FileChanged matches the base name: %+v", o)
	}
	if o := r.Run(context.Background(), FileChangedInput{Base: base(dir), FilePath: "/r/Makefile.inc", Event: "change"}); len(o.Results) != 0 {
		t.Errorf("another file: %+v", o)
	}
	if got := r.FileChangedNames(); !slices.Equal(got, []string{"Makefile"}) {
		t.Errorf("FileChangedNames %q", got)
	}
	// The names are literal: the dots of ".envrc|.env" are dots, and a
	// name is the whole base name.
	r = newRunner(t, Options{Hooks: Config{FileChanged: {
		{Matcher: ".envrc|.env", Hooks: []Handler{cmd(`true`)}}, {Matcher: ".env", Hooks: []Handler{cmd(`true`)}}}}})
	if got := r.FileChangedNames(); !slices.Equal(got, []string{".envrc", ".env"}) {
		t.Errorf("FileChangedNames %q", got)
	}
	for file, want := range map[string]bool{"/r/.envrc": true, "/r/sub/.env": true, "/r/x.env": false, "/r/aenv": false, "/r/.envrc.bak": false} {
		if o := r.Run(context.Background(), FileChangedInput{Base: base(dir), FilePath: file, Event: "change"}); (len(o.Results) > 0) != want {
			t.Errorf("%s ran %d hooks, want it to run: %v", file, len(o.Results), want)
		}
	}
}

// TestMatchValues: what matchers test on each event that has one; the
// others run every handler whatever its matcher.
func TestMatchValues(t *testing.T) {
	b := Base{}
	for _, c := range []struct {
		in   Input
		want string
	}{
		{SetupInput{Base: b, Trigger: "maintenance"}, "maintenance"},
		{InstructionsLoadedInput{LoadReason: "nested_traversal"}, "nested_traversal"},
		{StopFailureInput{Error: "rate_limit"}, "rate_limit"},
		{ConfigChangeInput{Source: "project_settings"}, "project_settings"},
		{PermissionDeniedInput{ToolName: "Write"}, "Write"},
		{ElicitationResultInput{MCPServerName: "gh"}, "gh"},
	} {
		if v, ok := c.in.MatchValue(); !ok || v != c.want {
			t.Errorf("%s matches %q %v, want %q", c.in.EventName(), v, ok, c.want)
		}
	}
	for _, ev := range []Event{UserPromptSubmit, PostToolBatch, Stop, TaskCreated, TaskCompleted, TeammateIdle, CwdChanged, WorktreeCreate, WorktreeRemove} {
		r := newRunner(t, Options{Hooks: on(ev, "no-such-value", cmd(`true`))})
		if o := r.Run(context.Background(), emptyInput(t, ev)); len(o.Results) != 1 {
			t.Errorf("%s ignores matchers: %d ran", ev, len(o.Results))
		}
	}
}

func TestEveryEventParsesAndNamesItself(t *testing.T) {
	for _, ev := range Events() {
		in := emptyInput(t, ev)
		b, err := in.MarshalJSON()
		if err != nil {
			t.Fatal(err)
		}
		back, err := ParseInput(b)
		if err != nil || back.EventName() != ev || in.EventName() != ev {
			t.Errorf("%s: round trip gives %v, %v", ev, back, err)
		}
		if _, _, isTool := toolCall(in); isTool != IsToolEvent(ev) {
			t.Errorf("%s: tool payload %v, IsToolEvent %v", ev, isTool, IsToolEvent(ev))
		}
	}
	if len(Events()) != 29 {
		t.Errorf("%d events, Claude Code 2.1.328 has 29", len(Events()))
	}
}

// Settings may configure exactly the events the runner fires: the config
// package keeps its own list (it imports no other tack package).
func TestSettingsAcceptEveryEvent(t *testing.T) {
	var names []string
	for _, ev := range Events() {
		names = append(names, string(ev))
	}
	if got := config.HookEvents(); !slices.Equal(got, names) {
		t.Errorf("config.HookEvents() = %v\nhook.Events()       = %v", got, names)
	}
}
