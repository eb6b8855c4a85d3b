package search

// indexPair returns the first position p of h, with p+off < len(h), where
// h[p]|m1 == b1 and h[p+off]|m2 == b2, or -1. A mask of 0x20 with a
// lower-case letter matches the letter in either case; a mask of 0 matches
// the byte exactly.
func indexPair(h []byte, off int, b1, m1, b2, m2 byte) int {
	n := len(h) - off
	if n <= 0 {
		return -1
	}
	blocks := n &^ 15
	if blocks > 0 {
		if p := indexPairBlocks(h, off, b1, m1, b2, m2); p >= 0 {
			return p
		}
	}
	for p := blocks; p < n; p++ {
		if h[p]|m1 == b1 && h[p+off]|m2 == b2 {
			return p
		}
	}
	return -1
}
