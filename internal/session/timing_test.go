//go:build !race

package session

import (
	"testing"
	"time"
)

// TestLoad10kIsFast guards the load time the benchmark measures. The race
// detector slows decoding by an order of magnitude, so this runs only
// without it: go test -run Fast ./internal/session/
func TestLoad10kIsFast(t *testing.T) {
	if testing.Short() {
		t.Skip("timing")
	}
	path := bigTranscript(t, t.TempDir(), 10000)
	best := time.Hour
	for range 5 {
		start := time.Now()
		tr, err := Load(path)
		if err != nil || len(tr.Chain) < 10000 {
			t.Fatal(err)
		}
		best = min(best, time.Since(start))
	}
	t.Logf("best of 5: %v", best)
	if best > 100*time.Millisecond {
		t.Errorf("loading 10 000 messages took %v, want well under 100ms", best)
	}
}
