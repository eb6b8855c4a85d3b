package search

import (
	"bytes"
	"math"
)

// notFound is a cursor position meaning "no occurrence in the region".
const notFound = math.MaxInt

// litScanner finds one literal. A literal of two bytes or more is found,
// where vector instructions allow, through its two rarest bytes at once
// (see indexPair), which lets few false candidates through even when each
// byte alone is common; otherwise through its rarest byte, in both cases
// when folded. Candidates are confirmed by comparison.
type litScanner struct {
	lit    []byte
	fold   bool
	rare   int  // offset in lit of the byte searched for
	lo, up byte // that byte in lower and upper case
	// pair: the offsets a < b of the two bytes searched for together,
	// each with its mask (see indexPair).
	pair   bool
	a, b   int
	ba, ma byte
	bb, mb byte
}

func newLitScanner(l literal) litScanner {
	s := litScanner{lit: l.s, fold: l.fold}
	rank := func(i int) int {
		c := l.s[i]
		r := int(byteRank[c])
		if l.fold {
			r = max(r, int(byteRank[upper(c)]))
		}
		return r
	}
	first, second := -1, -1
	for i := range l.s {
		switch {
		case first < 0 || rank(i) < rank(first):
			first, second = i, first
		case second < 0 || rank(i) < rank(second):
			second = i
		}
	}
	s.rare = first
	s.lo = l.s[s.rare]
	s.up = s.lo
	if l.fold {
		s.up = upper(s.lo)
	}
	if vectorPair && second >= 0 {
		s.pair = true
		s.a, s.b = min(first, second), max(first, second)
		s.ba, s.ma = s.pairByte(s.a)
		s.bb, s.mb = s.pairByte(s.b)
	}
	return s
}

// pairByte returns the byte at offset i of the literal and the mask that
// makes indexPair match it in either case when the literal is folded.
func (s *litScanner) pairByte(i int) (byte, byte) {
	c := s.lit[i]
	if s.fold && 'a' <= c && c <= 'z' {
		return c, 0x20
	}
	return c, 0
}

// cursor caches, for one literal within one region, the next occurrence
// and the next positions of its rare byte in each case. Each is valid
// while it is at or after the point searched from, so the region is
// scanned once however many times find is called.
type cursor struct{ hit, lo, up int }

// index returns the start of the first occurrence of s in b[from:to], or
// notFound.
func (s *litScanner) index(b []byte, from, to int, c *cursor) int {
	n := len(s.lit)
	if from+n > to {
		return notFound
	}
	if s.pair {
		return s.indexPair(b, from, to)
	}
	k := s.rare
	last := to - n + k // the last position the rare byte can take
	fails := 0
	for i := from + k; i <= last; {
		if c.lo < i {
			c.lo = indexByteFrom(b[:to], i, s.lo)
		}
		p := c.lo
		if s.up != s.lo {
			if c.up < i {
				c.up = indexByteFrom(b[:to], i, s.up)
			}
			p = min(p, c.up)
		}
		if p > last {
			return notFound
		}
		w := b[p-k : p-k+n]
		if !s.fold && bytes.Equal(w, s.lit) || s.fold && equalFoldASCII(w, s.lit) {
			return p - k
		}
		i = p + 1
		// When the "rare" byte turns out common here, bytes.Index's own
		// strategies do better.
		if fails++; !s.fold && fails > 32 && fails > (i-from)/16 {
			if j := bytes.Index(b[i-k:to], s.lit); j >= 0 {
				return i - k + j
			}
			return notFound
		}
	}
	return notFound
}

// indexPair is index through the literal's two rarest bytes.
func (s *litScanner) indexPair(b []byte, from, to int) int {
	n := len(s.lit)
	off := s.b - s.a
	for from+n <= to {
		// Candidate starts c in [from, to-n] put the pair's bytes at
		// c+a and c+b.
		p := indexPair(b[from+s.a:to-n+s.b+1], off, s.ba, s.ma, s.bb, s.mb)
		if p < 0 {
			return notFound
		}
		c := from + p
		w := b[c : c+n]
		if !s.fold && bytes.Equal(w, s.lit) || s.fold && equalFoldASCII(w, s.lit) {
			return c
		}
		from = c + 1
	}
	return notFound
}

// finder finds the earliest occurrence of any of a set of literals.
type finder struct {
	scanners []litScanner
	cursors  []cursor
	b        []byte
	to       int
}

func newFinder(lits []literal) *finder {
	f := &finder{}
	for _, l := range lits {
		f.scanners = append(f.scanners, newLitScanner(l))
	}
	f.cursors = make([]cursor, len(lits))
	return f
}

// reset starts a new region, b[:to].
func (f *finder) reset(b []byte, to int) {
	f.b, f.to = b, to
	for i := range f.cursors {
		f.cursors[i] = cursor{hit: -1, lo: -1, up: -1}
	}
}

// find returns the start of the earliest occurrence at or after from that
// ends within the region, or -1. Successive calls must not go backwards.
func (f *finder) find(from int) int {
	best := notFound
	for i := range f.scanners {
		c := &f.cursors[i]
		if c.hit < from {
			c.hit = f.scanners[i].index(f.b, from, f.to, c)
		}
		best = min(best, c.hit)
	}
	if best == notFound {
		return -1
	}
	return best
}

func indexByteFrom(b []byte, from int, c byte) int {
	if i := bytes.IndexByte(b[from:], c); i >= 0 {
		return from + i
	}
	return notFound
}

func upper(c byte) byte {
	if 'a' <= c && c <= 'z' {
		return c - 'a' + 'A'
	}
	return c
}

// equalFoldASCII reports whether b equals the lower-case lit, ignoring
// ASCII case.
func equalFoldASCII(b, lit []byte) bool {
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != lit[i] {
			return false
		}
	}
	return true
}

// byteRank orders bytes by how often they occur in source code, 0 for the
// rarest; the scanner searches for a literal's rarest byte. Measured over
// the text files of the Go distribution.
var byteRank = [256]uint8{
	0, 46, 36, 37, 38, 39, 47, 48, 1, 252, 248, 2, 3, 60, 4, 5,
	40, 6, 7, 8, 41, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19,
	255, 182, 226, 164, 167, 172, 178, 175, 232, 231, 186, 180, 243, 190, 235, 233,
	250, 236, 229, 219, 222, 204, 218, 199, 209, 201, 228, 183, 176, 224, 171, 159,
	157, 216, 191, 207, 202, 215, 193, 185, 184, 206, 163, 173, 196, 200, 192, 208,
	203, 170, 211, 221, 217, 187, 194, 181, 197, 179, 166, 189, 205, 188, 160, 220,
	165, 247, 223, 240, 238, 254, 239, 227, 225, 246, 168, 198, 241, 230, 249, 244,
	234, 169, 251, 245, 253, 237, 210, 195, 242, 214, 174, 213, 177, 212, 156, 20,
	155, 144, 154, 148, 125, 145, 138, 97, 149, 132, 136, 90, 111, 77, 98, 71,
	108, 91, 94, 112, 137, 139, 88, 129, 141, 135, 68, 72, 133, 140, 103, 78,
	87, 96, 85, 93, 128, 122, 110, 113, 92, 134, 109, 117, 121, 115, 100, 82,
	84, 130, 123, 120, 99, 101, 86, 161, 95, 147, 124, 104, 142, 116, 131, 83,
	21, 22, 162, 127, 63, 59, 51, 69, 58, 81, 80, 62, 119, 79, 152, 106,
	73, 67, 50, 53, 55, 75, 76, 89, 150, 153, 65, 66, 56, 42, 49, 52,
	107, 146, 158, 151, 102, 126, 143, 114, 105, 74, 70, 57, 61, 54, 43, 64,
	118, 23, 24, 25, 44, 26, 27, 28, 29, 30, 31, 32, 33, 34, 35, 45,
}
