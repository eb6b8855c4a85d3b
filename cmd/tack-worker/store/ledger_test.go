package store

import (
	"math"
	"os"
	"path/filepath"
	"sync"
	"testing"
)

func near(a, b float64) bool { return math.Abs(a-b) < 1e-9 }

// The fleet's total is its tasks' entries summed: two tasks writing side
// by side, a task's later attempt replacing its entry (not adding one),
// an ended task's entry kept, another fleet's entries apart.
func TestLedgerTotal(t *testing.T) {
	s, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	l, err := s.Ledger("fleet-f/run-1")
	if err != nil {
		t.Fatal(err)
	}
	if total, err := l.Total(); err != nil || total != 0 {
		t.Fatalf("empty ledger: %v, %v", total, err)
	}
	// Two tasks write their spend as their responses come, concurrently.
	var wg sync.WaitGroup
	for _, task := range []string{"a", "b"} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 1; i <= 50; i++ {
				if err := l.Save(Spend{Task: task, Run: "fleet-f/" + task, CostUSD: float64(i) / 100}); err != nil {
					t.Error(err)
				}
				if _, err := l.Total(); err != nil {
					t.Error(err)
				}
			}
		}()
	}
	wg.Wait()
	if total, err := l.Total(); err != nil || !near(total, 1) {
		t.Fatalf("total of two tasks at $0.50: %v, %v", total, err)
	}
	// Task a's first attempt is cut off at $0.50; its second carries that
	// in and replaces the entry.
	if err := l.Save(Spend{Task: "a", CostUSD: 0.5 + 0.25}); err != nil {
		t.Fatal(err)
	}
	if total, _ := l.Total(); !near(total, 1.25) {
		t.Fatalf("total after a's second attempt: %v, want 1.25 (0.75 + 0.50)", total)
	}
	if e, ok, err := l.Entry("a"); err != nil || !ok || !near(e.CostUSD, 0.75) {
		t.Fatalf("a's entry: %+v, %v, %v", e, ok, err)
	}
	// b ends; its final cost is what the total counts from then on.
	if err := l.Save(Spend{Task: "b", CostUSD: 0.6, Done: true}); err != nil {
		t.Fatal(err)
	}
	if total, _ := l.Total(); !near(total, 1.35) {
		t.Fatalf("total after b ended: %v, want 1.35", total)
	}
	// A temporary file of a write in progress is not an entry.
	if err := os.WriteFile(filepath.Join(l.dir, ".a.json.tack-1-2.tmp"), []byte("{"), 0o644); err != nil {
		t.Fatal(err)
	}
	// Another reader of the same fleet (another worker) sees the same.
	other, err := s.Ledger("fleet-f/run-1")
	if err != nil {
		t.Fatal(err)
	}
	if total, err := other.Total(); err != nil || !near(total, 1.35) {
		t.Fatalf("another worker's total: %v, %v", total, err)
	}
	// The fleet submitted again is a new run with a ledger of its own.
	next, err := s.Ledger("fleet-f/run-2")
	if err != nil {
		t.Fatal(err)
	}
	if total, _ := next.Total(); total != 0 {
		t.Fatalf("the next run's ledger starts at %v", total)
	}
}
