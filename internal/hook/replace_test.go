package hook

import (
	"context"
	"slices"
	"strings"
	"sync"
	"testing"
)

// Replace swaps the configuration the runner was made with and keeps what
// Add brought; an invalid one changes nothing.
func TestReplace(t *testing.T) {
	var ran []string
	var mu sync.Mutex
	r := newRunner(t, Options{Hooks: on(PreToolUse, "", recorder("old", &ran, &mu))})
	if err := r.Add(on(PreToolUse, "", recorder("skill", &ran, &mu))); err != nil {
		t.Fatal(err)
	}
	runOnce := func() []string {
		t.Helper()
		mu.Lock()
		ran = nil
		mu.Unlock()
		r.Run(context.Background(), bashCall(t.TempDir(), "ls"))
		mu.Lock()
		defer mu.Unlock()
		out := slices.Clone(ran)
		slices.Sort(out)
		return out
	}
	if err := r.Replace(on(PreToolUse, "Bash", recorder("new", &ran, &mu))); err != nil {
		t.Fatal(err)
	}
	if got := runOnce(); !slices.Equal(got, []string{"new", "skill"}) {
		t.Errorf("after Replace ran %q, want new and skill", got)
	}
	err := r.Replace(on(PreToolUse, "", Handler{Type: "nope"}))
	if err == nil || !strings.Contains(err.Error(), "PreToolUse") {
		t.Fatalf("Replace with an invalid handler = %v", err)
	}
	if got := runOnce(); !slices.Equal(got, []string{"new", "skill"}) {
		t.Errorf("after a failed Replace ran %q, want new and skill", got)
	}
	if err := r.Replace(Config{}); err != nil {
		t.Fatal(err)
	}
	if r.Has(Stop) || !r.Has(PreToolUse) {
		t.Error("Has after Replace")
	}
	if got := runOnce(); !slices.Equal(got, []string{"skill"}) {
		t.Errorf("after Replace with nothing ran %q, want skill", got)
	}
}
