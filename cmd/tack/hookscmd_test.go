package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tackcode/tack/internal/llm"
	"github.com/tackcode/tack/internal/llm/llmtest"
)

// hooksFixture gives e hooks from every place a session reads them: the
// project settings (the handler object on line 4), a plugin, a skill and an
// agent whose Stop hook is its SubagentStop. It returns the plugin folder.
func hooksFixture(t *testing.T, e *env, projectKeys string) string {
	t.Helper()
	e.settings("settings.json", "{"+projectKeys+`
  "hooks": {"PreToolUse": [
    {"matcher": "Bash", "hooks": [
      {"type": "command", "command": "echo settings-hook"}
    ]}
  ]}
}`)
	e.write(".claude/skills/deploy/SKILL.md", "---\ndescription: Deploys\nhooks:\n  PostToolUse:\n    - matcher: Write\n      hooks:\n        - type: command\n          command: echo skill-hook\n---\nDEPLOY.\n")
	e.write(".claude/agents/guarded.md", "---\nname: guarded\ndescription: Guarded\nhooks:\n  Stop:\n    - hooks:\n        - type: http\n          url: http://127.0.0.1:9/agent-hook\n---\nYou are guarded.\n")
	plugin := filepath.Join(t.TempDir(), "lint-plugin")
	writeAll(t, map[string]string{
		filepath.Join(plugin, ".claude-plugin", "plugin.json"): `{"name": "lint-plugin", "description": "hooks", "version": "1.0.0"}`,
		filepath.Join(plugin, "hooks", "hooks.json"):           `{"hooks": {"SessionStart": [{"hooks": [{"type": "command", "command": "echo plugin-hook"}]}]}}`,
	})
	return plugin
}

// TestHooksCommandListsEveryHookWithItsFile runs `tack hooks` on a folder
// whose hooks come from the settings, a plugin, a skill and an agent: each
// is listed under its event, in the order of a session's life, with the
// file and line that define it, and nothing is run or asked of the model.
func TestHooksCommandListsEveryHookWithItsFile(t *testing.T) {
	e := newEnv(t)
	plugin := hooksFixture(t, e, "")
	out, errOut := e.run("hooks", "--plugin-dir", plugin)
	if e.status != 0 {
		t.Fatalf("exit %d: %s", e.status, errOut)
	}
	if n := len(e.srv.Requests()); n != 0 {
		t.Errorf("tack hooks sent %d model requests", n)
	}
	settingsFile := filepath.Join(e.dir, ".claude", "settings.json")
	for _, want := range []string{
		"SessionStart\n  [*] command: echo plugin-hook\n      plugin:lint-plugin  " + filepath.Join(plugin, "hooks", "hooks.json") + ":1",
		"PreToolUse\n  [Bash] command: echo settings-hook\n      project  " + settingsFile + ":4",
		"PostToolUse\n  [Write] command: echo skill-hook\n      skill:deploy  " + filepath.Join(e.dir, ".claude", "skills", "deploy", "SKILL.md"),
		"(while skill deploy is active)",
		"SubagentStop\n  [*] http: http://127.0.0.1:9/agent-hook\n      agent:guarded  " + filepath.Join(e.dir, ".claude", "agents", "guarded.md"),
		"(in agent guarded)",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	order := []string{"SessionStart\n", "PreToolUse\n", "PostToolUse\n", "SubagentStop\n"}
	last := -1
	for _, ev := range order {
		i := strings.Index(out, ev)
		if i < last {
			t.Errorf("%q is listed out of the order of a session's life:\n%s", ev, out)
		}
		last = i
	}

	// The same as JSON, each with whether it runs.
	out, errOut = e.run("hooks", "--plugin-dir", plugin, "--json")
	if e.status != 0 {
		t.Fatalf("--json: exit %d: %s", e.status, errOut)
	}
	var list []struct {
		Event, Matcher, Type, Run, Source, Origin, Note string
		Runs                                            bool
	}
	if err := json.Unmarshal([]byte(out), &list); err != nil {
		t.Fatalf("--json output: %v\n%s", err, out)
	}
	if len(list) != 4 {
		t.Fatalf("%d hooks listed, want 4: %s", len(list), out)
	}
	for _, h := range list {
		if !h.Runs || h.Origin == "" {
			t.Errorf("hook %+v: want it to run and to name its file", h)
		}
	}
}

// TestHooksCommandShowsWhatTheGuardsStop lists the same hooks under
// disableAllHooks in the project settings: every one is listed, marked as
// not run, with the setting and the file that set it.
func TestHooksCommandShowsWhatTheGuardsStop(t *testing.T) {
	e := newEnv(t)
	plugin := hooksFixture(t, e, `"disableAllHooks": true,`)
	out, errOut := e.run("hooks", "--plugin-dir", plugin)
	if e.status != 0 {
		t.Fatalf("exit %d: %s", e.status, errOut)
	}
	if n := strings.Count(out, "(not run: disableAllHooks (project "+filepath.Join(e.dir, ".claude", "settings.json")); n != 4 {
		t.Errorf("%d hooks marked as not run, want all 4:\n%s", n, out)
	}
}

// TestHooksCommandNamesAMalformedFile: a settings file that cannot be read
// is an error naming its file, line and column, and nothing is listed.
func TestHooksCommandNamesAMalformedFile(t *testing.T) {
	e := newEnv(t)
	e.settings("settings.json", "{\n  \"hooks\": {\"PreToolUse\": [\n    {\"matcher\": \"Bash\", \"hooks\": [{\"type\": \"command\" \"command\": \"x\"}]}\n  ]}\n}")
	out, errOut := e.run("hooks")
	if e.status == 0 {
		t.Fatalf("exit 0 on a malformed settings file: %s", out)
	}
	if want := filepath.Join(e.dir, ".claude", "settings.json") + ":3:"; !strings.Contains(errOut, want) {
		t.Errorf("stderr does not name %s…:\n%s", want, errOut)
	}
}

// TestHooksOfEventsTackDoesNotFire: a settings file written for Claude Code
// may configure an event tack does not fire (MessageDisplay). The file
// loads, its other hooks run, the session says which hooks never run and
// where they are, and `tack hooks` lists them as never run.
func TestHooksOfEventsTackDoesNotFire(t *testing.T) {
	e := newEnv(t, llmtest.Turn{Content: []llm.Block{llmtest.Text("done")}})
	canary := filepath.Join(t.TempDir(), "ran")
	e.settings("settings.json", `{"hooks": {
  "MessageDisplay": [{"hooks": [{"type": "command", "command": "echo display"}]}],
  "UserPromptSubmit": [{"hooks": [{"type": "command", "command": "touch `+canary+`"}]}]
}}`)
	_, errOut := e.run("-p", "hi")
	if e.status != 0 {
		t.Fatalf("exit %d: %s", e.status, errOut)
	}
	if _, err := os.Stat(canary); err != nil {
		t.Errorf("the file's UserPromptSubmit hook did not run: %v", err)
	}
	settingsFile := filepath.Join(e.dir, ".claude", "settings.json")
	if want := "tack does not fire MessageDisplay, so the hooks configured for it never run (" + settingsFile + ":2)"; !strings.Contains(errOut, want) {
		t.Errorf("stderr lacks %q:\n%s", want, errOut)
	}
	out, errOut := e.run("hooks")
	if e.status != 0 {
		t.Fatalf("tack hooks: exit %d: %s", e.status, errOut)
	}
	if want := "MessageDisplay\n  [*] command: echo display\n      project  " + settingsFile + ":2  (never run: tack does not fire MessageDisplay)"; !strings.Contains(out, want) {
		t.Errorf("tack hooks lacks %q:\n%s", want, out)
	}
}
