package flow

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"

	"github.com/tackcode/tack/cmd/tack-worker/runner"
	"github.com/tackcode/tack/cmd/tack-worker/task"
)

// fakeAgent stands in for runner.RunAgent: it keeps, per run, a journal of
// tool calls started and finished as the real runner keeps in the store, so
// a test can check what a later attempt sees after an earlier one died.
type fakeAgent struct {
	mu       sync.Mutex
	attempts map[string]int
	started  map[string][]string
	finished map[string][]string
	budgets  map[string]float64
	run      func(ctx context.Context, a *fakeAgent, in runner.RunInput, attempt int) (*task.Result, error)
}

func newFakeAgent(run func(ctx context.Context, a *fakeAgent, in runner.RunInput, attempt int) (*task.Result, error)) *fakeAgent {
	return &fakeAgent{attempts: map[string]int{}, started: map[string][]string{}, finished: map[string][]string{},
		budgets: map[string]float64{}, run: run}
}

func (a *fakeAgent) RunAgent(ctx context.Context, in runner.RunInput) (*task.Result, error) {
	attempt := int(activity.GetInfo(ctx).Attempt)
	a.mu.Lock()
	a.attempts[in.RunID] = attempt
	a.budgets[in.RunID] = in.BudgetUSD
	a.mu.Unlock()
	return a.run(ctx, a, in, attempt)
}

func (a *fakeAgent) start(run, call string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.started[run] = append(a.started[run], call)
}

func (a *fakeAgent) finish(run, call string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.finished[run] = append(a.finished[run], call)
}

// interrupted is what runner tells the model on resume: calls started and
// never finished.
func (a *fakeAgent) interrupted(run string) []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	done := map[string]bool{}
	for _, c := range a.finished[run] {
		done[c] = true
	}
	var out []string
	for _, c := range a.started[run] {
		if !done[c] {
			out = append(out, c)
		}
	}
	return out
}

func newEnv(t *testing.T, a *fakeAgent) *testsuite.TestWorkflowEnvironment {
	t.Helper()
	var s testsuite.WorkflowTestSuite
	env := s.NewTestWorkflowEnvironment()
	env.RegisterWorkflow(TaskWorkflow)
	env.RegisterWorkflow(FleetWorkflow)
	env.RegisterActivityWithOptions(a.RunAgent, activity.RegisterOptions{Name: "RunAgent"})
	return env
}

func done(cost float64) *task.Result {
	return &task.Result{Subtype: "success", CostUSD: cost, NumTurns: 1}
}

// A failing attempt is retried, and the run's result is the later attempt's.
func TestTaskRetriesAFailedAttempt(t *testing.T) {
	a := newFakeAgent(func(_ context.Context, _ *fakeAgent, _ runner.RunInput, attempt int) (*task.Result, error) {
		if attempt < 3 {
			return nil, errors.New("clone: connection reset")
		}
		r := done(0.25)
		r.Attempts = attempt
		return r, nil
	})
	env := newEnv(t, a)
	env.ExecuteWorkflow(TaskWorkflow, TaskInput{Task: task.Task{ID: "t", Repo: "file:///r"}})
	if err := env.GetWorkflowError(); err != nil {
		t.Fatal(err)
	}
	var res task.Result
	if err := env.GetWorkflowResult(&res); err != nil {
		t.Fatal(err)
	}
	if res.Attempts != 3 || res.CostUSD != 0.25 {
		t.Fatalf("result %+v, want the 3rd attempt's", res)
	}
}

// Each run of a task's workflow has its own name in the store, its run
// id in it: a fleet submitted again under the same name runs its tasks
// again instead of finding the last run's results.
func TestEveryRunHasItsOwnStoreRun(t *testing.T) {
	var got, want string
	a := newFakeAgent(func(ctx context.Context, _ *fakeAgent, in runner.RunInput, _ int) (*task.Result, error) {
		we := activity.GetInfo(ctx).WorkflowExecution
		got, want = in.RunID, "fleet-f/t/"+we.RunID
		return done(0.1), nil
	})
	env := newEnv(t, a)
	env.SetStartWorkflowOptions(client.StartWorkflowOptions{ID: "fleet-f/t"})
	env.ExecuteWorkflow(TaskWorkflow, TaskInput{Task: task.Task{ID: "t", Repo: "file:///r"}})
	if err := env.GetWorkflowError(); err != nil {
		t.Fatal(err)
	}
	if got != want || strings.HasSuffix(got, "/") {
		t.Fatalf("store run %q, want %q", got, want)
	}
}

// The attempts are bounded: a run that always fails fails its workflow
// after Timeouts.Attempts attempts.
func TestTaskGivesUpAfterItsAttempts(t *testing.T) {
	a := newFakeAgent(func(context.Context, *fakeAgent, runner.RunInput, int) (*task.Result, error) {
		return nil, errors.New("always")
	})
	env := newEnv(t, a)
	env.ExecuteWorkflow(TaskWorkflow, TaskInput{Task: task.Task{ID: "t"}, Timeouts: Timeouts{Attempts: 2}})
	if env.GetWorkflowError() == nil {
		t.Fatal("the workflow succeeded")
	}
	for id, n := range a.attempts {
		if n != 2 {
			t.Fatalf("%s: %d attempts, want 2", id, n)
		}
	}
}

// A worker that dies after the model asked for a tool call and the call
// started (its heartbeats stop: a heartbeat timeout) hands the run to the
// next attempt, which sees the call as interrupted and does not run it
// again; the call recorded finished before the death is not run again either.
func TestWorkerDeathBetweenModelCallAndTool(t *testing.T) {
	ran := map[string]int{}
	var mu sync.Mutex
	tool := func(run, call string) {
		mu.Lock()
		ran[call]++
		mu.Unlock()
	}
	var seen []string
	a := newFakeAgent(func(_ context.Context, a *fakeAgent, in runner.RunInput, attempt int) (*task.Result, error) {
		if attempt == 1 {
			a.start(in.RunID, "write-1")
			tool(in.RunID, "write-1")
			a.finish(in.RunID, "write-1")
			// The model answers with a Bash call; the worker dies as it
			// starts, before its result is recorded.
			a.start(in.RunID, "bash-2")
			return nil, temporal.NewHeartbeatTimeoutError(nil)
		}
		seen = a.interrupted(in.RunID)
		r := done(0.1)
		r.Attempts = attempt
		return r, nil
	})
	env := newEnv(t, a)
	env.ExecuteWorkflow(TaskWorkflow, TaskInput{Task: task.Task{ID: "t"}})
	if err := env.GetWorkflowError(); err != nil {
		t.Fatal(err)
	}
	var res task.Result
	if err := env.GetWorkflowResult(&res); err != nil {
		t.Fatal(err)
	}
	if res.Attempts != 2 {
		t.Fatalf("%d attempts, want 2", res.Attempts)
	}
	if len(seen) != 1 || seen[0] != "bash-2" {
		t.Fatalf("interrupted calls on resume: %v, want [bash-2]", seen)
	}
	if ran["write-1"] != 1 || ran["bash-2"] != 0 {
		t.Fatalf("tool runs %v", ran)
	}
}

// The fleet stops starting tasks once the budget is spent, and gives each
// task what is left as its own bound.
func TestFleetBudgetStop(t *testing.T) {
	a := newFakeAgent(func(context.Context, *fakeAgent, runner.RunInput, int) (*task.Result, error) {
		return done(0.6), nil
	})
	env := newEnv(t, a)
	tasks := []task.Task{{ID: "a"}, {ID: "b"}, {ID: "c"}}
	env.ExecuteWorkflow(FleetWorkflow, FleetInput{Name: "f", Tasks: tasks, BudgetUSD: 1, MaxParallel: 1})
	if err := env.GetWorkflowError(); err != nil {
		t.Fatal(err)
	}
	var st FleetStatus
	if err := env.GetWorkflowResult(&st); err != nil {
		t.Fatal(err)
	}
	got := []string{st.Tasks[0].Status, st.Tasks[1].Status, st.Tasks[2].Status}
	if got[0] != StatusDone || got[1] != StatusDone || got[2] != StatusSkipped {
		t.Fatalf("statuses %v", got)
	}
	if st.SpentUSD != 1.2 {
		t.Fatalf("spent %v, want 1.2", st.SpentUSD)
	}
	if len(a.budgets) != 2 {
		t.Fatalf("%d runs, want 2", len(a.budgets))
	}
	for id, b := range a.budgets {
		if b != 1 && (b < 0.39 || b > 0.41) {
			t.Fatalf("%s ran with budget %v, want 1 or 0.4", id, b)
		}
	}
}

// Cancelling a fleet cancels its running task (its activity sees its
// context end) and marks the queued ones cancelled.
func TestFleetCancellation(t *testing.T) {
	started := make(chan struct{}, 1)
	a := newFakeAgent(func(ctx context.Context, _ *fakeAgent, _ runner.RunInput, _ int) (*task.Result, error) {
		started <- struct{}{}
		for {
			select {
			case <-ctx.Done():
				return nil, ctx.Err()
			case <-time.After(10 * time.Millisecond):
				activity.RecordHeartbeat(ctx)
			}
		}
	})
	env := newEnv(t, a)
	// The test clock stands still while an activity runs, so the cancel
	// comes from the first task's start, not from a timer.
	go func() { <-started; env.CancelWorkflow() }()
	tasks := []task.Task{{ID: "a"}, {ID: "b"}, {ID: "c"}}
	env.ExecuteWorkflow(FleetWorkflow, FleetInput{Name: "f", Tasks: tasks, MaxParallel: 1})
	var st FleetStatus
	if err := env.GetWorkflowResult(&st); err != nil {
		t.Fatal(err)
	}
	for _, ts := range st.Tasks {
		if ts.Status != StatusCancelled {
			t.Fatalf("task %s is %s, want cancelled", ts.ID, ts.Status)
		}
	}
	if len(a.attempts) != 1 {
		t.Fatalf("%d tasks started, want 1", len(a.attempts))
	}
}
