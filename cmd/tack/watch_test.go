package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tackcode/tack/internal/hook"
	"github.com/tackcode/tack/internal/hook/hooktest"
	"github.com/tackcode/tack/internal/llm"
	"github.com/tackcode/tack/internal/llm/llmtest"
)

// The hook events of files and places: CwdChanged after a cd, FileChanged
// after another process edits a file the session read, ConfigChange when a
// settings file is edited mid-session.

// hang bounds every wait for something tack does by itself; it only
// catches what never happens.
const hang = 60 * time.Second

// waitFor polls cond until it holds, failing the test after hang.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(hang); !cond(); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("gave up waiting for %s", what)
		}
	}
}

// fileHas reports whether the file at path holds s.
func fileHas(path, s string) func() bool {
	return func() bool {
		b, _ := os.ReadFile(path)
		return bytes.Contains(b, []byte(s))
	}
}

// replace writes path as an editor saves it: a new file renamed over the
// old one, so that a watcher sees one change, whatever the timing.
func replace(t *testing.T, path, content string) {
	t.Helper()
	tmp := filepath.Join(filepath.Dir(path), "."+filepath.Base(path)+".new")
	if err := os.WriteFile(tmp, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
}

// realDir is the test's working directory as the shell names it.
func (e *env) realDir() string {
	e.t.Helper()
	d, err := filepath.EvalSymlinks(e.dir)
	if err != nil {
		e.t.Fatal(err)
	}
	return d
}

// settingsJSON is the text of project settings with hooks and the rest of
// settings.
func (e *env) settingsJSON(hooks map[string]any, more map[string]any) string {
	e.t.Helper()
	s := map[string]any{"hooks": hooks}
	for k, v := range more {
		s[k] = v
	}
	b, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		e.t.Fatal(err)
	}
	return string(b)
}

// live is a tack session that stays up between prompts: stream-json in
// and out, as an SDK host runs it.
type live struct {
	t      *testing.T
	cmd    *exec.Cmd
	in     io.WriteCloser
	lines  chan map[string]any
	stderr *lockedBuffer
	exited chan struct{}
}

type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

func (e *env) start(args ...string) *live {
	e.t.Helper()
	cmd := exec.Command(tackBin, append([]string{"-p", "--input-format", "stream-json", "--output-format", "stream-json", "--verbose"}, args...)...)
	cmd.Dir = e.dir
	cmd.Env = append([]string{
		"PATH=" + os.Getenv("PATH"),
		"HOME=" + e.home,
		"CLAUDE_CONFIG_DIR=" + filepath.Join(e.home, ".claude"),
		"ANTHROPIC_API_KEY=test-key",
		"ANTHROPIC_BASE_URL=" + e.srv.URL(),
		"SHELL=/bin/bash",
	}, e.extra...)
	l := &live{t: e.t, cmd: cmd, lines: make(chan map[string]any, 1000), stderr: &lockedBuffer{}, exited: make(chan struct{})}
	cmd.Stderr = l.stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		e.t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		e.t.Fatal(err)
	}
	l.in = in
	if err := cmd.Start(); err != nil {
		e.t.Fatal(err)
	}
	go func() {
		defer close(l.lines)
		sc := bufio.NewScanner(out)
		sc.Buffer(nil, 16<<20)
		for sc.Scan() {
			var m map[string]any
			if json.Unmarshal(sc.Bytes(), &m) == nil {
				l.lines <- m
			}
		}
	}()
	go func() {
		_ = cmd.Wait()
		close(l.exited)
	}()
	e.t.Cleanup(func() {
		_ = l.in.Close()
		select {
		case <-l.exited:
		case <-time.After(hang):
			_ = cmd.Process.Kill()
			<-l.exited
		}
	})
	return l
}

// prompt sends one user message and returns the result of its run.
func (l *live) prompt(text string) map[string]any {
	l.t.Helper()
	l.send(text)
	return l.result(text)
}

// send sends one user message.
func (l *live) send(text string) {
	l.t.Helper()
	msg, err := json.Marshal(map[string]any{"type": "user", "session_id": "", "parent_tool_use_id": nil,
		"message": map[string]any{"role": "user", "content": []any{map[string]any{"type": "text", "text": text}}}})
	if err != nil {
		l.t.Fatal(err)
	}
	if _, err := l.in.Write(append(msg, '\n')); err != nil {
		l.t.Fatalf("write stdin: %v\n%s", err, l.stderr.String())
	}
}

// result reads the output up to the result of the run of text.
func (l *live) result(text string) map[string]any {
	l.t.Helper()
	timeout := time.After(hang)
	for {
		select {
		case m, ok := <-l.lines:
			if !ok {
				l.t.Fatalf("tack ended before the result of %q; stderr:\n%s", text, l.stderr.String())
			}
			if m["type"] == "result" {
				return m
			}
		case <-timeout:
			l.t.Fatalf("no result for %q; stderr:\n%s", text, l.stderr.String())
		}
	}
}

// end closes stdin and waits for tack to exit.
func (l *live) end() {
	l.t.Helper()
	_ = l.in.Close()
	select {
	case <-l.exited:
	case <-time.After(hang):
		l.t.Fatalf("tack did not exit after its input ended; stderr:\n%s", l.stderr.String())
	}
}

// TestCwdChangedAfterCd: a Bash cd fires CwdChanged once, between the
// call's PreToolUse and PostToolUse, with the old and new directories;
// every later payload's cwd is the new one; a call that does not move
// fires nothing; the watchPaths a CwdChanged hook answers with are watched
// (a file made there fires FileChanged, during the turn).
func TestCwdChangedAfterCd(t *testing.T) {
	e := newEnv(t)
	e.write("sub/keep", "")
	dir := e.realDir()
	sub := filepath.Join(dir, "sub")
	envrc := filepath.Join(sub, ".envrc")
	log := filepath.Join(t.TempDir(), "hooks.jsonl")
	hooks := hooktest.LoggingHooks(log, hook.PreToolUse, hook.PostToolUse, hook.CwdChanged, hook.FileChanged)
	hooks["CwdChanged"] = append(hooks["CwdChanged"].([]any), map[string]any{"hooks": []any{map[string]any{"type": "command",
		"command": fmt.Sprintf(`echo '{"hookSpecificOutput":{"hookEventName":"CwdChanged","watchPaths":[%q]}}'`, envrc)}}})
	e.settings("settings.json", e.settingsJSON(hooks, nil))
	// The session waits, in a command of its own, for the FileChanged of
	// the file it made: it ends once that hook has logged.
	waitForFileChanged := fmt.Sprintf(`for i in $(seq 600); do grep -q '"FileChanged"' %q && exit 0; sleep 0.1; done; exit 1`, log)
	e.srv.Append(
		llmtest.Reply(llmtest.ToolUse("Bash", map[string]any{"command": "cd sub"})),
		llmtest.Reply(llmtest.ToolUse("Bash", map[string]any{"command": "pwd"})),
		llmtest.Reply(llmtest.ToolUse("Bash", map[string]any{"command": "echo A=1 > .envrc"})),
		llmtest.Reply(llmtest.ToolUse("Bash", map[string]any{"command": waitForFileChanged})),
		llmtest.Reply(llmtest.Text("moved")),
	)
	out, errOut := e.run("-p", "go to sub", "--output-format", "json", "--dangerously-skip-permissions")
	if e.status != 0 {
		t.Fatalf("exit %d: %s\n%s", e.status, out, errOut)
	}
	if res := resultOf(t, out); res["is_error"] != false {
		t.Fatalf("result: %s\n%s", out, errOut)
	}

	got := hooktest.ReadLog(t, log)
	var order []string
	for _, p := range got {
		switch p.Event {
		case hook.PreToolUse, hook.PostToolUse:
			in, _ := p.Fields["tool_input"].(map[string]any)
			order = append(order, fmt.Sprintf("%s %v in %s", p.Event, in["command"], p.String("cwd")))
		default:
			order = append(order, fmt.Sprintf("%s in %s", p.Event, p.String("cwd")))
		}
	}
	// The FileChanged of .envrc comes once the file is still: after the
	// command that made it, before the end of the one that waits for it.
	// Whether it comes before or after that command starts depends on how
	// long the next model request takes, so either place is right.
	fileChanged := slices.Index(order, "FileChanged in "+sub)
	made := slices.Index(order, "PostToolUse echo A=1 > .envrc in "+sub)
	if fileChanged < made || fileChanged >= len(order)-1 {
		t.Errorf("FileChanged at %d, want after %d and before the last PostToolUse: %q", fileChanged, made, order)
	}
	if fileChanged >= 0 {
		order = slices.Delete(order, fileChanged, fileChanged+1)
	}
	want := []string{
		"PreToolUse cd sub in " + dir, "CwdChanged in " + sub, "PostToolUse cd sub in " + sub,
		"PreToolUse pwd in " + sub, "PostToolUse pwd in " + sub,
		"PreToolUse echo A=1 > .envrc in " + sub, "PostToolUse echo A=1 > .envrc in " + sub,
		"PreToolUse " + waitForFileChanged + " in " + sub, "PostToolUse " + waitForFileChanged + " in " + sub,
	}
	if !slices.Equal(order, want) {
		t.Fatalf("events\n got %q\nwant %q", order, want)
	}
	cwd := hooktest.Only(got, hook.CwdChanged)[0]
	if cwd.String("old_cwd") != dir || cwd.String("new_cwd") != sub || cwd.Has("permission_mode") || cwd.String("prompt_id") == "" {
		t.Errorf("CwdChanged %s: want old_cwd, new_cwd and prompt_id, and no permission_mode, as Claude Code sends it", cwd.Raw)
	}
	fc := hooktest.Only(got, hook.FileChanged)[0]
	if fc.String("file_path") != envrc || fc.String("event") != "add" {
		t.Errorf("FileChanged %s", fc.Raw)
	}
}

// TestFileChangedAfterAnotherProcessEdits: in a live session, another
// process edits two files the session read and one a SessionStart hook
// asked to watch, between two prompts, then one of them again while a
// command of the session runs. FileChanged fires once for each change,
// with the absolute path; the hook whose matcher names notes.txt fires for
// that file only, and the context it gives reaches the model with the next
// request: the next prompt's, or the one after the command. The file the
// session read, then wrote itself, fires nothing.
func TestFileChangedAfterAnotherProcessEdits(t *testing.T) {
	e := newEnv(t)
	e.write("notes.txt", "milk\n")
	e.write("other.txt", "eggs\n")
	e.write("mine.txt", "flour\n")
	dir := e.realDir()
	notes, other, mine := filepath.Join(dir, "notes.txt"), filepath.Join(dir, "other.txt"), filepath.Join(dir, "mine.txt")
	all, matched := filepath.Join(t.TempDir(), "all.jsonl"), filepath.Join(t.TempDir(), "notes.jsonl")
	hooks := hooktest.LoggingHooks(all, hook.FileChanged)
	// The hook of notes.txt says so to the user too: tack shows it once the
	// context is queued, which tells the test the change was taken in.
	hooks["FileChanged"] = append(hooks["FileChanged"].([]any), map[string]any{"matcher": "notes.txt", "hooks": []any{map[string]any{"type": "command",
		"command": fmt.Sprintf(`{ cat; echo; } >> %q; echo '{"systemMessage":"notes.txt was edited","hookSpecificOutput":{"hookEventName":"FileChanged","additionalContext":"notes.txt changed on disk"}}'`, matched)}}})
	// A file never read, watched because a SessionStart hook asked.
	makefile := filepath.Join(dir, "Makefile")
	e.write("Makefile", "all:\n")
	hooks["SessionStart"] = []any{map[string]any{"hooks": []any{map[string]any{"type": "command",
		"command": fmt.Sprintf(`echo '{"hookSpecificOutput":{"hookEventName":"SessionStart","watchPaths":[%q]}}'`, makefile)}}}}
	e.settings("settings.json", e.settingsJSON(hooks, nil))
	started, goOn := filepath.Join(t.TempDir(), "started"), filepath.Join(t.TempDir(), "go")
	wait := fmt.Sprintf(`touch %q; for i in $(seq 600); do [ -e %q ] && exit 0; sleep 0.1; done; exit 1`, started, goOn)
	e.srv.Append(
		llmtest.Reply(llmtest.ToolUse("Read", map[string]any{"file_path": notes}), llmtest.ToolUse("Read", map[string]any{"file_path": other}),
			llmtest.ToolUse("Read", map[string]any{"file_path": mine})),
		llmtest.Reply(llmtest.ToolUse("Write", map[string]any{"file_path": mine, "content": "bread\n"})),
		llmtest.Reply(llmtest.Text("read them")),
		llmtest.Reply(llmtest.ToolUse("Bash", map[string]any{"command": wait})),
		llmtest.Reply(llmtest.Text("noted")),
	)
	l := e.start("--permission-mode", "acceptEdits", "--allowedTools", "Bash")
	edited := func(n int) func() bool {
		return func() bool { return strings.Count(l.stderr.String(), "notes.txt was edited") == n }
	}
	if res := l.prompt("read the lists"); res["is_error"] != false {
		t.Fatalf("first prompt: %v\n%s", res, l.stderr.String())
	}
	// Someone else edits the files, one after the other.
	replace(t, makefile, "all: test\n")
	replace(t, other, "eggs\nham\n")
	replace(t, notes, "milk\nbutter\n")
	waitFor(t, "the hooks of notes.txt", edited(1))
	// Then once more while the session's command runs.
	l.send("anything new?")
	waitFor(t, "the session's command", func() bool { _, err := os.Stat(started); return err == nil })
	replace(t, notes, "milk\nbutter\njam\n")
	waitFor(t, "the hooks of notes.txt, again", edited(2))
	if err := os.WriteFile(goOn, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if res := l.result("anything new?"); res["is_error"] != false {
		t.Fatalf("second prompt: %v\n%s", res, l.stderr.String())
	}
	l.end()

	var changes []string
	for _, p := range hooktest.ReadLog(t, all) {
		changes = append(changes, p.String("event")+" "+p.String("file_path"))
		if p.String("cwd") != dir || p.String("session_id") == "" {
			t.Errorf("FileChanged common fields: %s", p.Raw)
		}
	}
	// Files are reported in the order they moved: mine.txt, which the
	// session wrote first, would come before the others.
	if want := []string{"change " + makefile, "change " + other, "change " + notes, "change " + notes}; !slices.Equal(changes, want) {
		t.Errorf("FileChanged for %q, want %q", changes, want)
	}
	if got := hooktest.ReadLog(t, matched); len(got) != 2 || got[0].String("file_path") != notes || got[1].String("file_path") != notes {
		t.Errorf("the notes.txt hook ran for %d changes: %v", len(got), got)
	}
	// The requests: the first prompt's three, the second prompt's, the one
	// after its command.
	reqs := e.srv.Requests()
	if len(reqs) != 5 {
		t.Fatalf("%d requests, want 5", len(reqs))
	}
	for i, r := range reqs {
		text := r.LastUserText()
		n := strings.Count(text, "FileChanged hook additional context: notes.txt changed on disk")
		if want := map[int]int{3: 1, 4: 1}[i]; n != want {
			t.Errorf("request %d carries the context %d times, want %d:\n%s", i, n, want, text)
		}
	}
	if !strings.Contains(reqs[3].LastUserText(), "anything new?") {
		t.Errorf("request 3 is not the second prompt's: %s", reqs[3].LastUserText())
	}
}

// TestConfigChangeReloadsTheSettings: .claude/settings.json is edited while
// the session waits for its next prompt. A malformed edit fires
// ConfigChange, is reported with its file and line, and changes nothing;
// the next edit fires ConfigChange again and is read: the deny rule it
// adds holds for the next tool call. A skill edited fires ConfigChange
// with source skills.
func TestConfigChangeReloadsTheSettings(t *testing.T) {
	e := newEnv(t)
	log := filepath.Join(t.TempDir(), "hooks.jsonl")
	hooks := hooktest.LoggingHooks(log, hook.ConfigChange)
	e.settings("settings.json", e.settingsJSON(hooks, nil))
	e.write(".claude/skills/lint/SKILL.md", "---\ndescription: Lints\n---\nLint.\n")
	path := filepath.Join(e.realDir(), ".claude", "settings.json")
	skill := filepath.Join(e.realDir(), ".claude", "skills", "lint", "SKILL.md")
	e.srv.Append(
		llmtest.Reply(llmtest.ToolUse("Bash", map[string]any{"command": "echo one"})),
		llmtest.Reply(llmtest.Text("ran one")),
		llmtest.Reply(llmtest.ToolUse("Bash", map[string]any{"command": "echo two"})),
		llmtest.Reply(llmtest.Text("tried two")),
	)
	l := e.start("--dangerously-skip-permissions")
	if res := l.prompt("run one"); res["is_error"] != false {
		t.Fatalf("first prompt: %v\n%s", res, l.stderr.String())
	}

	denied := e.settingsJSON(hooks, map[string]any{"permissions": map[string]any{"deny": []string{"Bash(echo two)"}}})
	broken := strings.Replace(denied, `"deny": [`, `"deny": [,`, 1)
	line := 1 + strings.Count(broken[:strings.Index(broken, `[,`)], "\n")
	replace(t, path, broken)
	waitFor(t, "the error of the malformed settings", func() bool {
		return strings.Contains(l.stderr.String(), fmt.Sprintf("%s:%d:", path, line))
	})
	replace(t, path, denied)
	waitFor(t, "the settings read again", func() bool { return strings.Contains(l.stderr.String(), "settings: read "+path+" again") })

	// A skill edited: ConfigChange with source skills (skills are taken
	// up by the next session; nothing is read again).
	replace(t, skill, "---\ndescription: Lints harder\n---\nLint.\n")
	waitFor(t, "the ConfigChange of the skill", fileHas(log, `"source":"skills"`))

	res := l.prompt("run two")
	l.end()
	reqs := e.srv.Requests()
	results := reqs[len(reqs)-1].ToolResults()
	if len(results) != 1 || !results[0].IsError || !strings.Contains(llm.TextOf(results[0].Content), "Bash(echo two)") {
		t.Fatalf("echo two was not denied by the new rule: %+v\nstderr:\n%s", results, l.stderr.String())
	}
	if denials, _ := res["permission_denials"].([]any); len(denials) != 1 {
		t.Errorf("permission_denials %v", res["permission_denials"])
	}
	stderr := l.stderr.String()
	if !strings.Contains(stderr, "the session keeps its settings") {
		t.Errorf("the malformed edit is not said to change nothing:\n%s", stderr)
	}
	var changes []string
	for _, p := range hooktest.ReadLog(t, log) {
		changes = append(changes, p.String("source")+" "+p.String("file_path"))
	}
	if want := []string{"project_settings " + path, "project_settings " + path, "skills " + skill}; !slices.Equal(changes, want) {
		t.Errorf("ConfigChange %q, want one per edit: %q", changes, want)
	}
	if strings.Count(stderr, "again") != 1 {
		t.Errorf("the settings were read again other than once:\n%s", stderr)
	}
}

// TestConfigChangeHookBlocks: a ConfigChange hook that blocks keeps the old
// settings, and the user is told: the deny rule of the edit does not hold.
// A change of the managed settings applies even so.
func TestConfigChangeHookBlocks(t *testing.T) {
	e := newEnv(t)
	hooks := map[string]any{"ConfigChange": []any{map[string]any{"matcher": "project_settings|policy_settings", "hooks": []any{
		map[string]any{"type": "command", "command": "echo 'settings are frozen' >&2; exit 2"}}}}}
	e.settings("settings.json", e.settingsJSON(hooks, nil))
	path := filepath.Join(e.realDir(), ".claude", "settings.json")
	managed := filepath.Join(t.TempDir(), "managed-settings.json")
	if err := os.WriteFile(managed, []byte(`{}`), 0o644); err != nil {
		t.Fatal(err)
	}
	e.extra = []string{"TACK_MANAGED_SETTINGS=" + managed}
	e.srv.Append(
		llmtest.Reply(llmtest.Text("ready")),
		llmtest.Reply(llmtest.ToolUse("Bash", map[string]any{"command": "echo two"})),
		llmtest.Reply(llmtest.Text("ran two")),
		llmtest.Reply(llmtest.ToolUse("Bash", map[string]any{"command": "echo three"})),
		llmtest.Reply(llmtest.Text("tried three")),
	)
	l := e.start("--dangerously-skip-permissions")
	l.prompt("wait")
	replace(t, path, e.settingsJSON(hooks, map[string]any{"permissions": map[string]any{"deny": []string{"Bash(echo two)"}}}))
	waitFor(t, "the notice of the block", func() bool {
		return strings.Contains(l.stderr.String(), "a hook blocked the change of "+path+"; the session keeps its settings: settings are frozen")
	})
	l.prompt("run two")
	reqs := e.srv.Requests()
	results := reqs[len(reqs)-1].ToolResults()
	if len(results) != 1 || results[0].IsError || !strings.Contains(llm.TextOf(results[0].Content), "two") {
		t.Fatalf("echo two did not run under the old settings: %+v\nstderr:\n%s", results, l.stderr.String())
	}
	if strings.Contains(l.stderr.String(), "again") {
		t.Errorf("the blocked settings were read:\n%s", l.stderr.String())
	}

	// The managed settings always apply: the block is reported, the
	// settings are read again (the project's edit with them).
	replace(t, managed, `{"permissions": {"deny": ["Bash(echo three)"]}}`)
	waitFor(t, "the managed settings read again", func() bool {
		return strings.Contains(l.stderr.String(), "settings: read "+managed+" again")
	})
	if !strings.Contains(l.stderr.String(), "a hook blocked the change of "+managed+", but the managed settings always apply: settings are frozen") {
		t.Errorf("the block of the managed settings is not reported:\n%s", l.stderr.String())
	}
	l.prompt("run three")
	l.end()
	reqs = e.srv.Requests()
	results = reqs[len(reqs)-1].ToolResults()
	if len(results) != 1 || !results[0].IsError || !strings.Contains(llm.TextOf(results[0].Content), "Bash(echo three)") {
		t.Fatalf("echo three was not denied by the managed rule: %+v\nstderr:\n%s", results, l.stderr.String())
	}
}

// TestNoWatcherWithoutItsHooks: a session starts no file watcher (no
// inotify instance) unless a FileChanged or ConfigChange hook wants one.
// The session's own command counts the inotify descriptors tack holds.
func TestNoWatcherWithoutItsHooks(t *testing.T) {
	count := `find /proc/$PPID/fd -lname 'anon_inode:inotify' | wc -l`
	for _, c := range []struct {
		name  string
		hooks map[string]any
		want  string
	}{
		{"no hooks", nil, "0"},
		{"other hooks", hooktest.LoggingHooks(filepath.Join(t.TempDir(), "log"), hook.PreToolUse, hook.CwdChanged), "0"},
		{"FileChanged", hooktest.LoggingHooks(filepath.Join(t.TempDir(), "log"), hook.FileChanged), "1"},
		{"ConfigChange", hooktest.LoggingHooks(filepath.Join(t.TempDir(), "log"), hook.ConfigChange), "1"},
	} {
		t.Run(c.name, func(t *testing.T) {
			e := newEnv(t, llmtest.Reply(llmtest.ToolUse("Bash", map[string]any{"command": count})), llmtest.Reply(llmtest.Text("counted")))
			if c.hooks != nil {
				e.settings("settings.json", e.settingsJSON(c.hooks, nil))
			}
			if out, errOut := e.run("-p", "count", "--dangerously-skip-permissions"); e.status != 0 {
				t.Fatalf("exit %d: %s\n%s", e.status, out, errOut)
			}
			reqs := e.srv.Requests()
			results := reqs[len(reqs)-1].ToolResults()
			if len(results) != 1 || strings.TrimSpace(llm.TextOf(results[0].Content)) != c.want {
				t.Errorf("inotify descriptors: %+v, want %s", results, c.want)
			}
		})
	}
}

// TestFileChangedNamesFollowTheCwd: the file names a FileChanged matcher
// lists are watched in the working directory, and in the new one once a
// cd moved it (the old directory's are no longer watched).
func TestFileChangedNamesFollowTheCwd(t *testing.T) {
	e := newEnv(t)
	e.write("sub/keep", "")
	dir := e.realDir()
	log := filepath.Join(t.TempDir(), "hooks.jsonl")
	logged := hooktest.LoggingHooks(log, hook.FileChanged)["FileChanged"].([]any)[0].(map[string]any)
	logged["matcher"] = ".env"
	e.settings("settings.json", e.settingsJSON(map[string]any{"FileChanged": []any{logged}}, nil))
	waitFor := func(path string) string {
		return fmt.Sprintf(`for i in $(seq 600); do grep -q %q %q && exit 0; sleep 0.1; done; exit 1`, `"file_path":"`+path+`"`, log)
	}
	e.srv.Append(
		llmtest.Reply(llmtest.ToolUse("Bash", map[string]any{"command": "echo A=0 > .env; echo other > .envrc"})),
		llmtest.Reply(llmtest.ToolUse("Bash", map[string]any{"command": waitFor(filepath.Join(dir, ".env"))})),
		llmtest.Reply(llmtest.ToolUse("Bash", map[string]any{"command": "cd sub"})),
		// The old directory's .env first: were it still watched, its
		// change would come before the new one's.
		llmtest.Reply(llmtest.ToolUse("Bash", map[string]any{"command": "echo A=1 > ../.env; echo B=1 > .env"})),
		llmtest.Reply(llmtest.ToolUse("Bash", map[string]any{"command": waitFor(filepath.Join(dir, "sub", ".env"))})),
		llmtest.Reply(llmtest.Text("done")),
	)
	out, errOut := e.run("-p", "make env files", "--output-format", "json", "--dangerously-skip-permissions")
	if e.status != 0 || resultOf(t, out)["is_error"] != false {
		t.Fatalf("exit %d: %s\n%s", e.status, out, errOut)
	}
	var got []string
	for _, p := range hooktest.ReadLog(t, log) {
		got = append(got, p.String("event")+" "+p.String("file_path"))
	}
	if want := []string{"add " + filepath.Join(dir, ".env"), "add " + filepath.Join(dir, "sub", ".env")}; !slices.Equal(got, want) {
		t.Errorf("FileChanged %q, want %q", got, want)
	}
}

// TestConfigChangeReachesARunningSubagent: the settings read again while a
// subagent runs hold for its next call.
func TestConfigChangeReachesARunningSubagent(t *testing.T) {
	e := newEnv(t)
	hooks := hooktest.LoggingHooks(filepath.Join(t.TempDir(), "log"), hook.ConfigChange)
	e.settings("settings.json", e.settingsJSON(hooks, nil))
	e.write(".claude/agents/worker.md", "---\nname: worker\ndescription: Works\ntools: Bash\n---\nYou work.\n")
	path := filepath.Join(e.realDir(), ".claude", "settings.json")
	started, goOn := filepath.Join(t.TempDir(), "started"), filepath.Join(t.TempDir(), "go")
	wait := fmt.Sprintf(`touch %q; for i in $(seq 600); do [ -e %q ] && exit 0; sleep 0.1; done; exit 1`, started, goOn)
	e.srv.Append(
		llmtest.Turn{When: llmtest.FirstUserContains("delegate"), Content: []llm.Block{llmtest.ToolUse("Agent",
			map[string]any{"subagent_type": "worker", "description": "work", "prompt": "CHILD-JOB"})}},
		llmtest.Turn{When: llmtest.FirstUserContains("CHILD-JOB"), Content: []llm.Block{llmtest.ToolUse("Bash", map[string]any{"command": wait})}},
		llmtest.Turn{When: llmtest.FirstUserContains("CHILD-JOB"), Content: []llm.Block{llmtest.ToolUse("Bash", map[string]any{"command": "echo sub"})}},
		llmtest.Turn{When: llmtest.FirstUserContains("CHILD-JOB"), Content: []llm.Block{llmtest.Text("child done")}},
		llmtest.Turn{When: llmtest.FirstUserContains("delegate"), Content: []llm.Block{llmtest.Text("delegated")}},
	)
	l := e.start("--dangerously-skip-permissions")
	l.send("delegate")
	waitFor(t, "the subagent's first command", func() bool { _, err := os.Stat(started); return err == nil })
	replace(t, path, e.settingsJSON(hooks, map[string]any{"permissions": map[string]any{"deny": []string{"Bash(echo sub)"}}}))
	waitFor(t, "the settings read again", func() bool { return strings.Contains(l.stderr.String(), "settings: read "+path+" again") })
	if err := os.WriteFile(goOn, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if res := l.result("delegate"); res["is_error"] != false {
		t.Fatalf("result %v\n%s", res, l.stderr.String())
	}
	l.end()
	for _, r := range e.srv.Requests() {
		if r.TurnIndex != 3 { // the request answered by "child done"
			continue
		}
		results := r.ToolResults()
		if len(results) != 1 || !results[0].IsError || !strings.Contains(llm.TextOf(results[0].Content), "Bash(echo sub)") {
			t.Fatalf("the subagent's echo sub was not denied by the new rule: %+v", results)
		}
		return
	}
	t.Fatal("the subagent never got to its last turn")
}
