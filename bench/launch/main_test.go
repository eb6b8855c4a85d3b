package main_test

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
)

// TestReportsTheChildNotItsSpawner is why launch exists: a child started
// straight from a process with a large resident set reads as that process
// at least, while through launch it reads as itself.
func TestReportsTheChildNotItsSpawner(t *testing.T) {
	dir := t.TempDir()
	launch := filepath.Join(dir, "launch")
	build := exec.Command("go", "build", "-o", launch, ".")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	ballast := make([]byte, 64<<20) // this process's resident set: above 64 MiB
	for i := range ballast {
		ballast[i] = 1
	}

	direct := exec.Command("true")
	if err := direct.Run(); err != nil {
		t.Fatal(err)
	}
	directKB := direct.ProcessState.SysUsage().(*syscall.Rusage).Maxrss

	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(launch, "true")
	cmd.ExtraFiles = []*os.File{w}
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	w.Close()
	var rep struct {
		Start        int64 `json:"start_unix_nano"`
		Exit         int64 `json:"exit_unix_nano"`
		MaxRSSKB     int64 `json:"max_rss_kb"`
		SelfMaxRSSKB int64 `json:"self_max_rss_kb"`
		ExitCode     int   `json:"exit_code"`
	}
	if err := json.NewDecoder(r).Decode(&rep); err != nil {
		t.Fatalf("report: %v", err)
	}
	if directKB < 64<<10 {
		t.Logf("started straight from here, true read %d KB: this kernel does not count the spawner", directKB)
	}
	if rep.MaxRSSKB <= 0 || rep.MaxRSSKB >= 16<<10 {
		t.Errorf("through launch, true read %d KB: want its own few MB (launch's own peak %d KB)", rep.MaxRSSKB, rep.SelfMaxRSSKB)
	}
	if rep.SelfMaxRSSKB <= 0 || rep.SelfMaxRSSKB >= 16<<10 {
		t.Errorf("launch's own peak %d KB", rep.SelfMaxRSSKB)
	}
	if rep.ExitCode != 0 || rep.Start <= 0 || rep.Exit < rep.Start {
		t.Errorf("exit code %d, start %d, exit %d", rep.ExitCode, rep.Start, rep.Exit)
	}
	_ = ballast[len(ballast)-1]
}
