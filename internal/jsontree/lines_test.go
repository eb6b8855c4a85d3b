package jsontree

import "testing"

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
