// Command launch runs one command and reports what the kernel accounted to
// it: its start and exit times, CPU time and peak RSS, as one JSON line on
// file descriptor 3. The harness starts every measured program through it
// because a child's peak RSS can never read below that of the process that
// started it: Linux records the spawning process's resident set in the
// child's peak when the child calls exec. Started from the harness, a
// 1 MB program reads as the harness's 25 MB; started from this small
// static program, it reads as itself, down to launch's own peak, which it
// reports too.
//
// Usage: launch COMMAND [ARG...] 3>REPORT
package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Report is the line launch writes on descriptor 3.
type Report struct {
	StartUnixNano int64 `json:"start_unix_nano"`
	ExitUnixNano  int64 `json:"exit_unix_nano"`
	UserNanos     int64 `json:"user_nanos"`
	SystemNanos   int64 `json:"system_nanos"`
	MaxRSSKB      int64 `json:"max_rss_kb"`
	SelfMaxRSSKB  int64 `json:"self_max_rss_kb"` // launch's own peak: the lowest figure it can report
	ExitCode      int   `json:"exit_code"`
}

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: launch COMMAND [ARG...] 3>REPORT")
		os.Exit(2)
	}
	report := os.NewFile(3, "report")
	if err := run(os.Args[1:], report); err != nil {
		fmt.Fprintln(os.Stderr, "launch:", err)
		os.Exit(1)
	}
}

func run(args []string, report *os.File) error {
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	r := Report{}
	start := time.Now().UnixNano()
	err := cmd.Run()
	r.StartUnixNano, r.ExitUnixNano = start, time.Now().UnixNano()
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		return err
	}
	r.ExitCode = cmd.ProcessState.ExitCode()
	r.UserNanos, r.SystemNanos = int64(cmd.ProcessState.UserTime()), int64(cmd.ProcessState.SystemTime())
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		r.MaxRSSKB = ru.Maxrss
	}
	if r.SelfMaxRSSKB, err = peakRSS(); err != nil {
		return err
	}
	line, err := json.Marshal(r)
	if err != nil {
		return err
	}
	_, err = report.Write(append(line, '\n'))
	return err
}

// peakRSS is this process's own peak resident set in KB, VmHWM: not its
// getrusage figure, which holds its parent's peak for the reason above.
func peakRSS() (int64, error) {
	status, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0, err
	}
	for line := range strings.Lines(string(status)) {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			return strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
		}
	}
	return 0, errors.New("no VmHWM in /proc/self/status")
}
