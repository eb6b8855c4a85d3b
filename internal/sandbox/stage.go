package sandbox

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"runtime"
	"syscall"

	"golang.org/x/sys/unix"
)

// stageEnv marks a process as the in-sandbox stage and carries its
// configuration. The stage clears it before running the user's command.
const stageEnv = "TACK_SANDBOX_STAGE"

// stageExit is the status the stage exits with when it cannot set the
// sandbox up: the command did not run (as a shell says for a command
// that cannot be executed).
const stageExit = 126

func init() {
	// The only work done at start-up by processes that never sandbox: one
	// environment lookup.
	if cfg, ok := os.LookupEnv(stageEnv); ok {
		os.Exit(runStage(cfg, os.Args[1:]))
	}
}

// stageConfig is what the stage sets up before running the command.
type stageConfig struct {
	Backend string `json:"backend"`
	// AllowUnix lifts the filter on unix sockets.
	AllowUnix bool `json:"allowUnix,omitempty"`
	// Bridge serves the proxy's ports inside the network namespace.
	Bridge *bridgeConfig `json:"bridge,omitempty"`
	// Landlock is the Landlock backend's rules.
	Landlock *landlockConfig `json:"landlock,omitempty"`
	// connectPorts are the proxy ports a Landlock command may reach
	// (set by the proxy side, copied into Landlock).
	connectPorts []int
}

// env is the environment entry that carries c to the stage.
func (c stageConfig) env() (string, error) {
	b, err := json.Marshal(c)
	if err != nil {
		return "", fmt.Errorf("sandbox: stage configuration: %w", err)
	}
	return stageEnv + "=" + string(b), nil
}

// runStage sets the sandbox up around the current process and runs argv
// in it, returning the exit status to leave with.
func runStage(raw string, argv []string) int {
	os.Unsetenv(stageEnv)
	fail := func(err error) int {
		fmt.Fprintf(os.Stderr, "tack sandbox: %v\n", err)
		return stageExit
	}
	var cfg stageConfig
	if err := json.Unmarshal([]byte(raw), &cfg); err != nil {
		return fail(fmt.Errorf("bad stage configuration: %w", err))
	}
	if len(argv) == 0 {
		return fail(errors.New("no command to run"))
	}
	// Capabilities, Landlock and the final exec apply to this thread.
	runtime.LockOSThread()
	// The command runs as the same user: keep it from tracing this
	// process (or taking its descriptors with pidfd_getfd).
	if err := unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0); err != nil {
		return fail(fmt.Errorf("prctl(PR_SET_DUMPABLE): %w", err))
	}
	var bridge *bridge
	switch cfg.Backend {
	case kindBwrap:
		if cfg.Bridge != nil {
			var err error
			if bridge, err = openBridge(*cfg.Bridge); err != nil {
				return fail(err)
			}
		}
	case kindLandlock:
		if cfg.Landlock == nil {
			return fail(errors.New("no Landlock rules"))
		}
		if os.Geteuid() == 0 {
			if err := dropCapabilities(); err != nil {
				return fail(err)
			}
		}
		if err := cfg.Landlock.restrict(); err != nil {
			return fail(err)
		}
	default:
		return fail(fmt.Errorf("unknown backend %q", cfg.Backend))
	}
	// With bubblewrap, bubblewrap has loaded the seccomp program.
	if cfg.Backend == kindLandlock {
		if err := loadSeccomp(cfg); err != nil {
			return fail(err)
		}
	}
	path, err := exec.LookPath(argv[0])
	if err != nil {
		return fail(err)
	}
	if bridge == nil {
		err := syscall.Exec(path, argv, os.Environ())
		return fail(fmt.Errorf("exec %s: %w", argv[0], err))
	}
	return runBridged(bridge, path, argv)
}

// runBridged runs the command as a child while the bridge serves the
// proxy's ports, and returns its status as a shell would report it.
func runBridged(br *bridge, path string, argv []string) int {
	cmd := exec.Command(path, argv[1:]...)
	cmd.Args = argv
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	// Signals meant for the command (bubblewrap forwards none, but a
	// supervisor might) go to it; the stage itself outlives them.
	sigs := make(chan os.Signal, 8)
	signal.Notify(sigs, unix.SIGTERM, unix.SIGINT, unix.SIGHUP, unix.SIGQUIT)
	if err := cmd.Start(); err != nil {
		fmt.Fprintf(os.Stderr, "tack sandbox: %v\n", err)
		return stageExit
	}
	go br.serve()
	go func() {
		for s := range sigs {
			_ = cmd.Process.Signal(s)
		}
	}()
	_ = cmd.Wait()
	br.close()
	ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus)
	if ok && ws.Signaled() {
		return 128 + int(ws.Signal())
	}
	return cmd.ProcessState.ExitCode()
}

// dropCapabilities leaves root without any capability, now and after
// exec: the bounding and ambient sets emptied, and the securebits locked
// so that running a program as uid 0 grants nothing.
func dropCapabilities() error {
	// linux/securebits.h: noroot, no_setuid_fixup and
	// no_cap_ambient_raise (bits 0, 2, 6), each with its lock (1, 3, 7).
	const bits = 1<<0 | 1<<1 | 1<<2 | 1<<3 | 1<<6 | 1<<7
	if err := unix.Prctl(unix.PR_SET_SECUREBITS, uintptr(bits), 0, 0, 0); err != nil {
		return fmt.Errorf("prctl(PR_SET_SECUREBITS): %w", err)
	}
	if err := unix.Prctl(unix.PR_CAP_AMBIENT, unix.PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0); err != nil {
		return fmt.Errorf("prctl(PR_CAP_AMBIENT_CLEAR_ALL): %w", err)
	}
	for c := 0; c <= unix.CAP_LAST_CAP; c++ {
		if err := unix.Prctl(unix.PR_CAPBSET_DROP, uintptr(c), 0, 0, 0); err != nil && !errors.Is(err, unix.EINVAL) {
			return fmt.Errorf("prctl(PR_CAPBSET_DROP, %d): %w", c, err)
		}
	}
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	if err := unix.Capset(&hdr, &data[0]); err != nil {
		return fmt.Errorf("capset: %w", err)
	}
	return nil
}
