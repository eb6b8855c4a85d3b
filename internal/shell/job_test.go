package shell

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func startJob(t *testing.T, s *Shell, command string) *Job {
	t.Helper()
	j, err := s.Start(command, StartOptions{OutputDir: t.TempDir()})
	if err != nil {
		t.Fatalf("start %q: %v", command, err)
	}
	t.Cleanup(func() { _ = j.Stop() })
	return j
}

// waitOutput polls until the job's output from offset contains want.
func waitOutput(t *testing.T, j *Job, offset int64, want string) Chunk {
	t.Helper()
	deadline := time.Now().Add(hang)
	for {
		c, err := j.Output(offset)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(c.Text, want) {
			return c
		}
		if time.Now().After(deadline) {
			t.Fatalf("output %q never contained %q", c.Text, want)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestJobRunsInBackground(t *testing.T) {
	root := testDir(t)
	s := New(root, nil)
	gate := filepath.Join(root, "gate")
	j := startJob(t, s, `cd /; echo first; echo oops >&2; while [ ! -e "`+gate+`" ]; do sleep 0.02; done; echo second; exit 7`)
	if j.ID != "bash_1" || j.Dir != root || j.Status().State != JobRunning {
		t.Fatalf("job %+v status %+v", j, j.Status())
	}

	c := waitOutput(t, j, 0, "oops")
	if c.Text != "first\noops\n" || c.Next != int64(len(c.Text)) {
		t.Fatalf("partial output %+v", c)
	}
	// Not done yet: a short wait returns the running status.
	if st, err := j.Wait(context.Background(), 50*time.Millisecond); err != nil || st.State != JobRunning {
		t.Fatalf("early wait: %+v %v", st, err)
	}
	os.WriteFile(gate, nil, 0o644)
	st, err := j.Wait(context.Background(), hang)
	if err != nil || st != (JobStatus{State: JobExited, ExitCode: 7}) {
		t.Fatalf("wait: %+v %v", st, err)
	}
	if c, _ := j.Output(c.Next); c.Text != "second\n" {
		t.Fatalf("rest of output %q", c.Text)
	}
	// The job's cd is its own.
	if s.Cwd() != root {
		t.Fatalf("cwd moved to %s", s.Cwd())
	}
	if err := j.Stop(); !errors.Is(err, ErrNotRunning) {
		t.Fatalf("stop after exit: %v", err)
	}
	if j2 := startJob(t, s, "true"); j2.ID != "bash_2" {
		t.Fatalf("second id %s", j2.ID)
	}
	if got, ok := s.Job("bash_1"); !ok || got != j {
		t.Fatal("Job(bash_1) not found")
	}
	if _, ok := s.Job("bash_9"); ok {
		t.Fatal("Job(bash_9) found")
	}
	if len(s.Jobs()) != 2 {
		t.Fatalf("%d jobs", len(s.Jobs()))
	}
}

func TestJobWaitHonoursContext(t *testing.T) {
	s := New(testDir(t), nil)
	j := startJob(t, s, "sleep 300")
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(100*time.Millisecond, cancel)
	if st, err := j.Wait(ctx, time.Hour); !errors.Is(err, context.Canceled) || st.State != JobRunning {
		t.Fatalf("got %+v %v", st, err)
	}
}

func TestJobStopKillsProcessGroup(t *testing.T) {
	root := testDir(t)
	s := New(root, nil)
	// The inner shell ignores SIGTERM, so only SIGKILL ends it.
	j := startJob(t, s, `sleep 300 & echo $! > a.pid; sh -c 'trap "" TERM; echo $$ > b.pid; while :; do sleep 1; done'`)
	a, b := readPid(t, filepath.Join(root, "a.pid")), readPid(t, filepath.Join(root, "b.pid"))
	done := make(chan error)
	go func() { done <- j.Stop() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(hang):
		t.Fatal("Stop hangs")
	}
	if st := j.Status(); st.State != JobKilled {
		t.Fatalf("status %+v", st)
	}
	assertGone(t, a)
	assertGone(t, b)
}

func TestJobKeepsRunningWhileItsBackgroundChildrenDo(t *testing.T) {
	root := testDir(t)
	s := New(root, nil)
	j := startJob(t, s, "sleep 300 & echo $! > child.pid; echo started")
	child := readPid(t, filepath.Join(root, "child.pid"))
	waitOutput(t, j, 0, "started")
	if st, _ := j.Wait(context.Background(), 200*time.Millisecond); st.State != JobRunning {
		t.Fatalf("status %+v while its child runs", st)
	}
	if err := j.Stop(); err != nil {
		t.Fatal(err)
	}
	assertGone(t, child)
}

func TestCloseStopsAllJobs(t *testing.T) {
	root := testDir(t)
	s := New(root, nil)
	var pids []int
	var jobs []*Job
	for _, name := range []string{"one.pid", "two.pid"} {
		jobs = append(jobs, startJob(t, s, "sleep 300 & echo $! > "+name+"; sleep 300"))
		pids = append(pids, readPid(t, filepath.Join(root, name)))
	}
	finished := startJob(t, s, "exit 0")
	if _, err := finished.Wait(context.Background(), hang); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	for _, j := range jobs {
		if st := j.Status(); st.State != JobKilled {
			t.Fatalf("%s: %+v", j.ID, st)
		}
	}
	if st := finished.Status(); st.State != JobExited {
		t.Fatalf("finished job: %+v", st)
	}
	for _, pid := range pids {
		assertGone(t, pid)
	}
	if _, err := s.Start("true", StartOptions{OutputDir: t.TempDir()}); err == nil {
		t.Fatal("Start after Close succeeded")
	}
}

func TestJobOutputIsBounded(t *testing.T) {
	s := New(testDir(t), append(os.Environ(), "BASH_MAX_OUTPUT_LENGTH=100"))
	j := startJob(t, s, "yes | head -c 1000000")
	if st, _ := j.Wait(context.Background(), hang); st.State != JobExited {
		t.Fatalf("status %+v", st)
	}
	c, err := j.Output(0)
	if err != nil {
		t.Fatal(err)
	}
	if c.Cut != 1000000-100 || c.Next != 1000000 || !strings.Contains(c.Text, "... [999900 characters truncated] ...") {
		t.Fatalf("cut %d next %d text %q", c.Cut, c.Next, c.Text)
	}
	if c, _ := j.Output(c.Next); c.Text != "" || c.Next != 1000000 {
		t.Fatalf("nothing new expected, got %+v", c)
	}
}

func TestStartNeedsOutputDir(t *testing.T) {
	s := New(testDir(t), nil)
	if _, err := s.Start("true", StartOptions{}); err == nil {
		t.Fatal("no output dir accepted")
	}
	if _, err := s.Start("true", StartOptions{OutputDir: filepath.Join(t.TempDir(), "missing")}); err == nil {
		t.Fatal("missing output dir accepted")
	}
}
