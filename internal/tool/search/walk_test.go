package search

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
)

// TestWalkStopsWhenCancelled cancels a walk from its first visit and
// checks that the workers stop instead of finishing the tree.
func TestWalkStopsWhenCancelled(t *testing.T) {
	dir := t.TempDir()
	files := map[string]string{}
	for i := range 300 {
		files[fmt.Sprintf("d%d/e%d/f%d.txt", i%5, i%7, i)] = "x\n"
	}
	writeTree(t, dir, files)

	var all atomic.Int32
	if err := walk(t.Context(), walkOptions{root: dir, rules: rootRules(dir)}, func(int, string) { all.Add(1) }); err != nil || all.Load() != 300 {
		t.Fatalf("full walk: %d files, %v", all.Load(), err)
	}

	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	var seen atomic.Int32
	err := walk(ctx, walkOptions{root: dir, rules: rootRules(dir), workers: 2}, func(int, string) {
		seen.Add(1)
		cancel()
	})
	if err != context.Canceled {
		t.Errorf("err = %v", err)
	}
	if n := seen.Load(); n > 10 {
		t.Errorf("%d files visited after cancelling", n)
	}
}
