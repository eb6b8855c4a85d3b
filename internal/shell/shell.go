// Package shell runs shell commands for a session: a persistent working
// directory, timeouts, process-group kills, bounded output and background jobs.
package shell

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
)

// Shell is one session's shell state: the working directory that persists
// from one command to the next, the environment commands get, and the
// background jobs started so far. It is safe for concurrent use; commands
// run concurrently each see the cwd as it was when they started, and the
// last to finish sets the next one.
type Shell struct {
	program string // the shell binary commands run with, as "-c"
	home    string // the starting directory, where a vanished cwd falls back to
	limits  Limits
	// wrap, when set, prepares each command to run in a sandbox.
	wrap Wrapper
	// runner, when set, runs the foreground commands wrap leaves alone.
	runner Runner

	// env is the commands' environment (nil: the process's); its own
	// lock, since commands are made under mu.
	envMu sync.Mutex
	env   []string

	mu  sync.Mutex
	cwd string
	// reported is the cwd onCwd was last told of (or the starting one).
	reported string
	onCwd    func(ctx context.Context, from, to string)
	jobs     []*Job
	nextJob  int
	closed   bool
}

// New returns a shell starting in cwd; env is the environment for commands
// (nil means the process environment). The shell binary and the limits
// (BASH_DEFAULT_TIMEOUT_MS, BASH_MAX_TIMEOUT_MS, BASH_MAX_OUTPUT_LENGTH) are
// taken from that environment.
func New(cwd string, env []string) *Shell {
	lookupEnv := env
	if lookupEnv == nil {
		lookupEnv = os.Environ()
	}
	return &Shell{
		program:  pickProgram(lookupEnv, isExecutable),
		home:     cwd,
		env:      env,
		limits:   LimitsFromEnv(lookupEnv),
		cwd:      cwd,
		reported: cwd,
	}
}

// Cwd is the current working directory.
func (s *Shell) Cwd() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.cwd
}

// SetCwd makes dir, which must be an existing directory, the working
// directory of the next commands.
func (s *Shell) SetCwd(dir string) error {
	if !isDir(dir) {
		return fmt.Errorf("set cwd: %s is not a directory", dir)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.cwd, s.reported = dir, dir
	return nil
}

// OnCwdChange has f told, after each command that leaves the shell in
// another directory, where it was and where it is now: a cd, or a fall
// back from a directory that vanished. Concurrent commands are told as one
// chain of moves, each from where the last one ended. f runs on the
// command's goroutine, under its context, before Run returns; SetCwd is
// not reported.
func (s *Shell) OnCwdChange(f func(ctx context.Context, from, to string)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.onCwd = f
}

// reportCwd tells onCwd where a command left the shell, when that is
// another directory than the one last reported.
func (s *Shell) reportCwd(ctx context.Context) {
	s.mu.Lock()
	from, to, f := s.reported, s.cwd, s.onCwd
	s.reported = to
	s.mu.Unlock()
	if f != nil && !sameDir(from, to) {
		f(ctx, from, to)
	}
}

// SetEnv makes env the environment of the commands started from now on
// (the session's settings changed); nil means the process's. The shell
// binary and the limits stay as New found them.
func (s *Shell) SetEnv(env []string) {
	s.envMu.Lock()
	defer s.envMu.Unlock()
	s.env = env
}

// Program is the path of the shell binary commands run with.
func (s *Shell) Program() string { return s.program }

// Wrapper prepares commands to run in a sandbox.
type Wrapper interface {
	// Wrap rewrites cmd, made to run the user's command, so that it runs
	// in the sandbox: its Path and Args, and it may add to Env and
	// ExtraFiles. writable are files the command must be able to write
	// besides the sandbox's own (the shell's bookkeeping); unsandboxed
	// says the call asked to run outside (Bash's dangerouslyDisableSandbox),
	// which the wrapper may or may not grant. release is called once the
	// command has ended; an error means the command must not run.
	Wrap(cmd *exec.Cmd, command string, unsandboxed bool, writable []string) (release func(), err error)
}

// Runner runs a foreground command somewhere else than a child process of
// tack: a host's terminal (an editor's, over ACP). The shell has made the
// command (its program, "-c" and the script that keeps the working
// directory, in Dir with Env) and hands it over as it would have started
// it; Run returns when it has ended, or once ctx is done, having stopped it
// then. Output is stdout and stderr as the terminal showed them.
type Runner interface {
	Run(ctx context.Context, args []string, dir string, env []string) (output string, exitCode int, err error)
}

// SetRunner has r run the foreground commands the sandbox leaves alone: a
// command the sandbox wraps still runs here, inside it. It must be called
// before the first command, from the goroutine that made the shell.
func (s *Shell) SetRunner(r Runner) {
	s.runner = r
}

// SetWrapper makes every command run through w (a sandbox). It must be
// called before the first command, from the goroutine that made the shell.
func (s *Shell) SetWrapper(w Wrapper) {
	s.wrap = w
}

// Limits returns the timeouts and output bounds commands run with.
func (s *Shell) Limits() Limits {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.limits
}

// SetLimits replaces the timeouts and output bounds for later commands;
// zero fields keep their current value.
func (s *Shell) SetLimits(l Limits) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.limits = s.limits.merge(l)
}

// environ is the environment a command gets: the shell's, plus markers that
// let scripts tell they run under an agent.
func (s *Shell) environ() []string {
	s.envMu.Lock()
	base := s.env
	s.envMu.Unlock()
	if base == nil {
		base = os.Environ()
	}
	out := make([]string, 0, len(base)+2)
	out = append(out, base...)
	// Later entries win in exec.Cmd, so these override inherited values.
	return append(out, "CLAUDECODE=1", "TACK=1")
}

// workDir returns the directory the next command should run in. When the
// current one no longer exists it moves the shell to the starting directory,
// or else to the nearest existing ancestor, and reports reset.
func (s *Shell) workDir() (dir string, reset bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if isDir(s.cwd) {
		return s.cwd, false
	}
	s.cwd = s.fallbackDir()
	return s.cwd, true
}

// fallbackDir picks where a vanished cwd goes. Callers hold s.mu.
func (s *Shell) fallbackDir() string {
	if isDir(s.home) {
		return s.home
	}
	for d := filepath.Dir(s.cwd); ; d = filepath.Dir(d) {
		if isDir(d) {
			return d
		}
		if d == filepath.Dir(d) {
			return string(filepath.Separator)
		}
	}
}

// pickProgram chooses the shell: $SHELL when it is bash or zsh, else
// /bin/bash, else /bin/sh.
func pickProgram(env []string, executable func(string) bool) string {
	if sh := lookup(env, "SHELL"); filepath.IsAbs(sh) {
		switch filepath.Base(sh) {
		case "bash", "zsh":
			if executable(sh) {
				return sh
			}
		}
	}
	if executable("/bin/bash") {
		return "/bin/bash"
	}
	return "/bin/sh"
}

// lookup returns the last value of key in env, as the C library would.
func lookup(env []string, key string) string {
	for i := len(env) - 1; i >= 0; i-- {
		if k, v, ok := strings.Cut(env[i], "="); ok && k == key {
			return v
		}
	}
	return ""
}

func isExecutable(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.Mode().IsRegular() && fi.Mode().Perm()&0o111 != 0
}

// sameDir reports whether a and b name one directory (a path through a
// symbolic link and the one pwd -P prints are the same place).
func sameDir(a, b string) bool {
	if a == b {
		return true
	}
	ia, err := os.Stat(a)
	if err != nil {
		return false
	}
	ib, err := os.Stat(b)
	return err == nil && os.SameFile(ia, ib)
}

func isDir(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.IsDir()
}

// quote returns s as one single-quoted shell word.
func quote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
