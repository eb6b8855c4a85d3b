//go:build amd64

package search

// vectorPair says indexPair scans with vector instructions, which makes it
// the better prefilter for literals of two bytes or more.
const vectorPair = true

//go:noescape
func indexPairBlocks(h []byte, off int, b1, m1, b2, m2 byte) int
