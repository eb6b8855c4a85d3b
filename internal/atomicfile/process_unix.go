//go:build unix

package atomicfile

import (
	"errors"
	"io/fs"
	"syscall"
)

// alive reports whether process pid may still be running: it exists, even
// if it belongs to another user.
func alive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}

// OwnerOf returns the owner of the file fi describes, nil when it has none
// the system reports.
func OwnerOf(fi fs.FileInfo) *Owner {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return nil
	}
	return &Owner{UID: int(st.Uid), GID: int(st.Gid)}
}
