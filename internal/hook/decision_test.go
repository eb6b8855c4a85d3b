package hook

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
)

// answer kinds a PreToolUse hook can give, each with the decision it stands
// for in Claude Code (written here, independently of the package's own
// precedence), from weakest to strongest.
var answerRank = map[string]int{
	"none": 0, "error": 0, // no output at all; a non-blocking failure
	"allow": 1, "approve": 1, // permissionDecision allow; the older decision approve
	"ask":   2,
	"defer": 3,
	"deny":  4, "block": 4, // permissionDecision deny; the older decision block
}

var rankDecision = []Decision{DecisionNone, DecisionAllow, DecisionAsk, DecisionDefer, DecisionDeny}

// kinds are the answer kinds, in a fixed order.
var kinds = []string{"none", "error", "allow", "approve", "ask", "defer", "deny", "block"}

// answerOutput is the JSON output of kind, with reason; nil for none.
func answerOutput(kind, reason string) (*Output, error) {
	switch kind {
	case "none":
		return nil, nil
	case "error":
		return nil, errors.New("the hook broke")
	case "approve", "block":
		return &Output{Decision: kind, Reason: reason}, nil
	}
	return &Output{HookSpecificOutput: &SpecificOutput{HookEventName: PreToolUse, PermissionDecision: kind, PermissionDecisionReason: reason}}, nil
}

// sequences returns every sequence of n kinds (repetitions included).
func sequences(n int) [][]string {
	if n == 0 {
		return [][]string{nil}
	}
	var out [][]string
	for _, rest := range sequences(n - 1) {
		for _, k := range kinds {
			out = append(out, append([]string{k}, rest...))
		}
	}
	return out
}

// orderedAnswers returns one callback per kind whose answers arrive in the
// order given by answerOrder (indexes into kinds): each callback waits for
// the one answering before it, so the order is certain, not a race.
func orderedAnswers(seq []string, answerOrder []int) []Handler {
	done := make([]chan struct{}, len(seq))
	for i := range done {
		done[i] = make(chan struct{})
	}
	prev := make([]int, len(seq)) // the hook answering just before hook i, or -1
	for pos, i := range answerOrder {
		prev[i] = -1
		if pos > 0 {
			prev[i] = answerOrder[pos-1]
		}
	}
	hs := make([]Handler, len(seq))
	for i, kind := range seq {
		hs[i] = Handler{Type: TypeCallback, Callback: func(ctx context.Context, _ Input, _ json.RawMessage) (*Output, error) {
			defer close(done[i])
			if p := prev[i]; p >= 0 {
				select {
				case <-done[p]:
				case <-ctx.Done():
					return nil, ctx.Err()
				}
			}
			return answerOutput(kind, fmt.Sprintf("r%d", i))
		}}
	}
	return hs
}

// TestDecisionPrecedenceInEveryOrder runs every sequence of two and three
// answers (duplicates and no decision included), each with the hooks
// answering first to last and last to first, and checks the merged
// decision and reasons against the rank table above: deny beats
// everything, then defer, then ask, then allow, whatever the order.
func TestDecisionPrecedenceInEveryOrder(t *testing.T) {
	dir := t.TempDir()
	in := bashCall(dir, "ls")
	n := 0
	for _, size := range []int{2, 3} {
		for _, seq := range sequences(size) {
			best := 0
			for _, k := range seq {
				best = max(best, answerRank[k])
			}
			want := rankDecision[best]
			var reasons []string // of the winning answers, in configuration order
			for i, k := range seq {
				if answerRank[k] == best && best > 0 {
					reasons = append(reasons, fmt.Sprintf("r%d", i))
				}
			}
			forward := make([]int, size)
			backward := make([]int, size)
			for i := range size {
				forward[i], backward[i] = i, size-1-i
			}
			for name, order := range map[string][]int{"first-to-last": forward, "last-to-first": backward} {
				t.Run(strings.Join(seq, ",")+"/"+name, func(t *testing.T) {
					r := newRunner(t, Options{Hooks: on(PreToolUse, "Bash", orderedAnswers(seq, order)...)})
					o := r.Run(context.Background(), in)
					if o.Permission != want || o.Reason != strings.Join(reasons, "\n") || o.Block != (want == DecisionDeny) {
						t.Errorf("got %q %q block=%v, want %q %q", o.Permission, o.Reason, o.Block, want, strings.Join(reasons, "\n"))
					}
				})
				n++
			}
		}
	}
	if n != 2*(8*8+8*8*8) {
		t.Errorf("%d cases", n)
	}
}

// A defer that comes after a deny, in configuration order or in time,
// never outranks it; nor does one that comes before.
func TestLaterDeferCannotOutrankEarlierDeny(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		name  string
		seq   []string
		order []int
	}{
		{"deny configured and answering first", []string{"deny", "defer"}, []int{0, 1}},
		{"deny configured first, answering last", []string{"deny", "defer"}, []int{1, 0}},
		{"defer configured first, answering last", []string{"defer", "deny"}, []int{1, 0}},
		{"an exit-2-like block, then defers", []string{"block", "defer", "defer"}, []int{0, 1, 2}},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := newRunner(t, Options{Hooks: on(PreToolUse, "", orderedAnswers(c.seq, c.order)...)})
			o := r.Run(context.Background(), bashCall(dir, "rm -rf /tmp/x"))
			if o.Permission != DecisionDeny || !o.Block {
				t.Errorf("got %q block=%v: %+v", o.Permission, o.Block, o)
			}
		})
	}
	// And with real processes: the deny exits 2 at once, the defer answers
	// a moment later.
	r := newRunner(t, Options{Hooks: on(PreToolUse, "", cmd(`echo no >&2; exit 2`), cmd(`sleep 0.2; `+permissionHook("defer", "later").Command))})
	if o := r.Run(context.Background(), bashCall(dir, "ls")); o.Permission != DecisionDeny || o.Reason != "no" {
		t.Errorf("exit 2 then defer: %q %q", o.Permission, o.Reason)
	}
}

// The firing sites read a deferred call from the Outcome: Permission defer,
// no block, no input to rewrite.
func TestDeferredOutcome(t *testing.T) {
	dir := t.TempDir()
	deferWithInput := cmd(`echo '{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"defer","permissionDecisionReason":"the host decides","updatedInput":{"command":"ls -l"}}}'`)
	r := newRunner(t, Options{Hooks: on(PreToolUse, "", deferWithInput, permissionHook("ask", "q"), permissionHook("allow", "a"))})
	o := r.Run(context.Background(), bashCall(dir, "ls"))
	noErrors(t, o)
	if o.Permission != DecisionDefer || o.Block || o.Reason != "the host decides" || o.UpdatedInput != nil {
		t.Errorf("%+v", o)
	}
}

// PermissionRequest answers allow or deny; deny wins in any order.
func TestPermissionRequestPrecedenceInEveryOrder(t *testing.T) {
	dir := t.TempDir()
	in := PermissionRequestInput{Base: base(dir), ToolName: "Bash", ToolInput: json.RawMessage(`{"command":"ls"}`)}
	behavior := func(b string) Handler {
		return Handler{Type: TypeCallback, Callback: func(context.Context, Input, json.RawMessage) (*Output, error) {
			if b == "" {
				return nil, nil
			}
			return &Output{HookSpecificOutput: &SpecificOutput{HookEventName: PermissionRequest, Decision: &PermissionRequestDecision{Behavior: b, Message: "m"}}}, nil
		}}
	}
	rank := map[string]int{"": 0, "allow": 1, "deny": 4}
	for _, a := range []string{"", "allow", "deny"} {
		for _, b := range []string{"", "allow", "deny"} {
			for _, c := range []string{"", "allow", "deny"} {
				want := rankDecision[max(rank[a], rank[b], rank[c])]
				r := newRunner(t, Options{Hooks: on(PermissionRequest, "", behavior(a), behavior(b), behavior(c))})
				if o := r.Run(context.Background(), in); o.Permission != want || o.Block != (want == DecisionDeny) {
					t.Errorf("%q %q %q: got %q, want %q", a, b, c, o.Permission, want)
				}
			}
		}
	}
}
