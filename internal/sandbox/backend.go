package sandbox

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"strings"

	"golang.org/x/sys/unix"
)

// The backends, as the stage knows them.
const (
	kindBwrap    = "bwrap"
	kindLandlock = "landlock"
)

// backend is how a session's commands are isolated.
type backend struct {
	kind string
	// bwrap is bubblewrap's path; userNS says it makes a user namespace
	// (without one, as root, it drops every capability instead), and
	// nestedOff that it can forbid user namespaces inside (bubblewrap
	// 0.8 and later).
	bwrap     string
	userNS    bool
	nestedOff bool
	// abi is the kernel's Landlock ABI version (the Landlock backend).
	abi int
	// why bubblewrap could not be used, for the notice.
	why string
}

// pickBackend finds the strongest backend this machine allows, or the one
// forced ("bwrap", "landlock"; "" picks).
func pickBackend(force string, lookPath func(string) (string, error)) (backend, error) {
	switch force {
	case "", kindBwrap, kindLandlock:
	default:
		return backend{}, fmt.Errorf("TACK_SANDBOX=%q: want bwrap or landlock", force)
	}
	why := ""
	if force != kindLandlock {
		be, err := probeBwrap(lookPath)
		if err == nil {
			return be, nil
		}
		if force == kindBwrap {
			return backend{}, err
		}
		why = err.Error()
	} else {
		why = "TACK_SANDBOX=landlock"
	}
	abi, err := landlockABI()
	// PR_GET_SECCOMP fails where the kernel has no seccomp.
	if _, serr := unix.PrctlRetInt(unix.PR_GET_SECCOMP, 0, 0, 0, 0); err != nil || abi < 1 || serr != nil {
		return backend{}, fmt.Errorf("%w (%s)", ErrUnavailable, why)
	}
	return backend{kind: kindLandlock, abi: abi, why: why}, nil
}

// probeBwrap checks that bubblewrap can make the namespaces the sandbox
// uses, with a user namespace or, as root, without one.
func probeBwrap(lookPath func(string) (string, error)) (backend, error) {
	path, err := lookPath("bwrap")
	if err != nil {
		return backend{}, ErrNoBwrap
	}
	truePath, err := lookPath("true")
	if err != nil {
		truePath = "/bin/true"
	}
	try := func(userNS, nestedOff bool) error {
		args := append(namespaceArgs(userNS, nestedOff), "--ro-bind", "/", "/", "--proc", "/proc", "--dev", "/dev", "--", truePath)
		var stderr bytes.Buffer
		cmd := exec.Command(path, args...)
		cmd.Stderr = &stderr
		if err := cmd.Run(); err != nil {
			return fmt.Errorf("%v: %s", err, strings.TrimSpace(stderr.String()))
		}
		return nil
	}
	// The strongest first; an older bubblewrap lacks --disable-userns (a
	// user namespace inside the sandbox can remount or unmount nothing it
	// inherits: those mounts are locked).
	var first error
	for _, c := range []struct{ userNS, nestedOff bool }{{true, true}, {true, false}, {false, false}} {
		if !c.userNS && os.Geteuid() != 0 {
			break
		}
		err := try(c.userNS, c.nestedOff)
		if err == nil {
			return backend{kind: kindBwrap, bwrap: path, userNS: c.userNS, nestedOff: c.nestedOff}, nil
		}
		if first == nil {
			first = err
		}
	}
	return backend{}, fmt.Errorf("bubblewrap cannot create its namespaces here: %v", first)
}

// namespaceArgs are bubblewrap's isolation options: every namespace, no
// capabilities, no terminal, no nested user namespaces.
func namespaceArgs(userNS, nestedOff bool) []string {
	args := []string{"--unshare-pid", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try", "--unshare-net",
		"--die-with-parent", "--new-session", "--cap-drop", "ALL"}
	if nestedOff {
		args = append([]string{"--disable-userns"}, args...)
	}
	if userNS {
		args = append([]string{"--unshare-user"}, args...)
	}
	return args
}

// name is the backend's name for users.
func (b backend) name() string {
	if b.kind == kindLandlock {
		return "landlock"
	}
	return "bubblewrap"
}

// notice says what the backend cannot enforce, "" when nothing.
func (b backend) notice(n Network) string {
	var gaps []string
	if b.kind == kindLandlock {
		gaps = append(gaps,
			"no entry can be made, removed or renamed at the top level of a working directory (inside its existing subdirectories writes work)",
			".git is read-only (git commit fails)",
			"/tmp is shared (TMPDIR points to a private directory)",
			"other processes are visible",
		)
		if b.abi < 4 {
			gaps = append(gaps, fmt.Sprintf("TCP is not restricted (Landlock ABI %d < 4)", b.abi))
		} else if n.networked() {
			gaps = append(gaps, "TCP connections are limited to the proxy's port number, on any address")
		}
		if b.abi < 5 {
			gaps = append(gaps, "terminal ioctls are not restricted")
		}
		if b.abi < 6 {
			gaps = append(gaps, "signals to other processes and abstract unix sockets are not restricted")
		}
	}
	if b.kind == kindBwrap && b.userNS && !b.nestedOff {
		gaps = append(gaps, "commands may make user namespaces of their own (bubblewrap older than 0.8 cannot forbid them; what they inherit stays locked)")
	}
	if n.unixAllowed() {
		if n.AllowAllUnixSockets {
			gaps = append(gaps, "unix sockets are allowed (network.allowAllUnixSockets)")
		} else {
			gaps = append(gaps, "every unix socket is allowed, not only network.allowUnixSockets: Linux cannot filter connect(2) by path")
		}
	}
	if len(gaps) == 0 {
		return ""
	}
	head := "sandbox: commands run under bubblewrap"
	if b.kind == kindLandlock {
		head = fmt.Sprintf("sandbox: commands run under Landlock (ABI %d) and seccomp, not bubblewrap (%s)", b.abi, b.why)
	}
	return head + "; it cannot enforce: " + strings.Join(gaps, "; ")
}

// Available names the backend a sandbox would use on this machine
// ("bubblewrap", "landlock"), with what it cannot enforce ("" when
// nothing), or says why none can run: what `tack doctor` reports.
func Available(getenv func(string) string) (name, gaps string, err error) {
	if getenv == nil {
		getenv = os.Getenv
	}
	be, err := pickBackend(getenv("TACK_SANDBOX"), exec.LookPath)
	if err != nil {
		return "", "", err
	}
	return be.name(), be.notice(Network{}), nil
}
