package store

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
)

// Spend is one task's entry in its fleet's ledger: what the task has spent
// so far, all its attempts together (those cut off as far as their last
// model response), or in all once Done.
type Spend struct {
	Task string `json:"task"`
	// Run is the task's run in the store (RunInput.RunID).
	Run     string  `json:"run,omitempty"`
	CostUSD float64 `json:"cost_usd"`
	// Done is set once the task's session has ended: CostUSD is final.
	Done bool `json:"done,omitempty"`
}

// Ledger is a fleet run's spend ledger, which every worker reaches: one
// file per task (fleets/FLEET/spend/TASK.json), each replaced whole by the
// one attempt running the task, and summed on read. No file is shared by
// two tasks, so writers never race on a counter; a task's later attempt
// replaces its entry (with the earlier attempts' spend carried in), it does
// not add one.
type Ledger struct {
	dir string

	mu sync.Mutex
	// done caches the entries of tasks that ended: they do not change.
	done map[string]float64
}

// Ledger returns the spend ledger of fleet (a fleet's run: its workflow id
// and run id), creating its folder.
func (s *Store) Ledger(fleet string) (*Ledger, error) {
	dir := filepath.Join(s.Root, "fleets", RunDirName(fleet), "spend")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("fleet ledger %s: %w", fleet, err)
	}
	return &Ledger{dir: dir, done: map[string]float64{}}, nil
}

func (l *Ledger) path(task string) string { return filepath.Join(l.dir, RunDirName(task)+".json") }

// Save replaces the task's entry with e.
func (l *Ledger) Save(e Spend) error { return writeJSON(l.path(e.Task), e) }

// Entry reads a task's entry; ok is false when it has none.
func (l *Ledger) Entry(task string) (e Spend, ok bool, err error) {
	ok, err = readJSON(l.path(task), &e)
	return e, ok, err
}

// Total is what the fleet's tasks have spent: the ended tasks' costs and
// the running tasks' spend so far. It reads the entries of the tasks still
// running, and remembers those that ended.
func (l *Ledger) Total() (float64, error) {
	entries, err := os.ReadDir(l.dir)
	if err != nil {
		return 0, fmt.Errorf("read fleet ledger: %w", err)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	total := 0.0
	for _, d := range entries {
		name := d.Name()
		// Temporary files of writes in progress start with a dot.
		if strings.HasPrefix(name, ".") || !strings.HasSuffix(name, ".json") {
			continue
		}
		if c, ok := l.done[name]; ok {
			total += c
			continue
		}
		var e Spend
		if _, err := readJSON(filepath.Join(l.dir, name), &e); err != nil {
			return 0, err
		}
		if e.Done {
			l.done[name] = e.CostUSD
		}
		total += e.CostUSD
	}
	return total, nil
}
