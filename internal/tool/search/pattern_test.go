package search

import (
	"bytes"
	"math/rand/v2"
	"regexp"
	"strings"
	"testing"
)

func TestRequiredLiterals(t *testing.T) {
	for _, tc := range []struct {
		pattern    string
		ignoreCase bool
		want       []string // "~" marks a folded literal
		exact      bool
	}{
		{pattern: "func NewReader", want: []string{"func NewReader"}, exact: true},
		{pattern: `func \w+Reader\(`, want: []string{"Reader("}},
		{pattern: "newreader", ignoreCase: true, want: []string{"~newreader"}, exact: true},
		{pattern: "newsreader", ignoreCase: true, want: []string{"~reader"}},
		{pattern: "TODO|FIXME", want: []string{"TODO", "FIXME"}, exact: true},
		{pattern: `(foo|bar)baz`, want: []string{"baz"}},
		{pattern: `(foo|bar)+`, want: []string{"foo", "bar"}},
		{pattern: `a*b?`},
		{pattern: `\w+`},
		{pattern: `x{2,3}y`, want: []string{"x"}},
		{pattern: `k`, ignoreCase: true},
		{pattern: `(?i)ABC`, want: []string{"~abc"}, exact: true},
		{pattern: `é`, want: []string{"é"}, exact: true},
		{pattern: `a|b|c|d|e|f`},
	} {
		m, err := compilePattern(tc.pattern, tc.ignoreCase, false)
		if err != nil {
			t.Fatalf("%q: %v", tc.pattern, err)
		}
		var got []string
		for _, l := range m.lits {
			s := string(l.s)
			if l.fold {
				s = "~" + s
			}
			got = append(got, s)
		}
		if strings.Join(got, "|") != strings.Join(tc.want, "|") || m.exact != tc.exact {
			t.Errorf("%q -i=%v: literals %q exact %v, want %q %v", tc.pattern, tc.ignoreCase, got, m.exact, tc.want, tc.exact)
		}
	}
}

// TestConfine checks that the rewritten pattern matches a buffer exactly
// where the original matches line by line.
func TestConfine(t *testing.T) {
	text := "foo bar\nbaz\n\nqux foo\nend"
	for _, tc := range []struct {
		pattern string
		want    []string // matching lines
	}{
		{`foo\s+baz`, nil},
		{`bar[^x]baz`, nil},
		{`bar.baz`, nil},
		{`[[:space:]]+baz`, nil},
		{`^baz$`, []string{"baz"}},
		{`\Abaz\z`, []string{"baz"}},
		{`^$`, []string{""}},
		{`foo$`, []string{"qux foo"}},
		{`(?s)bar.baz`, nil},
		{`\S+\s\S+`, []string{"foo bar", "qux foo"}},
	} {
		m, err := compilePattern(tc.pattern, false, false)
		if err != nil {
			t.Fatalf("%q: %v", tc.pattern, err)
		}
		var got []string
		for _, loc := range m.re.FindAllIndex([]byte(text), -1) {
			if bytes.IndexByte([]byte(text[loc[0]:loc[1]]), '\n') >= 0 {
				t.Errorf("%q matched across a line: %q", tc.pattern, text[loc[0]:loc[1]])
			}
			ls := strings.LastIndexByte(text[:loc[0]], '\n') + 1
			le := strings.IndexByte(text[loc[0]:], '\n')
			line := text[ls:]
			if le >= 0 {
				line = text[ls : loc[0]+le]
			}
			if len(got) == 0 || got[len(got)-1] != line {
				got = append(got, line)
			}
		}
		if strings.Join(got, "|") != strings.Join(tc.want, "|") {
			t.Errorf("%q: lines %q, want %q", tc.pattern, got, tc.want)
		}
	}
	if _, err := compilePattern(`a\nb`, false, false); err != errNewline {
		t.Errorf("literal newline: %v", err)
	}
	if _, err := compilePattern(`a\nb`, false, true); err != nil {
		t.Errorf("literal newline in multiline mode: %v", err)
	}
}

// TestFinder compares the literal finder with a plain search on random
// text, for plain and folded literals and sets of them, resuming from
// every hit as the line scanner does.
func TestFinder(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	alphabet := []byte("abcABC(_ \nxyzXYZ")
	for range 300 {
		text := make([]byte, rng.IntN(3000))
		for i := range text {
			text[i] = alphabet[rng.IntN(len(alphabet))]
		}
		var lits []literal
		for range 1 + rng.IntN(3) {
			s := make([]byte, 1+rng.IntN(6))
			for i := range s {
				s[i] = alphabet[rng.IntN(8)]
			}
			fold := rng.IntN(2) == 0
			if fold {
				s = bytes.ToLower(s)
			}
			lits = append(lits, literal{s: s, fold: fold})
		}
		to := len(text) - rng.IntN(5)
		if to < 0 {
			to = len(text)
		}
		f := newFinder(lits)
		f.reset(text, to)
		for from := 0; ; {
			got := f.find(from)
			want := naiveFind(text[:to], from, lits)
			if got != want {
				t.Fatalf("find(%q from %d, to %d, %+v) = %d, want %d", text, from, to, lits, got, want)
			}
			if got < 0 {
				break
			}
			from = got + 1 + rng.IntN(3)
		}
	}
}

// TestIndexPair compares the two-byte vector scan with a plain loop on
// random text, at every length around its 16- and 32-byte blocks, with and
// without case masks.
func TestIndexPair(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	alphabet := []byte("aAbB \n")
	for n := range 100 {
		for range 20 {
			h := make([]byte, n)
			for i := range h {
				h[i] = alphabet[rng.IntN(len(alphabet))]
			}
			off := 1 + rng.IntN(4)
			b1, b2 := byte("ab"[rng.IntN(2)]), byte("ab "[rng.IntN(3)])
			var m1, m2 byte
			if rng.IntN(2) == 0 {
				m1 = 0x20
			}
			if b2 != ' ' && rng.IntN(2) == 0 {
				m2 = 0x20
			}
			want := -1
			for p := 0; p+off < len(h); p++ {
				if h[p]|m1 == b1 && h[p+off]|m2 == b2 {
					want = p
					break
				}
			}
			if got := indexPair(h, off, b1, m1, b2, m2); got != want {
				t.Fatalf("indexPair(%q, %d, %q/%#x, %q/%#x) = %d, want %d", h, off, b1, m1, b2, m2, got, want)
			}
		}
	}
}

func naiveFind(text []byte, from int, lits []literal) int {
	for i := from; i < len(text); i++ {
		for _, l := range lits {
			if i+len(l.s) > len(text) {
				continue
			}
			w := text[i : i+len(l.s)]
			if (l.fold && bytes.EqualFold(w, l.s)) || (!l.fold && bytes.Equal(w, l.s)) {
				return i
			}
		}
	}
	return -1
}

// TestFoldNonASCII checks that case-insensitive search finds the non-ASCII
// case variants of k and s, which the ASCII prefilter must not skip.
func TestFoldNonASCII(t *testing.T) {
	m, err := compilePattern("kelvins", true, false)
	if err != nil {
		t.Fatal(err)
	}
	s := newSearcher(m, &grepOptions{mode: modeCount}, func() bool { return false }, func(p string) string { return p })
	for _, line := range []string{"\u212aelvins", "kelvin\u017f", "KELVINS"} {
		res := fileMatch{}
		s.res = &res
		buf := []byte(line + "\n")
		if !s.searchRegion(buf, 0, len(buf)) {
			t.Errorf("%q not found", line)
		}
		if !regexp.MustCompile("(?i)kelvins").MatchString(line) {
			t.Fatalf("regexp disagrees on %q", line)
		}
	}
}

func TestSplitListAndComparePaths(t *testing.T) {
	got := splitList(" *.go, **/*.{ts,tsx}  !vendor/**,x ")
	if strings.Join(got, "|") != "*.go|**/*.{ts,tsx}|!vendor/**|x" {
		t.Errorf("splitList: %q", got)
	}
	if comparePaths("a/x", "a-b/y") >= 0 || comparePaths("a", "a/b") >= 0 || comparePaths("b", "a/b") <= 0 {
		t.Error("comparePaths orders by component")
	}
}
