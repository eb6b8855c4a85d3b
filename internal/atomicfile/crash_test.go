package atomicfile

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// The ways a write can be made: through an unnamed file (O_TMPFILE, where
// the system has it) and through a named temporary file (elsewhere).
var ways = []struct {
	name  string
	named bool
}{{"unnamed", false}, {"named", true}}

// The helper process: this test binary run again with
// TACK_ATOMICFILE_HELPER set, writing TACK_ATOMICFILE_TARGET until it is
// killed.
//
//	stop  one write of 32 MB that stops once the data is complete, before
//	      it takes the target's name, after printing "ready"
//	loop  writes of 32 MB of 'a', then of 'b', … printing the count after each
func TestHelperProcess(t *testing.T) {
	mode := os.Getenv("TACK_ATOMICFILE_HELPER")
	if mode == "" {
		return
	}
	target := os.Getenv("TACK_ATOMICFILE_TARGET")
	o := Options{Mode: 0o644, named: os.Getenv("TACK_ATOMICFILE_NAMED") == "1"}
	switch mode {
	case "stop":
		o.BeforeCommit = func() error {
			fmt.Println("ready")
			select {} // until killed
		}
		_ = WriteFile(target, bigData('s'), o)
	case "loop":
		for i := 0; ; i++ {
			if err := WriteFile(target, bigData("ab"[i%2]), o); err != nil {
				fmt.Println("error:", err)
				os.Exit(1)
			}
			fmt.Println(i)
		}
	}
	os.Exit(2)
}

func bigData(c byte) []byte { return bytes.Repeat([]byte{c}, 32<<20) }

// helper starts the helper process writing target, and returns it with its
// output.
func helper(t *testing.T, mode, target string, named bool) (*exec.Cmd, *bufio.Scanner) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperProcess$")
	cmd.Env = append(os.Environ(), "TACK_ATOMICFILE_HELPER="+mode, "TACK_ATOMICFILE_TARGET="+target)
	if named {
		cmd.Env = append(cmd.Env, "TACK_ATOMICFILE_NAMED=1")
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	return cmd, bufio.NewScanner(out)
}

// kill sends SIGKILL to the helper and waits for it to be gone.
func kill(t *testing.T, cmd *exec.Cmd) {
	t.Helper()
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
}

func readString(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// whole reports which whole content data is, or that it is none of them.
func whole(data string) string {
	switch {
	case data == "old\r\n":
		return "old"
	case len(data) == 32<<20 && strings.Count(data, data[:1]) == len(data):
		return data[:1]
	}
	return fmt.Sprintf("partial (%d bytes)", len(data))
}

// TestKilledAtTheLastStep kills a writer once its data is complete and
// synced, just before it would take the target's name. Through an unnamed
// file nothing is left; through a named one the temporary file stays —
// named after the dead process — until the next write of the same file,
// which removes it. The target is the old file throughout.
func TestKilledAtTheLastStep(t *testing.T) {
	for _, w := range ways {
		t.Run(w.name, func(t *testing.T) {
			dir := t.TempDir()
			target := filepath.Join(dir, "f.txt")
			if err := os.WriteFile(target, []byte("old\r\n"), 0o600); err != nil {
				t.Fatal(err)
			}
			cmd, out := helper(t, "stop", target, w.named)
			if !out.Scan() || out.Text() != "ready" {
				t.Fatalf("helper: %q %v", out.Text(), out.Err())
			}
			kill(t, cmd)
			if got := whole(readString(t, target)); got != "old" {
				t.Errorf("target after the kill: %s", got)
			}
			names := entries(t, dir)
			if !w.named {
				if len(names) != 1 {
					t.Errorf("an unnamed write left %v", names)
				}
			} else {
				left := ".f.txt.tack-" + strconv.Itoa(cmd.Process.Pid) + "-"
				if len(names) != 2 || !strings.HasPrefix(names[0], left) {
					t.Fatalf("a named write killed at the last step should leave its temporary file %s…; the folder holds %v", left, names)
				}
			}
			if err := Write(target, []byte("new\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			if names := entries(t, dir); len(names) != 1 || readString(t, target) != "new\n" {
				t.Errorf("after the next write the folder holds %v", names)
			}
		})
	}
}

// TestKilledWhileWriting kills a writer of 32 MB files in the middle of
// its third write. The target is the old file or one of the new ones,
// whole, and once the file is written again no temporary file remains.
func TestKilledWhileWriting(t *testing.T) {
	for _, w := range ways {
		t.Run(w.name, func(t *testing.T) {
			dir := t.TempDir()
			target := filepath.Join(dir, "f.txt")
			if err := os.WriteFile(target, []byte("old\r\n"), 0o600); err != nil {
				t.Fatal(err)
			}
			cmd, out := helper(t, "loop", target, w.named)
			for range 2 {
				if !out.Scan() || strings.HasPrefix(out.Text(), "error") {
					t.Fatalf("helper: %q %v", out.Text(), out.Err())
				}
			}
			kill(t, cmd)
			if got := whole(readString(t, target)); got != "a" && got != "b" {
				t.Errorf("target after the kill: %s", got)
			}
			if err := Write(target, []byte("new\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			if names := entries(t, dir); len(names) != 1 || readString(t, target) != "new\n" {
				t.Errorf("after the next write the folder holds %v", names)
			}
		})
	}
}

// TestSweepRemovesOnlyTheDeadsFiles: the temporary files a write removes
// are those of its own file left by processes that have ended; those of a
// live process (a write in progress), of this process, of other files, and
// names that are not tack's, stay.
func TestSweepRemovesOnlyTheDeadsFiles(t *testing.T) {
	dir := t.TempDir()
	gone := exec.Command("true")
	if err := gone.Run(); err != nil {
		t.Fatal(err)
	}
	dead := strconv.Itoa(gone.Process.Pid)
	live := strconv.Itoa(os.Getppid())
	self := strconv.Itoa(os.Getpid())
	stale := []string{".f.txt.tack-" + dead + "-1a.tmp", ".f.txt.tack-" + dead + "-zz.tmp"}
	kept := []string{
		".f.txt.tack-" + live + "-1a.tmp",
		".f.txt.tack-" + self + "-1a.tmp",
		".f.txt.tack-x1-1a.tmp",
		".f.txt.tack-" + dead + "-1a.tmp.keep",
		".g.txt.tack-" + dead + "-1a.tmp",
		"f.txt.tack-" + dead + "-1a.tmp",
	}
	for _, n := range append(stale, kept...) {
		if err := os.WriteFile(filepath.Join(dir, n), []byte("x"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := Write(filepath.Join(dir, "f.txt"), []byte("new"), 0o644); err != nil {
		t.Fatal(err)
	}
	want := append([]string{"f.txt"}, kept...)
	got := entries(t, dir)
	for _, n := range want {
		if !contains(got, n) {
			t.Errorf("%s was removed", n)
		}
	}
	for _, n := range stale {
		if contains(got, n) {
			t.Errorf("%s, left by a process that has ended, is still there", n)
		}
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// TestExclusiveCreates: an exclusive write creates the file whole, and
// fails without a trace when the name is taken.
func TestExclusiveCreates(t *testing.T) {
	for _, w := range ways {
		t.Run(w.name, func(t *testing.T) {
			dir := t.TempDir()
			p := filepath.Join(dir, "s.jsonl")
			o := Options{Mode: 0o600, Exclusive: true, named: w.named}
			if err := WriteFile(p, []byte("one\n"), o); err != nil {
				t.Fatal(err)
			}
			err := WriteFile(p, []byte("two\n"), o)
			if !errors.Is(err, fs.ErrExist) {
				t.Errorf("second exclusive write: %v, want one matching fs.ErrExist", err)
			}
			if got := readString(t, p); got != "one\n" {
				t.Errorf("file holds %q", got)
			}
			if fi, err := os.Stat(p); err != nil || fi.Mode().Perm() != 0o600 {
				t.Errorf("mode %v %v", fi.Mode(), err)
			}
			if names := entries(t, dir); len(names) != 1 {
				t.Errorf("folder holds %v", names)
			}
		})
	}
}

// TestModesBothWays: the mode is set as given, set-id bits included, or
// shaped by the umask when asked; an owner given is kept.
func TestModesBothWays(t *testing.T) {
	for _, w := range ways {
		t.Run(w.name, func(t *testing.T) {
			dir := t.TempDir()
			p := filepath.Join(dir, "tool")
			for _, mode := range []fs.FileMode{0o755 | fs.ModeSetgid, 0o600, 0o666} {
				if err := WriteFile(p, []byte("x"), Options{Mode: mode, named: w.named}); err != nil {
					t.Fatal(err)
				}
				fi, err := os.Stat(p)
				if err != nil {
					t.Fatal(err)
				}
				if got := fi.Mode() & (fs.ModePerm | fs.ModeSetgid); got != mode {
					t.Errorf("mode %v, want %v", got, mode)
				}
				if o := OwnerOf(fi); o != nil && (o.UID != os.Getuid()) {
					t.Errorf("owner %+v", o)
				}
			}
			fi, _ := os.Stat(p)
			if err := WriteFile(p, []byte("y"), Options{Mode: 0o640, Owner: OwnerOf(fi), named: w.named}); err != nil {
				t.Fatal(err)
			}
			if fi, _ := os.Stat(p); fi.Mode().Perm() != 0o640 {
				t.Errorf("with an owner: mode %v", fi.Mode())
			}
			fresh := filepath.Join(dir, "fresh")
			if err := WriteFile(fresh, []byte("z"), Options{Mode: 0o666, Umask: true, named: w.named}); err != nil {
				t.Fatal(err)
			}
			probe := filepath.Join(dir, "probe")
			f, err := os.OpenFile(probe, os.O_CREATE|os.O_WRONLY, 0o666) // mode less the umask
			if err != nil {
				t.Fatal(err)
			}
			f.Close()
			a, _ := os.Stat(fresh)
			b, _ := os.Stat(probe)
			if a.Mode().Perm() != b.Mode().Perm() {
				t.Errorf("with the umask: mode %v, want %v as os.OpenFile gives", a.Mode().Perm(), b.Mode().Perm())
			}
		})
	}
}
