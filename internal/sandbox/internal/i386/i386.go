//go:build linux && amd64

// Package i386 makes system calls through the 32-bit x86 entry point (int
// 0x80) from a 64-bit process, for the sandbox's tests: a seccomp filter
// written for x86_64 alone would not see them.
package i386

// Socket calls the i386 socket(2) (number 359) and returns its result: a
// descriptor, or minus the error number.
func Socket(domain, typ, proto uint32) int32
