package hook

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

func newRunner(t *testing.T, opts Options) *Runner {
	t.Helper()
	r, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(r.Close)
	return r
}

func on(ev Event, matcher string, hs ...Handler) Config {
	return Config{ev: {{Matcher: matcher, Hooks: hs}}}
}

func cmd(c string) Handler { return Handler{Type: TypeCommand, Command: c} }

func base(dir string) Base {
	return Base{SessionID: "sess-1", TranscriptPath: filepath.Join(dir, "t.jsonl"), Cwd: dir, PermissionMode: "default"}
}

func bashCall(dir, command string) PreToolUseInput {
	in, _ := json.Marshal(map[string]string{"command": command})
	return PreToolUseInput{Base: base(dir), ToolName: "Bash", ToolInput: in, ToolUseID: "toolu_1"}
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func noErrors(t *testing.T, o Outcome) {
	t.Helper()
	if len(o.Errors) > 0 {
		t.Fatalf("unexpected hook errors: %q", o.Errors)
	}
}

func TestCommandGetsPayloadOnStdinExactly(t *testing.T) {
	dir := t.TempDir()
	r := newRunner(t, Options{Hooks: on(PreToolUse, "Bash", cmd(`cat > "$CLAUDE_PROJECT_DIR/payload.json"`))})
	in := bashCall(dir, `echo "<b> & 'c'"`)
	o := r.Run(context.Background(), in)
	noErrors(t, o)
	want, _ := in.MarshalJSON()
	if got := readFile(t, filepath.Join(dir, "payload.json")); got != string(want) {
		t.Errorf("stdin:\n got %s\nwant %s", got, want)
	}
	if o.Permission != DecisionNone || o.Block || len(o.Results) != 1 || o.Results[0].Status != StatusSuccess {
		t.Errorf("a silent hook decides nothing: %+v", o)
	}
	if c := o.Results[0].ExitCode; c == nil || *c != 0 {
		t.Errorf("exit code %v", c)
	}
}

func TestCommandEnvironmentAndCwd(t *testing.T) {
	dir, project := t.TempDir(), t.TempDir()
	h := cmd(`printf '%s\n%s\n%s\n%s\n%s\n' "$CLAUDE_PROJECT_DIR" "$FROM_SETTINGS" "$FROM_BASE" "$FROM_HANDLER" "$(pwd -P)" > out.txt`)
	h.Env = map[string]string{"FROM_HANDLER": "plugin-root"}
	// Spare capacity in the caller's slice must not be written into.
	baseEnv := make([]string, 2, 10)
	baseEnv[0], baseEnv[1] = "PATH="+os.Getenv("PATH"), "FROM_BASE=b"
	r := newRunner(t, Options{
		Hooks:      on(Stop, "", h),
		Settings:   Settings{Env: map[string]string{"FROM_SETTINGS": "s1"}},
		ProjectDir: project,
		Env:        baseEnv,
	})
	noErrors(t, r.Run(context.Background(), StopInput{Base: base(dir)}))
	realDir, _ := filepath.EvalSymlinks(dir)
	want := strings.Join([]string{project, "s1", "b", "plugin-root", realDir}, "\n") + "\n"
	if got := readFile(t, filepath.Join(dir, "out.txt")); got != want {
		t.Errorf("env/cwd:\n got %q\nwant %q", got, want)
	}
	if spare := baseEnv[:3][2]; spare != "" {
		t.Errorf("New wrote %q into the caller's env array", spare)
	}
}

func TestSettingsEnvOverridesBase(t *testing.T) {
	dir := t.TempDir()
	r := newRunner(t, Options{
		Hooks:    on(Stop, "", cmd(`printf %s "$X" > x.txt`)),
		Settings: Settings{Env: map[string]string{"X": "settings"}},
		Env:      []string{"PATH=" + os.Getenv("PATH"), "X=base"},
	})
	noErrors(t, r.Run(context.Background(), StopInput{Base: base(dir)}))
	if got := readFile(t, filepath.Join(dir, "x.txt")); got != "settings" {
		t.Errorf("X = %q, want settings", got)
	}
	// Without ProjectDir, CLAUDE_PROJECT_DIR is the session's cwd.
	r = newRunner(t, Options{Hooks: on(Stop, "", cmd(`printf %s "$CLAUDE_PROJECT_DIR" > p.txt`))})
	noErrors(t, r.Run(context.Background(), StopInput{Base: base(dir)}))
	if got := readFile(t, filepath.Join(dir, "p.txt")); got != dir {
		t.Errorf("CLAUDE_PROJECT_DIR = %q, want %q", got, dir)
	}
}

func TestExitZeroJSONDeny(t *testing.T) {
	dir := t.TempDir()
	out := readFile(t, "testdata/block-rm.output.json")
	script := filepath.Join(dir, "block-rm.sh")
	// The seed's block-rm.sh: deny rm -rf, stay silent otherwise.
	body := "#!/bin/sh\ninput=$(cat)\ncase \"$input\" in *'rm -rf'*) printf '%s' '" + strings.TrimSpace(out) + "';; esac\nexit 0\n"
	if err := os.WriteFile(script, []byte(body), 0o755); err != nil {
		t.Fatal(err)
	}
	r := newRunner(t, Options{Hooks: on(PreToolUse, "Bash", Handler{Type: TypeCommand, Command: `"$CLAUDE_PROJECT_DIR"/block-rm.sh`, Timeout: 30})})
	o := r.Run(context.Background(), bashCall(dir, "rm -rf /"))
	noErrors(t, o)
	if o.Permission != DecisionDeny || !o.Block || o.Reason != "rm -rf is blocked by policy" {
		t.Errorf("deny expected: %+v", o)
	}
	if o.Results[0].JSON == nil || o.Results[0].JSON.HookSpecificOutput.PermissionDecision != "deny" {
		t.Errorf("parsed output missing: %+v", o.Results[0])
	}
	o = r.Run(context.Background(), bashCall(dir, "ls"))
	noErrors(t, o)
	if o.Permission != DecisionNone || o.Block {
		t.Errorf("ls must pass: %+v", o)
	}
}

func TestExitZeroPlainText(t *testing.T) {
	dir := t.TempDir()
	h := cmd(`echo "branch: main"`)
	cfg := Config{UserPromptSubmit: {{Hooks: []Handler{h}}}, SessionStart: {{Hooks: []Handler{h}}}, PreToolUse: {{Hooks: []Handler{h}}}}
	r := newRunner(t, Options{Hooks: cfg})
	for _, in := range []Input{UserPromptSubmitInput{Base: base(dir), Prompt: "hi"}, SessionStartInput{Base: base(dir), Source: "startup"}} {
		o := r.Run(context.Background(), in)
		noErrors(t, o)
		if got := o.Context(); got != "branch: main" {
			t.Errorf("%s: plain stdout should be context, got %q", in.EventName(), got)
		}
	}
	o := r.Run(context.Background(), bashCall(dir, "ls"))
	noErrors(t, o)
	if len(o.AdditionalContext) != 0 || o.Results[0].Text != "branch: main\n" {
		t.Errorf("PreToolUse plain stdout is not context: %+v", o)
	}
}

func TestExitZeroInvalidJSONIsPlainOutput(t *testing.T) {
	dir := t.TempDir()
	r := newRunner(t, Options{Hooks: on(UserPromptSubmit, "", cmd(`echo '{"continue": false'`))})
	o := r.Run(context.Background(), UserPromptSubmitInput{Base: base(dir), Prompt: "x"})
	noErrors(t, o)
	if o.Stop || o.Results[0].Status != StatusSuccess || o.Results[0].JSON != nil {
		t.Errorf("invalid JSON is plain text: %+v", o)
	}
	if o.Context() != `{"continue": false` {
		t.Errorf("context %q", o.Context())
	}
}

func TestExitZeroJSONWithWrongTypesIsAnError(t *testing.T) {
	dir := t.TempDir()
	r := newRunner(t, Options{Hooks: on(Stop, "", cmd(`echo '{"continue": "no"}'`))})
	o := r.Run(context.Background(), StopInput{Base: base(dir)})
	if len(o.Errors) != 1 || !strings.Contains(o.Errors[0], "invalid hook JSON output") || o.Stop {
		t.Errorf("want one invalid-output error: %+v", o)
	}
}

func TestExitTwoBlocks(t *testing.T) {
	dir := t.TempDir()
	h := cmd(`echo "Blocked by anchor test hook" >&2; exit 2`)
	cfg := Config{}
	for _, ev := range Events() {
		cfg[ev] = []Matcher{{Hooks: []Handler{h}}}
	}
	r := newRunner(t, Options{Hooks: cfg})

	o := r.Run(context.Background(), bashCall(dir, "echo hi"))
	if o.Permission != DecisionDeny || !o.Block || o.Reason != "Blocked by anchor test hook" || len(o.Errors) != 0 {
		t.Errorf("PreToolUse exit 2: %+v", o)
	}
	if o.HookName+" hook error: "+o.Reason != "PreToolUse:Bash hook error: Blocked by anchor test hook" {
		t.Errorf("the tool_result Claude Code shows cannot be rebuilt: %q", o.HookName)
	}
	for _, in := range []Input{StopInput{Base: base(dir)}, UserPromptSubmitInput{Base: base(dir)}, PostToolUseInput{Base: base(dir), ToolName: "Bash"}, PreCompactInput{Base: base(dir), Trigger: "auto"}} {
		o := r.Run(context.Background(), in)
		if !o.Block || o.Reason != "Blocked by anchor test hook" || o.Permission != DecisionNone {
			t.Errorf("%s exit 2 should block: %+v", in.EventName(), o)
		}
	}
	// Events that cannot block show stderr to the user instead.
	for _, in := range []Input{SessionStartInput{Base: base(dir), Source: "startup"}, NotificationInput{Base: base(dir), NotificationType: "idle_prompt"}, SessionEndInput{Base: base(dir), Reason: "other"}} {
		o := r.Run(context.Background(), in)
		if o.Block || len(o.Errors) != 1 || !strings.HasSuffix(o.Errors[0], "hook error: Blocked by anchor test hook") {
			t.Errorf("%s exit 2 must not block: %+v", in.EventName(), o)
		}
	}
}

func TestExitTwoWithoutStderr(t *testing.T) {
	dir := t.TempDir()
	r := newRunner(t, Options{Hooks: on(Stop, "", cmd(`exit 2`))})
	if o := r.Run(context.Background(), StopInput{Base: base(dir)}); !o.Block || o.Reason != "No stderr output" {
		t.Errorf("%+v", o)
	}
}

func TestExitOneIsNonBlocking(t *testing.T) {
	dir := t.TempDir()
	r := newRunner(t, Options{Hooks: on(PreToolUse, "*", cmd(`echo oops >&2; exit 1`), cmd(`echo '{"systemMessage":"still here"}'`))})
	o := r.Run(context.Background(), bashCall(dir, "ls"))
	if o.Block || o.Permission != DecisionNone {
		t.Errorf("exit 1 must not block: %+v", o)
	}
	want := "PreToolUse:Bash hook error: Failed with non-blocking status code 1: oops"
	if !slices.Equal(o.Errors, []string{want}) {
		t.Errorf("errors %q, want %q", o.Errors, want)
	}
	if !slices.Equal(o.SystemMessages, []string{"still here"}) {
		t.Errorf("the other hook's answer is still used: %q", o.SystemMessages)
	}
}

func TestMissingScriptIsNonBlocking(t *testing.T) {
	dir := t.TempDir()
	r := newRunner(t, Options{Hooks: Config{
		PreToolUse: {{Hooks: []Handler{cmd(`"$CLAUDE_PROJECT_DIR"/.claude/hooks/missing.sh`)}}},
		// An interpreter that exits 2 on a missing script must not make a
		// Stop hook loop the model.
		Stop: {{Hooks: []Handler{cmd(`echo "python3: can't open file '/x/missing.py': [Errno 2] No such file or directory" >&2; exit 2`)}}},
	}})
	o := r.Run(context.Background(), bashCall(dir, "ls"))
	if o.Block || len(o.Errors) != 1 || !strings.Contains(o.Errors[0], "status code 127") {
		t.Errorf("missing script: %+v", o)
	}
	o = r.Run(context.Background(), StopInput{Base: base(dir)})
	if o.Block || len(o.Errors) != 1 || !strings.Contains(o.Errors[0], "appears to be missing") {
		t.Errorf("missing Stop script: %+v", o)
	}
	// A cwd that does not exist: the hook cannot start; still not fatal.
	gone := bashCall(filepath.Join(dir, "gone"), "ls")
	o = r.Run(context.Background(), gone)
	if o.Block || len(o.Errors) != 1 || !strings.Contains(o.Errors[0], "failed to start") || o.Results[0].ExitCode != nil {
		t.Errorf("unstartable hook: %+v", o)
	}
}

// processGone reports whether pid no longer runs (gone, or a zombie nobody
// reaped yet).
func processGone(pid int) bool {
	if errors.Is(syscall.Kill(pid, 0), syscall.ESRCH) {
		return true
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return true
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return i > 0 && i+2 < len(s) && s[i+2] == 'Z'
}

func TestTimeoutKillsTheProcessGroup(t *testing.T) {
	dir := t.TempDir()
	h := Handler{Type: TypeCommand, Command: `sleep 30 & echo $! > child.pid; echo started; sleep 30`, Timeout: 2}
	var recs []Record
	var mu sync.Mutex
	r := newRunner(t, Options{Hooks: on(Stop, "", h), Observer: func(rec Record) { mu.Lock(); recs = append(recs, rec); mu.Unlock() }})
	start := time.Now()
	o := r.Run(context.Background(), StopInput{Base: base(dir)})
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("Run took %s, the timeout is 2s", d)
	}
	res := o.Results[0]
	if res.Status != StatusCancelled || !res.TimedOut || o.Block {
		t.Errorf("want a timed-out, non-blocking result: %+v", res)
	}
	if len(o.Errors) != 1 || !strings.Contains(o.Errors[0], "timed out after 2s") {
		t.Errorf("errors %q", o.Errors)
	}
	if res.Stdout != "started\n" {
		t.Errorf("output before the kill is kept: %q", res.Stdout)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(readFile(t, filepath.Join(dir, "child.pid"))))
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(3 * time.Second)
	for !processGone(pid) {
		if time.Now().After(deadline) {
			_ = syscall.Kill(pid, syscall.SIGKILL)
			t.Fatalf("the hook's child %d survived the timeout", pid)
		}
		time.Sleep(20 * time.Millisecond)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(recs) != 2 || recs[1].Outcome != "cancelled" {
		t.Errorf("observer records %+v", recs)
	}
}

func TestCallerCancellationKillsHooks(t *testing.T) {
	dir := t.TempDir()
	r := newRunner(t, Options{Hooks: on(Stop, "", cmd(`sleep 30`))})
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	start := time.Now()
	o := r.Run(ctx, StopInput{Base: base(dir)})
	if time.Since(start) > 5*time.Second {
		t.Fatal("cancellation did not stop the hook")
	}
	if res := o.Results[0]; res.Status != StatusCancelled || res.TimedOut || res.Message != "cancelled" {
		t.Errorf("%+v", res)
	}
}

func TestHandlersRunInParallel(t *testing.T) {
	dir := t.TempDir()
	// Each hook waits for the other's marker: run one after the other, the
	// first would give up after 5 s and fail.
	wait := func(mine, other string) Handler {
		return cmd(fmt.Sprintf(`touch %s; i=0; while [ ! -e %s ]; do i=$((i+1)); [ $i -gt 100 ] && exit 1; sleep 0.05; done; echo '{"systemMessage":"%s"}'`, mine, other, mine))
	}
	r := newRunner(t, Options{Hooks: on(Stop, "", wait("a", "b"), wait("b", "a"))})
	o := r.Run(context.Background(), StopInput{Base: base(dir)})
	noErrors(t, o)
	if !slices.Equal(o.SystemMessages, []string{"a", "b"}) {
		t.Errorf("messages %q", o.SystemMessages)
	}
}

func TestIdenticalCommandsRunOnce(t *testing.T) {
	dir := t.TempDir()
	h := cmd(`echo x >> runs.txt`)
	cfg := Config{PreToolUse: {{Matcher: "Bash", Hooks: []Handler{h}}, {Matcher: "*", Hooks: []Handler{h}}, {Matcher: "Edit|Bash", Hooks: []Handler{h}}}}
	r := newRunner(t, Options{Hooks: cfg})
	o := r.Run(context.Background(), bashCall(dir, "ls"))
	noErrors(t, o)
	if got := readFile(t, filepath.Join(dir, "runs.txt")); got != "x\n" || len(o.Results) != 1 {
		t.Errorf("ran %q times, %d results", got, len(o.Results))
	}
	// The same command from two settings files is two hooks, as in Claude Code.
	user, project := h, h
	user.Source, project.Source = "user", "project"
	r = newRunner(t, Options{Hooks: on(PreToolUse, "", user, project)})
	noErrors(t, r.Run(context.Background(), bashCall(dir, "ls")))
	if got := readFile(t, filepath.Join(dir, "runs.txt")); got != "x\nx\nx\n" {
		t.Errorf("runs %q", got)
	}
	// Two plugins' identical command lines differ by their environment.
	p1, p2 := cmd(`echo "$CLAUDE_PLUGIN_ROOT" >> plugins.txt`), cmd(`echo "$CLAUDE_PLUGIN_ROOT" >> plugins.txt`)
	p1.Env, p2.Env = map[string]string{"CLAUDE_PLUGIN_ROOT": "/p1"}, map[string]string{"CLAUDE_PLUGIN_ROOT": "/p2"}
	r = newRunner(t, Options{Hooks: on(PreToolUse, "", p1, p2, p1)})
	noErrors(t, r.Run(context.Background(), bashCall(dir, "ls")))
	lines := strings.Fields(readFile(t, filepath.Join(dir, "plugins.txt")))
	slices.Sort(lines)
	if !slices.Equal(lines, []string{"/p1", "/p2"}) {
		t.Errorf("plugin hooks ran for %q", lines)
	}
}

func TestResultsResolveInConfigOrder(t *testing.T) {
	dir := t.TempDir()
	slow := cmd(`sleep 0.3; echo '{"systemMessage":"first","hookSpecificOutput":{"hookEventName":"PreToolUse","additionalContext":"ctx1","updatedInput":{"command":"ls -1"}}}'`)
	fast := cmd(`echo '{"systemMessage":"second","hookSpecificOutput":{"hookEventName":"PreToolUse","additionalContext":"ctx2","updatedInput":{"command":"ls -2"}}}'`)
	r := newRunner(t, Options{Hooks: on(PreToolUse, "", slow, fast)})
	o := r.Run(context.Background(), bashCall(dir, "ls"))
	if !slices.Equal(o.SystemMessages, []string{"first", "second"}) || !slices.Equal(o.AdditionalContext, []string{"ctx1", "ctx2"}) {
		t.Errorf("order: %q %q", o.SystemMessages, o.AdditionalContext)
	}
	if string(o.UpdatedInput) != `{"command":"ls -1"}` {
		t.Errorf("the first updatedInput in config order applies, got %s", o.UpdatedInput)
	}
	if len(o.Errors) != 1 || !strings.Contains(o.Errors[0], "already updated the input") {
		t.Errorf("the ignored updatedInput is reported: %q", o.Errors)
	}
	if o.Results[0].Handler.Command != slow.Command {
		t.Error("results are in config order")
	}
}

func permissionHook(decision, reason string) Handler {
	return cmd(fmt.Sprintf(`echo '{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"%s","permissionDecisionReason":"%s"}}'`, decision, reason))
}

func TestPermissionDecisionPrecedence(t *testing.T) {
	dir := t.TempDir()
	cases := []struct {
		hooks  []Handler
		want   Decision
		reason string
	}{
		{[]Handler{permissionHook("deny", "d"), permissionHook("allow", "a")}, DecisionDeny, "d"},
		{[]Handler{permissionHook("allow", "a"), permissionHook("deny", "d")}, DecisionDeny, "d"},
		{[]Handler{permissionHook("allow", "a"), permissionHook("ask", "q")}, DecisionAsk, "q"},
		{[]Handler{permissionHook("ask", "q"), permissionHook("defer", "later")}, DecisionDefer, "later"},
		{[]Handler{permissionHook("allow", "a1"), permissionHook("allow", "a2")}, DecisionAllow, "a1\na2"},
		{[]Handler{permissionHook("deny", "d1"), cmd(`echo d2 >&2; exit 2`), permissionHook("allow", "a")}, DecisionDeny, "d1\nd2"},
		{[]Handler{cmd(`echo '{"decision":"approve"}'`)}, DecisionAllow, ""},
		{[]Handler{cmd(`echo '{"decision":"approve"}'`), cmd(`echo '{"decision":"block","reason":"old style"}'`)}, DecisionDeny, "old style"},
	}
	for i, c := range cases {
		r := newRunner(t, Options{Hooks: on(PreToolUse, "Bash", c.hooks...)})
		o := r.Run(context.Background(), bashCall(dir, "ls"))
		noErrors(t, o)
		if o.Permission != c.want || o.Reason != c.reason || o.Block != (c.want == DecisionDeny) {
			t.Errorf("case %d: got %q %q block=%v, want %q %q", i, o.Permission, o.Reason, o.Block, c.want, c.reason)
		}
	}
}

func TestUnknownPermissionDecisionIsReported(t *testing.T) {
	dir := t.TempDir()
	r := newRunner(t, Options{Hooks: on(PreToolUse, "", permissionHook("maybe", ""), cmd(`echo '{"hookSpecificOutput":{"hookEventName":"Stop","additionalContext":"x"}}'`))})
	o := r.Run(context.Background(), bashCall(dir, "ls"))
	if o.Permission != DecisionNone || len(o.Errors) != 2 || len(o.AdditionalContext) != 0 {
		t.Errorf("%+v", o)
	}
}

func TestIfFilter(t *testing.T) {
	dir := t.TempDir()
	var calls []string
	var mu sync.Mutex
	matcher := func(rule, tool string, input json.RawMessage) (bool, error) {
		mu.Lock()
		calls = append(calls, rule+" "+tool)
		mu.Unlock()
		if rule == "Bash(broken" {
			return false, errors.New("bad rule")
		}
		var in struct{ Command string }
		_ = json.Unmarshal(input, &in)
		return rule == "Bash(rm *)" && tool == "Bash" && strings.HasPrefix(in.Command, "rm "), nil
	}
	guard := Handler{Type: TypeCommand, Command: `echo guard >> ran.txt`, If: "Bash(rm *)"}
	broken := Handler{Type: TypeCommand, Command: `echo broken >> ran.txt`, If: "Bash(broken"}
	r := newRunner(t, Options{Hooks: Config{
		PreToolUse:  {{Matcher: "Bash", Hooks: []Handler{guard}}},
		Stop:        {{Hooks: []Handler{guard}}},
		PostToolUse: {{Hooks: []Handler{broken}}},
	}, IfMatcher: matcher})

	noErrors(t, r.Run(context.Background(), bashCall(dir, "ls -la")))
	if _, err := os.Stat(filepath.Join(dir, "ran.txt")); err == nil {
		t.Fatal("the if condition should have filtered ls out")
	}
	noErrors(t, r.Run(context.Background(), bashCall(dir, "rm -rf build")))
	// On a non-tool event a handler with an if never runs.
	noErrors(t, r.Run(context.Background(), StopInput{Base: base(dir)}))
	if got := readFile(t, filepath.Join(dir, "ran.txt")); got != "guard\n" {
		t.Errorf("ran %q", got)
	}
	// A rule that cannot be evaluated: the hook runs, and the user is told.
	o := r.Run(context.Background(), PostToolUseInput{Base: base(dir), ToolName: "Bash", ToolUseID: "t"})
	if len(o.Errors) != 1 || !strings.Contains(o.Errors[0], "bad rule") {
		t.Errorf("errors %q", o.Errors)
	}
	if got := readFile(t, filepath.Join(dir, "ran.txt")); got != "guard\nbroken\n" {
		t.Errorf("ran %q", got)
	}
	mu.Lock()
	defer mu.Unlock()
	if !slices.Equal(calls, []string{"Bash(rm *) Bash", "Bash(rm *) Bash", "Bash(broken Bash"}) {
		t.Errorf("matcher calls %q", calls)
	}
}

// recorder returns a callback handler that notes it ran.
func recorder(name string, ran *[]string, mu *sync.Mutex) Handler {
	return Handler{Type: TypeCallback, CallbackID: name, Callback: func(ctx context.Context, in Input, payload json.RawMessage) (*Output, error) {
		mu.Lock()
		*ran = append(*ran, name)
		mu.Unlock()
		return nil, nil
	}}
}

func TestMatchersSelectHandlers(t *testing.T) {
	dir := t.TempDir()
	var ran []string
	var mu sync.Mutex
	group := func(m, name string) Matcher { return Matcher{Matcher: m, Hooks: []Handler{recorder(name, &ran, &mu)}} }
	r := newRunner(t, Options{Hooks: Config{
		PreToolUse: {group("*", "star"), group("", "empty"), group("Bash", "exact"), group("Edit|Write", "list"),
			group("^Notebook", "regex"), group("mcp__memory__.*", "mcp")},
		SessionStart:  {group("startup", "startup"), group("resume|compact", "resumed")},
		PreCompact:    {group("manual", "manual")},
		Notification:  {group("permission_prompt", "perm")},
		SubagentStart: {group("Explore", "explore")},
		SubagentStop:  {group("Plan", "plan")},
		SessionEnd:    {group("logout", "logout")},
		Stop:          {group("NeverMatches", "stop")}, // Stop ignores matchers
	}})
	cases := []struct {
		in   Input
		want []string
	}{
		{bashCall(dir, "ls"), []string{"star", "empty", "exact"}},
		{PreToolUseInput{Base: base(dir), ToolName: "Write"}, []string{"star", "empty", "list"}},
		{PreToolUseInput{Base: base(dir), ToolName: "NotebookEdit"}, []string{"star", "empty", "regex"}},
		{PreToolUseInput{Base: base(dir), ToolName: "mcp__memory__create_entities"}, []string{"star", "empty", "mcp"}},
		{PreToolUseInput{Base: base(dir), ToolName: "mcp__github__push"}, []string{"star", "empty"}},
		{SessionStartInput{Base: base(dir), Source: "startup"}, []string{"startup"}},
		{SessionStartInput{Base: base(dir), Source: "compact"}, []string{"resumed"}},
		{SessionStartInput{Base: base(dir), Source: "clear"}, nil},
		{PreCompactInput{Base: base(dir), Trigger: "auto"}, nil},
		{PreCompactInput{Base: base(dir), Trigger: "manual"}, []string{"manual"}},
		{NotificationInput{Base: base(dir), NotificationType: "permission_prompt"}, []string{"perm"}},
		{NotificationInput{Base: base(dir), NotificationType: "idle_prompt"}, nil},
		{SubagentStartInput{Base: base(dir), AgentType: "Explore"}, []string{"explore"}},
		{SubagentStopInput{Base: base(dir), AgentType: "Explore"}, nil},
		{SessionEndInput{Base: base(dir), Reason: "logout"}, []string{"logout"}},
		{StopInput{Base: base(dir)}, []string{"stop"}},
	}
	for _, c := range cases {
		ran = nil
		o := r.Run(context.Background(), c.in)
		noErrors(t, o)
		slices.Sort(ran)
		want := slices.Clone(c.want)
		slices.Sort(want)
		if !slices.Equal(ran, want) {
			t.Errorf("%s: ran %q, want %q", hookName(c.in), ran, want)
		}
	}
}

func TestOncePerSession(t *testing.T) {
	dir := t.TempDir()
	h := cmd(`echo x >> once.txt`)
	h.Once = true
	r := newRunner(t, Options{Hooks: on(UserPromptSubmit, "", h, cmd(`echo y >> always.txt`))})
	in := UserPromptSubmitInput{Base: base(dir), Prompt: "a"}
	for range 3 {
		noErrors(t, r.Run(context.Background(), in))
	}
	in.SessionID = "sess-2"
	noErrors(t, r.Run(context.Background(), in))
	if got := readFile(t, filepath.Join(dir, "once.txt")); got != "x\nx\n" {
		t.Errorf("once ran %q (want once per session, two sessions)", got)
	}
	if got := readFile(t, filepath.Join(dir, "always.txt")); got != "y\ny\ny\ny\n" {
		t.Errorf("the other ran %q", got)
	}
}

func TestOnceLogIsSharedAndSurvivesResume(t *testing.T) {
	dir := t.TempDir()
	h := cmd(`echo x >> once.txt`)
	h.Once = true
	cfg := on(UserPromptSubmit, "", h)
	in := UserPromptSubmitInput{Base: base(dir), Prompt: "a"}
	log := NewOnceLog()
	// Two runners of one session (the main thread's, a subagent's own).
	main := newRunner(t, Options{Hooks: cfg, Once: log})
	sub := newRunner(t, Options{Hooks: cfg, Once: log})
	noErrors(t, main.Run(context.Background(), in))
	noErrors(t, sub.Run(context.Background(), in))
	if got := readFile(t, filepath.Join(dir, "once.txt")); got != "x\n" {
		t.Fatalf("once ran %q in two runners of one session", got)
	}
	saved := log.Keys("sess-1")
	if len(saved) != 1 || len(log.Keys("sess-2")) != 0 {
		t.Fatalf("keys %q", saved)
	}
	// A resumed session (a new process) starts from what it saved.
	resumed := newRunner(t, Options{Hooks: cfg, Once: NewOnceLog(saved...)})
	noErrors(t, resumed.Run(context.Background(), in))
	if got := readFile(t, filepath.Join(dir, "once.txt")); got != "x\n" {
		t.Errorf("once ran again after a resume: %q", got)
	}
	// A fork is another session: it runs the hook once more.
	fork := in
	fork.SessionID = "sess-fork"
	noErrors(t, resumed.Run(context.Background(), fork))
	if got := readFile(t, filepath.Join(dir, "once.txt")); got != "x\nx\n" {
		t.Errorf("a fork did not run it: %q", got)
	}
	// A changed hook is another hook.
	changed := cmd(`echo changed >> once.txt`)
	changed.Once = true
	noErrors(t, newRunner(t, Options{Hooks: on(UserPromptSubmit, "", changed), Once: NewOnceLog(saved...)}).Run(context.Background(), in))
	if got := readFile(t, filepath.Join(dir, "once.txt")); got != "x\nx\nchanged\n" {
		t.Errorf("a changed hook did not run: %q", got)
	}
}

func TestAsyncIsForCommandHooksOnly(t *testing.T) {
	dir := t.TempDir()
	deny := Handler{Type: TypeCallback, Async: true, Callback: func(context.Context, Input, json.RawMessage) (*Output, error) {
		return &Output{HookSpecificOutput: &SpecificOutput{HookEventName: "PreToolUse", PermissionDecision: "deny", PermissionDecisionReason: "policy"}}, nil
	}}
	r := newRunner(t, Options{Hooks: on(PreToolUse, "", deny)})
	o := r.Run(context.Background(), bashCall(dir, "rm -rf x"))
	noErrors(t, o)
	if o.Permission != DecisionDeny || o.Results[0].Async {
		t.Errorf("an async callback did not decide: %+v", o)
	}
}

func TestAsyncDoesNotWaitNorBlock(t *testing.T) {
	dir := t.TempDir()
	// The async hook answers only once the test opens the gate, after Run
	// has returned: a Run that waited for it would never return.
	gate := filepath.Join(dir, "gate")
	h := cmd(`while [ ! -e gate ]; do sleep 0.02; done; echo '{"systemMessage":"late","decision":"block","reason":"too late","hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","additionalContext":"bg ctx"}}'`)
	h.Async = true
	failing := cmd(`exit 2`)
	failing.Async = true
	var mu sync.Mutex
	var recs []Record
	r := newRunner(t, Options{Hooks: on(PreToolUse, "", h, failing), Observer: func(rec Record) { mu.Lock(); recs = append(recs, rec); mu.Unlock() }})
	ran := make(chan Outcome, 1)
	go func() { ran <- r.Run(context.Background(), bashCall(dir, "ls")) }()
	var o Outcome
	select {
	case o = <-ran:
	case <-time.After(30 * time.Second):
		t.Fatal("Run waits for an async hook")
	}
	if err := os.WriteFile(gate, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	noErrors(t, o)
	if o.Permission != DecisionNone || o.Block || len(o.SystemMessages) != 0 || len(o.Results) != 2 || !o.Results[0].Async {
		t.Errorf("async hooks decide nothing: %+v", o)
	}
	var rep AsyncReport
	deadline := time.Now().Add(10 * time.Second)
	for len(rep.Results) < 2 && time.Now().Before(deadline) {
		got := r.TakeAsync()
		rep.Results = append(rep.Results, got.Results...)
		rep.SystemMessages = append(rep.SystemMessages, got.SystemMessages...)
		rep.AdditionalContext = append(rep.AdditionalContext, got.AdditionalContext...)
		rep.Errors = append(rep.Errors, got.Errors...)
		time.Sleep(20 * time.Millisecond)
	}
	if len(rep.Results) != 2 {
		t.Fatalf("async results never arrived: %+v", rep)
	}
	if !slices.Equal(rep.SystemMessages, []string{"late"}) || !slices.Equal(rep.AdditionalContext, []string{"bg ctx"}) {
		t.Errorf("report %+v", rep)
	}
	if len(rep.Errors) != 1 || !strings.Contains(rep.Errors[0], "No stderr output") {
		t.Errorf("the async exit 2 is reported, not obeyed: %q", rep.Errors)
	}
	if got := r.TakeAsync(); len(got.Results) != 0 {
		t.Error("TakeAsync returns each result once")
	}
	mu.Lock()
	defer mu.Unlock()
	if len(recs) != 4 {
		t.Errorf("want started+response for both, got %d records", len(recs))
	}
}

func TestCloseCancelsAsyncHooks(t *testing.T) {
	dir := t.TempDir()
	h := cmd(`sleep 30`)
	h.Async = true
	r, err := New(Options{Hooks: on(Stop, "", h)})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	r.Run(ctx, StopInput{Base: base(dir)})
	cancel() // the turn ends; the async hook goes on
	time.Sleep(100 * time.Millisecond)
	if rep := r.TakeAsync(); len(rep.Results) != 0 {
		t.Fatalf("the async hook ended with its turn: %+v", rep.Results)
	}
	start := time.Now()
	r.Close()
	if time.Since(start) > 5*time.Second {
		t.Fatal("Close did not kill the async hook")
	}
	rep := r.TakeAsync()
	if len(rep.Results) != 1 || rep.Results[0].Status != StatusCancelled {
		t.Errorf("%+v", rep.Results)
	}
}

func TestDisableAllHooks(t *testing.T) {
	dir := t.TempDir()
	var ran []string
	var mu sync.Mutex
	cfg := on(PreToolUse, "", cmd(`touch ran.txt`), recorder("cb", &ran, &mu))
	r := newRunner(t, Options{Hooks: cfg, Settings: Settings{DisableAllHooks: true}})
	if r.Has(PreToolUse) {
		t.Error("Has should say no when hooks are disabled")
	}
	o := r.Run(context.Background(), bashCall(dir, "ls"))
	if len(o.Results) != 0 || len(ran) != 0 {
		t.Errorf("hooks ran: %+v %q", o, ran)
	}
	if _, err := os.Stat(filepath.Join(dir, "ran.txt")); err == nil {
		t.Error("the command ran")
	}
	if r2 := newRunner(t, Options{Hooks: cfg}); !r2.Has(PreToolUse) || r2.Has(Stop) {
		t.Error("Has")
	}
}

// Admit decides every handler a runner is given, at New and at Add; the
// sources of those it refuses are reported.
func TestAdmitLeavesOutRefusedHandlers(t *testing.T) {
	var ran, skipped []string
	var mu sync.Mutex
	from := func(name, source string) Handler {
		h := recorder(name, &ran, &mu)
		h.Source = source
		return h
	}
	r := newRunner(t, Options{
		Hooks:   on(PreToolUse, "", from("kept", "managed"), from("refused", "plugin:lint")),
		Admit:   func(h Handler) bool { return h.Source == "managed" },
		Skipped: func(sources []string) { skipped = append(skipped, sources...) },
	})
	if err := r.Add(on(PreToolUse, "", from("added", "managed"), from("refused later", "skill:deploy"))); err != nil {
		t.Fatal(err)
	}
	r.Run(context.Background(), bashCall(t.TempDir(), "ls"))
	slices.Sort(ran)
	if !slices.Equal(ran, []string{"added", "kept"}) {
		t.Errorf("ran %q, want the admitted handlers only", ran)
	}
	if !slices.Equal(skipped, []string{"plugin:lint", "skill:deploy"}) {
		t.Errorf("skipped %q", skipped)
	}
}

func TestContinueFalseStopsTheSession(t *testing.T) {
	dir := t.TempDir()
	r := newRunner(t, Options{Hooks: on(PostToolUse, "", cmd(`echo '{"continue":false,"stopReason":"budget spent"}'`), cmd(`echo '{"continue":false,"stopReason":"second"}'`), cmd(`echo '{"suppressOutput":true}'`))})
	o := r.Run(context.Background(), PostToolUseInput{Base: base(dir), ToolName: "Bash"})
	noErrors(t, o)
	if !o.Stop || o.StopReason != "budget spent" || !o.SuppressOutput || o.Block {
		t.Errorf("%+v", o)
	}
}

func TestPostToolUseFeedbackAndOutputReplacement(t *testing.T) {
	dir := t.TempDir()
	r := newRunner(t, Options{Hooks: on(PostToolUse, "mcp__.*",
		cmd(`echo '{"decision":"block","reason":"lint failed","hookSpecificOutput":{"hookEventName":"PostToolUse","additionalContext":"see lint","updatedMCPToolOutput":{"content":[{"type":"text","text":"redacted"}]}}}'`))})
	o := r.Run(context.Background(), PostToolUseInput{Base: base(dir), ToolName: "mcp__db__query"})
	noErrors(t, o)
	if !o.Block || o.Reason != "lint failed" || o.Context() != "see lint" || string(o.UpdatedToolOutput) != `{"content":[{"type":"text","text":"redacted"}]}` {
		t.Errorf("%+v", o)
	}
}

func TestPermissionRequestDecision(t *testing.T) {
	dir := t.TempDir()
	in := PermissionRequestInput{Base: base(dir), ToolName: "Bash", ToolInput: json.RawMessage(`{"command":"touch x"}`)}
	allow := cmd(`echo '{"hookSpecificOutput":{"hookEventName":"PermissionRequest","decision":{"behavior":"allow","updatedInput":{"command":"touch y"},"updatedPermissions":[{"type":"setMode","mode":"acceptEdits","destination":"session"}]}}}'`)
	deny := cmd(`echo '{"hookSpecificOutput":{"hookEventName":"PermissionRequest","decision":{"behavior":"deny","message":"not today","interrupt":true}}}'`)
	r := newRunner(t, Options{Hooks: on(PermissionRequest, "Bash", allow)})
	o := r.Run(context.Background(), in)
	noErrors(t, o)
	if o.Permission != DecisionAllow || string(o.UpdatedInput) != `{"command":"touch y"}` || len(o.UpdatedPermissions) == 0 {
		t.Errorf("allow: %+v", o)
	}
	r = newRunner(t, Options{Hooks: on(PermissionRequest, "Bash", allow, deny)})
	o = r.Run(context.Background(), in)
	noErrors(t, o)
	if o.Permission != DecisionDeny || !o.Block || o.Reason != "not today" || !o.Interrupt || o.UpdatedInput != nil {
		t.Errorf("deny wins: %+v", o)
	}
}

func TestStopBlockMakesTheModelGoOn(t *testing.T) {
	dir := t.TempDir()
	r := newRunner(t, Options{Hooks: on(Stop, "", cmd(`echo '{"decision":"block","reason":"tests are red"}'`), cmd(`echo '{"decision":"block","reason":"lint too"}'`))})
	o := r.Run(context.Background(), StopInput{Base: base(dir)})
	noErrors(t, o)
	if !o.Block || o.Reason != "tests are red\nlint too" || o.Permission != DecisionNone {
		t.Errorf("%+v", o)
	}
}

func TestOnFailureBlock(t *testing.T) {
	dir := t.TempDir()
	h := cmd(`exit 1`)
	h.OnFailure = "block"
	r := newRunner(t, Options{Hooks: Config{PreToolUse: {{Hooks: []Handler{h}}}, Stop: {{Hooks: []Handler{h}}}}})
	o := r.Run(context.Background(), bashCall(dir, "ls"))
	if o.Permission != DecisionDeny || !strings.Contains(o.Reason, "status code 1") {
		t.Errorf("a failing guard blocks with onFailure block: %+v", o)
	}
	// Never on Stop: a broken hook must not keep the model going.
	o = r.Run(context.Background(), StopInput{Base: base(dir)})
	if o.Block || len(o.Errors) != 1 {
		t.Errorf("%+v", o)
	}
}

func TestObserverRecords(t *testing.T) {
	dir := t.TempDir()
	var mu sync.Mutex
	var recs []Record
	h := cmd(`echo out; sleep 0.2; echo err >&2; exit 2`)
	h.StatusMessage = "checking"
	r := newRunner(t, Options{Hooks: on(PreToolUse, "Bash", h, cmd(`echo '{}'`)), Observer: func(rec Record) { mu.Lock(); recs = append(recs, rec); mu.Unlock() }})
	o := r.Run(context.Background(), bashCall(dir, "ls"))
	mu.Lock()
	defer mu.Unlock()
	if len(recs) != 4 {
		t.Fatalf("want 4 records, got %+v", recs)
	}
	// Starts come first, in config order; responses as hooks finish.
	if recs[0].Phase != PhaseStarted || recs[1].Phase != PhaseStarted || recs[0].HookID != o.Results[0].HookID || recs[0].StatusMessage != "checking" {
		t.Errorf("starts %+v", recs[:2])
	}
	var resp Record
	for _, rec := range recs[2:] {
		if rec.Phase != PhaseResponse {
			t.Errorf("not a response: %+v", rec)
		}
		if rec.HookID == o.Results[0].HookID {
			resp = rec
		}
	}
	if resp.HookName != "PreToolUse:Bash" || resp.HookEvent != PreToolUse || resp.Stdout != "out\n" || resp.Stderr != "err\n" ||
		resp.Output != "out\nerr\n" || resp.ExitCode == nil || *resp.ExitCode != 2 || resp.Outcome != "error" || resp.Result.Status != StatusBlocking {
		t.Errorf("response %+v", resp)
	}
	b, _ := json.Marshal(resp)
	want := fmt.Sprintf(`{"hook_id":%q,"hook_name":"PreToolUse:Bash","hook_event":"PreToolUse","output":"out\nerr\n","stdout":"out\n","stderr":"err\n","exit_code":2,"outcome":"error"}`, resp.HookID)
	if string(b) != want {
		t.Errorf("record JSON\n got %s\nwant %s", b, want)
	}
}

func TestOutputIsBounded(t *testing.T) {
	dir := t.TempDir()
	r := newRunner(t, Options{Hooks: on(Stop, "", cmd(`head -c 100000 /dev/zero | tr '\0' a; echo '{"decision":"block"}'`)), MaxOutput: 1000})
	o := r.Run(context.Background(), StopInput{Base: base(dir)})
	res := o.Results[0]
	if res.Status != StatusSuccess || o.Block || !strings.Contains(res.Stdout, "[99021 bytes of output dropped]") || len(res.Stdout) > 1100 {
		t.Errorf("status %s, %d bytes kept: %q…", res.Status, len(res.Stdout), res.Stdout[len(res.Stdout)-60:])
	}
}

func TestNewRejectsBadConfiguration(t *testing.T) {
	cases := []struct {
		cfg  Config
		want string
	}{
		{on(PreToolUse, "Bash(", cmd("true")), `hooks.PreToolUse[0]: matcher "Bash("`},
		{on(PreToolUse, "", Handler{Type: "webhook"}), `unknown hook type "webhook"`},
		{on(PreToolUse, "", Handler{Type: TypeCommand, Source: "project .claude/settings.json"}), `hooks.PreToolUse[0].hooks[0] (project .claude/settings.json): command hook without a command`},
		{on(Stop, "", Handler{Type: TypeHTTP}), "http hook without a url"},
		{on(Stop, "", Handler{Type: TypePrompt}), "prompt hook without a prompt"},
		{on(Stop, "", Handler{Type: TypeMCPTool, Server: "s"}), "mcp_tool hook needs a server and a tool"},
		{on(Stop, "", Handler{Type: TypeCallback}), "callback hook without a function"},
		{on(Stop, "", Handler{Type: TypeCommand, Command: "x", Timeout: -1}), "negative timeout"},
		{on(Stop, "", Handler{Type: TypeCommand, Command: "x", OnFailure: "explode"}), "onFailure"},
		{on(Stop, "", Handler{}), "hook without a type"},
	}
	for _, c := range cases {
		_, err := New(Options{Hooks: c.cfg})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("New: %v, want an error containing %q", err, c.want)
		}
	}
	// All problems at once.
	_, err := New(Options{Hooks: Config{PreToolUse: {{Matcher: "(", Hooks: []Handler{cmd("x")}}}, Stop: {{Hooks: []Handler{{Type: "?"}}}}}})
	if err == nil || !strings.Contains(err.Error(), "PreToolUse") || !strings.Contains(err.Error(), "Stop") {
		t.Errorf("want both problems: %v", err)
	}
}

func TestLargePayloadToAHookThatIgnoresStdin(t *testing.T) {
	dir := t.TempDir()
	big, _ := json.Marshal(map[string]string{"content": strings.Repeat("x", 1<<20)})
	in := &PostToolUseInput{Base: base(dir), ToolName: "Write", ToolInput: big, ToolUseID: "t"}
	r := newRunner(t, Options{
		Hooks:     on(PostToolUse, "Write", Handler{Type: TypeCommand, Command: `echo '{"systemMessage":"fine"}'`, If: "Write(*.txt)"}, cmd(`wc -c > size.txt`)),
		IfMatcher: func(rule, tool string, input json.RawMessage) (bool, error) { return len(input) == len(big), nil },
	})
	o := r.Run(context.Background(), in) // a pointer payload works as well
	noErrors(t, o)
	if !slices.Equal(o.SystemMessages, []string{"fine"}) {
		t.Errorf("%+v", o)
	}
	payload, _ := in.MarshalJSON()
	if got := strings.TrimSpace(readFile(t, filepath.Join(dir, "size.txt"))); got != strconv.Itoa(len(payload)) {
		t.Errorf("the reading hook got %s bytes, want %d", got, len(payload))
	}
}

// Without Options.Shell, the shell that runs command hooks is looked up on
// PATH when the first of them runs, not when the runner is made: most
// sessions run none. A bash put on PATH in between is the one used.
func TestCommandShellIsFoundWhenFirstNeeded(t *testing.T) {
	dir, bin := t.TempDir(), t.TempDir()
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	r := newRunner(t, Options{Hooks: on(Stop, "", cmd(`true`))})
	marker := filepath.Join(dir, "ran")
	script := "#!/bin/sh\n: > '" + marker + "'\nexec /bin/sh \"$@\"\n"
	if err := os.WriteFile(filepath.Join(bin, "bash"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	noErrors(t, r.Run(context.Background(), StopInput{Base: base(dir)}))
	if _, err := os.Stat(marker); err != nil {
		t.Errorf("the hook did not run through the bash on PATH when it ran: %v", err)
	}
}
