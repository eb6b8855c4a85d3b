// Package ghaction holds the tests of tack in GitHub Actions: tack's own
// composite action (action/ at the repository's root), run step by step as
// a runner runs it, and claude-code-action's base step, run on its npm
// runtime (Bun and the Claude Agent SDK) with tack as the Claude Code
// executable. The model is the scripted fake Messages API.
package ghaction

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/goccy/go-yaml"
)

// actionFile is the part of action.yml a composite action's runner reads.
type actionFile struct {
	Name   string `yaml:"name"`
	Inputs map[string]struct {
		Required bool   `yaml:"required"`
		Default  string `yaml:"default"`
	} `yaml:"inputs"`
	Outputs map[string]struct {
		Value string `yaml:"value"`
	} `yaml:"outputs"`
	Runs struct {
		Using string       `yaml:"using"`
		Steps []actionStep `yaml:"steps"`
	} `yaml:"runs"`
}

type actionStep struct {
	Name  string            `yaml:"name"`
	ID    string            `yaml:"id"`
	If    string            `yaml:"if"`
	Shell string            `yaml:"shell"`
	Run   string            `yaml:"run"`
	Uses  string            `yaml:"uses"`
	Env   map[string]string `yaml:"env"`
	With  map[string]string `yaml:"with"`
}

// stepResult is what one step did.
type stepResult struct {
	Name   string
	Ran    bool // false: skipped after an earlier failure, or a uses: step
	Failed bool
	Log    string // stdout and stderr
	// For a uses: step: the action, its if: as written, its with: evaluated.
	Uses string
	If   string
	With map[string]string
}

// jobResult is what running the action gave: its steps, its outputs (the
// action's outputs: values evaluated), the job's step summary.
type jobResult struct {
	Steps   []stepResult
	Outputs map[string]string
	Summary string
	Path    []string // what the steps added to PATH (GITHUB_PATH)
}

// runner runs a composite action's run: steps the way the GitHub runner
// does: each as a bash script file run with `bash --noprofile --norc -eo
// pipefail`, in the workspace, with the job's environment, GITHUB_PATH
// prepended to PATH, the step's env: evaluated, and fresh GITHUB_OUTPUT,
// GITHUB_ENV, GITHUB_PATH and GITHUB_STEP_SUMMARY files whose content it
// reads back after the step. After a failed step the later run: steps are
// skipped. uses: steps are not run: their with: is evaluated and recorded.
//
// Expressions: only ${{ a.b… }} references to inputs, github.action_path,
// github.workspace, runner.temp, env and steps.<id>.outputs; anything else
// fails the test, so the action cannot silently rely on what this runner
// does not model. run: steps must not have if:.
type runner struct {
	t          *testing.T
	action     actionFile
	actionPath string
	workspace  string
	temp       string
	env        map[string]string // the job's environment
	inputs     map[string]string
	outputs    map[string]map[string]string // step id → outputs
	path       []string
}

// repoRoot is the repository's root (this package is test/ghaction).
func repoRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	return root
}

// newRunner reads action/action.yml and prepares a job in workspace with
// env as the job's environment (on top of what the runner sets) and the
// given inputs (the others take their defaults).
func newRunner(t *testing.T, workspace string, env, inputs map[string]string) *runner {
	t.Helper()
	actionPath := filepath.Join(repoRoot(t), "action")
	data, err := os.ReadFile(filepath.Join(actionPath, "action.yml"))
	if err != nil {
		t.Fatal(err)
	}
	var a actionFile
	if err := yaml.Unmarshal(data, &a); err != nil {
		t.Fatalf("action.yml: %v", err)
	}
	if a.Runs.Using != "composite" {
		t.Fatalf("action.yml runs.using is %q, want composite", a.Runs.Using)
	}
	r := &runner{t: t, action: a, actionPath: actionPath, workspace: workspace, temp: t.TempDir(),
		inputs: map[string]string{}, outputs: map[string]map[string]string{}}
	for name, in := range a.Inputs {
		r.inputs[name] = in.Default
	}
	for name, v := range inputs {
		if _, ok := a.Inputs[name]; !ok {
			t.Fatalf("input %q is not declared in action.yml", name)
		}
		r.inputs[name] = v
	}
	r.env = map[string]string{
		"CI": "true", "GITHUB_ACTIONS": "true", "RUNNER_OS": "Linux", "RUNNER_TEMP": r.temp,
		"GITHUB_WORKSPACE": workspace, "GITHUB_ACTION_PATH": actionPath,
		"GITHUB_RUN_ID": "1", "GITHUB_RUN_ATTEMPT": "1", "GITHUB_JOB": "test",
		"HOME": t.TempDir(), "PATH": os.Getenv("PATH"),
	}
	for k, v := range env {
		r.env[k] = v
	}
	return r
}

var exprRe = regexp.MustCompile(`\$\{\{\s*(.*?)\s*\}\}`)
var refRe = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_-]*(\.[A-Za-z_][A-Za-z0-9_-]*)+$`)

// eval replaces every ${{ … }} in s.
func (r *runner) eval(s string) string {
	return exprRe.ReplaceAllStringFunc(s, func(m string) string {
		ref := exprRe.FindStringSubmatch(m)[1]
		if !refRe.MatchString(ref) {
			r.t.Fatalf("expression %q: this runner evaluates only plain references", m)
		}
		p := strings.Split(ref, ".")
		switch {
		case p[0] == "inputs" && len(p) == 2:
			v, ok := r.inputs[p[1]]
			if !ok {
				r.t.Fatalf("expression %q names an input action.yml does not declare", m)
			}
			return v
		case ref == "github.action_path":
			return r.actionPath
		case ref == "github.workspace":
			return r.workspace
		case ref == "runner.temp":
			return r.temp
		case p[0] == "env" && len(p) == 2:
			return r.env[p[1]]
		case p[0] == "steps" && len(p) == 4 && p[2] == "outputs":
			return r.outputs[p[1]][p[3]]
		}
		r.t.Fatalf("expression %q is not modelled by this runner", m)
		return ""
	})
}

// run runs the action's steps and evaluates its outputs.
func (r *runner) run() jobResult {
	r.t.Helper()
	var job jobResult
	failed := false
	for i, st := range r.action.Runs.Steps {
		name := st.Name
		if name == "" {
			name = fmt.Sprintf("step %d", i+1)
		}
		if st.Uses != "" {
			with := map[string]string{}
			for k, v := range st.With {
				with[k] = r.eval(v)
			}
			job.Steps = append(job.Steps, stepResult{Name: name, Uses: st.Uses, If: st.If, With: with})
			continue
		}
		if st.If != "" {
			r.t.Fatalf("run step %q has if: %q; this runner does not evaluate conditions", name, st.If)
		}
		if st.Shell != "bash" {
			r.t.Fatalf("run step %q: shell is %q, want bash", name, st.Shell)
		}
		if failed {
			job.Steps = append(job.Steps, stepResult{Name: name})
			continue
		}
		res, summary := r.runStep(i, st)
		res.Name = name
		job.Steps = append(job.Steps, res)
		job.Summary += summary
		failed = res.Failed
	}
	job.Outputs = map[string]string{}
	for name, out := range r.action.Outputs {
		job.Outputs[name] = r.eval(out.Value)
	}
	job.Path = r.path
	return job
}

// runStep runs one run: step and returns its result and step summary.
func (r *runner) runStep(i int, st actionStep) (stepResult, string) {
	t := r.t
	dir := filepath.Join(r.temp, "_runner_file_commands", fmt.Sprint(i))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	files := map[string]string{}
	for _, name := range []string{"GITHUB_OUTPUT", "GITHUB_ENV", "GITHUB_PATH", "GITHUB_STEP_SUMMARY"} {
		files[name] = filepath.Join(dir, strings.ToLower(name))
		if err := os.WriteFile(files[name], nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	script := filepath.Join(dir, "step.sh")
	if err := os.WriteFile(script, []byte(r.eval(st.Run)), 0o644); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{}
	for k, v := range r.env {
		env[k] = v
	}
	if len(r.path) > 0 {
		env["PATH"] = strings.Join(r.path, ":") + ":" + env["PATH"]
	}
	for k, v := range st.Env {
		env[k] = r.eval(v)
	}
	for k, v := range files {
		env[k] = v
	}
	cmd := exec.Command("bash", "--noprofile", "--norc", "-eo", "pipefail", script)
	cmd.Dir = r.workspace
	for k, v := range env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	out, err := cmd.CombinedOutput()
	res := stepResult{Ran: true, Log: string(out)}
	if err != nil {
		if _, ok := err.(*exec.ExitError); !ok {
			t.Fatalf("step %q: %v", st.Name, err)
		}
		res.Failed = true
	}
	if st.ID != "" {
		r.outputs[st.ID] = readCommandFile(t, files["GITHUB_OUTPUT"])
	}
	for k, v := range readCommandFile(t, files["GITHUB_ENV"]) {
		r.env[k] = v
	}
	for _, line := range strings.Split(readFile(t, files["GITHUB_PATH"]), "\n") {
		if line = strings.TrimSpace(line); line != "" {
			r.path = append([]string{line}, r.path...)
		}
	}
	return res, readFile(t, files["GITHUB_STEP_SUMMARY"])
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// readCommandFile reads a GITHUB_OUTPUT or GITHUB_ENV file: name=value
// lines and name<<DELIMITER … DELIMITER blocks (what @actions/core writes).
// A later value of a name replaces an earlier one, as on the runner.
func readCommandFile(t *testing.T, path string) map[string]string {
	t.Helper()
	out := map[string]string{}
	sc := bufio.NewScanner(strings.NewReader(readFile(t, path)))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if line == "" {
			continue
		}
		if name, delim, ok := strings.Cut(line, "<<"); ok && !strings.Contains(name, "=") {
			var value []string
			for closed := false; !closed; {
				if !sc.Scan() {
					t.Fatalf("%s: %s<<%s is not closed", path, name, delim)
				}
				if closed = sc.Text() == delim; !closed {
					value = append(value, sc.Text())
				}
			}
			out[name] = strings.Join(value, "\n")
			continue
		}
		name, value, ok := strings.Cut(line, "=")
		if !ok {
			t.Fatalf("%s: line %q is neither name=value nor name<<delimiter", path, line)
		}
		out[name] = value
	}
	return out
}
