package runner

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestTerminalHelper is the worker of TestKilledWorkerLeavesNoCommand: run
// as a process of its own, it runs $TACK_TERMINAL_COMMAND through
// processTerminal until it is killed.
func TestTerminalHelper(t *testing.T) {
	command := os.Getenv("TACK_TERMINAL_COMMAND")
	if command == "" {
		t.Skip("the helper process of TestKilledWorkerLeavesNoCommand")
	}
	_, _, _ = processTerminal{}.Run(context.Background(), []string{"/bin/bash", "-c", command}, t.TempDir(), os.Environ())
}

// alive reports whether pid is a process that has not ended (a zombie
// has).
func alive(pid int) bool {
	data, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return false
	}
	// The state follows the command's name in parentheses.
	s := string(data)
	i := strings.LastIndexByte(s, ')')
	return i < 0 || i+2 >= len(s) || s[i+2] != 'Z'
}

// A worker killed while its Bash command runs takes the whole command
// with it, not only the shell: a process the shell started (here a
// background sleep the shell waits for) ends too.
func TestKilledWorkerLeavesNoCommand(t *testing.T) {
	pidFile := filepath.Join(t.TempDir(), "sleep.pid")
	worker := exec.Command(os.Args[0], "-test.run=^TestTerminalHelper$")
	worker.Env = append(os.Environ(), "TACK_TERMINAL_COMMAND=sleep 300 & echo $! > "+pidFile+".tmp && mv "+pidFile+".tmp "+pidFile+"; wait")
	if err := worker.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = worker.Process.Kill(); _ = worker.Wait() }()
	var pid int
	for end := time.Now().Add(60 * time.Second); pid == 0; time.Sleep(50 * time.Millisecond) {
		if time.Now().After(end) {
			t.Fatal("the command did not start its sleep within 60 s")
		}
		if data, err := os.ReadFile(pidFile); err == nil {
			pid, _ = strconv.Atoi(strings.TrimSpace(string(data)))
		}
	}
	if err := worker.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = worker.Wait()
	for end := time.Now().Add(60 * time.Second); alive(pid); time.Sleep(50 * time.Millisecond) {
		if time.Now().After(end) {
			_ = syscall.Kill(pid, syscall.SIGKILL)
			t.Fatalf("the killed worker's command (sleep, pid %d) still runs 60 s later", pid)
		}
	}
}
