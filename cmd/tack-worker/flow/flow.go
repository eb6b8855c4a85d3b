// Package flow holds the Temporal workflows of tack-worker: TaskWorkflow
// runs one task (its agent session as a heartbeating activity that another
// worker takes over when this one dies), FleetWorkflow runs a fleet's tasks
// as child workflows, within its concurrency and dollar budget, and answers
// the status query that `tack-worker fleet status` and `results` show.
package flow

import (
	"errors"
	"fmt"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/tackcode/tack/cmd/tack-worker/runner"
	"github.com/tackcode/tack/cmd/tack-worker/task"
)

// TaskQueue is the default task queue of workers and fleets.
const TaskQueue = "tack"

// The search attributes the runs carry (the server must know them:
// `temporal operator search-attribute create`, or start-dev's
// --search-attribute).
var (
	AttrRepository = temporal.NewSearchAttributeKeyKeyword("TackRepository")
	AttrStatus     = temporal.NewSearchAttributeKeyKeyword("TackStatus")
	AttrCost       = temporal.NewSearchAttributeKeyFloat64("TackCostUSD")
)

// SearchAttributes names the search attributes and their types as the
// dev server's --search-attribute takes them.
var SearchAttributes = map[string]string{"TackRepository": "Keyword", "TackStatus": "Keyword", "TackCostUSD": "Double"}

// Task statuses.
const (
	StatusQueued    = "queued"
	StatusRunning   = "running"
	StatusDone      = "done"
	StatusFailed    = "failed"
	StatusCancelled = "cancelled"
	// StatusSkipped is a task that never started: the fleet's budget was
	// spent first.
	StatusSkipped = "skipped"
)

// QueryStatus is the query a fleet answers with its FleetStatus.
const QueryStatus = "status"

// Timeouts of the agent activity.
type Timeouts struct {
	// Heartbeat is how long a silent attempt is given before its worker is
	// taken for dead and the run goes to another (default 20 s).
	Heartbeat time.Duration `json:"heartbeat,omitempty"`
	// Run bounds one attempt (default 6 h).
	Run time.Duration `json:"run,omitempty"`
	// Attempts bounds the attempts of a run (default 5).
	Attempts int32 `json:"attempts,omitempty"`
}

// TaskInput is a TaskWorkflow's input.
type TaskInput struct {
	Task task.Task `json:"task"`
	// BudgetUSD is the most the run may spend (0: the task's own bound).
	BudgetUSD float64 `json:"budget_usd,omitempty"`
	// Fleet is the fleet the task runs in (nil: none); its budget, when it
	// has one, stops the task's turns once the fleet's tasks have spent it.
	Fleet    *runner.Fleet `json:"fleet,omitempty"`
	Timeouts Timeouts      `json:"timeouts"`
}

// TaskWorkflow runs one task. The agent's session is one activity that
// heartbeats while it runs; when its worker dies the heartbeats stop,
// Temporal starts the activity again on another worker, and the attempt
// goes on from the store (see package runner).
func TaskWorkflow(ctx workflow.Context, in TaskInput) (*task.Result, error) {
	info := workflow.GetInfo(ctx)
	_ = workflow.UpsertTypedSearchAttributes(ctx, AttrRepository.ValueSet(in.Task.Repo), AttrStatus.ValueSet(StatusRunning))
	to := in.Timeouts
	if to.Heartbeat == 0 {
		to.Heartbeat = 20 * time.Second
	}
	if to.Run == 0 {
		to.Run = 6 * time.Hour
	}
	if to.Attempts == 0 {
		to.Attempts = 5
	}
	actx := workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		StartToCloseTimeout: to.Run,
		HeartbeatTimeout:    to.Heartbeat,
		// An attempt cancelled with its workflow stops its session at once.
		WaitForCancellation: true,
		RetryPolicy: &temporal.RetryPolicy{InitialInterval: time.Second, BackoffCoefficient: 2,
			MaximumInterval: 30 * time.Second, MaximumAttempts: to.Attempts},
	})
	var r *runner.Runner
	var res task.Result
	err := workflow.ExecuteActivity(actx, r.RunAgent, runner.RunInput{RunID: StoreRunID(info.WorkflowExecution), Task: in.Task,
		BudgetUSD: in.BudgetUSD, Fleet: in.Fleet}).Get(ctx, &res)
	status := StatusDone
	switch {
	case temporal.IsCanceledError(err) || errors.Is(ctx.Err(), workflow.ErrCanceled):
		status = StatusCancelled
	case err != nil:
		status = StatusFailed
	case res.IsError:
		status = StatusFailed
	}
	// The workflow may be cancelled: the last upsert must still be made.
	dctx, _ := workflow.NewDisconnectedContext(ctx)
	_ = workflow.UpsertTypedSearchAttributes(dctx, AttrStatus.ValueSet(status), AttrCost.ValueSet(res.CostUSD))
	if err != nil {
		return nil, err
	}
	return &res, nil
}

// StoreRunID is the name in the store of a task's workflow run: its
// workflow id and run id. The workflow id alone would be the same for the
// task in every run of a fleet of that name, and a fleet submitted again
// would find the last run's published result instead of running.
func StoreRunID(e workflow.Execution) string { return e.ID + "/" + e.RunID }

// FleetInput is a FleetWorkflow's input.
type FleetInput struct {
	Name        string      `json:"name"`
	Tasks       []task.Task `json:"tasks"`
	BudgetUSD   float64     `json:"budget_usd,omitempty"`
	MaxParallel int         `json:"max_parallel,omitempty"`
	Timeouts    Timeouts    `json:"timeouts"`
}

// TaskStatus is one task's line of a fleet's status.
type TaskStatus struct {
	ID      string       `json:"id"`
	Repo    string       `json:"repo"`
	Status  string       `json:"status"`
	CostUSD float64      `json:"cost_usd"`
	Error   string       `json:"error,omitempty"`
	Result  *task.Result `json:"result,omitempty"`
}

// FleetStatus is a fleet's progress.
type FleetStatus struct {
	Name      string       `json:"name"`
	BudgetUSD float64      `json:"budget_usd,omitempty"`
	SpentUSD  float64      `json:"spent_usd"`
	Tasks     []TaskStatus `json:"tasks"`
	Done      bool         `json:"done"`
}

// Counts counts the tasks of each status.
func (s FleetStatus) Counts() map[string]int {
	n := map[string]int{}
	for _, t := range s.Tasks {
		n[t.Status]++
	}
	return n
}

// TaskWorkflowID is the id of a fleet's task's workflow.
func TaskWorkflowID(fleetID, taskID string) string { return fleetID + "/" + taskID }

// FleetWorkflow runs the tasks of a fleet as child TaskWorkflows, at most
// MaxParallel at a time, and starts no more once the tasks have spent the
// budget; each starts with what is left of it as its own bound, and with
// the fleet (Fleet) whose ledger in the store stops the turns of every
// running task once the fleet's tasks together have spent the budget.
// Cancelling the fleet cancels its running tasks and skips the queued ones.
func FleetWorkflow(ctx workflow.Context, in FleetInput) (*FleetStatus, error) {
	st := &FleetStatus{Name: in.Name, BudgetUSD: in.BudgetUSD}
	for _, t := range in.Tasks {
		st.Tasks = append(st.Tasks, TaskStatus{ID: t.ID, Repo: t.Repo, Status: StatusQueued})
	}
	if err := workflow.SetQueryHandler(ctx, QueryStatus, func() (*FleetStatus, error) { return st, nil }); err != nil {
		return nil, fmt.Errorf("status query: %w", err)
	}
	parallel := in.MaxParallel
	if parallel <= 0 || parallel > len(in.Tasks) {
		parallel = len(in.Tasks)
	}
	fleetID := workflow.GetInfo(ctx).WorkflowExecution.ID
	fleet := &runner.Fleet{Run: StoreRunID(workflow.GetInfo(ctx).WorkflowExecution), Name: in.Name, BudgetUSD: in.BudgetUSD}
	sel := workflow.NewSelector(ctx)
	running := 0
	next := 0
	for next < len(in.Tasks) || running > 0 {
		for running < parallel && next < len(in.Tasks) && ctx.Err() == nil {
			i := next
			next++
			left := in.BudgetUSD - st.SpentUSD
			if in.BudgetUSD > 0 && left <= 0 {
				st.Tasks[i].Status, st.Tasks[i].Error = StatusSkipped, "the fleet's budget was spent"
				continue
			}
			if in.BudgetUSD <= 0 {
				left = 0
			}
			cctx := workflow.WithChildOptions(ctx, workflow.ChildWorkflowOptions{
				WorkflowID: TaskWorkflowID(fleetID, in.Tasks[i].ID),
			})
			st.Tasks[i].Status = StatusRunning
			running++
			f := workflow.ExecuteChildWorkflow(cctx, TaskWorkflow, TaskInput{Task: in.Tasks[i], BudgetUSD: left, Fleet: fleet,
				Timeouts: in.Timeouts})
			sel.AddFuture(f, func(f workflow.Future) {
				running--
				var res task.Result
				err := f.Get(ctx, &res)
				ts := &st.Tasks[i]
				switch {
				case temporal.IsCanceledError(err):
					ts.Status = StatusCancelled
				case err != nil:
					ts.Status, ts.Error = StatusFailed, err.Error()
				default:
					ts.Result, ts.CostUSD = &res, res.CostUSD
					ts.Status = StatusDone
					if res.IsError {
						ts.Status, ts.Error = StatusFailed, res.Subtype
					}
				}
				st.SpentUSD += ts.CostUSD
			})
		}
		if ctx.Err() != nil {
			for ; next < len(in.Tasks); next++ {
				st.Tasks[next].Status = StatusCancelled
			}
		}
		if running == 0 {
			continue
		}
		sel.Select(ctx)
	}
	st.Done = true
	return st, nil
}
