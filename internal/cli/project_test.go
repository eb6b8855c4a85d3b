package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tackcode/tack/internal/llm/llmtest"
)

// purgeFixture is a project that ran a real session, with a prompt
// history, auto memory, an entry in ~/.claude.json and prompts in the
// shared history; and another project, with the same, that must survive.
type purgeFixture struct {
	cmdEnv
	other                             string
	projectDir, otherDir              string
	claudeJSON, sharedHistory, memory string
}

func newPurgeFixture(t *testing.T) purgeFixture {
	t.Helper()
	f := purgeFixture{cmdEnv: newCmdEnv(t), other: t.TempDir()}
	srv := llmtest.New(t, llmtest.Reply(llmtest.Text("done")))
	t.Setenv("ANTHROPIC_API_KEY", "k")
	t.Setenv("ANTHROPIC_BASE_URL", srv.URL())
	if out, errOut, code := f.tack(t, "", "-p", "-n", "keepsake", "hi"); code != 0 {
		t.Fatalf("session: exit %d, out %q, err %q", code, out, errOut)
	}
	sessions, _, _ := f.tack(t, "", "sessions")
	if !strings.Contains(sessions, "keepsake") {
		t.Fatalf("the session is not listed: %q", sessions)
	}
	projects := filepath.Join(f.configDir, "projects")
	ents, err := os.ReadDir(projects)
	if err != nil || len(ents) != 1 {
		t.Fatalf("project folders: %v %v", ents, err)
	}
	f.projectDir = filepath.Join(projects, ents[0].Name())
	f.memory = filepath.Join(f.projectDir, "memory", "MEMORY.md")
	f.otherDir = filepath.Join(projects, "-other")
	write(t, f.memory, "- remember this\n")
	write(t, filepath.Join(f.projectDir, "prompt-history.jsonl"), `{"display":"hi"}`+"\n")
	write(t, filepath.Join(f.otherDir, "11111111-1111-4111-8111-111111111111.jsonl"), "{}\n")
	f.claudeJSON = filepath.Join(f.configDir, ".claude.json")
	claude, _ := json.Marshal(map[string]any{"projects": map[string]any{
		f.project: map[string]any{"hasTrustDialogAccepted": true}, f.other: map[string]any{"hasTrustDialogAccepted": true}}})
	write(t, f.claudeJSON, string(claude))
	f.sharedHistory = filepath.Join(f.configDir, "history.jsonl")
	write(t, f.sharedHistory, `{"display":"mine","project":"`+f.project+`"}`+"\n"+`{"display":"theirs","project":"`+f.other+`"}`+"\n")
	return f
}

func write(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func read(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// intact checks that the project's data is all there.
func (f purgeFixture) intact(t *testing.T, when string) {
	t.Helper()
	if _, err := os.Stat(f.memory); err != nil {
		t.Errorf("%s: the project's folder was touched: %v", when, err)
	}
	if !strings.Contains(read(t, f.claudeJSON), f.project) || !strings.Contains(read(t, f.sharedHistory), `"mine"`) {
		t.Errorf("%s: ~/.claude.json or the history was touched", when)
	}
}

// --dry-run lists each thing kept about the project and deletes nothing.
func TestProjectPurgeDryRunLists(t *testing.T) {
	f := newPurgeFixture(t)
	out, errOut, code := f.tack(t, "", "project", "purge", "--dry-run")
	want := "What tack keeps about " + f.project + ":\n" +
		"  dir     " + f.projectDir + "\n" +
		"          1 transcripts, 1 session folders (workflow records, tool results), auto memory (memory/), prompt history\n" +
		"  config  " + f.claudeJSON + " projects: " + f.project + "\n" +
		"          the project's entry (trust, allowed tools, MCP servers and their approvals)\n" +
		"  filter  " + f.sharedHistory + "\n" +
		"          1 prompts typed in this project\n" +
		"Dry run: 3 items would be deleted; nothing was.\n"
	if code != 0 || out != want {
		t.Errorf("exit %d, err %q, out\n%s\nwant\n%s", code, errOut, out, want)
	}
	f.intact(t, "dry run")
}

// Without --yes, purge asks on standard input: no answer (input that is
// not a terminal) or anything but y deletes nothing and exits 1.
func TestProjectPurgeAsksFirst(t *testing.T) {
	f := newPurgeFixture(t)
	for _, answer := range []string{"", "n\n", "yes please\n"} {
		out, _, code := f.tack(t, answer, "project", "purge")
		if code != 1 || !strings.Contains(out, "Delete these 3 items for good? [y/N] ") || !strings.HasSuffix(out, "Nothing was deleted.\n") {
			t.Errorf("answer %q: exit %d, out %q", answer, code, out)
		}
		f.intact(t, "answer "+answer)
	}
	out, _, code := f.tack(t, "y\n", "project", "purge")
	if code != 0 || !strings.HasSuffix(out, "Deleted 3 items about "+f.project+".\n") {
		t.Errorf("answer y: exit %d, out %q", code, out)
	}
	if _, err := os.Stat(f.projectDir); !os.IsNotExist(err) {
		t.Errorf("the project's folder is still there: %v", err)
	}
}

// -y deletes the project's folder, its ~/.claude.json entry and its
// prompts, and nothing of another project; PATH names the project, and
// `tack purge` is the same command.
func TestProjectPurgeDeletesOnlyThatProject(t *testing.T) {
	f := newPurgeFixture(t)
	t.Chdir(f.other)
	out, errOut, code := f.tack(t, "", "purge", "-y", f.project)
	if code != 0 || !strings.HasSuffix(out, "Deleted 3 items about "+f.project+".\n") {
		t.Fatalf("exit %d, out %q, err %q", code, out, errOut)
	}
	if _, err := os.Stat(f.projectDir); !os.IsNotExist(err) {
		t.Errorf("the project's folder is still there: %v", err)
	}
	var claude struct {
		Projects map[string]json.RawMessage `json:"projects"`
	}
	if err := json.Unmarshal([]byte(read(t, f.claudeJSON)), &claude); err != nil {
		t.Fatal(err)
	}
	if _, ok := claude.Projects[f.project]; ok || claude.Projects[f.other] == nil {
		t.Errorf("~/.claude.json projects: %v", claude.Projects)
	}
	if got := read(t, f.sharedHistory); got != `{"display":"theirs","project":"`+f.other+`"}`+"\n" {
		t.Errorf("history.jsonl: %q", got)
	}
	if _, err := os.Stat(filepath.Join(f.otherDir, "11111111-1111-4111-8111-111111111111.jsonl")); err != nil {
		t.Errorf("the other project's transcript: %v", err)
	}
	t.Chdir(f.project)
	if out, _, _ := f.tack(t, "", "sessions"); out != "No sessions in this directory.\n" {
		t.Errorf("sessions after purge: %q", out)
	}
	if out, _, code := f.tack(t, "", "project", "purge"); code != 0 || out != "tack keeps nothing about "+f.project+".\n" {
		t.Errorf("a second purge: exit %d, out %q", code, out)
	}
}
