//go:build !amd64

package sandbox

import (
	"github.com/tackcode/tack/internal/sandbox/internal/filter"
	"golang.org/x/sys/unix"
)

// seccompProgram assembles policy i at run time (amd64 embeds them).
func seccompProgram(i int) ([]unix.SockFilter, error) { return filter.Program(filter.Configs[i]) }
