package sandbox

import (
	"fmt"
	"os"
	"os/exec"
	"unsafe"

	"golang.org/x/sys/unix"
)

// seccompIndex is the seccomp policy a stage needs, as an index of
// internal/filter's Configs (which documents what each refuses): 2 for the
// Landlock backend, plus 1 when unix sockets are allowed.
func seccompIndex(cfg stageConfig) int {
	i := 0
	if cfg.Backend == kindLandlock {
		i += 2
	}
	if cfg.AllowUnix {
		i++
	}
	return i
}

// seccompFD hands program i to cmd on a pipe, for bubblewrap's --seccomp:
// the descriptor number cmd will have, and a function closing tack's end.
func seccompFD(cmd *exec.Cmd, i int) (fd int, closeFn func(), err error) {
	prog, err := seccompProgram(i)
	if err != nil {
		return 0, nil, err
	}
	r, w, err := os.Pipe()
	if err != nil {
		return 0, nil, fmt.Errorf("seccomp: %w", err)
	}
	// A few hundred bytes: the pipe holds them until bubblewrap reads.
	_, err = w.Write(unsafe.Slice((*byte)(unsafe.Pointer(&prog[0])), len(prog)*int(unsafe.Sizeof(prog[0]))))
	w.Close()
	if err != nil {
		r.Close()
		return 0, nil, fmt.Errorf("seccomp: %w", err)
	}
	fd = 3 + len(cmd.ExtraFiles)
	cmd.ExtraFiles = append(cmd.ExtraFiles, r)
	return fd, func() { r.Close() }, nil
}

// loadSeccomp installs the stage's seccomp program on every thread of the
// process, after setting no_new_privs.
func loadSeccomp(cfg stageConfig) error {
	prog, err := seccompProgram(seccompIndex(cfg))
	if err != nil {
		return err
	}
	fprog := unix.SockFprog{Len: uint16(len(prog)), Filter: &prog[0]}
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("seccomp: prctl(PR_SET_NO_NEW_PRIVS): %w", err)
	}
	if _, _, errno := unix.Syscall(unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER,
		unix.SECCOMP_FILTER_FLAG_TSYNC, uintptr(unsafe.Pointer(&fprog))); errno != 0 {
		return fmt.Errorf("seccomp: %w", errno)
	}
	return nil
}
