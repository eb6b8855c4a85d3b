//go:build unix

package prompt

import "golang.org/x/sys/unix"

// osVersion is the kernel name and release, e.g. "Linux 6.1.0".
func osVersion() string {
	var u unix.Utsname
	if err := unix.Uname(&u); err != nil {
		return ""
	}
	return unix.ByteSliceToString(u.Sysname[:]) + " " + unix.ByteSliceToString(u.Release[:])
}
