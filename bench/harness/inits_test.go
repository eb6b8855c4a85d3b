package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// inits reads the runtime's init trace of a real program: the floor's
// hello, whose initialisers are those of the packages it links.
func TestInitsReadsTheTrace(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "hello")
	build := exec.Command("go", "build", "-o", bin, "../floor/hello")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	list, err := inits(bin)
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for i, c := range list {
		if c.pkg == "os" {
			found = true
		}
		if c.ms < 0 || c.bytes < 0 || (i > 0 && c.ms > list[i-1].ms) {
			t.Errorf("entry %d %+v: negative, or not costliest first", i, c)
		}
	}
	if !found {
		t.Errorf("no init of package os in %+v", list)
	}
}
