package shell

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"slices"
	"sync"
	"time"
)

// ErrNotRunning is returned when stopping a job that has already ended.
var ErrNotRunning = errors.New("job is not running")

// JobState is where a background job is in its life.
type JobState string

// Job states.
const (
	JobRunning JobState = "running"
	JobExited  JobState = "exited" // ended by itself; see ExitCode
	JobKilled  JobState = "killed" // stopped, or ended by a signal
)

// JobStatus is a snapshot of a job's state.
type JobStatus struct {
	State JobState
	// ExitCode is the shell's exit status once the job has ended, 128+N
	// when signal N ended it.
	ExitCode int
}

// StartOptions tune a background job.
type StartOptions struct {
	// OutputDir is the directory the job's output file goes in (the
	// session's scratch directory). It must exist.
	OutputDir string
	// Unsandboxed asks to run the job outside the shell's sandbox; the
	// sandbox decides whether it may.
	Unsandboxed bool
	// Description says what the job does, in the caller's words.
	Description string
}

// Job is a command running in the background, detached from any call, in
// its own process group, with stdout and stderr appended to one file.
type Job struct {
	// ID names the job within its shell: bash_1, bash_2…
	ID string
	// Command is the command as given; Description what it does, in the
	// caller's words.
	Command, Description string
	// Dir is the working directory it started in.
	Dir string
	// OutputPath is the file its output goes to.
	OutputPath string
	// Started is when it started.
	Started time.Time

	pid       int // also its process group id
	maxOutput int
	done      chan struct{}

	mu       sync.Mutex
	status   JobStatus
	stopping bool
}

// Start runs command in the background in the current working directory.
// Its working directory changes do not affect the shell's. The job counts
// as running until the shell and the processes it put in the background
// directly have ended, so that TaskStop-like callers can reach them.
func (s *Shell) Start(command string, opts StartOptions) (*Job, error) {
	if opts.OutputDir == "" {
		return nil, errors.New("start job: no output directory")
	}
	dir, _ := s.workDir()
	// `wait` keeps the group's leader, and so its group id, alive while
	// its direct background children run.
	script := "eval " + quote(command) + "\n__tack_status=$?\nwait\nexit $__tack_status"

	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil, errors.New("start job: shell is closed")
	}
	s.nextJob++
	id := fmt.Sprintf("bash_%d", s.nextJob)
	f, err := os.CreateTemp(opts.OutputDir, id+"-*.log")
	if err != nil {
		return nil, fmt.Errorf("start %s: output file: %w", id, err)
	}
	// The job writes through its own descriptors; ours is not needed.
	defer f.Close()
	cmd, release, err := s.command(dir, command, script, opts.Unsandboxed, f.Name())
	if err != nil {
		os.Remove(f.Name())
		return nil, fmt.Errorf("start %s: %w", id, err)
	}
	cmd.Stdout, cmd.Stderr = f, f
	if err := cmd.Start(); err != nil {
		release()
		os.Remove(f.Name())
		return nil, fmt.Errorf("start %s: %w", id, err)
	}
	j := &Job{
		ID:          id,
		Command:     command,
		Description: opts.Description,
		Dir:         dir,
		OutputPath:  f.Name(),
		Started:     time.Now(),
		pid:         cmd.Process.Pid,
		maxOutput:   s.limits.MaxOutput,
		done:        make(chan struct{}),
		status:      JobStatus{State: JobRunning},
	}
	go j.reap(cmd, release)
	s.jobs = append(s.jobs, j)
	return j, nil
}

// reap waits for the job's shell to end, releases what its sandbox held
// and records how it ended.
func (j *Job) reap(cmd *exec.Cmd, release func()) {
	// The streams go straight to a file, so Wait only waits for the
	// process; its error repeats the exit status.
	_ = cmd.Wait()
	release()
	st := JobStatus{State: JobExited, ExitCode: exitCode(cmd.ProcessState)}
	j.mu.Lock()
	if j.stopping || signaled(cmd.ProcessState) {
		st.State = JobKilled
	}
	j.status = st
	j.mu.Unlock()
	close(j.done)
}

// Job returns the job called id.
func (s *Shell) Job(id string) (*Job, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, j := range s.jobs {
		if j.ID == id {
			return j, true
		}
	}
	return nil, false
}

// Jobs returns every job started so far, oldest first.
func (s *Shell) Jobs() []*Job {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.jobs)
}

// Close stops every running job and refuses new ones. It is called at the
// end of a session.
func (s *Shell) Close() error {
	s.mu.Lock()
	s.closed = true
	jobs := slices.Clone(s.jobs)
	s.mu.Unlock()
	var wg sync.WaitGroup
	for _, j := range jobs {
		wg.Go(func() { _ = j.Stop() })
	}
	wg.Wait()
	return nil
}

// Status returns the job's current state.
func (j *Job) Status() JobStatus {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.status
}

// Done is closed when the job has ended.
func (j *Job) Done() <-chan struct{} { return j.done }

// Wait waits up to timeout for the job to end and returns its status then.
// It fails only when ctx is done first.
func (j *Job) Wait(ctx context.Context, timeout time.Duration) (JobStatus, error) {
	timer := time.NewTimer(max(timeout, 0))
	defer timer.Stop()
	select {
	case <-j.done:
	case <-timer.C:
	case <-ctx.Done():
		return j.Status(), fmt.Errorf("wait for %s: %w", j.ID, ctx.Err())
	}
	return j.Status(), nil
}

// Stop terminates the job's process group: SIGTERM, then SIGKILL for what
// is left after a short grace. It returns once the job has ended, or
// ErrNotRunning when it had already.
func (j *Job) Stop() error {
	j.mu.Lock()
	if j.status.State != JobRunning {
		j.mu.Unlock()
		return fmt.Errorf("stop %s: %w", j.ID, ErrNotRunning)
	}
	already := j.stopping
	j.stopping = true
	j.mu.Unlock()
	if !already {
		terminate(j.pid)
	}
	<-j.done
	return nil
}

// Chunk is a piece of a job's output.
type Chunk struct {
	// Text is the output, cut in the middle when longer than the shell's
	// MaxOutput.
	Text string
	// Cut counts the characters cut from Text.
	Cut int64
	// Next is the offset to ask for to continue after this chunk.
	Next int64
}

// Output returns what the job has written from byte offset on, so far.
func (j *Job) Output(offset int64) (Chunk, error) {
	f, err := os.Open(j.OutputPath)
	if err != nil {
		return Chunk{}, fmt.Errorf("output of %s: %w", j.ID, err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return Chunk{}, fmt.Errorf("output of %s: %w", j.ID, err)
	}
	// Read up to the size seen now, not chasing a file that keeps growing.
	offset = min(max(offset, 0), fi.Size())
	w := newHeadTail(j.maxOutput)
	n, err := io.Copy(w, io.NewSectionReader(f, offset, fi.Size()-offset))
	if err != nil {
		return Chunk{}, fmt.Errorf("output of %s: %w", j.ID, err)
	}
	text, cut := w.Result()
	return Chunk{Text: text, Cut: cut, Next: offset + n}, nil
}
