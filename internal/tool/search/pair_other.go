//go:build !amd64

package search

// vectorPair says indexPair scans with vector instructions; here it does
// not, and the scanner searches for a single rare byte instead.
const vectorPair = false

func indexPairBlocks(h []byte, off int, b1, m1, b2, m2 byte) int {
	for p := range (len(h) - off) &^ 15 {
		if h[p]|m1 == b1 && h[p+off]|m2 == b2 {
			return p
		}
	}
	return -1
}
