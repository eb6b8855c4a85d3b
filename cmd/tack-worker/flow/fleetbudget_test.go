package flow

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/tackcode/tack/cmd/tack-worker/runner"
	"github.com/tackcode/tack/cmd/tack-worker/task"
)

// Every task of a fleet runs with the fleet: its name, its budget, and the
// fleet's run, whose ledger in the store they share; a task stopped by the
// fleet's budget is failed with that reason.
func TestFleetTasksCarryTheFleet(t *testing.T) {
	var mu sync.Mutex
	fleets := map[string]runner.Fleet{}
	a := newFakeAgent(func(_ context.Context, _ *fakeAgent, in runner.RunInput, _ int) (*task.Result, error) {
		mu.Lock()
		defer mu.Unlock()
		if in.Fleet == nil {
			t.Errorf("%s ran without its fleet", in.Task.ID)
			return done(0.1), nil
		}
		fleets[in.Task.ID] = *in.Fleet
		if in.Task.ID == "b" {
			return &task.Result{Subtype: runner.ResultErrorFleetBudget, IsError: true, CostUSD: 0.1,
				Text: "fleet f's budget of $1 is spent ($1.0500)"}, nil
		}
		return done(0.1), nil
	})
	env := newEnv(t, a)
	env.ExecuteWorkflow(FleetWorkflow, FleetInput{Name: "f", Tasks: []task.Task{{ID: "a"}, {ID: "b"}}, BudgetUSD: 1})
	if err := env.GetWorkflowError(); err != nil {
		t.Fatal(err)
	}
	var st FleetStatus
	if err := env.GetWorkflowResult(&st); err != nil {
		t.Fatal(err)
	}
	fa, fb := fleets["a"], fleets["b"]
	if fa.Name != "f" || fa.BudgetUSD != 1 || fa.Run == "" || !strings.Contains(fa.Run, "/") || fb != fa {
		t.Fatalf("the tasks' fleets: %+v, %+v", fa, fb)
	}
	if b := st.Tasks[1]; b.Status != StatusFailed || b.Error != runner.ResultErrorFleetBudget || b.Result == nil ||
		!strings.Contains(b.Result.Text, "budget of $1 is spent") {
		t.Fatalf("task b stopped by the fleet's budget: %+v", b)
	}
}
