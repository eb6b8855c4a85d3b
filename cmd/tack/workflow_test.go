package main

// End-to-end tests of the workflow record of seed 001 (workflow.json,
// validated against the seed's JSON Schema) and of what a resume restores:
// the real binary against the fake API.

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/tackcode/tack/internal/llm"
	"github.com/tackcode/tack/internal/llm/llmtest"
	"github.com/tackcode/tack/internal/session"
)

// validWorkflow reads the workflow record of session id and checks it
// against the seed's schema with a JSON Schema validator; it returns the
// record.
func validWorkflow(t *testing.T, e *env, id string) []byte {
	t.Helper()
	path := filepath.Join(e.projectDir(), id, "workflow.json")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("workflow record: %v", err)
	}
	raw, err := session.Schemas.ReadFile("schema/workflow.schema.json")
	if err != nil {
		t.Fatal(err)
	}
	var sch jsonschema.Schema
	if err := json.Unmarshal(raw, &sch); err != nil {
		t.Fatal(err)
	}
	res, err := sch.Resolve(nil)
	if err != nil {
		t.Fatal(err)
	}
	var doc any
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	if err := res.Validate(doc); err != nil {
		t.Fatalf("%s does not match the seed's schema: %v\n%s", path, err, data)
	}
	return data
}

// workflowOf is the record of session id, validated, as a map.
func workflowOf(t *testing.T, e *env, id string) map[string]any {
	t.Helper()
	var wf map[string]any
	if err := json.Unmarshal(validWorkflow(t, e, id), &wf); err != nil {
		t.Fatal(err)
	}
	return wf
}

func TestWorkflowRecordOfTheSeed(t *testing.T) {
	e := newEnv(t,
		llmtest.Reply(llmtest.ToolUse("Bash", map[string]any{"command": "echo hi"})),
		llmtest.Reply(llmtest.Text("done")),
		// Resumed by name: a Write, which print mode denies.
		llmtest.Reply(llmtest.ToolUse("Write", map[string]any{"file_path": "out.txt", "content": "x"})),
		llmtest.Reply(llmtest.Text("denied")),
		// Resumed with a record edited by hand.
		llmtest.Reply(llmtest.Text("still here")))
	_, id := e.sessionRun("-p", "start", "-n", "auth-refactor", "--allowedTools", "Bash(echo *)")
	want := map[string]any{"name": "auth-refactor", "cwd": e.realDir(), "permission_mode": "default",
		"settings": ".claude/settings.json", "mcp_config": ".mcp.json", "resume": []any{"--resume", "auth-refactor"},
		"last_tool": map[string]any{"name": "Bash", "decision": "allow"}}
	if got := workflowOf(t, e, id); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("after -n and a tool call:\n got %v\nwant %v", got, want)
	}
	// The launch options are beside it, not in it.
	launch, err := session.LoadLaunch(e.projectDir(), id)
	if err != nil || !slices.Equal(launch.AllowedTools, []string{"Bash(echo *)"}) || launch.Model == "" {
		t.Errorf("launch record %+v %v", launch, err)
	}

	res, id2 := e.sessionRun("-p", "write", "-r", "auth-refactor")
	if id2 != id {
		t.Fatalf("--resume NAME started %s", id2)
	}
	if d, _ := res["permission_denials"].([]any); len(d) != 1 {
		t.Errorf("denials %v", res["permission_denials"])
	}
	want["last_tool"] = map[string]any{"name": "Write", "decision": "deny"}
	if got := workflowOf(t, e, id); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("after a resume and a denied call:\n got %v\nwant %v", got, want)
	}

	// tack sessions show prints the record, by name or id.
	for _, arg := range []string{"auth-refactor", id} {
		out, errOut := e.run("sessions", "show", arg)
		var shown map[string]any
		if e.status != 0 || json.Unmarshal([]byte(out), &shown) != nil || fmt.Sprint(shown) != fmt.Sprint(want) {
			t.Errorf("sessions show %s: exit %d\n%s%s", arg, e.status, out, errOut)
		}
		if !strings.HasPrefix(out, "{\n  \"name\": ") {
			t.Errorf("not pretty-printed:\n%s", out)
		}
	}
	if _, errOut := e.run("sessions", "show", "nope"); e.status == 0 || !strings.Contains(errOut, `no session "nope"`) {
		t.Errorf("unknown session: exit %d %s", e.status, errOut)
	}

	// A record edited by hand that fails the schema is an error naming the
	// file and the property.
	path := filepath.Join(e.projectDir(), id, "workflow.json")
	edited := strings.Replace(string(validWorkflow(t, e, id)), `"cwd":`, `"model": "opus", "cwd":`, 1)
	os.WriteFile(path, []byte(edited), 0o600)
	out, errOut := e.run("sessions", "show", "auth-refactor")
	if e.status == 0 || out != "" || !strings.Contains(errOut, path) || !strings.Contains(errOut, "model") {
		t.Errorf("sessions show of a bad record: exit %d\n%s%s", e.status, out, errOut)
	}
	// Resuming still works, from the transcript, with a notice; the record
	// is written anew.
	out, errOut = e.run("-p", "again", "-r", id, "--output-format", "json")
	if e.status != 0 || !strings.Contains(errOut, "resuming without the workflow record") || !strings.Contains(errOut, path) {
		t.Errorf("resume with a bad record: exit %d\n%s%s", e.status, out, errOut)
	}
	if got := strings.Join(userTexts(e.srv.Requests()[4]), "|"); got != "start|write|again" {
		t.Errorf("the resumed conversation sent %q", got)
	}
	if got := workflowOf(t, e, id); got["name"] != "auth-refactor" || got["model"] != nil {
		t.Errorf("record after the resume %v", got)
	}
}

func TestResumeDoesNotRestoreBypassOrPlan(t *testing.T) {
	e := newEnv(t,
		llmtest.Reply(llmtest.ToolUse("Bash", map[string]any{"command": "echo ok"})),
		llmtest.Reply(llmtest.Text("looked")),
		// -c: the model deletes a file; nobody approved it.
		llmtest.Reply(llmtest.ToolUse("Bash", map[string]any{"command": "rm victim.txt"})),
		llmtest.Reply(llmtest.Text("tried")),
		// -c with the flag again: it runs.
		llmtest.Reply(llmtest.ToolUse("Bash", map[string]any{"command": "rm victim.txt"})),
		llmtest.Reply(llmtest.Text("removed")),
		// A plan session, then continued.
		llmtest.Reply(llmtest.Text("planned")),
		llmtest.Reply(llmtest.Text("continued")))
	e.write("victim.txt", "keep me\n")
	_, id := e.sessionRun("-p", "look", "--dangerously-skip-permissions")
	wf := workflowOf(t, e, id)
	if wf["permission_mode"] != "bypassPermissions" || wf["name"] != id || fmt.Sprint(wf["resume"]) != "[--resume "+id+"]" {
		t.Errorf("unnamed bypass session: %v", wf)
	}

	out, errOut := e.run("-p", "clean up", "-c", "--output-format", "json")
	if e.status != 0 {
		t.Fatalf("exit %d: %s %s", e.status, out, errOut)
	}
	if _, err := os.Stat(filepath.Join(e.dir, "victim.txt")); err != nil {
		t.Fatalf("a resumed bypass session ran rm without approval: %v", err)
	}
	res := resultOf(t, out)
	denials, _ := res["permission_denials"].([]any)
	if len(denials) != 1 || !strings.Contains(fmt.Sprint(denials[0]), "rm victim.txt") {
		t.Errorf("permission_denials %v", res["permission_denials"])
	}
	if !strings.Contains(errOut, "bypassPermissions mode, which a resume does not restore") {
		t.Errorf("no notice of the mode left behind:\n%s", errOut)
	}
	if wf := workflowOf(t, e, id); wf["permission_mode"] != "default" || fmt.Sprint(wf["last_tool"]) != "map[decision:deny name:Bash]" {
		t.Errorf("record after the resume: %v", wf)
	}

	e.sessionRun("-p", "now really", "-c", "--dangerously-skip-permissions")
	if _, err := os.Stat(filepath.Join(e.dir, "victim.txt")); !os.IsNotExist(err) {
		t.Errorf("the flag given again did not bypass: %v", err)
	}

	_, plan := e.sessionRun("-p", "plan it", "--permission-mode", "plan")
	if wf := workflowOf(t, e, plan); wf["permission_mode"] != "plan" {
		t.Errorf("plan session: %v", wf)
	}
	out, errOut = e.run("-p", "go", "-c", "--output-format", "json")
	if e.status != 0 || !strings.Contains(errOut, "plan mode, which a resume does not restore") {
		t.Errorf("continued plan session: exit %d\n%s%s", e.status, out, errOut)
	}
	if wf := workflowOf(t, e, plan); wf["permission_mode"] != "default" {
		t.Errorf("continued plan session: %v", wf)
	}
}

func TestResumeWithAMissingAgent(t *testing.T) {
	e := newEnv(t,
		llmtest.Reply(llmtest.Text("reviewed")),
		llmtest.Reply(llmtest.Text("resumed")))
	e.write(".claude/agents/reviewer.md", "---\nname: reviewer\ndescription: Reviews code\ntools: Read\n---\nYou review code, nothing else.\n")
	_, id := e.sessionRun("-p", "review", "--agent", "reviewer")
	if l, err := session.LoadLaunch(e.projectDir(), id); err != nil || l.Agent != "reviewer" {
		t.Fatalf("launch %+v %v", l, err)
	}
	first := e.srv.Requests()[0]
	if slices.Contains(first.ToolNames(), "Bash") || !strings.Contains(first.SystemText(), "You review code") {
		t.Fatalf("the agent did not apply: %v", first.ToolNames())
	}
	os.Remove(filepath.Join(e.dir, ".claude", "agents", "reviewer.md"))
	out, errOut := e.run("-p", "more", "-c", "--output-format", "json")
	if e.status != 0 {
		t.Fatalf("a resume without its agent exited %d: %s %s", e.status, out, errOut)
	}
	if !strings.Contains(errOut, `agent "reviewer", which is no longer defined`) {
		t.Errorf("no warning:\n%s", errOut)
	}
	second := e.srv.Requests()[1]
	if !slices.Contains(second.ToolNames(), "Bash") || strings.Contains(second.SystemText(), "You review code") {
		t.Errorf("not the default tools and prompt: %v", second.ToolNames())
	}
	if got := strings.Join(userTexts(second), "|"); got != "review|more" {
		t.Errorf("history %q", got)
	}
	validWorkflow(t, e, id)
}

func TestResumeRestoresAddDirAndMCPConfigWithANotice(t *testing.T) {
	extra := t.TempDir()
	e := newEnv(t,
		llmtest.Reply(llmtest.Text("one")),
		llmtest.Reply(llmtest.Text("two")),
		llmtest.Reply(llmtest.Text("three")))
	e.write("tools.json", `{"mcpServers":{}}`)
	_, id := e.sessionRun("-p", "one", "--add-dir", extra, "--mcp-config", "tools.json")
	if wf := workflowOf(t, e, id); wf["mcp_config"] != "tools.json" {
		t.Errorf("record %v", wf)
	}
	out, errOut := e.run("-p", "two", "-c", "--output-format", "json")
	if e.status != 0 || !strings.Contains(errOut, "restored --add-dir "+extra+", --mcp-config tools.json from the session") {
		t.Errorf("exit %d, notice:\n%s%s", e.status, out, errOut)
	}
	// Given again, nothing is restored and nothing said.
	_, errOut = e.run("-p", "three", "-c", "--add-dir", extra, "--mcp-config", "tools.json")
	if e.status != 0 || strings.Contains(errOut, "restored") {
		t.Errorf("exit %d:\n%s", e.status, errOut)
	}
}

func TestForkOfANamedSession(t *testing.T) {
	e := newEnv(t,
		llmtest.Reply(llmtest.Text("one")),
		llmtest.Reply(llmtest.Text("forked")),
		llmtest.Reply(llmtest.Text("original")))
	_, id := e.sessionRun("-p", "one", "-n", "feature")
	_, fork := e.sessionRun("-p", "two", "-r", "feature", "--fork-session")
	if fork == id {
		t.Fatal("the fork kept the id")
	}
	if wf := workflowOf(t, e, fork); wf["name"] != "feature (fork)" || fmt.Sprint(wf["resume"]) != "[--resume feature (fork)]" {
		t.Errorf("fork record %v", wf)
	}
	if wf := workflowOf(t, e, id); wf["name"] != "feature" {
		t.Errorf("original record %v", wf)
	}
	// The fork is the newest session; --resume NAME still finds the original.
	_, again := e.sessionRun("-p", "three", "-r", "feature")
	if again != id {
		t.Errorf("--resume feature resumed %s, not the original %s (fork %s)", again, id, fork)
	}
	if got := strings.Join(userTexts(e.srv.Requests()[2]), "|"); got != "one|three" {
		t.Errorf("resumed %q", got)
	}
	out, _ := e.run("sessions")
	if !strings.Contains(out, "feature (fork)") {
		t.Errorf("tack sessions:\n%s", out)
	}
}

// A session an older tack recorded (everything in workflow.json) still
// resumes with its launch options, and is then recorded in the new form.
func TestResumeMigratesAnOldRecord(t *testing.T) {
	extra := t.TempDir()
	e := newEnv(t, llmtest.Reply(llmtest.Text("one")), llmtest.Reply(llmtest.Text("two")))
	_, id := e.sessionRun("-p", "one", "-n", "old-one")
	dir := filepath.Join(e.projectDir(), id)
	os.Remove(filepath.Join(dir, "launch.json"))
	old := `{"schema_version":1,"session_id":"` + id + `","name":"old-one","cwd":"` + e.realDir() + `",
"created_at":"2026-01-01T00:00:00Z","updated_at":"2026-01-01T00:00:00Z","model":"claude-haiku-4-5",
"permission_mode":"acceptEdits","mcp_config":[],"strict_mcp_config":false,"add_dirs":["` + extra + `"],
"plugin_dirs":[],"allowed_tools":[],"disallowed_tools":[],"cost_usd":0.5,"resume":["--resume","old-one"]}`
	os.WriteFile(filepath.Join(dir, "workflow.json"), []byte(old), 0o600)
	out, errOut := e.run("-p", "two", "-r", "old-one", "--output-format", "json")
	if e.status != 0 || !strings.Contains(errOut, "restored --add-dir "+extra+" from the session") {
		t.Fatalf("exit %d\n%s%s", e.status, out, errOut)
	}
	if m := e.srv.Requests()[1].Model; m != "claude-haiku-4-5" {
		t.Errorf("model not restored from the old record: %s", m)
	}
	if wf := workflowOf(t, e, id); wf["name"] != "old-one" || wf["permission_mode"] != "acceptEdits" {
		t.Errorf("migrated record %v", wf)
	}
	if l, err := session.LoadLaunch(e.projectDir(), id); err != nil || !slices.Equal(l.AddDirs, []string{extra}) || l.CostUSD < 0.5 {
		t.Errorf("migrated launch %+v %v", l, err)
	}
}

// A tool call's decision reaches the workflow record while the session
// runs, not only when it ends: the record is there, with the call, while
// the model is still answering the call's result.
func TestWorkflowRecordHasTheLastToolDuringTheRun(t *testing.T) {
	// The fake API's handler gets the project folder, and gives back what
	// it saw, through channels: it runs on the server's goroutines.
	dirs, seen := make(chan string, 1), make(chan string, 1)
	e := newEnv(t,
		llmtest.Reply(llmtest.ToolUse("Bash", map[string]any{"command": "echo hi"})),
		llmtest.Turn{Build: func(*llmtest.Request) []llm.Block {
			dir := <-dirs
			got := ""
			for deadline := time.Now().Add(10 * time.Second); got == "" && time.Now().Before(deadline); {
				var wf map[string]any
				paths, _ := filepath.Glob(filepath.Join(dir, "*", "workflow.json"))
				if len(paths) == 1 {
					if b, err := os.ReadFile(paths[0]); err == nil && json.Unmarshal(b, &wf) == nil && wf["last_tool"] != nil {
						got = fmt.Sprint(wf["last_tool"])
						break
					}
				}
				time.Sleep(5 * time.Millisecond)
			}
			seen <- got
			return []llm.Block{llm.Text("done")}
		}})
	dirs <- e.projectDir()
	_, id := e.sessionRun("-p", "go", "--allowedTools", "Bash(echo *)")
	if got := <-seen; got != "map[decision:allow name:Bash]" {
		t.Errorf("while the model answered, the workflow record's last tool was %q", got)
	}
	if wf := workflowOf(t, e, id); fmt.Sprint(wf["last_tool"]) != "map[decision:allow name:Bash]" {
		t.Errorf("at the end: %v", wf["last_tool"])
	}
}
