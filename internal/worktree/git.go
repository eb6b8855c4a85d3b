package worktree

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	mrand "math/rand/v2"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"time"

	"github.com/tackcode/tack/internal/lazyregexp"
)

// gitError is a failed git command: its arguments, how it failed, and what
// it said on stderr (git explains its failures there).
type gitError struct {
	args   []string
	err    error
	stderr string
}

func (e *gitError) Error() string {
	msg := fmt.Sprintf("git %s: %v", strings.Join(e.args, " "), e.err)
	if e.stderr != "" {
		msg += ": " + e.stderr
	}
	return msg
}

func (e *gitError) Unwrap() error { return e.err }

// exitCode is the exit status of the failed git command, or -1 when git did
// not run to completion (not found, killed, cancelled).
func (e *gitError) exitCode() int {
	var ee *exec.ExitError
	if errors.As(e.err, &ee) {
		return ee.ExitCode()
	}
	return -1
}

// exitCode is the exit status of err's git command, or -1.
func exitCode(err error) int {
	var ge *gitError
	if errors.As(err, &ge) {
		return ge.exitCode()
	}
	return -1
}

// repoEnv lists variables that make git ignore the directory it runs in and
// use another repository, index or object store; tack may itself run under
// git (a hook, a rebase exec), and the worktree must follow the directory.
var repoEnv = map[string]bool{
	"GIT_DIR":                          true,
	"GIT_WORK_TREE":                    true,
	"GIT_INDEX_FILE":                   true,
	"GIT_COMMON_DIR":                   true,
	"GIT_OBJECT_DIRECTORY":             true,
	"GIT_ALTERNATE_OBJECT_DIRECTORIES": true,
	"GIT_NAMESPACE":                    true,
	"GIT_PREFIX":                       true,
	"GIT_IMPLICIT_WORK_TREE":           true,
	"GIT_GRAFT_FILE":                   true,
	"GIT_SHALLOW_FILE":                 true,
	"GIT_REPLACE_REF_BASE":             true,
	"GIT_NO_REPLACE_OBJECTS":           true,
	"GIT_INTERNAL_SUPER_PREFIX":        true,
	"GIT_QUARANTINE_PATH":              true,
}

// gitEnv is the environment git runs with: this process's, without the
// variables of repoEnv, never prompting for credentials, plus extra.
func gitEnv(extra []string) []string {
	env := make([]string, 0, len(os.Environ())+len(extra)+1)
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if !repoEnv[k] {
			env = append(env, kv)
		}
	}
	env = append(env, "GIT_TERMINAL_PROMPT=0")
	return append(env, extra...)
}

// termGrace is how long git has to exit after SIGTERM when ctx ends before
// it is killed: SIGTERM lets git delete its lock files, which a kill would
// leave behind to block every later command in the repository.
const termGrace = 3 * time.Second

// git runs git with args in dir and returns its standard output. extra is
// added to the environment.
func git(ctx context.Context, dir string, extra []string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, "git", args...)
	cmd.Dir = dir
	cmd.Env = gitEnv(extra)
	var stdout, stderr bytes.Buffer
	cmd.Stdout = &stdout
	cmd.Stderr = &stderr
	// A group of its own so that cancelling reaches what git starts (hooks,
	// filters, git subcommands), and a terminal's ^C reaches only tack,
	// which decides through ctx.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error {
		err := syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM)
		if errors.Is(err, syscall.ESRCH) {
			return os.ErrProcessDone
		}
		return err
	}
	cmd.WaitDelay = termGrace
	if err := cmd.Run(); err != nil {
		if ctxErr := ctx.Err(); ctxErr != nil {
			err = fmt.Errorf("%w (%v)", ctxErr, err)
		}
		return stdout.String(), &gitError{args: args, err: err, stderr: strings.TrimSpace(stderr.String())}
	}
	return stdout.String(), nil
}

// Retry timing for commands that meet another git process at work.
const (
	retryAttempts = 10
	retryFirst    = 50 * time.Millisecond
	retryMax      = time.Second
)

// gitRetry is git, run again after a pause while it fails because of
// another git process at work in the repository (see transient): parallel
// subagents create and remove worktrees and branches of the same repository
// at once, and git gives up at once (or after a second, for packed-refs)
// when it meets a lock or a half-made worktree.
func gitRetry(ctx context.Context, dir string, extra []string, args ...string) (string, error) {
	delay := retryFirst
	for attempt := 1; ; attempt++ {
		out, err := git(ctx, dir, extra, args...)
		if err == nil || attempt == retryAttempts || !transient(err) || ctx.Err() != nil {
			return out, err
		}
		// Jitter, so that processes that collided once do not collide again
		// in step.
		t := time.NewTimer(delay/2 + mrand.N(delay/2+1))
		select {
		case <-ctx.Done():
			t.Stop()
			return out, err
		case <-t.C:
		}
		delay = min(2*delay, retryMax)
	}
}

// busyWorktree matches a path to a file of another worktree's
// administrative directory, <git dir>/worktrees/<id>/..., in a message.
var busyWorktree = lazyregexp.New(`worktrees/[^/\s'"]+/(commondir|gitdir|HEAD|locked)\b`)

// transient reports whether err is git failing because of another git
// process at work in the repository, which the same command may not meet a
// moment later:
//   - a lock that it could not take: lock files end in ".lock", which
//     appears in the message whatever the locale, as does "lock" in the
//     messages that name no lock file (the config file's);
//   - a worktree that another "git worktree add" or "remove" is making or
//     deleting: "git worktree add" reads every worktree's administrative
//     files, and dies on one that exists but is still empty or has just
//     gone ("failed to read .git/worktrees/<id>/commondir").
func transient(err error) bool {
	var ge *gitError
	if !errors.As(err, &ge) || ge.exitCode() <= 0 {
		return false
	}
	s := strings.ToLower(ge.stderr)
	return strings.Contains(s, ".lock") || strings.Contains(s, "could not lock") ||
		strings.Contains(s, "unable to lock") || busyWorktree().MatchString(ge.stderr)
}
