package diff

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
)

// The hello.py edit from compat/samples/tools4.stream-json.stdout.jsonl.
func TestPatchMatchesSample(t *testing.T) {
	got, err := json.Marshal(Patch("print('hello')\n", "print('hello, edited')\n"))
	if err != nil {
		t.Fatal(err)
	}
	want := `[{"oldStart":1,"oldLines":1,"newStart":1,"newLines":1,"lines":["-print('hello')","+print('hello, edited')"]}]`
	if string(got) != want {
		t.Fatalf("got  %s\nwant %s", got, want)
	}
}

func numbered(n int) string {
	var sb strings.Builder
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&sb, "line %d\n", i)
	}
	return sb.String()
}

func TestHunks(t *testing.T) {
	ten := numbered(10)
	tests := []struct {
		name     string
		old, new string
		want     []Hunk
	}{
		{"unchanged", ten, ten, []Hunk{}},
		{"both empty", "", "", []Hunk{}},
		{"create", "", "a\nb\n", []Hunk{{0, 0, 1, 2, []string{"+a", "+b"}}}},
		{"delete all", "a\n", "", []Hunk{{1, 1, 0, 0, []string{"-a"}}}},
		{"middle change with context",
			ten, strings.Replace(ten, "line 5\n", "five\n", 1),
			[]Hunk{{2, 7, 2, 7, []string{" line 2", " line 3", " line 4", "-line 5", "+five", " line 6", " line 7", " line 8"}}}},
		{"pure insertion",
			ten, strings.Replace(ten, "line 1\n", "line 1\nnew\n", 1),
			[]Hunk{{1, 4, 1, 5, []string{" line 1", "+new", " line 2", " line 3", " line 4"}}}},
		{"insertion at end without context after",
			"a\n", "a\nb\n", []Hunk{{1, 1, 1, 2, []string{" a", "+b"}}}},
		{"missing final newline added",
			"a\nb", "a\nb\n", []Hunk{{1, 2, 1, 2, []string{" a", "-b", NoNewline, "+b"}}}},
		{"unchanged last line without newline",
			"a\nb", "x\nb", []Hunk{{1, 2, 1, 2, []string{"-a", "+x", " b", NoNewline}}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Patch(tt.old, tt.new)
			if !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("got  %+v\nwant %+v", got, tt.want)
			}
		})
	}
}

func TestHunksSplitAndMerge(t *testing.T) {
	old := numbered(30)
	// Changes 6 unchanged lines apart share a hunk; 7 apart do not.
	near := strings.Replace(strings.Replace(old, "line 5\n", "x\n", 1), "line 12\n", "y\n", 1)
	if h := Patch(old, near); len(h) != 1 || h[0].OldStart != 2 || h[0].OldLines != 14 {
		t.Fatalf("near changes: %+v", h)
	}
	far := strings.Replace(strings.Replace(old, "line 5\n", "x\n", 1), "line 13\n", "y\n", 1)
	h := Patch(old, far)
	if len(h) != 2 || h[0].OldStart != 2 || h[0].OldLines != 7 || h[1].OldStart != 10 || h[1].OldLines != 7 {
		t.Fatalf("far changes: %+v", h)
	}
	if h := Hunks(old, far, 0); len(h) != 2 || !reflect.DeepEqual(h[0].Lines, []string{"-line 5", "+x"}) {
		t.Fatalf("zero context: %+v", h)
	}
	if a, r := Count(h); a != 2 || r != 2 {
		t.Fatalf("Count = +%d -%d", a, r)
	}
}

func TestUnified(t *testing.T) {
	got := Unified("a/f.txt", "b/f.txt", Patch("a\nb\nc\n", "a\nB\nc\n"))
	want := "--- a/f.txt\n+++ b/f.txt\n@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n"
	if got != want {
		t.Fatalf("got\n%s\nwant\n%s", got, want)
	}
	if Unified("a", "b", nil) != "" {
		t.Fatal("no hunks must render as empty")
	}
}

// apply rebuilds the new text from old and hunks, checking the headers.
func apply(t *testing.T, old string, hunks []Hunk) string {
	t.Helper()
	a := SplitLines(old)
	var out []string
	next := 0 // index in a of the next line not yet copied
	for _, h := range hunks {
		start := h.OldStart - 1
		if h.OldLines == 0 {
			start = h.OldStart
		}
		if start < next {
			t.Fatalf("hunks overlap or go backwards: %+v", hunks)
		}
		out = append(out, a[next:start]...)
		next = start
		var nOld, nNew int
		for i, l := range h.Lines {
			if l == NoNewline {
				continue
			}
			nl := "\n"
			if i+1 < len(h.Lines) && h.Lines[i+1] == NoNewline {
				nl = ""
			}
			switch l[0] {
			case ' ', '-':
				if a[next] != l[1:]+nl {
					t.Fatalf("hunk line %q does not match old line %q", l, a[next])
				}
				next++
				nOld++
				if l[0] == ' ' {
					out = append(out, l[1:]+nl)
					nNew++
				}
			case '+':
				out = append(out, l[1:]+nl)
				nNew++
			}
		}
		if nOld != h.OldLines || nNew != h.NewLines {
			t.Fatalf("header %+v does not count its lines (%d old, %d new)", h, nOld, nNew)
		}
	}
	return strings.Join(append(out, a[next:]...), "")
}

func randomText(r *rand.Rand, alphabet string) string {
	n := r.IntN(14)
	var sb strings.Builder
	for i := 0; i < n; i++ {
		sb.WriteByte(alphabet[r.IntN(len(alphabet))])
		if i < n-1 || r.IntN(4) != 0 {
			sb.WriteByte('\n')
		}
	}
	return sb.String()
}

// lcs is the textbook quadratic longest common subsequence length.
func lcs(a, b []string) int {
	dp := make([][]int, len(a)+1)
	for i := range dp {
		dp[i] = make([]int, len(b)+1)
	}
	for i := len(a) - 1; i >= 0; i-- {
		for j := len(b) - 1; j >= 0; j-- {
			if a[i] == b[j] {
				dp[i][j] = dp[i+1][j+1] + 1
			} else {
				dp[i][j] = max(dp[i+1][j], dp[i][j+1])
			}
		}
	}
	return dp[0][0]
}

func TestRandomPatchesApplyAndAreMinimal(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < 3000; i++ {
		old, new := randomText(r, "abcd"), randomText(r, "abcd")
		for _, ctx := range []int{0, 1, 3} {
			if got := apply(t, old, Hunks(old, new, ctx)); got != new {
				t.Fatalf("ctx %d: %q -> %q rebuilt as %q", ctx, old, new, got)
			}
		}
		a, b := SplitLines(old), SplitLines(new)
		removed, added := compare(a, b)
		edits := 0
		for _, x := range removed {
			if x {
				edits++
			}
		}
		for _, x := range added {
			if x {
				edits++
			}
		}
		if want := len(a) + len(b) - 2*lcs(a, b); edits != want {
			t.Fatalf("%q -> %q: %d edits, shortest is %d", old, new, edits, want)
		}
	}
}

// With the effort bound forced low, splits are approximate but the script
// must still be a valid one.
func TestApproximateSplitsStayValid(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for i := 0; i < 2000; i++ {
		a, b := SplitLines(randomText(r, "abc")), SplitLines(randomText(r, "abc"))
		ids := map[string]int{}
		toIDs := func(lines []string) []int {
			out := make([]int, len(lines))
			for i, l := range lines {
				if _, ok := ids[l]; !ok {
					ids[l] = len(ids)
				}
				out[i] = ids[l]
			}
			return out
		}
		d := newDiffer(toIDs(a), toIDs(b))
		d.tooExpensive = 1 + i%3
		d.seq(0, len(a), 0, len(b))
		var kept []string
		for x, l := range a {
			if !d.removed[x] {
				kept = append(kept, l)
			}
		}
		var common []string
		for y, l := range b {
			if !d.added[y] {
				common = append(common, l)
			}
		}
		if !reflect.DeepEqual(kept, common) {
			t.Fatalf("%q -> %q: kept lines %q differ from common lines %q", a, b, kept, common)
		}
	}
}

func TestLargeUnrelatedInputs(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	lines := func(n, vocab int) string {
		var sb strings.Builder
		for i := 0; i < n; i++ {
			fmt.Fprintf(&sb, "%d\n", r.IntN(vocab))
		}
		return sb.String()
	}
	// Two unrelated files from a small vocabulary: long chains of matches,
	// the worst case for O(ND).
	// How long it takes is BenchmarkUnrelated's to measure; here the
	// patch must be right.
	old, new := lines(50000, 20), lines(50000, 20)
	h := Patch(old, new)
	if got := apply(t, old, h); got != new {
		t.Fatal("large patch does not rebuild the new text")
	}
}

func BenchmarkTypicalEdit(b *testing.B) {
	old := numbered(5000)
	new := strings.Replace(strings.Replace(old, "line 100\n", "x\n", 1), "line 4000\n", "y\nz\n", 1)
	for b.Loop() {
		Patch(old, new)
	}
}

func BenchmarkUnrelated(b *testing.B) {
	r := rand.New(rand.NewPCG(7, 8))
	gen := func() string {
		var sb strings.Builder
		for i := 0; i < 10000; i++ {
			fmt.Fprintf(&sb, "%d\n", r.IntN(50))
		}
		return sb.String()
	}
	old, new := gen(), gen()
	for b.Loop() {
		Patch(old, new)
	}
}
