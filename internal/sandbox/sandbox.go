// Package sandbox runs a session's shell commands isolated from the rest of
// the machine, when the settings' "sandbox" (Claude Code's keys) enable it.
//
// What holds, with bubblewrap (the default backend):
//
//   - Files: the whole filesystem is read-only except the session's working
//     directories and a private /tmp; /proc is the sandbox's own, read-only
//     (root in the sandbox is the host's root to the sysctls). Inside the
//     working directories the files through which a write becomes code run
//     later outside the sandbox stay read-only: a repository's .git/config,
//     config.worktree, commondir, hooks/ and modules/, a linked worktree's
//     .git file and its common directory's and siblings' pointers, the
//     directory core.hooksPath names (.husky…) and every file the git
//     configuration includes (user and system configuration too); the
//     whole .claude/ directory and .mcp.json; the same in repositories one
//     or two levels below a working directory; and, when a working
//     directory holds the home directory, the shell start-up files,
//     .gitconfig, .config/git, .ssh, .claude, .claude.json and the PATH
//     directories there, and CLAUDE_CONFIG_DIR. A working directory that is
//     not a repository's top gets its .git protected, so that no repository
//     can appear there. Paths that do not exist cannot be made: tack makes
//     an empty read-only stand-in (a directory for .mcp.json, which git
//     ignores) before the command and removes it once no sandboxed command
//     — of any tack process, by flock — holds it. Their ancestors are mount
//     points, so they cannot be renamed away. A protected path that is a
//     symbolic link cannot be held (the link could be replaced): commands
//     are refused while one is. Ordinary git use (add, commit, branch:
//     index, objects, refs) keeps working; .git/info stays writable
//     (nothing there runs code without the protected configuration), as do
//     CLAUDE.md files (prompt text).
//   - Processes: user, pid, ipc, uts, cgroup and network namespaces, no
//     capabilities (as root without a user namespace, where that is all
//     bubblewrap may do, no capabilities either), no nested user
//     namespaces, a new session (no terminal to push keystrokes into), host
//     processes invisible, and the command dies with tack.
//   - System calls: a seccomp filter refuses to create unix sockets
//     (socketpair still works) and io_uring (which could create them past
//     the filter), keyctl, TIOCSTI/TIOCLINUX, and any system call through
//     another architecture's entry point (int 0x80 on x86_64). Arguments
//     are compared on their low 32 bits, as the kernel reads them.
//     network.allowAllUnixSockets lifts the unix filter; so does
//     network.allowUnixSockets, since Linux cannot filter connect(2) by path
//     without a supervisor (the session says so once). Abstract sockets are
//     private to the network namespace.
//   - Network: none, unless network.allowedDomains lists hosts: the command
//     then reaches them through a filtering HTTP and SOCKS5 proxy
//     (netproxy) in tack, outside the sandbox, started with the first
//     command that needs it. Inside, the in-sandbox stage listens on the
//     proxy's ports of the sandbox's own loopback and hands each connection
//     to tack over an inherited socket pair (no socket file). HTTP_PROXY,
//     HTTPS_PROXY and ALL_PROXY point at it; network.httpProxyPort and
//     socksProxyPort put the user's own proxy on the host behind it instead.
//
// Where bubblewrap cannot create its namespaces (or is missing, or
// TACK_SANDBOX=landlock), commands run under Landlock and the same seccomp
// filter instead, plus a refusal of every socket but TCP (UDP, raw,
// netlink; Multipath TCP, which Landlock does not see), and the session
// prints one notice naming the backend and what it cannot do: Landlock
// grants whole trees, so writes go only to the working directories'
// existing entries (nothing can be made, removed or renamed at the top of
// a working directory or beside a protected path) and .git is read-only as
// a whole (git commit fails); a private TMPDIR replaces the private /tmp;
// other processes stay visible (but cannot be signalled or traced); TCP
// connections are limited to the proxy's port number, on any address;
// capabilities are dropped for root. With neither backend the sandbox
// cannot be made and the session does not start; TACK_SANDBOX=bwrap
// insists on bubblewrap.
//
// The in-sandbox stage is tack's own executable (os.Executable), run again
// with TACK_SANDBOX_STAGE set: this package's init recognises it, sets
// Landlock, seccomp and the bridge up and executes the user's command. So
// it works for the tack binary and for any Go program that embeds tack.
// With bubblewrap and no network there is no stage: bubblewrap loads the
// seccomp program itself.
//
// A command runs outside the sandbox when every simple command of its line
// is one of excludedCommands (permission.CommandSet), or when the call sets
// dangerouslyDisableSandbox and allowUnsandboxedCommands is not false; it
// is then under the permission rules like any unsandboxed command.
//
// What the sandbox does not stop: a command can make a new repository
// below the top of a working directory (git init sub) whose configuration
// git uses later when run in that directory, or record it as a submodule
// of the repository, whose `git status` then visits it — git run later
// outside the sandbox in or above such a directory must not be taken as
// harmless (the permission checker's business).
package sandbox

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/tackcode/tack/internal/permission"
)

// ErrNoBwrap is returned when bubblewrap is required (TACK_SANDBOX=bwrap)
// but not installed.
var ErrNoBwrap = errors.New("the sandbox is enabled but bubblewrap (bwrap) is not installed: install it (apt-get install bubblewrap) or disable sandbox.enabled")

// ErrUnavailable is returned when neither bubblewrap nor Landlock can make
// a sandbox on this machine: commands are then refused, never run
// unsandboxed.
var ErrUnavailable = errors.New("the sandbox is enabled but this machine can make none: bubblewrap cannot create its namespaces and the kernel has no Landlock (install bubblewrap, allow unprivileged user namespaces, or disable sandbox.enabled)")

// Options are what a sandbox needs from its session.
type Options struct {
	// Writable returns the directories commands may write: the session's
	// working directories, which may grow mid-session.
	Writable func() []string
	// Getenv reads the session's environment (HOME, PATH,
	// XDG_CONFIG_HOME, CLAUDE_CONFIG_DIR, GIT_CONFIG_GLOBAL, TACK_SANDBOX);
	// nil: os.Getenv.
	Getenv func(string) string
	// LookPath finds bwrap; nil: exec.LookPath.
	LookPath func(string) (string, error)
	// Executable is the program run as the in-sandbox stage; "":
	// os.Executable(). It must import this package.
	Executable string
	// Notify is told what the session should show: the backend's notice,
	// each destination the proxy refused.
	Notify func(string)
	// Dial connects the proxy to an allowed destination; nil: a
	// net.Dialer. Tests map names to 127.0.0.1 with it.
	Dial func(ctx context.Context, network, addr string) (net.Conn, error)
}

// Sandbox wraps the commands of one session (and, through For, of its
// subagents).
type Sandbox struct {
	settings Settings
	excluded *permission.CommandSet
	writable func() []string
	*shared
}

// shared is what a session's sandboxes have in common.
type shared struct {
	backend backend
	getenv  func(string) string
	exe     string
	notify  func(string)
	notice  string
	network *proxySide
	// standIns are the stand-ins the session's commands hold.
	standIns standIns
	// nested caches the repositories found inside working directories.
	nestedMu sync.Mutex
	nested   map[string]nestedScan
	tmpOnce  sync.Once
	tmpDir   string // the Landlock backend's private TMPDIR
	tmpErr   error
	closeMu  sync.Mutex
	closed   bool
}

// New returns the sandbox of s, or nil when it is disabled. It picks the
// backend once (TACK_SANDBOX=bwrap|landlock forces one) and tells
// opts.Notify what the backend cannot enforce.
func New(s Settings, opts Options) (*Sandbox, error) {
	if !s.Enabled {
		return nil, nil
	}
	if opts.Getenv == nil {
		opts.Getenv = os.Getenv
	}
	if opts.LookPath == nil {
		opts.LookPath = exec.LookPath
	}
	excluded, err := permission.NewCommandSet(excludedPatterns(s.ExcludedCommands))
	if err != nil {
		return nil, fmt.Errorf("sandbox.excludedCommands: %w", err)
	}
	exe := opts.Executable
	if exe == "" {
		if exe, err = os.Executable(); err != nil {
			return nil, fmt.Errorf("sandbox: the in-sandbox stage needs this program's path: %w", err)
		}
	}
	if exe, err = filepath.EvalSymlinks(exe); err != nil {
		return nil, fmt.Errorf("sandbox: the in-sandbox stage: %w", err)
	}
	be, err := pickBackend(opts.Getenv("TACK_SANDBOX"), opts.LookPath)
	if err != nil {
		return nil, err
	}
	sh := &shared{backend: be, getenv: opts.Getenv, exe: exe, notify: opts.Notify}
	if s.Network.networked() {
		sh.network = newProxySide(s.Network, opts.Dial, opts.Notify)
		if err := sh.network.validate(); err != nil {
			return nil, err
		}
	}
	sh.notice = be.notice(s.Network)
	if sh.notice != "" && opts.Notify != nil {
		opts.Notify(sh.notice)
	}
	return &Sandbox{settings: s, excluded: excluded, writable: opts.Writable, shared: sh}, nil
}

// For returns a sandbox like b whose writable directories are writable's
// (a subagent's worktree), sharing b's backend and proxy.
func (b *Sandbox) For(writable func() []string) *Sandbox {
	c := *b
	c.writable = writable
	return &c
}

// Settings returns what the sandbox was made from.
func (b *Sandbox) Settings() Settings { return b.settings }

// Backend names the backend commands run in: "bubblewrap" or "landlock".
func (b *Sandbox) Backend() string { return b.backend.name() }

// Notice is what the backend cannot enforce, "" when it enforces all.
func (b *Sandbox) Notice() string { return b.notice }

// RunsInside reports whether command runs in the sandbox: it does unless
// every simple command of it is an excluded command, or the call asked to
// run unsandboxed (dangerouslyDisableSandbox) and allowUnsandboxedCommands
// lets it.
func (b *Sandbox) RunsInside(command string, unsandboxed bool) bool {
	if unsandboxed && b.settings.AllowUnsandboxed() {
		return false
	}
	return !b.excluded.Covers(command)
}

// Wrap makes cmd, which runs command, run in the sandbox (or leaves it as
// it is when the command runs outside); it implements shell.Wrapper.
// writable are more files the command must be able to write (the shell's
// bookkeeping). release must be called once the command has ended.
func (b *Sandbox) Wrap(cmd *exec.Cmd, command string, unsandboxed bool, writable []string) (release func(), err error) {
	if !b.RunsInside(command, unsandboxed) {
		return func() {}, nil
	}
	b.closeMu.Lock()
	closed := b.closed
	b.closeMu.Unlock()
	if closed {
		return nil, errors.New("sandbox: the session has ended")
	}
	dirs := writableDirs(b.writable())
	g, err := findGuards(dirs, b.guardEnv())
	if err != nil {
		return nil, err
	}
	var releases []func()
	release = func() {
		for i := len(releases) - 1; i >= 0; i-- {
			releases[i]()
		}
	}
	stage := stageConfig{AllowUnix: b.settings.Network.unixAllowed()}
	if b.network != nil {
		env, rel, err := b.network.attach(cmd, &stage, b.backend.kind)
		if err != nil {
			return nil, err
		}
		releases = append(releases, rel)
		cmd.Env = append(cmd.Env, env...)
	}
	switch b.backend.kind {
	case kindBwrap:
		rel, err := b.standIns.hold(g.guards)
		if err != nil {
			release()
			return nil, err
		}
		releases = append(releases, rel)
		stage.Backend = kindBwrap
		// bubblewrap loads the seccomp program itself, just before it runs
		// the command — or the stage, which then only bridges the network.
		fd, closeProg, err := seccompFD(cmd, seccompIndex(stage))
		if err != nil {
			release()
			return nil, err
		}
		releases = append(releases, closeProg)
		args := append(b.bwrapArgs(dirs, writable, g), "--seccomp", strconv.Itoa(fd))
		if stage.Bridge == nil {
			args = append(append(args, "--"), cmd.Args...)
			cmd.Path, cmd.Args = b.backend.bwrap, append([]string{b.backend.bwrap}, args...)
			return release, nil
		}
		exeInside := b.exeInside(dirs, writable)
		if exeInside != b.exe {
			args = append(args, "--ro-bind", b.exe, exeInside)
		}
		args = append(args, "--", exeInside)
		args = append(args, cmd.Args...)
		cmd.Path, cmd.Args = b.backend.bwrap, append([]string{b.backend.bwrap}, args...)
	case kindLandlock:
		tmp, err := b.privateTmp()
		if err != nil {
			release()
			return nil, err
		}
		ll, err := landlockGrants(dirs, writable, tmp, g, stage.connectPorts)
		if err != nil {
			release()
			return nil, err
		}
		ll.AllowBind = b.settings.Network.AllowLocalBinding
		stage.Backend = kindLandlock
		stage.Landlock = ll
		cmd.Env = append(cmd.Env, "TMPDIR="+tmp, "TMP="+tmp, "TEMP="+tmp)
		cmd.Path, cmd.Args = b.exe, append([]string{b.exe}, cmd.Args...)
	}
	env, err := stage.env()
	if err != nil {
		release()
		return nil, err
	}
	cmd.Env = append(cmd.Env, env)
	return release, nil
}

// Close stops the proxy and removes the private TMPDIR; commands are
// refused afterwards. It is called once, at the end of the session.
func (b *Sandbox) Close() error {
	b.closeMu.Lock()
	defer b.closeMu.Unlock()
	if b.closed {
		return nil
	}
	b.closed = true
	var errs []error
	if b.network != nil {
		errs = append(errs, b.network.close())
	}
	if b.tmpDir != "" {
		errs = append(errs, os.RemoveAll(b.tmpDir))
	}
	return errors.Join(errs...)
}

// privateTmp is the Landlock backend's TMPDIR, made on first use.
func (b *Sandbox) privateTmp() (string, error) {
	b.tmpOnce.Do(func() {
		b.tmpDir, b.tmpErr = os.MkdirTemp("", "tack-sandbox-tmp-")
		if b.tmpErr == nil {
			b.tmpDir, b.tmpErr = filepath.EvalSymlinks(b.tmpDir)
		}
	})
	if b.tmpErr != nil {
		return "", fmt.Errorf("sandbox: private TMPDIR: %w", b.tmpErr)
	}
	return b.tmpDir, nil
}

// guardEnv is the session environment the protected paths depend on.
func (b *Sandbox) guardEnv() guardEnv {
	home := b.getenv("HOME")
	if home == "" {
		home, _ = os.UserHomeDir()
	}
	return guardEnv{
		nested:       b.nestedRepos,
		home:         home,
		path:         filepath.SplitList(b.getenv("PATH")),
		xdgConfig:    b.getenv("XDG_CONFIG_HOME"),
		claudeConfig: b.getenv("CLAUDE_CONFIG_DIR"),
		gitGlobal:    b.getenv("GIT_CONFIG_GLOBAL"),
	}
}

// nestedRepos lists the repositories inside dir, looked for again only
// when dir itself changed (a clone at its top level).
func (b *Sandbox) nestedRepos(dir string) []string {
	fi, err := os.Stat(dir)
	if err != nil {
		return nil
	}
	b.nestedMu.Lock()
	defer b.nestedMu.Unlock()
	if s, ok := b.nested[dir]; ok && s.mtime.Equal(fi.ModTime()) {
		return s.tops
	}
	tops := nestedRepos(dir)
	if b.nested == nil {
		b.nested = map[string]nestedScan{}
	}
	b.nested[dir] = nestedScan{mtime: fi.ModTime(), tops: tops}
	return tops
}

// nestedScan is what nestedRepos found in one directory.
type nestedScan struct {
	mtime time.Time
	tops  []string
}

// writableDirs cleans the working directories: absolute, physical (links
// resolved), existing, each once.
func writableDirs(in []string) []string {
	var out []string
	for _, d := range in {
		if !filepath.IsAbs(d) {
			continue
		}
		real, err := filepath.EvalSymlinks(d)
		if err != nil {
			continue
		}
		if fi, err := os.Stat(real); err != nil || !fi.IsDir() {
			continue
		}
		dup := false
		for _, o := range out {
			if o == real {
				dup = true
			}
		}
		if !dup {
			out = append(out, real)
		}
	}
	return out
}

// within reports whether p is dir or inside it (both clean and absolute).
func within(p, dir string) bool {
	return p == dir || dir == "/" || strings.HasPrefix(p, dir+"/")
}

// withinAny reports whether p is inside one of dirs.
func withinAny(p string, dirs []string) bool {
	for _, d := range dirs {
		if within(p, d) {
			return true
		}
	}
	return false
}
