package tasks

import (
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/tackcode/tack/internal/shell"
	"github.com/tackcode/tack/internal/tool"
)

//go:embed taskstop.md
var taskStopDescription string

const taskStopSchema = `{
  "type": "object",
  "properties": {
    "task_id": {"type": "string", "description": "The id of the background task to stop"},
    "shell_id": {"type": "string", "description": "Deprecated: use task_id"}
  },
  "required": [],
  "additionalProperties": false
}`

// TaskStop stops a background task and every process in its group.
type TaskStop struct{}

// TaskStopResult is TaskStop's structured result.
type TaskStopResult struct {
	Message  string `json:"message"`
	TaskID   string `json:"task_id"`
	TaskType string `json:"task_type"` // always local_bash for now
	Command  string `json:"command"`
}

type taskStopInput struct {
	TaskID  string `json:"task_id"`
	ShellID string `json:"shell_id"` // the deprecated name of task_id
}

func (TaskStop) Name() string                    { return "TaskStop" }
func (TaskStop) Description() string             { return strings.TrimSpace(taskStopDescription) }
func (TaskStop) InputSchema() json.RawMessage    { return json.RawMessage(taskStopSchema) }
func (TaskStop) ReadOnly(_ json.RawMessage) bool { return false }

// Run stops the task; one that has already ended is an error.
func (t TaskStop) Run(_ context.Context, env *tool.Env, input json.RawMessage) (tool.Result, error) {
	var in taskStopInput
	if err := tool.Decode(t.Name(), input, &in); err != nil {
		return tool.Result{}, err
	}
	id := in.TaskID
	if id == "" {
		id = in.ShellID
	}
	job, err := findJob(env, t.Name(), id)
	if err != nil {
		return tool.Result{}, err
	}
	if err := job.Stop(); err != nil {
		if errors.Is(err, shell.ErrNotRunning) {
			return tool.Result{}, fmt.Errorf("task %s is not running: %s", id, describeStatus(id, job.Status()))
		}
		return tool.Result{}, err
	}
	msg := fmt.Sprintf("Stopped task %s (%s).", job.ID, cut(job.Command, 200))
	return tool.TextResult(msg, TaskStopResult{Message: msg, TaskID: job.ID, TaskType: "local_bash", Command: job.Command}), nil
}

// cut shortens s to at most n characters, marking the cut.
func cut(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n]) + "…"
	}
	return s
}
