package shell

import (
	"fmt"
	"unicode/utf8"
)

// headTail is an io.Writer that keeps the first and the last bytes of what
// is written to it, in memory bounded by its limit whatever the volume, and
// counts the characters dropped between them. It is not safe for concurrent
// use; each stream has its own.
type headTail struct {
	headMax, tailMax int
	head             []byte
	// tail holds at most 2*tailMax bytes, of which the last tailMax are
	// kept; the slack makes trimming its front amortised O(1) per byte.
	tail []byte
	// dropped and droppedBytes count what was dropped so far, not counting
	// tail's slack.
	dropped, droppedBytes int64
}

// newHeadTail keeps about limit bytes: the first half and the last half.
func newHeadTail(limit int) *headTail {
	limit = max(limit, 2)
	h := limit / 2
	return &headTail{headMax: h, tailMax: limit - h}
}

func (w *headTail) Write(p []byte) (int, error) {
	n := len(p)
	if room := w.headMax - len(w.head); room > 0 {
		k := min(room, len(p))
		w.head = append(w.head, p[:k]...)
		p = p[k:]
	}
	if len(p) == 0 {
		return n, nil
	}
	if len(p) >= w.tailMax {
		// p alone fills the tail: everything older goes.
		w.drop(w.tail)
		w.drop(p[:len(p)-w.tailMax])
		w.tail = append(w.tail[:0], p[len(p)-w.tailMax:]...)
		return n, nil
	}
	if len(w.tail)+len(p) > 2*w.tailMax {
		cut := len(w.tail) + len(p) - w.tailMax
		w.drop(w.tail[:cut])
		w.tail = w.tail[:copy(w.tail, w.tail[cut:])]
	}
	w.tail = append(w.tail, p...)
	return n, nil
}

// Result returns the text kept and how many characters were cut from its
// middle. A cut text carries a "... [N characters truncated] ..." line where
// the cut was, and both sides of the cut end on whole UTF-8 characters.
func (w *headTail) Result() (text string, cut int64) {
	tail := w.tail
	cut, cutBytes := w.dropped, w.droppedBytes
	if extra := len(tail) - w.tailMax; extra > 0 {
		cut += chars(tail[:extra])
		cutBytes += int64(extra)
		tail = tail[extra:]
	}
	if cutBytes == 0 {
		return string(w.head) + string(tail), 0
	}
	head := w.head
	// A character split by the cut is dropped whole: its first byte at the
	// end of head counts as one character, and its continuation bytes at the
	// start of tail count as none.
	for i := len(head) - 1; i >= 0 && i >= len(head)-utf8.UTFMax; i-- {
		if utf8.RuneStart(head[i]) {
			if !utf8.FullRune(head[i:]) {
				head = head[:i]
				cut++
			}
			break
		}
	}
	for i := 0; i < utf8.UTFMax-1 && len(tail) > 0 && !utf8.RuneStart(tail[0]); i++ {
		tail = tail[1:]
	}
	return fmt.Sprintf("%s\n\n... [%d characters truncated] ...\n\n%s", head, cut, tail), cut
}

func (w *headTail) drop(b []byte) {
	w.dropped += chars(b)
	w.droppedBytes += int64(len(b))
}

// chars counts the UTF-8 characters in b by their first bytes, so that a
// character split across writes is counted once.
func chars(b []byte) int64 {
	var n int64
	for _, c := range b {
		if utf8.RuneStart(c) {
			n++
		}
	}
	return n
}
