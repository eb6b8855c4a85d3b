package engine

import (
	"crypto/sha256"
	"encoding/json"
	"fmt"
)

// LoopLimit stops a model that keeps making the same call and getting the
// same answer: Threshold identical calls (same tool, input and result)
// within the last Window calls. Zero values take the defaults; a negative
// Threshold disables the check.
type LoopLimit struct {
	Threshold int
	Window    int
}

const (
	defaultLoopThreshold = 8
	defaultLoopWindow    = 16
)

type loopDetector struct {
	limit  LoopLimit
	recent [][32]byte
}

func newLoopDetector(l LoopLimit) *loopDetector {
	if l.Threshold == 0 {
		l.Threshold = defaultLoopThreshold
	}
	if l.Window == 0 {
		l.Window = max(defaultLoopWindow, l.Threshold)
	}
	return &loopDetector{limit: l}
}

// observe records a finished call and returns an error when the model looks stuck.
func (d *loopDetector) observe(name string, input json.RawMessage, result string, isError bool) error {
	if d.limit.Threshold < 0 {
		return nil
	}
	h := sha256.New()
	fmt.Fprintf(h, "%s\x00%s\x00%t\x00", name, input, isError)
	h.Write([]byte(result))
	var sum [32]byte
	copy(sum[:], h.Sum(nil))
	d.recent = append(d.recent, sum)
	if len(d.recent) > d.limit.Window {
		d.recent = d.recent[len(d.recent)-d.limit.Window:]
	}
	n := 0
	for _, s := range d.recent {
		if s == sum {
			n++
		}
	}
	if n >= d.limit.Threshold {
		return fmt.Errorf("stopped: the model made the same %s call with the same result %d times in its last %d calls; it looks stuck in a loop", name, n, len(d.recent))
	}
	return nil
}
