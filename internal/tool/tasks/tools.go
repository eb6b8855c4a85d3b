package tasks

import (
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/tackcode/tack/internal/tool"
)

var (
	//go:embed create.md
	createDescription string
	//go:embed update.md
	updateDescription string
	//go:embed list.md
	listDescription string
	//go:embed get.md
	getDescription string
)

// Input schemas, matching Claude Code's property names and types.
const (
	createSchema = `{"type":"object","properties":{` +
		`"subject":{"type":"string","description":"Short imperative title"},` +
		`"description":{"type":"string","description":"What to do and how to tell it is done"},` +
		`"activeForm":{"type":"string","description":"Present-continuous form shown while in progress"},` +
		`"metadata":{"type":"object","description":"Arbitrary data to attach to the task"}},` +
		`"required":["subject","description"],"additionalProperties":false}`

	updateSchema = `{"type":"object","properties":{` +
		`"taskId":{"type":"string","description":"Id of the task to change"},` +
		`"subject":{"type":"string","description":"New title"},` +
		`"description":{"type":"string","description":"New description"},` +
		`"activeForm":{"type":"string","description":"New present-continuous form"},` +
		`"status":{"anyOf":[{"type":"string","enum":["pending","in_progress","completed"]},{"type":"string","const":"deleted"}],"description":"New status; deleted removes the task"},` +
		`"addBlocks":{"type":"array","items":{"type":"string"},"description":"Ids of tasks that wait for this one"},` +
		`"addBlockedBy":{"type":"array","items":{"type":"string"},"description":"Ids of tasks this one waits for"},` +
		`"owner":{"type":"string","description":"Who works on the task"},` +
		`"metadata":{"type":"object","description":"Keys to merge into the metadata; null removes a key"}},` +
		`"required":["taskId"],"additionalProperties":false}`

	listSchema = `{"type":"object","properties":{},"additionalProperties":false}`

	getSchema = `{"type":"object","properties":{` +
		`"taskId":{"type":"string","description":"Id of the task to show"}},` +
		`"required":["taskId"],"additionalProperties":false}`
)

// Tools returns TaskCreate, TaskUpdate, TaskList and TaskGet.
func Tools() []tool.Tool {
	return []tool.Tool{createTool{}, updateTool{}, listTool{}, getTool{}}
}

// Background returns TaskOutput and TaskStop, which read and stop the
// commands and agents started in the background.
func Background() []tool.Tool { return []tool.Tool{TaskOutput{}, TaskStop{}} }

// taskResult is the structured result of TaskCreate and TaskGet.
type taskResult struct {
	Task Task `json:"task"`
}

// createTool is TaskCreate.
type createTool struct{}

func (createTool) Name() string                  { return "TaskCreate" }
func (createTool) Description() string           { return createDescription }
func (createTool) InputSchema() json.RawMessage  { return json.RawMessage(createSchema) }
func (createTool) ReadOnly(json.RawMessage) bool { return false }
func (t createTool) Run(ctx context.Context, env *tool.Env, input json.RawMessage) (tool.Result, error) {
	var in struct {
		Subject     string         `json:"subject"`
		Description string         `json:"description"`
		ActiveForm  string         `json:"activeForm"`
		Metadata    map[string]any `json:"metadata"`
	}
	if err := tool.Decode(t.Name(), input, &in); err != nil {
		return tool.Result{}, err
	}
	if strings.TrimSpace(in.Subject) == "" {
		return tool.Result{}, tool.BadInput(t.Name(), "subject must not be empty")
	}
	var approve func(Task) error
	if a := env.TaskApprover; a != nil {
		approve = func(task Task) error { return a.ApproveCreate(ctx, info(task)) }
	}
	task, err := Of(env).Create(in.Subject, in.Description, in.ActiveForm, in.Metadata, approve)
	if err != nil {
		// Refused: the input was fine, the reason is the approver's.
		return tool.Result{}, err
	}
	return tool.TextResult(fmt.Sprintf("Task #%s created: %s", task.ID, task.Subject), taskResult{task}), nil
}

// updateTool is TaskUpdate.
type updateTool struct{}

// updateResult is the structured result of TaskUpdate.
type updateResult struct {
	Success       bool          `json:"success"`
	TaskID        string        `json:"taskId"`
	UpdatedFields []string      `json:"updatedFields"`
	StatusChange  *statusChange `json:"statusChange,omitempty"`
	Deleted       bool          `json:"deleted,omitempty"`
	Task          *Task         `json:"task,omitempty"`
}

type statusChange struct {
	From Status `json:"from"`
	To   Status `json:"to"`
}

func (updateTool) Name() string                  { return "TaskUpdate" }
func (updateTool) Description() string           { return updateDescription }
func (updateTool) InputSchema() json.RawMessage  { return json.RawMessage(updateSchema) }
func (updateTool) ReadOnly(json.RawMessage) bool { return false }
func (t updateTool) Run(ctx context.Context, env *tool.Env, input json.RawMessage) (tool.Result, error) {
	var in struct {
		TaskID string `json:"taskId"`
		Patch
	}
	if err := tool.Decode(t.Name(), input, &in); err != nil {
		return tool.Result{}, err
	}
	if in.Subject != nil && strings.TrimSpace(*in.Subject) == "" {
		return tool.Result{}, tool.BadInput(t.Name(), "subject must not be empty")
	}
	var approve func(Task) error
	if a := env.TaskApprover; a != nil {
		approve = func(task Task) error { return a.ApproveComplete(ctx, info(task)) }
	}
	ch, err := Of(env).Update(in.TaskID, in.Patch, approve)
	if refused := (*RefusedError)(nil); errors.As(err, &refused) {
		return tool.Result{}, refused.Err
	} else if err != nil {
		// Every other Update failure is about the input: nothing was changed.
		return tool.Result{}, &tool.InputError{Tool: t.Name(), Err: err}
	}
	res := updateResult{Success: true, TaskID: in.TaskID, UpdatedFields: ch.Fields, Deleted: ch.Deleted}
	if res.UpdatedFields == nil {
		res.UpdatedFields = []string{}
	}
	if ch.Deleted {
		return tool.TextResult(fmt.Sprintf("Task #%s deleted.", in.TaskID), res), nil
	}
	res.Task = &ch.Task
	if ch.From != "" {
		res.StatusChange = &statusChange{From: ch.From, To: ch.Task.Status}
	}
	return tool.TextResult(describeChange(ch), res), nil
}

// info is task as a tool.TaskApprover sees it.
func info(task Task) tool.TaskInfo {
	return tool.TaskInfo{ID: task.ID, Subject: task.Subject, Description: task.Description}
}

// describeChange says in one line what an update did.
func describeChange(ch Change) string {
	if len(ch.Fields) == 0 {
		return fmt.Sprintf("Task #%s unchanged.", ch.Task.ID)
	}
	parts := make([]string, len(ch.Fields))
	for i, f := range ch.Fields {
		parts[i] = f
		if f == "status" {
			parts[i] = fmt.Sprintf("status %s → %s", ch.From, ch.Task.Status)
		}
	}
	s := fmt.Sprintf("Task #%s updated: %s.", ch.Task.ID, strings.Join(parts, ", "))
	if len(ch.Unblocked) > 0 {
		s += " Now unblocked: " + refs(ch.Unblocked) + "."
	}
	return s
}

// listTool is TaskList.
type listTool struct{}

func (listTool) Name() string                  { return "TaskList" }
func (listTool) Description() string           { return listDescription }
func (listTool) InputSchema() json.RawMessage  { return json.RawMessage(listSchema) }
func (listTool) ReadOnly(json.RawMessage) bool { return true }
func (listTool) Run(_ context.Context, env *tool.Env, _ json.RawMessage) (tool.Result, error) {
	all := Of(env).Snapshot()
	structured := struct {
		Tasks []Task `json:"tasks"`
	}{all}
	if len(all) == 0 {
		return tool.TextResult("No tasks.", structured), nil
	}
	var b strings.Builder
	for _, t := range all {
		fmt.Fprintf(&b, "#%s [%s] %s", t.ID, t.Status, t.Subject)
		if t.Owner != "" {
			fmt.Fprintf(&b, " (owner: %s)", t.Owner)
		}
		if open := OpenBlockers(all, t); len(open) > 0 {
			fmt.Fprintf(&b, " (blocked by %s)", refs(open))
		}
		b.WriteByte('\n')
	}
	return tool.TextResult(strings.TrimSuffix(b.String(), "\n"), structured), nil
}

// getTool is TaskGet.
type getTool struct{}

func (getTool) Name() string                  { return "TaskGet" }
func (getTool) Description() string           { return getDescription }
func (getTool) InputSchema() json.RawMessage  { return json.RawMessage(getSchema) }
func (getTool) ReadOnly(json.RawMessage) bool { return true }
func (g getTool) Run(_ context.Context, env *tool.Env, input json.RawMessage) (tool.Result, error) {
	var in struct {
		TaskID string `json:"taskId"`
	}
	if err := tool.Decode(g.Name(), input, &in); err != nil {
		return tool.Result{}, err
	}
	all := Of(env).Snapshot()
	for _, t := range all {
		if t.ID == in.TaskID {
			return tool.TextResult(describeTask(all, t), taskResult{t}), nil
		}
	}
	return tool.Result{}, &tool.InputError{Tool: g.Name(), Err: fmt.Errorf("%w: #%s", ErrNotFound, in.TaskID)}
}

// describeTask renders one task in full for the model.
func describeTask(all []Task, t Task) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Task #%s: %s\nStatus: %s\n", t.ID, t.Subject, t.Status)
	if t.Owner != "" {
		fmt.Fprintf(&b, "Owner: %s\n", t.Owner)
	}
	if len(t.BlockedBy) > 0 {
		fmt.Fprintf(&b, "Blocked by: %s", refs(t.BlockedBy))
		if open := OpenBlockers(all, t); len(open) > 0 {
			fmt.Fprintf(&b, " (still open: %s)\n", refs(open))
		} else {
			b.WriteString(" (all completed)\n")
		}
	}
	if len(t.Blocks) > 0 {
		fmt.Fprintf(&b, "Blocks: %s\n", refs(t.Blocks))
	}
	if len(t.Metadata) > 0 {
		if m, err := json.Marshal(t.Metadata); err == nil {
			fmt.Fprintf(&b, "Metadata: %s\n", m)
		}
	}
	fmt.Fprintf(&b, "Description:\n%s", t.Description)
	return b.String()
}

// refs renders ids as "#1, #2".
func refs(ids []string) string {
	return "#" + strings.Join(ids, ", #")
}
