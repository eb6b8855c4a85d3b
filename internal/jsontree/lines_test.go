package jsontree

import (
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestLines(t *testing.T) {
	src := []byte("ab\ncdé\r\nf\rg\tz")
	// offsets:     a0 b1 \n2 c3 d4 é5,6 \r7 \n8 f9 \r10 g11 \t12 z13
	for _, c := range []struct{ off, line, col int }{
		{0, 1, 1}, {1, 1, 2}, {2, 1, 3}, // the newline itself ends line 1
		{3, 2, 1}, {5, 2, 3}, {7, 2, 4}, // é is one column
		{9, 3, 1},              // after \r\n
		{11, 4, 1}, {13, 4, 3}, // after a lone \r; a tab is one column
		{14, 4, 4}, {99, 4, 4}, {-5, 1, 1}, // clamped
	} {
		x := NewLines(src)
		if l, col := x.Pos(c.off); l != c.line || col != c.col {
			t.Errorf("pos(%d) = %d:%d, want %d:%d", c.off, l, col, c.line, c.col)
		}
	}
	var empty Lines
	if l, c := empty.Pos(0); l != 1 || c != 1 {
		t.Errorf("empty: %d:%d", l, c)
	}
}

// naivePos is the definition Pos must agree with: count the line breaks
// before off, then the characters from the line's start.
func naivePos(src []byte, off int) (line, col int) {
	off = max(0, min(off, len(src)))
	line, start := 1, 0
	for i := 0; i < off; i++ {
		if src[i] == '\n' || src[i] == '\r' && (i+1 == len(src) || src[i+1] != '\n') {
			line, start = line+1, i+1
		}
	}
	return line, utf8.RuneCount(src[start:off]) + 1
}

// TestLinesMatchesTheDefinition checks every offset of documents made to
// catch a column count that goes wrong across the index's checkpoints:
// long lines of multi-byte characters, invalid UTF-8 and runs of stray
// continuation bytes, each line break kind.
func TestLinesMatchesTheDefinition(t *testing.T) {
	long := strings.Repeat("aé€😀", 300)
	docs := map[string]string{
		"ascii one line":        strings.Repeat(`{"a":"b"},`, 200),
		"multi-byte one line":   long,
		"invalid UTF-8":         strings.Repeat("x\xe2\x82\xff\x80\x80\x80\x80\x80y\xf0\x9f", 120),
		"continuation runs":     strings.Repeat("\x80", 700) + "é" + strings.Repeat("\xbf", 600),
		"mixed breaks":          long + "\r\n" + long + "\r" + long + "\n" + long,
		"break at a checkpoint": strings.Repeat("é", 127) + "\n" + strings.Repeat("é", 500),
		"empty":                 "",
	}
	for name, doc := range docs {
		t.Run(name, func(t *testing.T) {
			src := []byte(doc)
			x := NewLines(src)
			for off := -1; off <= len(src)+1; off++ {
				wl, wc := naivePos(src, off)
				if l, c := x.Pos(off); l != wl || c != wc {
					t.Fatalf("Pos(%d) = %d:%d, want %d:%d", off, l, c, wl, wc)
				}
			}
		})
	}
}

// TestLinesWorkIsLinear is the regression test for a 2.3 MB one-line
// settings file that took over 30 seconds to load: every position was
// found by counting the characters from the start of its line, so the
// work grew with the square of the line's length. Asking for the position
// of every value of such a document must scan a number of bytes
// proportional to its size, whatever the order of the offsets.
func TestLinesWorkIsLinear(t *testing.T) {
	var b strings.Builder
	b.WriteString(`{"permissions":{"allow":[`)
	for i := range 40000 {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `"Bash(npm run tâche-%06d *)"`, i)
	}
	b.WriteString(`]}}`)
	src := []byte(b.String())
	root, err := Parse(src, nil)
	if err != nil {
		t.Fatal(err)
	}
	elems := root.Lookup("permissions").Lookup("allow").Elems
	want := make([]int, len(elems)) // the column of each element
	n, prev := 0, 0
	for i, e := range elems {
		n += utf8.RuneCount(src[prev:e.Off])
		want[i], prev = n+1, e.Off
	}
	for _, order := range []string{"document order", "reverse order"} {
		x := NewLines(src)
		for i := range elems {
			if order == "reverse order" {
				i = len(elems) - 1 - i
			}
			if l, c := x.Pos(elems[i].Off); l != 1 || c != want[i] {
				t.Fatalf("Pos(%d) = %d:%d, want 1:%d", elems[i].Off, l, c, want[i])
			}
		}
		// The quadratic count scanned half the line per value: 20000
		// times the document here.
		if limit := 8 * len(src); x.scanned > limit {
			t.Errorf("%s: %d positions in a %d-byte line scanned %d bytes; want at most %d (linear)",
				order, len(elems), len(src), x.scanned, limit)
		}
	}
}
