//go:build !linux

package search

import (
	"os"
	"time"
)

// rawFile is an open file being searched.
type rawFile struct{ f *os.File }

func openRaw(path string) (rawFile, error) {
	f, err := os.Open(path)
	return rawFile{f}, err
}

// read reads into p; it returns 0 at end of file or on error.
func (f rawFile) read(p []byte) int {
	n, _ := f.f.Read(p)
	return n
}

// modTime returns the file's modification time.
func (f rawFile) modTime() time.Time {
	st, err := f.f.Stat()
	if err != nil {
		return time.Time{}
	}
	return st.ModTime()
}

func (f rawFile) close() { f.f.Close() }
