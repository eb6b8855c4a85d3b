// Package testbin builds the tack binary for the tests that run it as a
// process (end-to-end tests, the SDK interop tests), once per test binary.
package testbin

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
)

// Main builds tack into a temporary folder, sets *bin to its path, runs
// the tests and exits with their status. flags are more go build flags
// ("-race"). It is meant to be a test package's TestMain body.
func Main(m *testing.M, bin *string, flags ...string) {
	dir, err := os.MkdirTemp("", "tack-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "build tack:", err)
		os.Exit(1)
	}
	*bin = filepath.Join(dir, "tack")
	args := append([]string{"build", "-o", *bin}, flags...)
	build := exec.Command("go", append(args, "github.com/tackcode/tack/cmd/tack")...)
	build.Env = BuildEnv(flags...)
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "build tack:", err)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// BuildEnv is the environment in which to build tack as the README says
// to: without cgo (CGO_ENABLED=0), a static binary that maps no C library.
// The race detector needs cgo, so a "-race" build keeps it.
func BuildEnv(flags ...string) []string {
	if slices.Contains(flags, "-race") {
		return os.Environ()
	}
	return append(os.Environ(), "CGO_ENABLED=0")
}

// Gopls is the gopls the language-server tests run: $TACK_TEST_GOPLS, else
// the one scripts/test builds into ~/.cache/tack-test/bin. Missing, it
// fails the test in CI (CI set) and skips it elsewhere.
func Gopls(t testing.TB) string {
	t.Helper()
	p := os.Getenv("TACK_TEST_GOPLS")
	if p == "" {
		home, _ := os.UserHomeDir()
		p = filepath.Join(home, ".cache", "tack-test", "bin", "gopls")
	}
	if _, err := os.Stat(p); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("gopls missing at %s (scripts/test builds it): %v", p, err)
		}
		t.Skipf("gopls missing at %s; run scripts/test", p)
	}
	return p
}
