package runner

import (
	"fmt"
	"net/http"
	"sync/atomic"

	"github.com/tackcode/tack/agent"
	"github.com/tackcode/tack/cmd/tack-worker/store"
)

// Fleet is the fleet a task runs in.
type Fleet struct {
	// Run names the fleet's run (its workflow id and run id): its ledger in
	// the store. A fleet submitted again under its name has a new one.
	Run  string `json:"run"`
	Name string `json:"name"`
	// BudgetUSD is the fleet's budget: once its tasks together have spent
	// it, no task's model request is sent (0: none).
	BudgetUSD float64 `json:"budget_usd,omitempty"`
}

// ResultErrorFleetBudget is the subtype of a task's result when its session
// was stopped because its fleet's budget was spent.
const ResultErrorFleetBudget = "error_fleet_budget_usd"

// FleetBudgetError is a model request refused because the fleet's tasks
// have spent its budget. It is not retried: the session ends with it.
type FleetBudgetError struct {
	Fleet     string
	BudgetUSD float64
	SpentUSD  float64
}

func (e *FleetBudgetError) Error() string {
	return fmt.Sprintf("fleet %s's budget of $%g is spent ($%.4f)", e.Fleet, e.BudgetUSD, e.SpentUSD)
}

// NotRetryable tells the model client's retry loop that another attempt
// will not mend it.
func (e *FleetBudgetError) NotRetryable() bool { return true }

// fleetGuard keeps a task's entry in its fleet's ledger and, when the fleet
// has a budget, refuses the attempt's model requests once the ledger's
// total has reached it.
type fleetGuard struct {
	fleet  Fleet
	task   string
	run    string
	ledger *store.Ledger
	a      *attempt
	// refused is the last refusal, for the session's result.
	refused atomic.Pointer[FleetBudgetError]
}

func newFleetGuard(st *store.Store, in RunInput, a *attempt) (*fleetGuard, error) {
	if in.Fleet == nil || in.Fleet.Run == "" {
		return nil, nil
	}
	l, err := st.Ledger(in.Fleet.Run)
	if err != nil {
		return nil, err
	}
	return &fleetGuard{fleet: *in.Fleet, task: in.Task.ID, run: in.RunID, ledger: l, a: a}, nil
}

// save replaces the task's entry: cost is what the task has spent, all
// attempts together.
func (g *fleetGuard) save(cost float64, done bool) error {
	if g == nil {
		return nil
	}
	return g.ledger.Save(store.Spend{Task: g.task, Run: g.run, CostUSD: cost, Done: done})
}

// wrap puts the budget check in front of base.
func (g *fleetGuard) wrap(base http.RoundTripper) http.RoundTripper {
	if g == nil || g.fleet.BudgetUSD <= 0 {
		return base
	}
	return &budgetCheck{g: g, base: base}
}

// spentError is the refusal when the fleet's total has reached its
// budget, else nil. A ledger that cannot be read does not stop the
// request (it is logged): the task's spend goes on being recorded, and the
// next request reads the ledger again.
func (g *fleetGuard) spentError() *FleetBudgetError {
	total, err := g.ledger.Total()
	if err != nil {
		g.a.logger().Error("read the fleet's ledger", "fleet", g.fleet.Name, "err", err)
		return nil
	}
	if total < g.fleet.BudgetUSD {
		return nil
	}
	return &FleetBudgetError{Fleet: g.fleet.Name, BudgetUSD: g.fleet.BudgetUSD, SpentUSD: total}
}

// budgetCheck is the model requests' transport that sends none once the
// fleet's budget is spent.
type budgetCheck struct {
	g    *fleetGuard
	base http.RoundTripper
}

func (b *budgetCheck) RoundTrip(req *http.Request) (*http.Response, error) {
	if e := b.g.spentError(); e != nil {
		if req.Body != nil {
			req.Body.Close()
		}
		b.g.refused.Store(e)
		return nil, e
	}
	return b.base.RoundTrip(req)
}

// stopped says whether the session's result is its fleet's budget
// stopping it, and the refusal: a model request the guard refused, or the
// session's own budget stop when that budget was what was left of the
// fleet's as the task started.
func (g *fleetGuard) stopped(result *agent.ResultMessage, fromFleet bool) *FleetBudgetError {
	if g == nil || g.fleet.BudgetUSD <= 0 || !result.IsError {
		return nil
	}
	if e := g.refused.Load(); e != nil {
		return e
	}
	if result.Subtype == agent.ResultErrorMaxBudgetUSD && fromFleet {
		total, err := g.ledger.Total()
		if err != nil {
			total = g.fleet.BudgetUSD
		}
		return &FleetBudgetError{Fleet: g.fleet.Name, BudgetUSD: g.fleet.BudgetUSD, SpentUSD: total}
	}
	return nil
}
