package main

import (
	"os/exec"
	"strings"
	"testing"
)

// TestBinaryLeavesOut checks that the tack binary does not link what would
// cost every process it starts: libpsx (in C: the binary becomes externally
// linked, about 9 MB more resident memory at every start) and
// go-seccomp-bpf's system call tables (the sandbox embeds its assembled
// programs instead); nor the hook tests' helpers and their JSON Schema
// validator, nor the MCP OAuth tests' servers and browser, which are for
// tests only.
func TestBinaryLeavesOut(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	deps := strings.Fields(string(out))
	if len(deps) < 50 {
		t.Fatalf("go list -deps listed %d packages: %q", len(deps), deps)
	}
	for _, dep := range deps {
		for _, banned := range []string{"kernel.org/pub/linux/libs/security/libcap/psx", "github.com/elastic/go-seccomp-bpf",
			"github.com/tackcode/tack/internal/hook/hooktest", "github.com/santhosh-tekuri/jsonschema",
			"github.com/tackcode/tack/internal/mcp/oauth/oauthtest",
			// The Temporal SDK would double the binary and its memory at
			// start: only cmd/tack-worker, a module of its own, links it.
			"go.temporal.io"} {
			if dep == banned || strings.HasPrefix(dep, banned+"/") {
				t.Errorf("tack links %s", dep)
			}
		}
	}
}
