package tasks

import (
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/tackcode/tack/internal/shell"
	"github.com/tackcode/tack/internal/tool"
)

//go:embed taskoutput.md
var taskOutputDescription string

const taskOutputSchema = `{
  "type": "object",
  "properties": {
    "task_id": {"type": "string", "description": "The id of the background task"},
    "block": {"type": "boolean", "default": true, "description": "Wait for the task to end, up to timeout"},
    "timeout": {"type": "number", "default": 30000, "minimum": 0, "description": "How long to wait, in milliseconds (at most 600000)"}
  },
  "required": ["task_id"],
  "additionalProperties": false
}`

const (
	defaultWait = 30 * time.Second
	maxWait     = 10 * time.Minute
)

// TaskOutput reads what a background task wrote since the previous
// TaskOutput call for it, and its status, after waiting for it to end when
// asked to.
type TaskOutput struct{}

// TaskOutputResult is TaskOutput's structured result. ExitCode is nil while
// the task runs.
type TaskOutputResult struct {
	TaskID     string `json:"task_id"`
	Status     string `json:"status"` // running, exited or killed
	ExitCode   *int   `json:"exit_code"`
	Output     string `json:"output"`
	OutputFile string `json:"output_file"`
}

type taskOutputInput struct {
	TaskID  string   `json:"task_id"`
	Block   *bool    `json:"block"`
	Timeout *float64 `json:"timeout"`
}

// readOffsets remembers, per job, where the previous TaskOutput call
// stopped reading. It lives in the session's tool.Env state.
type readOffsets struct {
	mu   sync.Mutex
	next map[*shell.Job]int64
}

type readOffsetsKey struct{}

func (TaskOutput) Name() string                    { return "TaskOutput" }
func (TaskOutput) Description() string             { return strings.TrimSpace(taskOutputDescription) }
func (TaskOutput) InputSchema() json.RawMessage    { return json.RawMessage(taskOutputSchema) }
func (TaskOutput) ReadOnly(_ json.RawMessage) bool { return true }

// Run waits as asked, then returns the task's new output and status.
func (t TaskOutput) Run(ctx context.Context, env *tool.Env, input json.RawMessage) (tool.Result, error) {
	var in taskOutputInput
	if err := tool.Decode(t.Name(), input, &in); err != nil {
		return tool.Result{}, err
	}
	wait, err := tool.Milliseconds(t.Name(), "timeout", in.Timeout, defaultWait)
	if err != nil {
		return tool.Result{}, err
	}
	if strings.HasPrefix(in.TaskID, "agent_") && env.Subagents != nil {
		return agentOutput(ctx, env, in, wait)
	}
	job, err := findJob(env, t.Name(), in.TaskID)
	if err != nil {
		return tool.Result{}, err
	}
	if in.Block == nil || *in.Block {
		if _, err := job.Wait(ctx, min(wait, maxWait)); err != nil {
			return tool.Result{}, err
		}
	}
	// The status is taken before reading, so that output written by a task
	// seen as ended is all there.
	st := job.Status()

	offsets := env.State(readOffsetsKey{}, func() any {
		return &readOffsets{next: map[*shell.Job]int64{}}
	}).(*readOffsets)
	offsets.mu.Lock()
	defer offsets.mu.Unlock()
	chunk, err := job.Output(offsets.next[job])
	if err != nil {
		return tool.Result{}, err
	}
	offsets.next[job] = chunk.Next

	res := TaskOutputResult{TaskID: job.ID, Status: string(st.State), Output: chunk.Text, OutputFile: job.OutputPath}
	if st.State != shell.JobRunning {
		res.ExitCode = &st.ExitCode
	}
	body := chunk.Text
	if body == "" {
		body = "(no new output)"
	}
	return tool.TextResult(describeStatus(job.ID, st)+"\n"+body, res), nil
}

// agentOutput is TaskOutput for a background subagent: its report once
// it is done.
func agentOutput(ctx context.Context, env *tool.Env, in taskOutputInput, wait time.Duration) (tool.Result, error) {
	if in.Block != nil && !*in.Block {
		wait = 0
	}
	report, done, err := env.Subagents.Output(ctx, in.TaskID, min(wait, maxWait))
	if err != nil && !done {
		return tool.Result{}, tool.BadInput("TaskOutput", "%v", err)
	}
	res := TaskOutputResult{TaskID: in.TaskID, Status: "running", Output: report}
	switch {
	case err != nil:
		res.Status, res.Output = "failed", err.Error()
		return tool.TextResult(fmt.Sprintf("Agent %s failed: %v", in.TaskID, err), res), nil
	case !done:
		return tool.TextResult(fmt.Sprintf("Agent %s is still running.", in.TaskID), res), nil
	}
	res.Status = "completed"
	return tool.TextResult(fmt.Sprintf("Agent %s has finished. Its report:\n%s", in.TaskID, report), res), nil
}

// describeStatus says in a sentence where a task is.
func describeStatus(id string, st shell.JobStatus) string {
	switch st.State {
	case shell.JobRunning:
		return fmt.Sprintf("Task %s is still running.", id)
	case shell.JobKilled:
		return fmt.Sprintf("Task %s was killed (exit code %d).", id, st.ExitCode)
	default:
		return fmt.Sprintf("Task %s exited with code %d.", id, st.ExitCode)
	}
}

// findJob returns the session's background job called id.
func findJob(env *tool.Env, toolName, id string) (*shell.Job, error) {
	if id == "" {
		return nil, tool.BadInput(toolName, "task_id is required")
	}
	if env.Shell != nil {
		if job, ok := env.Shell.Job(id); ok {
			return job, nil
		}
	}
	return nil, tool.BadInput(toolName, "no background task with id %q", id)
}
