package startheap

import (
	"math"
	"os"
	"os/exec"
	"runtime"
	"runtime/debug"
	"strings"
	"testing"
	"time"
)

// The runtime's GC settings belong to the process: each case runs in a
// child process of its own (this test binary, with STARTHEAP_CASE set).

var sink [][]byte

// garbage allocates n bytes in 64 KiB pieces that nothing keeps.
func garbage(n int) {
	for i := 0; i < n>>16; i++ {
		sink = append(sink[:0], make([]byte, 64<<10))
	}
}

func numGC() uint32 {
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.NumGC
}

// TestChild is the child process's side: it runs the case named by
// STARTHEAP_CASE and fails on what does not hold.
func TestChild(t *testing.T) {
	name := os.Getenv("STARTHEAP_CASE")
	if name == "" {
		t.Skip("run by TestStartHeap in a child process")
	}
	getenv := func(k string) string {
		if k == "GOGC" && name == "user-gogc" {
			return "50"
		}
		return ""
	}
	before := numGC()
	window := time.Hour
	if name == "window" {
		window = 50 * time.Millisecond
	}
	Set(64<<20, window, getenv)
	switch name {
	case "budget":
		garbage(48 << 20)
		if n := numGC() - before; n != 0 {
			t.Fatalf("%d collections under the budget", n)
		}
		garbage(128 << 20)
		if numGC() == before {
			t.Fatal("no collection past the budget")
		}
		// The cleanup that restores the pacing runs after the cycle, on
		// a goroutine of its own: a few more cycles give it the time.
		for i := 0; i < 100 && debug.SetMemoryLimit(-1) != math.MaxInt64; i++ {
			runtime.GC()
			runtime.Gosched()
		}
		if l := debug.SetMemoryLimit(-1); l != math.MaxInt64 {
			t.Fatalf("the memory limit stayed at %d", l)
		}
		if p := debug.SetGCPercent(100); p != 100 {
			t.Fatalf("GC percent %d after the first collection, want 100", p)
		}
	case "window":
		time.Sleep(time.Second)
		if n := numGC() - before; n != 0 {
			t.Fatalf("%d collections with no garbage", n)
		}
		if l := debug.SetMemoryLimit(-1); l != math.MaxInt64 {
			t.Fatalf("the memory limit stayed at %d after the window", l)
		}
		if p := debug.SetGCPercent(100); p != 100 {
			t.Fatalf("GC percent %d after the window, want 100", p)
		}
	case "user-gogc":
		if p := debug.SetGCPercent(100); p != 100 {
			t.Fatalf("GOGC set by the user, but Set changed the percent to %d", p)
		}
		if l := debug.SetMemoryLimit(-1); l != math.MaxInt64 {
			t.Fatalf("GOGC set by the user, but Set put a memory limit of %d", l)
		}
	}
}

func TestStartHeap(t *testing.T) {
	for _, name := range []string{"budget", "window", "user-gogc"} {
		t.Run(name, func(t *testing.T) {
			cmd := exec.Command(os.Args[0], "-test.run=^TestChild$", "-test.v")
			cmd.Env = append(os.Environ(), "STARTHEAP_CASE="+name, "GOGC=", "GOMEMLIMIT=")
			out, err := cmd.CombinedOutput()
			if err != nil || !strings.Contains(string(out), "--- PASS: TestChild") {
				t.Fatalf("child: %v\n%s", err, out)
			}
		})
	}
}
