package jsontree

import (
	"bytes"
	"sort"
	"unicode/utf8"
)

// Lines converts byte offsets of one document into 1-based lines and
// columns. Columns count characters (UTF-8 sequences; an invalid byte is one
// character), not bytes and not UTF-16 units, and a tab is one column, as
// editors number them; "\n", "\r\n" and a lone "\r" each end a line. The
// zero Lines is that of an empty document.
//
// The cost of Pos does not grow with the length of the line: a minified
// file is one line of megabytes, and counting the characters from the
// start of the line for every value made loading it quadratic. A document
// that is one byte per character (most are ASCII) needs no counting at
// all; for the others the index keeps the count of characters before every
// markStride-th byte, so Pos counts at most a few hundred bytes.
type Lines struct {
	src    []byte
	starts []int // offset of the first byte of each line; built on first use
	// oneByte is true when every byte of src is one character.
	oneByte bool
	// marks[k] is the number of characters before mark(k), the first
	// character boundary at or after k*markStride (see mark); nil when
	// oneByte.
	marks []int
	// scanned counts the bytes decoded to count characters, for the test
	// that holds the work linear.
	scanned int
}

// markStride is the spacing of the character-count marks: a Pos costs up
// to about twice this in bytes decoded, and the marks take one int per
// stride.
const markStride = 128

// NewLines returns the line index of src, which it keeps and must not be
// changed. The index is built on the first call of Pos.
func NewLines(src []byte) *Lines { return &Lines{src: src} }

// Pos returns the line and column of byte offset off, clamped to the
// document. An offset in the middle of a line break is on the line it ends.
func (x *Lines) Pos(off int) (line, col int) {
	if x.starts == nil {
		x.index()
	}
	off = max(0, min(off, len(x.src)))
	l := sort.Search(len(x.starts), func(i int) bool { return x.starts[i] > off }) - 1
	start := x.starts[l]
	switch {
	case x.oneByte:
		col = off - start + 1
	case off-start <= 2*markStride:
		col = x.count(start, off) + 1
	default:
		col = x.before(off) - x.before(start) + 1
	}
	return l + 1, col
}

// count returns the number of characters in src[from:to].
func (x *Lines) count(from, to int) int {
	x.scanned += to - from
	return utf8.RuneCount(x.src[from:to])
}

// before returns the number of characters in src[:off].
//
// Counting from a mark gives the same number as counting from the start
// because a mark is a character boundary of the whole document: no UTF-8
// sequence the decoder reads runs across it, so the characters before it
// and those from it on are counted the same either way.
func (x *Lines) before(off int) int {
	k := min(off/markStride, len(x.marks)-1)
	m := x.mark(k)
	if m > off {
		k--
		m = x.mark(k)
	}
	return x.marks[k] + x.count(m, off)
}

// mark returns the offset of mark k: the first character boundary at or
// after k*markStride. The document's start is one; so is a byte that is
// not a continuation byte (10xxxxxx), and any byte preceded by three
// continuation bytes, since a sequence holds at most three. The mark is
// thus at most three bytes on, which keeps it before the next stride.
func (x *Lines) mark(k int) int {
	m := k * markStride
	for i := 0; i < 3 && m > 0 && m < len(x.src) && x.src[m]&0xc0 == 0x80; i++ {
		m++
	}
	return m
}

func (x *Lines) index() {
	src := x.src
	x.starts = append(x.starts, 0)
	x.oneByte = x.count(0, len(src)) == len(src)
	if !x.oneByte {
		x.marks = make([]int, 0, len(src)/markStride+1)
		prev, n := 0, 0
		for k := 0; k*markStride < len(src); k++ {
			m := x.mark(k)
			n += x.count(prev, m)
			x.marks = append(x.marks, n)
			prev = m
		}
	}
	if bytes.IndexByte(src, '\r') < 0 {
		// The usual case, and a fast one for a large file.
		for i := 0; ; {
			j := bytes.IndexByte(src[i:], '\n')
			if j < 0 {
				return
			}
			i += j + 1
			x.starts = append(x.starts, i)
		}
	}
	for i := 0; i < len(src); i++ {
		switch src[i] {
		case '\n':
			x.starts = append(x.starts, i+1)
		case '\r':
			if i+1 < len(src) && src[i+1] == '\n' {
				continue
			}
			x.starts = append(x.starts, i+1)
		}
	}
}
