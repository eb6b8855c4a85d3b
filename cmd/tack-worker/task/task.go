// Package task is what a fleet is made of: the tasks (a repository, a
// prompt, agent options), their results, and the fleet files that list
// them.
package task

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/goccy/go-yaml"
)

// Task is one agent run over one repository.
type Task struct {
	// ID names the task inside its fleet; it is unique there.
	ID string `json:"id" yaml:"id"`
	// Repo is a git URL (file:// and plain paths too); Ref a branch, tag or
	// commit ("" for the default branch).
	Repo   string `json:"repo" yaml:"repo"`
	Ref    string `json:"ref,omitempty" yaml:"ref,omitempty"`
	Prompt string `json:"prompt" yaml:"prompt"`
	// Agent options.
	Model           string          `json:"model,omitempty" yaml:"model,omitempty"`
	Tools           []string        `json:"tools,omitempty" yaml:"tools,omitempty"`
	AllowedTools    []string        `json:"allowed_tools,omitempty" yaml:"allowed_tools,omitempty"`
	DisallowedTools []string        `json:"disallowed_tools,omitempty" yaml:"disallowed_tools,omitempty"`
	PermissionMode  string          `json:"permission_mode,omitempty" yaml:"permission_mode,omitempty"`
	Settings        string          `json:"settings,omitempty" yaml:"settings,omitempty"`
	AgentsJSON      string          `json:"agents,omitempty" yaml:"agents,omitempty"`
	AppendPrompt    string          `json:"append_system_prompt,omitempty" yaml:"append_system_prompt,omitempty"`
	MaxTurns        int             `json:"max_turns,omitempty" yaml:"max_turns,omitempty"`
	MaxBudgetUSD    float64         `json:"max_budget_usd,omitempty" yaml:"max_budget_usd,omitempty"`
	JSONSchema      json.RawMessage `json:"json_schema,omitempty" yaml:"json_schema,omitempty"`
	// Untrusted runs the session with the repository's own code off (its
	// hooks, MCP servers, skills' commands, and its settings but for the
	// rules that only restrict), as in a folder the user has not trusted.
	// By default the repository is trusted: the one who submits the task
	// names it.
	Untrusted bool `json:"untrusted,omitempty" yaml:"untrusted,omitempty"`
	// Push is where the change goes: a remote URL or path that the branch
	// Branch is pushed to ("" for the task's Repo). Without a change
	// nothing is pushed; PatchOnly writes the change as a patch file in the
	// store instead.
	Push      string `json:"push,omitempty" yaml:"push,omitempty"`
	Branch    string `json:"branch,omitempty" yaml:"branch,omitempty"`
	PatchOnly bool   `json:"patch_only,omitempty" yaml:"patch_only,omitempty"`
}

// Result is what a task's run produced. Large parts are in the store and
// named by path.
type Result struct {
	TaskID           string  `json:"task_id"`
	Text             string  `json:"text"`
	StructuredOutput any     `json:"structured_output,omitempty"`
	Subtype          string  `json:"subtype"`
	IsError          bool    `json:"is_error"`
	CostUSD          float64 `json:"cost_usd"`
	NumTurns         int     `json:"num_turns"`
	InputTokens      int64   `json:"input_tokens"`
	OutputTokens     int64   `json:"output_tokens"`
	SessionID        string  `json:"session_id"`
	// Attempts is how many workers ran the session (more than one after a
	// worker died).
	Attempts int `json:"attempts"`
	// Transcript is the mirrored transcript in the store.
	Transcript string `json:"transcript"`
	// WorkflowRecord is the session's workflow record (seed 001) in the store.
	WorkflowRecord string `json:"workflow_record,omitempty"`
	// Branch and Commit say where the change landed; Patch is the patch
	// file of a PatchOnly task. All empty when the run changed nothing.
	Branch string `json:"branch,omitempty"`
	Commit string `json:"commit,omitempty"`
	Patch  string `json:"patch,omitempty"`
}

// Fleet is a fleet file: tasks, or one prompt over repositories (each
// repository becomes a task with the file's options), or both.
type Fleet struct {
	Name string `json:"name" yaml:"name"`
	// BudgetUSD is the fleet's budget: once its tasks have spent it, no
	// more turns start (0: none).
	BudgetUSD float64 `json:"budget_usd,omitempty" yaml:"budget_usd,omitempty"`
	// MaxParallel bounds the fleet's tasks running at once (0: no bound
	// but the workers' concurrency).
	MaxParallel int `json:"max_parallel,omitempty" yaml:"max_parallel,omitempty"`
	// Defaults apply to every task for the fields it leaves empty; with
	// Repos they make the tasks.
	Defaults Task     `json:"defaults" yaml:"defaults"`
	Repos    []string `json:"repos,omitempty" yaml:"repos,omitempty"`
	Tasks    []Task   `json:"tasks,omitempty" yaml:"tasks,omitempty"`
}

var idPattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]*$`)

// Load reads a fleet file (JSON, or YAML for .yaml and .yml) and resolves it.
func Load(path string) (*Fleet, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("fleet file: %w", err)
	}
	var f Fleet
	switch strings.ToLower(filepath.Ext(path)) {
	case ".yaml", ".yml":
		err = yaml.UnmarshalWithOptions(data, &f, yaml.Strict(), yaml.UseJSONUnmarshaler())
	default:
		dec := json.NewDecoder(strings.NewReader(string(data)))
		dec.DisallowUnknownFields()
		err = dec.Decode(&f)
	}
	if err != nil {
		return nil, fmt.Errorf("fleet file %s: %w", path, err)
	}
	if f.Name == "" {
		f.Name = strings.TrimSuffix(filepath.Base(path), filepath.Ext(path))
	}
	if err := f.Resolve(); err != nil {
		return nil, fmt.Errorf("fleet file %s: %w", path, err)
	}
	return &f, nil
}

// Resolve turns Repos into tasks, fills the tasks' empty fields from
// Defaults, and checks them.
func (f *Fleet) Resolve() error {
	if !idPattern.MatchString(f.Name) {
		return fmt.Errorf("name %q: use letters, digits, '.', '_' and '-'", f.Name)
	}
	for i, repo := range f.Repos {
		t := Task{ID: fmt.Sprintf("%s-%d", repoName(repo), i+1), Repo: repo}
		f.Tasks = append(f.Tasks, t)
	}
	f.Repos = nil
	if len(f.Tasks) == 0 {
		return errors.New("no tasks (give tasks, or repos with a prompt in defaults)")
	}
	seen := map[string]bool{}
	for i := range f.Tasks {
		t := &f.Tasks[i]
		t.fill(f.Defaults)
		if t.ID == "" {
			t.ID = fmt.Sprintf("task-%d", i+1)
		}
		where := fmt.Sprintf("tasks[%d] (%s)", i, t.ID)
		switch {
		case !idPattern.MatchString(t.ID):
			return fmt.Errorf("%s: id: use letters, digits, '.', '_' and '-'", where)
		case seen[t.ID]:
			return fmt.Errorf("%s: id used twice", where)
		case t.Repo == "":
			return fmt.Errorf("%s: no repo", where)
		case strings.TrimSpace(t.Prompt) == "":
			return fmt.Errorf("%s: no prompt", where)
		}
		seen[t.ID] = true
		if t.Branch == "" {
			t.Branch = "tack/" + f.Name + "/" + t.ID
		}
	}
	return nil
}

func (t *Task) fill(d Task) {
	set := func(dst *string, v string) {
		if *dst == "" {
			*dst = v
		}
	}
	set(&t.Repo, d.Repo)
	set(&t.Ref, d.Ref)
	set(&t.Prompt, d.Prompt)
	set(&t.Model, d.Model)
	set(&t.PermissionMode, d.PermissionMode)
	set(&t.Settings, d.Settings)
	set(&t.AgentsJSON, d.AgentsJSON)
	set(&t.AppendPrompt, d.AppendPrompt)
	set(&t.Push, d.Push)
	if t.Tools == nil {
		t.Tools = d.Tools
	}
	if t.AllowedTools == nil {
		t.AllowedTools = d.AllowedTools
	}
	if t.DisallowedTools == nil {
		t.DisallowedTools = d.DisallowedTools
	}
	if t.MaxTurns == 0 {
		t.MaxTurns = d.MaxTurns
	}
	if t.MaxBudgetUSD == 0 {
		t.MaxBudgetUSD = d.MaxBudgetUSD
	}
	if t.JSONSchema == nil {
		t.JSONSchema = d.JSONSchema
	}
	t.PatchOnly = t.PatchOnly || d.PatchOnly
	t.Untrusted = t.Untrusted || d.Untrusted
}

func repoName(repo string) string {
	name := strings.TrimSuffix(filepath.Base(strings.TrimRight(repo, "/")), ".git")
	name = regexp.MustCompile(`[^A-Za-z0-9._-]+`).ReplaceAllString(name, "-")
	if name == "" || !idPattern.MatchString(name) {
		return "repo"
	}
	return name
}
