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
type Lines struct {
	src    []byte
	starts []int // offset of the first byte of each line; built on first use
}

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
	return l + 1, utf8.RuneCount(x.src[x.starts[l]:off]) + 1
}

func (x *Lines) index() {
	src := x.src
	x.starts = append(x.starts, 0)
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
