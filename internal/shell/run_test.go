package shell

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// hang bounds how long anything that should be prompt may take; it only
// catches hangs.
const hang = 10 * time.Second

// testDir returns a fresh directory with symlinks resolved, as pwd -P
// reports it.
func testDir(t *testing.T) string {
	t.Helper()
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

func run(t *testing.T, s *Shell, command string) Output {
	t.Helper()
	out, err := s.Run(context.Background(), command, RunOptions{})
	if err != nil {
		t.Fatalf("run %q: %v", command, err)
	}
	return out
}

// programs are the shells available here to run the portable tests with.
func programs(t *testing.T) []string {
	var ps []string
	for _, p := range []string{"/bin/bash", "/usr/bin/zsh", "/bin/zsh", "/bin/sh"} {
		if isExecutable(p) {
			ps = append(ps, p)
		}
	}
	if len(ps) == 0 {
		t.Skip("no shell")
	}
	return ps
}

func withProgram(s *Shell, program string) *Shell {
	s.program = program
	return s
}

func TestRunOutputsAndExitCode(t *testing.T) {
	for _, p := range programs(t) {
		t.Run(p, func(t *testing.T) {
			s := withProgram(New(testDir(t), nil), p)
			out := run(t, s, `echo out; echo err >&2; echo 'it'"'"'s'; exit 3`)
			if out.Stdout != "out\nit's\n" || out.Stderr != "err\n" || out.ExitCode != 3 {
				t.Fatalf("got %+v", out)
			}
			if out.TimedOut || out.Interrupted || out.StdoutCut != 0 {
				t.Fatalf("got %+v", out)
			}
			if out := run(t, s, "true"); out.ExitCode != 0 || out.Stdout != "" || out.Stderr != "" {
				t.Fatalf("true: %+v", out)
			}
			if out := run(t, s, "kill -KILL $$"); out.ExitCode != 128+9 {
				t.Fatalf("killed: exit %d", out.ExitCode)
			}
			// Stdin is /dev/null, so a reader ends at once.
			if out := run(t, s, "cat; echo done"); out.Stdout != "done\n" {
				t.Fatalf("cat: %+v", out)
			}
		})
	}
}

func TestCwdPersists(t *testing.T) {
	for _, p := range programs(t) {
		t.Run(p, func(t *testing.T) {
			root := testDir(t)
			for _, d := range []string{"sub", "sub/deeper", "with space"} {
				if err := os.Mkdir(filepath.Join(root, d), 0o755); err != nil {
					t.Fatal(err)
				}
			}
			s := withProgram(New(root, nil), p)
			steps := []struct{ command, want string }{
				{"cd sub", "sub"},
				{"pwd", "sub"},
				{"cd deeper; false", "sub/deeper"},   // a failing command keeps its cd
				{"cd ..; exit 4", "sub"},             // so does exit
				{"cd /nonexistent-dir-x", "sub"},     // a failed cd changes nothing
				{`cd "../with space"`, "with space"}, // quoting
				{"(cd ..)", "with space"},            // a subshell's cd does not count
			}
			for _, st := range steps {
				out := run(t, s, st.command)
				want := filepath.Join(root, st.want)
				if out.Cwd != want || s.Cwd() != want || out.CwdReset {
					t.Fatalf("after %q: cwd %q (out %q, reset %v), want %q", st.command, s.Cwd(), out.Cwd, out.CwdReset, want)
				}
			}
			if out := run(t, s, "pwd"); out.Stdout != filepath.Join(root, "with space")+"\n" {
				t.Fatalf("pwd printed %q", out.Stdout)
			}
		})
	}
}

func TestCwdVanished(t *testing.T) {
	root := testDir(t)
	s := New(root, nil)
	run(t, s, "mkdir -p a/b && cd a/b")
	if err := os.RemoveAll(filepath.Join(root, "a")); err != nil {
		t.Fatal(err)
	}
	out := run(t, s, "pwd")
	if out.Stdout != root+"\n" || !out.CwdReset || s.Cwd() != root {
		t.Fatalf("removed behind its back: %+v", out)
	}

	// The command removes its own directory.
	run(t, s, "mkdir -p c && cd c")
	out = run(t, s, `rmdir "$PWD"`)
	if !out.CwdReset || s.Cwd() != root {
		t.Fatalf("removed by the command: %+v, cwd %s", out, s.Cwd())
	}

	// Even the starting directory is gone: the nearest ancestor is used.
	start := filepath.Join(root, "start")
	os.Mkdir(start, 0o755)
	s = New(start, nil)
	os.Remove(start)
	if out := run(t, s, "pwd"); out.Stdout != root+"\n" || !out.CwdReset {
		t.Fatalf("start gone: %+v", out)
	}
}

func TestOnCwdChange(t *testing.T) {
	root := testDir(t)
	link := filepath.Join(t.TempDir(), "link")
	if err := os.Symlink(root, link); err != nil {
		t.Fatal(err)
	}
	// Started through a link: pwd -P names the same directory otherwise,
	// which is not a move.
	s := New(link, nil)
	var moves [][2]string
	s.OnCwdChange(func(ctx context.Context, from, to string) {
		if ctx == nil {
			t.Error("no context")
		}
		moves = append(moves, [2]string{from, to})
	})
	sub := filepath.Join(root, "sub")
	for _, c := range []struct {
		command string
		want    [][2]string
	}{
		{"true", nil},
		{"mkdir sub && cd sub", [][2]string{{root, sub}}},
		{"ls", nil},
		{"cd .. && cd sub", nil}, // back where it was: no move
		{"cd /nonexistent", nil}, // a failed cd stays
		{"cd ..", [][2]string{{sub, root}}},
		{"cd sub", [][2]string{{root, sub}}},
		// The command removes its own directory: the shell falls back to
		// where it started, and that is a move too.
		{`rmdir "$PWD"`, [][2]string{{sub, link}}},
	} {
		moves = nil
		run(t, s, c.command)
		if !slices.Equal(moves, c.want) {
			t.Errorf("%s: moves %v, want %v", c.command, moves, c.want)
		}
	}
	// The session moving the shell itself is not reported.
	moves = nil
	if err := s.SetCwd(t.TempDir()); err != nil {
		t.Fatal(err)
	}
	run(t, s, "true")
	if moves != nil {
		t.Errorf("SetCwd reported as %v", moves)
	}
}

func TestSetCwd(t *testing.T) {
	root := testDir(t)
	s := New(root, nil)
	if err := s.SetCwd(filepath.Join(root, "missing")); err == nil {
		t.Fatal("SetCwd accepted a missing directory")
	}
	os.Mkdir(filepath.Join(root, "d"), 0o755)
	if err := s.SetCwd(filepath.Join(root, "d")); err != nil {
		t.Fatal(err)
	}
	if out := run(t, s, "pwd"); out.Stdout != filepath.Join(root, "d")+"\n" {
		t.Fatalf("pwd %q", out.Stdout)
	}
}

func TestEnv(t *testing.T) {
	env := []string{"PATH=" + os.Getenv("PATH"), "FOO=bar baz", "CLAUDECODE=0"}
	s := New(testDir(t), env)
	out := run(t, s, `echo "$FOO|$CLAUDECODE|$TACK|${HOME-unset}"`)
	if out.Stdout != "bar baz|1|1|unset\n" {
		t.Fatalf("got %q", out.Stdout)
	}
	// nil means the process environment.
	t.Setenv("TACK_TEST_VAR", "from-process")
	if out := run(t, New(testDir(t), nil), `echo "$TACK_TEST_VAR"`); out.Stdout != "from-process\n" {
		t.Fatalf("got %q", out.Stdout)
	}
	// SetEnv holds for the next commands, background ones too.
	s.SetEnv([]string{"PATH=" + os.Getenv("PATH"), "FOO=reloaded"})
	if out := run(t, s, `echo "$FOO"`); out.Stdout != "reloaded\n" {
		t.Fatalf("after SetEnv: %q", out.Stdout)
	}
	job, err := s.Start(`echo "$FOO"`, StartOptions{OutputDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := job.Wait(context.Background(), hang); err != nil {
		t.Fatal(err)
	}
	if c, err := job.Output(0); err != nil || c.Text != "reloaded\n" {
		t.Fatalf("background job after SetEnv: %q, %v", c.Text, err)
	}
}

func TestPickProgram(t *testing.T) {
	all := func(string) bool { return true }
	noBash := func(p string) bool { return p != "/bin/bash" }
	cases := []struct {
		shell string
		exec  func(string) bool
		want  string
	}{
		{"/usr/bin/zsh", all, "/usr/bin/zsh"},
		{"/opt/bin/bash", all, "/opt/bin/bash"},
		{"/usr/bin/fish", all, "/bin/bash"},
		{"zsh", all, "/bin/bash"}, // not absolute
		{"/usr/bin/zsh", func(string) bool { return false }, "/bin/sh"},
		{"", noBash, "/bin/sh"},
	}
	for _, c := range cases {
		if got := pickProgram([]string{"SHELL=" + c.shell}, c.exec); got != c.want {
			t.Errorf("SHELL=%q: got %s, want %s", c.shell, got, c.want)
		}
	}
}

func TestLimitsFromEnv(t *testing.T) {
	l := LimitsFromEnv(nil)
	if l.DefaultTimeout != 2*time.Minute || l.MaxTimeout != 10*time.Minute || l.MaxOutput != 30000 {
		t.Fatalf("defaults %+v", l)
	}
	l = LimitsFromEnv([]string{"BASH_DEFAULT_TIMEOUT_MS=1000", "BASH_MAX_TIMEOUT_MS=5000", "BASH_MAX_OUTPUT_LENGTH=100"})
	if l.DefaultTimeout != time.Second || l.MaxTimeout != 5*time.Second || l.MaxOutput != 100 {
		t.Fatalf("from env %+v", l)
	}
	if l.Timeout(0) != time.Second || l.Timeout(time.Hour) != 5*time.Second || l.Timeout(2*time.Second) != 2*time.Second {
		t.Fatalf("Timeout %v %v", l.Timeout(0), l.Timeout(time.Hour))
	}
	// A maximum below the default is raised to it; junk is ignored.
	l = LimitsFromEnv([]string{"BASH_DEFAULT_TIMEOUT_MS=900000", "BASH_MAX_TIMEOUT_MS=1000", "BASH_MAX_OUTPUT_LENGTH=-3"})
	if l.MaxTimeout != 15*time.Minute || l.MaxOutput != 30000 {
		t.Fatalf("odd env %+v", l)
	}
}

// readPid waits for a command to write a pid into path.
func readPid(t *testing.T, path string) int {
	t.Helper()
	deadline := time.Now().Add(hang)
	for time.Now().Before(deadline) {
		b, _ := os.ReadFile(path)
		if pid, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil && pid > 0 {
			return pid
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("no pid in %s", path)
	return 0
}

// alive reports whether pid is a live (not zombie) process.
func alive(pid int) bool {
	if syscall.Kill(pid, 0) != nil {
		return false
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	i := bytes.LastIndexByte(b, ')')
	return i < 0 || i+2 >= len(b) || b[i+2] != 'Z'
}

// assertGone fails unless pid dies soon; signals are asynchronous.
func assertGone(t *testing.T, pid int) {
	t.Helper()
	deadline := time.Now().Add(hang)
	for alive(pid) {
		if time.Now().After(deadline) {
			t.Fatalf("process %d is still alive", pid)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// killLater makes sure a process a test started outside our groups dies.
func killLater(t *testing.T, pid int) {
	t.Cleanup(func() { syscall.Kill(pid, syscall.SIGKILL) })
}

func TestTimeoutKillsProcessGroup(t *testing.T) {
	dir := testDir(t)
	s := New(dir, nil)
	start := time.Now()
	out, err := s.Run(context.Background(), "echo started; sleep 300 & echo $! > child.pid; sleep 300", RunOptions{Timeout: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if time.Since(start) > hang {
		t.Fatalf("Run took %v", time.Since(start))
	}
	if !out.TimedOut || out.Interrupted || out.Timeout != 200*time.Millisecond {
		t.Fatalf("got %+v", out)
	}
	if out.Stdout != "started\n" {
		t.Fatalf("output before the timeout lost: %q", out.Stdout)
	}
	assertGone(t, readPid(t, filepath.Join(dir, "child.pid")))
}

func TestTimeoutIgnoringTermIsKilled(t *testing.T) {
	dir := testDir(t)
	s := New(dir, nil)
	start := time.Now()
	// The timeout leaves the shell time to set its trap and write its pid
	// on a loaded machine: a TERM that came first would kill it before the
	// test began.
	out, err := s.Run(context.Background(), `sh -c 'trap "" TERM; echo $$ > child.pid; while :; do sleep 1; done'`, RunOptions{Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if !out.TimedOut || time.Since(start) > hang {
		t.Fatalf("got %+v after %v", out, time.Since(start))
	}
	assertGone(t, readPid(t, filepath.Join(dir, "child.pid")))
}

func TestTimeoutReturnsWhilePipeHeldOutsideGroup(t *testing.T) {
	dir := testDir(t)
	s := New(dir, nil)
	start := time.Now()
	// setsid moves the sleep out of the group; it keeps stdout open.
	out, err := s.Run(context.Background(), "setsid sleep 60 & echo $! > escaped.pid; sleep 300", RunOptions{Timeout: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	killLater(t, readPid(t, filepath.Join(dir, "escaped.pid")))
	if !out.TimedOut || time.Since(start) > hang {
		t.Fatalf("got %+v after %v", out, time.Since(start))
	}
}

func TestReturnsWhenBackgroundChildHoldsPipe(t *testing.T) {
	dir := testDir(t)
	s := New(dir, nil)
	start := time.Now()
	out := run(t, s, "sleep 60 & echo $! > child.pid; echo done")
	killLater(t, readPid(t, filepath.Join(dir, "child.pid")))
	if out.Stdout != "done\n" || out.ExitCode != 0 || out.TimedOut {
		t.Fatalf("got %+v", out)
	}
	if time.Since(start) > hang {
		t.Fatalf("Run took %v", time.Since(start))
	}
}

func TestCancelKillsProcessGroup(t *testing.T) {
	dir := testDir(t)
	s := New(dir, nil)
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(200*time.Millisecond, cancel)
	start := time.Now()
	out, err := s.Run(ctx, "sleep 300 & echo $! > child.pid; sleep 300", RunOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !out.Interrupted || out.TimedOut || time.Since(start) > hang {
		t.Fatalf("got %+v after %v", out, time.Since(start))
	}
	assertGone(t, readPid(t, filepath.Join(dir, "child.pid")))

	if _, err := s.Run(ctx, "true", RunOptions{}); err == nil {
		t.Fatal("Run with a done context did not fail")
	}
}

func TestTimeoutCappedAtMax(t *testing.T) {
	s := New(testDir(t), append(os.Environ(), "BASH_DEFAULT_TIMEOUT_MS=100", "BASH_MAX_TIMEOUT_MS=300"))
	out, err := s.Run(context.Background(), "sleep 60", RunOptions{Timeout: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	if !out.TimedOut || out.Timeout != 300*time.Millisecond {
		t.Fatalf("got %+v", out)
	}
	if out := run(t, s, "sleep 60"); !out.TimedOut || out.Timeout != 100*time.Millisecond {
		t.Fatalf("default: %+v", out)
	}
}

func TestHugeOutputIsCutAndMemoryBounded(t *testing.T) {
	s := New(testDir(t), nil)
	const total = 50_000_000
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	out := run(t, s, fmt.Sprintf("yes | head -c %d; echo tail-marker >&2", total))
	runtime.ReadMemStats(&after)

	head, tail, ok := strings.Cut(out.Stdout, fmt.Sprintf("\n\n... [%d characters truncated] ...\n\n", out.StdoutCut))
	if !ok {
		t.Fatalf("no truncation marker for cut %d in %q…", out.StdoutCut, out.Stdout[:100])
	}
	if len(head) != 15000 || len(tail) != 15000 || out.StdoutCut != total-30000 {
		t.Fatalf("head %d, tail %d, cut %d", len(head), len(tail), out.StdoutCut)
	}
	if out.Stderr != "tail-marker\n" || out.StderrCut != 0 {
		t.Fatalf("stderr %q", out.Stderr)
	}
	// Keeping everything would allocate at least the 50 MB printed.
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 10<<20 {
		t.Fatalf("allocated %d bytes for a bounded output", alloc)
	}
}

func TestMaxOutputFromEnv(t *testing.T) {
	s := New(testDir(t), append(os.Environ(), "BASH_MAX_OUTPUT_LENGTH=10"))
	out := run(t, s, "printf 0123456789abcdefghij")
	if out.Stdout != "01234\n\n... [10 characters truncated] ...\n\nfghij" || out.StdoutCut != 10 {
		t.Fatalf("got %q", out.Stdout)
	}
}
