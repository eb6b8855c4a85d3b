package runner

import (
	"context"
	"math"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tackcode/tack/cmd/tack-worker/internal/gittest"
	"github.com/tackcode/tack/cmd/tack-worker/store"
	"github.com/tackcode/tack/cmd/tack-worker/task"
	"github.com/tackcode/tack/internal/llm"
	"github.com/tackcode/tack/internal/llm/llmtest"
)

// turnCost is what one scripted turn costs: 100 000 input tokens of
// claude-haiku-4-5 at $1 per million.
const turnCost = 0.1

func costly(content ...llm.Block) llmtest.Turn {
	return llmtest.Turn{Content: content, Usage: &llm.Usage{InputTokens: 100_000}}
}

// gateTerminal runs commands for real, then says so on ran (once) and
// waits for release before returning.
type gateTerminal struct {
	once    sync.Once
	ran     chan struct{}
	release chan struct{}
}

func (g *gateTerminal) Run(ctx context.Context, args []string, dir string, env []string) (string, int, error) {
	out, code, err := processTerminal{}.Run(ctx, args, dir, env)
	g.once.Do(func() { close(g.ran) })
	select {
	case <-g.release:
	case <-ctx.Done():
	}
	return out, code, err
}

// waitSpend waits until the task's entry in the ledger has reached usd
// (the session's messages reach the runner a moment after the engine).
func waitSpend(t *testing.T, l *store.Ledger, taskID string, usd float64) {
	t.Helper()
	for {
		e, _, err := l.Entry(taskID)
		if err != nil {
			t.Fatal(err)
		}
		if e.CostUSD >= usd-1e-9 {
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// Two tasks of a fleet with a budget, on two workers: task B takes a turn
// and runs a command; meanwhile task A's turns take the fleet's total past
// the budget; B's next model request is not sent, and its result says the
// fleet's budget is spent. The total passes the budget by less than a turn.
func TestFleetBudgetStopsTheTurnsOfARunningTask(t *testing.T) {
	dir := t.TempDir()
	urlA, _ := gittest.Repo(t, dir, "a", map[string]string{"README": "a\n"})
	urlB, _ := gittest.Repo(t, dir, "b", map[string]string{"README": "b\n"})
	st, err := store.Open(filepath.Join(dir, "store"))
	if err != nil {
		t.Fatal(err)
	}
	const budget = 0.35
	fleet := &Fleet{Run: "fleet-f/run-1", Name: "f", BudgetUSD: budget}
	ledger, err := st.Ledger(fleet.Run)
	if err != nil {
		t.Fatal(err)
	}
	srvA := llmtest.New(t,
		costly(toolUse("toolu_a1", "Bash", map[string]string{"command": "true"})),
		costly(toolUse("toolu_a2", "Bash", map[string]string{"command": "true"})),
		costly(llm.Text("A done")),
	)
	srvB := llmtest.New(t,
		costly(toolUse("toolu_b1", "Bash", map[string]string{"command": "true"})),
		costly(llm.Text("B done")),
	)
	env := func(srv *llmtest.Server) map[string]string {
		return map[string]string{"ANTHROPIC_API_KEY": "k", "ANTHROPIC_BASE_URL": srv.URL(), "ANTHROPIC_MODEL": ""}
	}
	input := func(id, url string) RunInput {
		// As FleetWorkflow starts them: what is left of the budget as the
		// task's bound, and the fleet.
		return RunInput{RunID: "fleet-f/" + id + "/run", BudgetUSD: budget, Fleet: fleet,
			Task: task.Task{ID: id, Repo: url, Prompt: "go", Model: "claude-haiku-4-5", PermissionMode: "bypassPermissions",
				PatchOnly: true}}
	}
	gate := &gateTerminal{ran: make(chan struct{}), release: make(chan struct{})}
	workerA := &Runner{Store: st, WorkRoot: filepath.Join(dir, "w1"), WorkerID: "w1", Env: env(srvA)}
	workerB := &Runner{Store: st, WorkRoot: filepath.Join(dir, "w2"), WorkerID: "w2", Env: env(srvB), Terminal: gate}

	type outcome struct {
		res *task.Result
		err error
	}
	doneB := make(chan outcome, 1)
	go func() {
		res, err := workerB.RunAgent(context.Background(), input("b", urlB))
		doneB <- outcome{res, err}
	}()
	// B has taken its turn and runs its command.
	<-gate.ran
	waitSpend(t, ledger, "b", turnCost)

	resA, err := workerA.RunAgent(context.Background(), input("a", urlA))
	if err != nil {
		t.Fatal(err)
	}
	if resA.IsError || resA.Text != "A done" || math.Abs(resA.CostUSD-3*turnCost) > 1e-9 {
		t.Fatalf("task A: %+v; want its three turns, under the budget when each was sent", resA)
	}
	total, err := ledger.Total()
	if err != nil || total < budget {
		t.Fatalf("the fleet's total after A: %v, %v; want past %v", total, err, budget)
	}

	close(gate.release)
	b := <-doneB
	if b.err != nil {
		t.Fatal(b.err)
	}
	want := "fleet f's budget of $0.35 is spent ($0.4000)"
	if !b.res.IsError || b.res.Subtype != ResultErrorFleetBudget || b.res.Text != want {
		t.Fatalf("task B's result: %+v; want %s: %q", b.res, ResultErrorFleetBudget, want)
	}
	if n := srvB.Remaining(); n != 1 {
		t.Fatalf("B's server has %d turns left, want 1: B's second request was sent", n)
	}
	if math.Abs(b.res.CostUSD-turnCost) > 1e-9 {
		t.Fatalf("task B cost %v, want one turn's %v", b.res.CostUSD, turnCost)
	}
	total, err = ledger.Total()
	if err != nil || total > budget+turnCost || math.Abs(total-4*turnCost) > 1e-9 {
		t.Fatalf("the fleet's total: %v, %v; want 4 turns (%v), within a turn of the budget %v", total, err, 4*turnCost, budget)
	}
	for id, res := range map[string]*task.Result{"a": resA, "b": b.res} {
		e, ok, err := ledger.Entry(id)
		if err != nil || !ok || !e.Done || e.CostUSD != res.CostUSD {
			t.Fatalf("%s's ledger entry %+v (%v, %v), want its final cost %v", id, e, ok, err, res.CostUSD)
		}
	}

	// A task started once the budget is spent sends no request at all.
	srvC := llmtest.New(t, costly(llm.Text("C done")))
	workerC := &Runner{Store: st, WorkRoot: filepath.Join(dir, "w3"), WorkerID: "w3", Env: env(srvC)}
	urlC, _ := gittest.Repo(t, dir, "c", map[string]string{"README": "c\n"})
	resC, err := workerC.RunAgent(context.Background(), input("c", urlC))
	if err != nil {
		t.Fatal(err)
	}
	if resC.Subtype != ResultErrorFleetBudget || !strings.Contains(resC.Text, "fleet f's budget") || srvC.Remaining() != 1 {
		t.Fatalf("a task started after the budget was spent: %+v (%d turns left)", resC, srvC.Remaining())
	}
}

// A task whose worker dies has one entry in its fleet's ledger: the dead
// attempt's spend, then the whole run's, never the two added.
func TestFleetLedgerCountsAKilledAttemptOnce(t *testing.T) {
	dir := t.TempDir()
	url, _ := gittest.Repo(t, dir, "app", map[string]string{"README": "app\n"})
	st, err := store.Open(filepath.Join(dir, "store"))
	if err != nil {
		t.Fatal(err)
	}
	srv := llmtest.New(t,
		costly(toolUse("toolu_bash1", "Bash", map[string]string{"command": "true"})),
		costly(llm.Text("done")),
	)
	env := map[string]string{"ANTHROPIC_API_KEY": "k", "ANTHROPIC_BASE_URL": srv.URL(), "ANTHROPIC_MODEL": ""}
	fleet := &Fleet{Run: "fleet-g/run-1", Name: "g", BudgetUSD: 10}
	in := RunInput{RunID: "fleet-g/t/run", BudgetUSD: 10, Fleet: fleet, Task: task.Task{ID: "t", Repo: url, Prompt: "go",
		Model: "claude-haiku-4-5", PermissionMode: "bypassPermissions", PatchOnly: true}}
	ledger, err := st.Ledger(fleet.Run)
	if err != nil {
		t.Fatal(err)
	}

	ctx, cancel := context.WithCancel(context.Background())
	first := &Runner{Store: st, WorkRoot: filepath.Join(dir, "w1"), WorkerID: "w1", Env: env,
		Terminal: &dyingTerminal{dieAt: 1, cancel: cancel}}
	if _, err := first.RunAgent(ctx, in); err == nil {
		t.Fatal("the first attempt ended without error though its worker died")
	}
	if total, err := ledger.Total(); err != nil || math.Abs(total-turnCost) > 1e-9 {
		t.Fatalf("the ledger after the death: %v, %v; want the dead attempt's turn, %v", total, err, turnCost)
	}
	second := &Runner{Store: st, WorkRoot: filepath.Join(dir, "w2"), WorkerID: "w2", Env: env}
	res, err := second.RunAgent(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	if res.IsError || res.Attempts != 2 || math.Abs(res.CostUSD-2*turnCost) > 1e-9 {
		t.Fatalf("result %+v; want two attempts costing two turns", res)
	}
	total, err := ledger.Total()
	if err != nil || total != res.CostUSD {
		t.Fatalf("the ledger's total %v (%v), want the run's cost %v, once", total, err, res.CostUSD)
	}
	if e, _, _ := ledger.Entry("t"); !e.Done || e.Run != in.RunID {
		t.Fatalf("entry %+v", e)
	}
}

// A task that started with what was left of the fleet's budget as its own
// bound, and spent it, ends as stopped by the fleet's budget too (not by a
// budget of its own the fleet's file never named).
func TestFleetBudgetLeftAtTheStartStopsAsTheFleets(t *testing.T) {
	dir := t.TempDir()
	url, _ := gittest.Repo(t, dir, "app", map[string]string{"README": "app\n"})
	st, err := store.Open(filepath.Join(dir, "store"))
	if err != nil {
		t.Fatal(err)
	}
	fleet := &Fleet{Run: "fleet-h/run-1", Name: "h", BudgetUSD: 0.35}
	ledger, err := st.Ledger(fleet.Run)
	if err != nil {
		t.Fatal(err)
	}
	// A task that ended before this one started spent $0.20.
	if err := ledger.Save(store.Spend{Task: "earlier", CostUSD: 0.2, Done: true}); err != nil {
		t.Fatal(err)
	}
	srv := llmtest.New(t,
		costly(toolUse("toolu_1", "Bash", map[string]string{"command": "true"})),
		costly(toolUse("toolu_2", "Bash", map[string]string{"command": "true"})),
		costly(llm.Text("done")),
	)
	env := map[string]string{"ANTHROPIC_API_KEY": "k", "ANTHROPIC_BASE_URL": srv.URL(), "ANTHROPIC_MODEL": ""}
	in := RunInput{RunID: "fleet-h/t/run", BudgetUSD: 0.15, Fleet: fleet, Task: task.Task{ID: "t", Repo: url, Prompt: "go",
		Model: "claude-haiku-4-5", PermissionMode: "bypassPermissions", PatchOnly: true}}
	r := &Runner{Store: st, WorkRoot: filepath.Join(dir, "w1"), WorkerID: "w1", Env: env}
	res, err := r.RunAgent(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	want := "fleet h's budget of $0.35 is spent ($0.4000)"
	if res.Subtype != ResultErrorFleetBudget || !res.IsError || res.Text != want || srv.Remaining() != 1 {
		t.Fatalf("result %+v (%d turns left); want %s: %q after two turns", res, srv.Remaining(), ResultErrorFleetBudget, want)
	}
}
