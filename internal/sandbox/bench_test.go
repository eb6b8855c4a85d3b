package sandbox

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// BenchmarkSandboxedCommand measures the time to run `bash -c true`
// directly, in bare bubblewrap with the same namespaces (no stage, no
// protected paths), through the sandbox on each backend, and with the
// network proxy attached — in a git repository, so that the protected
// paths are looked for every time. The differences are what the sandbox
// adds per command:
//
//	go test ./internal/sandbox -run '^$' -bench SandboxedCommand -benchtime 200x
func BenchmarkSandboxedCommand(b *testing.B) {
	dir := b.TempDir()
	if out, err := exec.Command("git", "init", "-q", dir).CombinedOutput(); err != nil {
		b.Skipf("git: %v %s", err, out)
	}
	os.MkdirAll(filepath.Join(dir, ".claude"), 0o755)
	run := func(b *testing.B, wrap func(*exec.Cmd) func()) {
		for b.Loop() {
			cmd := exec.Command("/bin/bash", "-c", "true")
			cmd.Dir = dir
			release := wrap(cmd)
			if out, err := cmd.CombinedOutput(); err != nil {
				b.Fatalf("%v: %s", err, out)
			}
			release()
		}
	}
	b.Run("direct", func(b *testing.B) { run(b, func(*exec.Cmd) func() { return func() {} }) })
	b.Run("bwrap-bare", func(b *testing.B) {
		be, err := probeBwrap(exec.LookPath)
		if err != nil {
			b.Skip(err)
		}
		run(b, func(cmd *exec.Cmd) func() {
			args := append(namespaceArgs(be.userNS, be.nestedOff), "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp", "--bind", dir, dir, "--")
			cmd.Args = append(append([]string{be.bwrap}, args...), cmd.Args...)
			cmd.Path = be.bwrap
			return func() {}
		})
	})
	for _, tc := range []struct {
		name, backend string
		network       Network
	}{
		{"sandbox-bwrap", kindBwrap, Network{}},
		{"sandbox-bwrap-proxy", kindBwrap, Network{AllowedDomains: []string{"example.com"}}},
		{"sandbox-landlock", kindLandlock, Network{}},
		{"sandbox-landlock-proxy", kindLandlock, Network{AllowedDomains: []string{"example.com"}}},
	} {
		b.Run(tc.name, func(b *testing.B) {
			sb, err := New(Settings{Enabled: true, Network: tc.network}, Options{
				Writable: func() []string { return []string{dir} },
				Getenv: func(k string) string {
					if k == "TACK_SANDBOX" {
						return tc.backend
					}
					return os.Getenv(k)
				},
			})
			if err != nil {
				b.Skip(err)
			}
			defer sb.Close()
			run(b, func(cmd *exec.Cmd) func() {
				release, err := sb.Wrap(cmd, "true", false, nil)
				if err != nil {
					b.Fatal(err)
				}
				return release
			})
		})
	}
}
