package ghaction

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/tackcode/tack/internal/llm"
	"github.com/tackcode/tack/internal/llm/llmtest"
	"github.com/tackcode/tack/internal/testbin"
)

// tackBin is the tack binary built for the tests.
var tackBin string

func TestMain(m *testing.M) { testbin.Main(m, &tackBin) }

// workspace makes a checkout-like folder: notes.txt, secret.txt and the
// repository's own settings, which allow `touch`.
func workspace(t *testing.T) string {
	t.Helper()
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	files := map[string]string{
		"notes.txt":             "ship it on friday\n",
		"secret.txt":            "hunter2\n",
		".claude/settings.json": `{"permissions": {"allow": ["Bash(touch:*)"]}}`,
	}
	for name, content := range files {
		path := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// jobEnv is the job's environment: the fake API, and the Go set-up that
// actions/setup-go would give (this machine's toolchain, build and module
// caches, no network).
func jobEnv(t *testing.T, srv *llmtest.Server) map[string]string {
	t.Helper()
	env := map[string]string{"ANTHROPIC_BASE_URL": srv.URL(), "GOTOOLCHAIN": "local", "GOPROXY": "off"}
	for _, name := range []string{"GOCACHE", "GOMODCACHE", "GOPATH", "GOFLAGS"} {
		out, err := exec.Command("go", "env", name).Output()
		if err != nil {
			t.Fatalf("go env %s: %v", name, err)
		}
		env[name] = strings.TrimSpace(string(out))
	}
	return env
}

// executionLog reads the execution file: the array of tack's messages.
func executionLog(t *testing.T, path string) []map[string]any {
	t.Helper()
	var msgs []map[string]any
	if err := json.Unmarshal([]byte(readFile(t, path)), &msgs); err != nil {
		t.Fatalf("execution file %s: %v", path, err)
	}
	if len(msgs) < 2 || msgs[0]["type"] != "system" || msgs[0]["subtype"] != "init" || msgs[len(msgs)-1]["type"] != "result" {
		t.Fatalf("execution file does not run from init to result: %v", msgs)
	}
	return msgs
}

func stepLogs(job jobResult) string {
	var b strings.Builder
	for _, s := range job.Steps {
		b.WriteString("--- " + s.Name + "\n" + s.Log)
	}
	return b.String()
}

// The action builds tack from its own checkout, runs it on the trusted
// workspace with the repository's settings and the inputs, and leaves the
// execution log, the outputs and the step summary of a run with tool round
// trips.
func TestActionRunsTackWithToolRoundTrips(t *testing.T) {
	ws := workspace(t)
	srv := llmtest.New(t,
		llmtest.Reply(llmtest.Text("Reading both."),
			llmtest.ToolUse("Read", map[string]any{"file_path": filepath.Join(ws, "notes.txt")}),
			llmtest.ToolUse("Read", map[string]any{"file_path": filepath.Join(ws, "secret.txt")})),
		llmtest.Reply(
			llmtest.ToolUse("Bash", map[string]any{"command": "touch checked.txt", "description": "mark as checked"}),
			llmtest.ToolUse("Bash", map[string]any{"command": "mkdir out", "description": "make out"})),
		llmtest.Reply(llmtest.Text("The notes say: ship it | on friday.")))
	r := newRunner(t, ws, jobEnv(t, srv), map[string]string{
		"prompt":            "What do the notes say?",
		"settings":          `{"permissions": {"deny": ["Read(./secret.txt)"]}}`,
		"trust_workspace":   "true",
		"model":             "haiku",
		"allowed_tools":     "Read\nBash(mkdir:*)",
		"max_turns":         "5",
		"tack_args":         `--append-system-prompt 'Answer in "one" line.'`,
		"anthropic_api_key": "sk-test",
	})
	job := r.run()
	for _, s := range job.Steps {
		if s.Failed {
			t.Fatalf("step %q failed:\n%s", s.Name, stepLogs(job))
		}
	}

	// The install step built tack here and put it on PATH.
	bin := filepath.Join(r.temp, "tack-bin", "tack")
	if len(job.Path) != 1 || job.Path[0] != filepath.Dir(bin) {
		t.Errorf("GITHUB_PATH %v, want %s", job.Path, filepath.Dir(bin))
	}
	if !strings.Contains(job.Steps[0].Log, "using "+bin) {
		t.Errorf("install step log:\n%s", job.Steps[0].Log)
	}

	// What the model was asked, and what the tools did.
	reqs := srv.Requests()
	if len(reqs) != 3 {
		t.Fatalf("%d requests, want 3", len(reqs))
	}
	if !strings.Contains(reqs[0].Model, "haiku") || reqs[0].LastUserText() != "What do the notes say?" ||
		!strings.Contains(reqs[0].SystemText(), `Answer in "one" line.`) {
		t.Errorf("first request: model %q, prompt %q", reqs[0].Model, reqs[0].LastUserText())
	}
	if h := reqs[0].Header.Get("x-api-key"); h != "sk-test" {
		t.Errorf("x-api-key %q: the anthropic_api_key input did not reach tack", h)
	}
	reads := reqs[1].ToolResults()
	if len(reads) != 2 || reads[0].IsError || !strings.Contains(llm.TextOf(reads[0].Content), "ship it on friday") ||
		!reads[1].IsError || strings.Contains(llm.TextOf(reads[1].Content), "hunter2") {
		t.Errorf("Read results (the settings input denies secret.txt): %+v", reads)
	}
	for _, res := range reqs[2].ToolResults() {
		if res.IsError {
			t.Errorf("Bash result %+v: the repository's settings allow touch, allowed_tools allows mkdir", res)
		}
	}
	if _, err := os.Stat(filepath.Join(ws, "checked.txt")); err != nil {
		t.Errorf("touch did not run: %v", err)
	}
	if fi, err := os.Stat(filepath.Join(ws, "out")); err != nil || !fi.IsDir() {
		t.Errorf("mkdir did not run: %v", err)
	}

	// Outputs and the execution log.
	out := job.Outputs
	file := out["execution_file"]
	if out["conclusion"] != "success" || !strings.HasPrefix(file, filepath.Join(r.temp, "tack-execution-")) {
		t.Fatalf("outputs %v", out)
	}
	msgs := executionLog(t, file)
	result := msgs[len(msgs)-1]
	if out["session_id"] == "" || msgs[0]["session_id"] != out["session_id"] || result["session_id"] != out["session_id"] {
		t.Errorf("session_id output %q, init %v, result %v", out["session_id"], msgs[0]["session_id"], result["session_id"])
	}
	if result["subtype"] != "success" || result["num_turns"] != 3.0 || result["result"] != "The notes say: ship it | on friday." {
		t.Errorf("result %v", result)
	}

	// The artifact step uploads the folder of the execution log, even after
	// a failure.
	up := job.Steps[len(job.Steps)-1]
	if !strings.HasPrefix(up.Uses, "actions/upload-artifact@") || up.With["path"] != filepath.Dir(file) ||
		up.With["name"] != "tack-execution" || !strings.Contains(up.If, "always()") {
		t.Errorf("upload step %+v", up)
	}

	// The step summary, line by line (cost and duration vary).
	wantSummary := []string{
		"## tack ✅ success",
		"",
		"Session `" + out["session_id"] + "`, model `" + reqs[0].Model + "`.",
		"",
		"| turns | cost | duration | tool calls | denied |",
		"|---:|---:|---:|---:|---:|",
		`re:^\| 3 \| \$0\.\d+ \| \d+(\.\d)? s \| 4 \| 1 \|$`,
		"",
		"| tool | calls | failed |",
		"|---|---:|---:|",
		"| Bash | 2 | 0 |",
		"| Read | 2 | 1 |",
		"",
		"### Result",
		"",
		"The notes say: ship it | on friday.",
		"",
	}
	checkLines(t, job.Summary, wantSummary)
}

// Without trust_workspace the repository's own allow rule is withheld, as
// Claude Code withholds it in an untrusted checkout, and the log says so;
// a rule the workflow gives (allowed_tools) still holds.
func TestActionWithholdsTheRepositorysGrantsUntilTrusted(t *testing.T) {
	ws := workspace(t)
	srv := llmtest.New(t,
		llmtest.Reply(
			llmtest.ToolUse("Bash", map[string]any{"command": "touch checked.txt", "description": "mark as checked"}),
			llmtest.ToolUse("Bash", map[string]any{"command": "mkdir out", "description": "make out"})),
		llmtest.Reply(llmtest.Text("done")))
	r := newRunner(t, ws, jobEnv(t, srv), map[string]string{"prompt": "check", "allowed_tools": "Bash(mkdir:*)", "anthropic_api_key": "sk-test"})
	job := r.run()
	for _, s := range job.Steps {
		if s.Failed {
			t.Fatalf("step %q failed:\n%s", s.Name, stepLogs(job))
		}
	}
	res := srv.Requests()[1].ToolResults()
	if len(res) != 2 || !res[0].IsError || res[1].IsError {
		t.Errorf("Bash results %+v: want touch denied (the repository's rule is withheld), mkdir allowed", res)
	}
	if _, err := os.Stat(filepath.Join(ws, "checked.txt")); err == nil {
		t.Error("touch ran on the repository's own allow rule")
	}
	if want := "Ignoring 1 permissions.allow entry from .claude/settings.json"; !strings.Contains(stepLogs(job), want) {
		t.Errorf("the log does not say %q:\n%s", want, stepLogs(job))
	}

	r = newRunner(t, ws, jobEnv(t, srv), map[string]string{"prompt": "check", "trust_workspace": "yes", "anthropic_api_key": "sk-test"})
	if job := r.run(); !job.Steps[1].Failed || !strings.Contains(job.Steps[1].Log, "trust_workspace: yes is neither true nor false") {
		t.Errorf("a bad trust_workspace was not refused:\n%s", stepLogs(job))
	}
}

// checkLines compares text with want line by line; a "re:" line is a
// regular expression.
func checkLines(t *testing.T, text string, want []string) {
	t.Helper()
	got := strings.Split(strings.TrimSuffix(text, "\n"), "\n")
	if len(got) != len(want) {
		t.Fatalf("%d lines, want %d:\n%s", len(got), len(want), text)
	}
	for i, w := range want {
		if re, ok := strings.CutPrefix(w, "re:"); ok {
			if !regexp.MustCompile(re).MatchString(got[i]) {
				t.Errorf("line %d: %q does not match %s", i+1, got[i], re)
			}
		} else if got[i] != w {
			t.Errorf("line %d: %q, want %q", i+1, got[i], w)
		}
	}
}

// A run that ends in an error still leaves its log, outputs and summary,
// and fails the step.
func TestActionFailedRunKeepsLogAndFailsStep(t *testing.T) {
	ws := workspace(t)
	srv := llmtest.New(t,
		llmtest.Reply(llmtest.ToolUse("Read", map[string]any{"file_path": filepath.Join(ws, "notes.txt")})),
		llmtest.Reply(llmtest.Text("never reached")))
	r := newRunner(t, ws, jobEnv(t, srv), map[string]string{
		"prompt": "Read the notes.", "max_turns": "1", "tack_path": tackBin, "anthropic_api_key": "sk-test",
	})
	job := r.run()
	install, run := job.Steps[0], job.Steps[1]
	if install.Failed || !run.Ran || !run.Failed {
		t.Fatalf("steps %+v", job.Steps)
	}
	if !strings.Contains(run.Log, "::error title=tack action::tack's run failed (exit status 1, result error_max_turns)") {
		t.Errorf("run step log:\n%s", run.Log)
	}
	if job.Outputs["conclusion"] != "failure" || job.Outputs["session_id"] == "" {
		t.Errorf("outputs %v", job.Outputs)
	}
	msgs := executionLog(t, job.Outputs["execution_file"])
	if res := msgs[len(msgs)-1]; res["subtype"] != "error_max_turns" || res["is_error"] != true {
		t.Errorf("result %v", res)
	}
	if !strings.HasPrefix(job.Summary, "## tack ❌ error_max_turns\n") || !strings.Contains(job.Summary, "| Read | 1 | 0 |") ||
		!strings.Contains(job.Summary, "### Errors") {
		t.Errorf("summary:\n%s", job.Summary)
	}
	if len(srv.Requests()) != 1 {
		t.Errorf("%d requests after max_turns 1", len(srv.Requests()))
	}
}

// Bad inputs fail the action with an error naming the input, before tack
// runs (or, for settings tack reads, with tack's own error in the log).
func TestActionRejectsBadInputs(t *testing.T) {
	cases := []struct {
		name   string
		inputs map[string]string
		step   int    // the step that fails
		want   string // the action's error
		tack   string // tack's own error, when tack ran
	}{
		{"no prompt", map[string]string{}, 1, "no prompt: set the prompt or prompt_file input", ""},
		{"two prompts", map[string]string{"prompt": "a", "prompt_file": "p.txt"}, 1, "give prompt or prompt_file, not both", ""},
		{"missing prompt file", map[string]string{"prompt_file": "nope.txt"}, 1, "prompt_file: cannot read nope.txt", ""},
		{"max turns", map[string]string{"prompt": "a", "max_turns": "two"}, 1, "max_turns: two is not a positive integer", ""},
		{"tack args", map[string]string{"prompt": "a", "tack_args": "--append-system-prompt 'open"}, 1, "tack_args: cannot split", ""},
		{"tack path", map[string]string{"prompt": "a", "tack_path": "/nonexistent/tack"}, 0, "tack_path: /nonexistent/tack is not an executable file", ""},
		{"settings", map[string]string{"prompt": "a", "settings": `{"permissions": [1`}, 1,
			"tack's run failed (exit status 1, result missing)", "tack: --settings:1:17: invalid JSON"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			srv := llmtest.New(t)
			inputs := map[string]string{"tack_path": tackBin}
			for k, v := range c.inputs {
				inputs[k] = v
			}
			job := newRunner(t, workspace(t), jobEnv(t, srv), inputs).run()
			for i, s := range job.Steps[:2] {
				if s.Failed != (i == c.step) || s.Ran != (i <= c.step) {
					t.Fatalf("steps %+v", job.Steps)
				}
			}
			if !strings.Contains(job.Steps[c.step].Log, c.tack) {
				t.Errorf("tack's own error is not in the log:\n%s", job.Steps[1].Log)
			}
			if !strings.Contains(job.Steps[c.step].Log, "::error title=tack action::"+c.want) {
				t.Errorf("log:\n%s", job.Steps[c.step].Log)
			}
			if c.step == 1 && job.Outputs["conclusion"] != "failure" {
				t.Errorf("outputs %v", job.Outputs)
			}
			if len(srv.Requests()) != 0 {
				t.Errorf("tack ran: %d requests", len(srv.Requests()))
			}
		})
	}
}
