package search

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// BenchmarkFinder measures literal search over the Go sources.
func BenchmarkFinder(b *testing.B) {
	// The package's own sources, repeated, stand for source code.
	var corpus []byte
	files, _ := filepath.Glob("*.go")
	for len(corpus) < 4<<20 {
		for _, f := range files {
			data, _ := os.ReadFile(f)
			corpus = append(corpus, data...)
		}
	}
	for _, lit := range []literal{{s: []byte("func NewReader")}, {s: []byte("return err")}, {s: []byte("newreader"), fold: true}, {s: []byte("Reader(")}} {
		b.Run(string(lit.s), func(b *testing.B) {
			f := newFinder([]literal{lit})
			b.SetBytes(int64(len(corpus)))
			for b.Loop() {
				f.reset(corpus, len(corpus))
				for from := 0; ; {
					i := f.find(from)
					if i < 0 {
						break
					}
					from = i + 1
				}
			}
		})
		if !lit.fold {
			b.Run("bytes.Index/"+string(lit.s), func(b *testing.B) {
				b.SetBytes(int64(len(corpus)))
				for b.Loop() {
					for from := 0; ; {
						i := bytes.Index(corpus[from:], lit.s)
						if i < 0 {
							break
						}
						from += i + 1
					}
				}
			})
		}
	}
}
