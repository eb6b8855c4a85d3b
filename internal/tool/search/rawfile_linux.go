//go:build linux

package search

import (
	"syscall"
	"time"
)

// rawFile is a file read through bare system calls: for the many small
// files of a search, os.File's poller registration and finalizer cost more
// than the read.
type rawFile int

// openRaw opens path for reading. O_NONBLOCK keeps a FIFO that replaced a
// regular file from blocking the open.
func openRaw(path string) (rawFile, error) {
	for {
		fd, err := syscall.Open(path, syscall.O_RDONLY|syscall.O_CLOEXEC|syscall.O_NONBLOCK, 0)
		if err == syscall.EINTR {
			continue
		}
		return rawFile(fd), err
	}
}

// read reads into p; it returns 0 at end of file or on error.
func (f rawFile) read(p []byte) int {
	for {
		n, err := syscall.Read(int(f), p)
		if err == syscall.EINTR {
			continue
		}
		if err != nil || n < 0 {
			return 0
		}
		return n
	}
}

// modTime returns the file's modification time.
func (f rawFile) modTime() time.Time {
	var st syscall.Stat_t
	if err := syscall.Fstat(int(f), &st); err != nil {
		return time.Time{}
	}
	return time.Unix(st.Mtim.Unix())
}

func (f rawFile) close() { syscall.Close(int(f)) }
