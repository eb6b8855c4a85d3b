package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/tackcode/tack/internal/llm/llmtest"
	"github.com/tackcode/tack/internal/session"
)

// What a `-p` run syncs and when, as the kernel sees it (strace): three
// syncs — the transcript once at the end of the prompt, and the first
// launch record (its data and its folder), which holds what a resume
// restores. That first launch record, the request prefix (prefix.json,
// 25 KB) and the workflow record are written beside the prompt's first
// request, which the run does not wait for, and before the records
// written after the run (where they land against the answer depends on
// how fast the model answers). After the run comes the launch record
// again (the run's cost), unsynced, and nothing else: the run changed
// nothing in the workflow record. The answer is printed once the
// transcript holds it; where it lands against the records written after
// the run is up to the scheduler, the printer being another goroutine.
func TestPrintRunSyncsOnlyWhatMustLast(t *testing.T) {
	e := newEnv(t, llmtest.Reply(llmtest.Text("hi")))
	data, lines := straceRun(t, e, "say hi", "hi")
	answer, lastEntry, prefix, syncs := -1, -1, -1, 0
	syncCall := regexp.MustCompile(`^\d+\s+(fsync|fdatasync|sync_file_range|syncfs)\(`)
	for i, l := range lines {
		switch {
		case syncCall.MatchString(l):
			syncs++
		case strings.Contains(l, `write(1, "hi\n"`):
			answer = i
		case strings.Contains(l, `write(`) && strings.Contains(l, `"{\"parentUuid\"`):
			lastEntry = i // a transcript entry: the prompt, then the answer
		case isRecordRename(l, "prefix.json"):
			prefix = i
		}
	}
	launches, workflows := recordRenames(lines, "launch.json"), recordRenames(lines, "workflow.json")
	if answer < 0 || prefix < 0 || len(launches) == 0 || len(workflows) == 0 {
		t.Fatalf("answer at %d, request prefix at %d, launch records at %v, workflow records at %v in the trace:\n%s", answer, prefix, launches, workflows, data)
	}
	if len(launches) != 2 {
		t.Fatalf("the launch record was written %d times, want 2 (beside the request, after the answer):\n%s", len(launches), data)
	}
	last := launches[1]
	if lastEntry < 0 || answer < lastEntry {
		t.Errorf("the answer was printed before the transcript held it:\n%s", data)
	}
	if prefix > last || workflows[0] > last {
		t.Errorf("the request prefix or the workflow record was written after the run, not beside its request:\n%s", data)
	}
	if len(workflows) != 1 {
		t.Errorf("the workflow record was written %d times, want once (the run changed nothing in it):\n%s", len(workflows), data)
	}
	if syncs != 3 {
		t.Errorf("%d syncs, want 3 (transcript, launch record and its folder):\n%s", syncs, data)
	}
}

// A run of tool calls with the same decision writes the workflow record
// at most twice: as the prompt starts, and with the first call's decision
// (once only when that decision comes before the first write was made);
// the calls after it and the end of the run change nothing in it.
func TestWorkflowRecordIsWrittenOnlyWhenItChanges(t *testing.T) {
	var turns []llmtest.Turn
	for i := range 3 {
		turns = append(turns, llmtest.Reply(llmtest.ToolUse("Read", map[string]any{"file_path": "notes.txt", "limit": 10 + i})))
	}
	e := newEnv(t, append(turns, llmtest.Reply(llmtest.Text("read")))...)
	if err := os.WriteFile(filepath.Join(e.dir, "notes.txt"), []byte("one\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	data, lines := straceRun(t, e, "read notes.txt", "read")
	if got := recordRenames(lines, "workflow.json"); len(got) == 0 || len(got) > 2 {
		t.Errorf("the workflow record was written %d times, want 1 or 2 (at the start, with the first Read's decision):\n%s", len(got), data)
	}
	paths, _ := filepath.Glob(filepath.Join(e.projectDir(), "*", "workflow.json"))
	if len(paths) != 1 {
		t.Fatalf("workflow records %v, want one", paths)
	}
	w, err := session.LoadWorkflow(e.projectDir(), filepath.Base(filepath.Dir(paths[0])))
	if err != nil {
		t.Fatal(err)
	}
	if w.LastTool == nil || *w.LastTool != (session.LastTool{Name: "Read", Decision: "allow"}) {
		t.Errorf("last tool %+v, want Read allowed", w.LastTool)
	}
}

// straceRun runs tack -p prompt in e under strace, checks that it answers
// want, and returns the trace of its syncs, writes and renames.
func straceRun(t *testing.T, e *env, prompt, want string) (string, []string) {
	t.Helper()
	strace, err := exec.LookPath("strace")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("strace is not installed (scripts/test installs it)")
		}
		t.Skip("strace is not installed")
	}
	trace := filepath.Join(t.TempDir(), "trace")
	cmd := exec.Command(strace, "-f", "-qq", "-e", "trace=fsync,fdatasync,sync_file_range,syncfs,write,rename,renameat,renameat2,linkat", "-o", trace, tackBin, "-p", prompt)
	cmd.Dir = e.dir
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + e.home, "CLAUDE_CONFIG_DIR=" + filepath.Join(e.home, ".claude"),
		"ANTHROPIC_API_KEY=test-key", "ANTHROPIC_BASE_URL=" + e.srv.URL()}
	out, err := cmd.Output()
	if err != nil || strings.TrimSpace(string(out)) != want {
		t.Fatalf("%v: %q", err, out)
	}
	data, err := os.ReadFile(trace)
	if err != nil {
		t.Fatal(err)
	}
	return string(data), strings.Split(string(data), "\n")
}

// isRecordRename reports whether the trace line l renames a file over the
// session record name (the last step of its writing).
func isRecordRename(l, name string) bool {
	return strings.Contains(l, "rename") && strings.Contains(l, "/"+name+`"`)
}

// recordRenames are the lines of the trace that write the record name.
func recordRenames(lines []string, name string) []int {
	var at []int
	for i, l := range lines {
		if isRecordRename(l, name) {
			at = append(at, i)
		}
	}
	return at
}
