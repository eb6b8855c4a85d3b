//go:build linux && amd64

package i386

import (
	"syscall"
	"testing"
)

// TestSocket: without a filter, the 32-bit entry point makes a socket.
func TestSocket(t *testing.T) {
	fd := Socket(syscall.AF_UNIX, syscall.SOCK_STREAM, 0)
	if fd < 0 {
		t.Skipf("the kernel refuses 32-bit system calls here (errno %d)", -fd)
	}
	syscall.Close(int(fd))
}
