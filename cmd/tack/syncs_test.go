package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/tackcode/tack/internal/llm/llmtest"
)

// What a `-p` run syncs and when, as the kernel sees it (strace): three
// syncs — the transcript once at the end of the prompt, and the first
// launch record (its data and its folder), which holds what a resume
// restores and is written while the request is on its way — and, after the
// last event, the answer before the records written after every prompt
// (workflow, launch again), which are not synced. The request prefix
// (prefix.json, 25 KB) is written, unsynced, while the request is on its
// way too: not between the answer and the exit.
func TestPrintRunSyncsOnlyWhatMustLast(t *testing.T) {
	strace, err := exec.LookPath("strace")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("strace is not installed (scripts/test installs it)")
		}
		t.Skip("strace is not installed")
	}
	e := newEnv(t, llmtest.Reply(llmtest.Text("hi")))
	trace := filepath.Join(t.TempDir(), "trace")
	cmd := exec.Command(strace, "-f", "-qq", "-e", "trace=fsync,fdatasync,sync_file_range,syncfs,write,rename,renameat,renameat2,linkat", "-o", trace, tackBin, "-p", "say hi")
	cmd.Dir = e.dir
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + e.home, "CLAUDE_CONFIG_DIR=" + filepath.Join(e.home, ".claude"),
		"ANTHROPIC_API_KEY=test-key", "ANTHROPIC_BASE_URL=" + e.srv.URL()}
	out, err := cmd.Output()
	if err != nil || strings.TrimSpace(string(out)) != "hi" {
		t.Fatalf("%v: %q", err, out)
	}
	data, err := os.ReadFile(trace)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(data), "\n")
	answer, firstLaunch, firstWorkflow, prefix, syncs := -1, -1, -1, -1, 0
	syncCall := regexp.MustCompile(`^\d+\s+(fsync|fdatasync|sync_file_range|syncfs)\(`)
	for i, l := range lines {
		switch {
		case syncCall.MatchString(l):
			syncs++
		case strings.Contains(l, `write(1, "hi\n"`):
			answer = i
		case firstLaunch < 0 && strings.Contains(l, "launch.json"):
			firstLaunch = i
		case firstWorkflow < 0 && strings.Contains(l, "workflow.json"):
			firstWorkflow = i
		case strings.Contains(l, "prefix.json"):
			prefix = i
		}
	}
	if answer < 0 || firstLaunch < 0 || firstWorkflow < 0 || prefix < 0 {
		t.Fatalf("answer at %d, first launch record at %d, first workflow record at %d, request prefix at %d in the trace:\n%s", answer, firstLaunch, firstWorkflow, prefix, data)
	}
	if prefix > firstWorkflow {
		t.Errorf("the request prefix was written after the run, not while its request was on its way:\n%s", data)
	}
	if answer > firstWorkflow {
		t.Errorf("the answer was printed after the workflow record was written:\n%s", data)
	}
	if firstLaunch > firstWorkflow {
		t.Errorf("the launch record was first written after the run, not while its request was on its way:\n%s", data)
	}
	if syncs != 3 {
		t.Errorf("%d syncs, want 3 (transcript, launch record and its folder):\n%s", syncs, data)
	}
}
