package sandbox

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"unsafe"

	"golang.org/x/sys/unix"
)

// The Landlock system calls are made here with golang.org/x/sys/unix
// rather than through go-landlock: its way of restricting every thread
// (libpsx, in C) makes the tack binary externally linked, which costs
// every tack process about 9 MB of resident memory, and the stage, which
// restricts its one thread and then replaces itself with the command,
// needs none of it.

// landlockConfig is the Landlock backend's rules for one command.
type landlockConfig struct {
	// Dirs may be written anywhere beneath; Files only written.
	Dirs  []string `json:"dirs,omitempty"`
	Files []string `json:"files,omitempty"`
	// ConnectPorts are the TCP ports connect(2) may reach (the proxy's).
	ConnectPorts []int `json:"connectPorts,omitempty"`
	// AllowBind lets commands listen on TCP ports (allowLocalBinding).
	AllowBind bool `json:"allowBind,omitempty"`
}

// Access rights. Reading and executing are not restricted (as with
// bubblewrap's read-only root); everything that changes files is.
const (
	llWrite = unix.LANDLOCK_ACCESS_FS_WRITE_FILE | unix.LANDLOCK_ACCESS_FS_REMOVE_DIR | unix.LANDLOCK_ACCESS_FS_REMOVE_FILE |
		unix.LANDLOCK_ACCESS_FS_MAKE_CHAR | unix.LANDLOCK_ACCESS_FS_MAKE_DIR | unix.LANDLOCK_ACCESS_FS_MAKE_REG |
		unix.LANDLOCK_ACCESS_FS_MAKE_SOCK | unix.LANDLOCK_ACCESS_FS_MAKE_FIFO | unix.LANDLOCK_ACCESS_FS_MAKE_BLOCK |
		unix.LANDLOCK_ACCESS_FS_MAKE_SYM | unix.LANDLOCK_ACCESS_FS_REFER | unix.LANDLOCK_ACCESS_FS_TRUNCATE |
		unix.LANDLOCK_ACCESS_FS_IOCTL_DEV
	llFile = unix.LANDLOCK_ACCESS_FS_WRITE_FILE | unix.LANDLOCK_ACCESS_FS_TRUNCATE
)

// fsRights are the file-system access rights each Landlock ABI knows: ABI
// 1 the first thirteen, 2 adds REFER, 3 TRUNCATE, 5 IOCTL_DEV.
func fsRights(abi int) uint64 {
	rights := uint64(unix.LANDLOCK_ACCESS_FS_MAKE_SYM<<1 - 1)
	if abi >= 2 {
		rights |= unix.LANDLOCK_ACCESS_FS_REFER
	}
	if abi >= 3 {
		rights |= unix.LANDLOCK_ACCESS_FS_TRUNCATE
	}
	if abi >= 5 {
		rights |= unix.LANDLOCK_ACCESS_FS_IOCTL_DEV
	}
	return rights
}

// landlockABI returns the kernel's Landlock ABI version.
func landlockABI() (int, error) {
	v, _, errno := unix.Syscall(unix.SYS_LANDLOCK_CREATE_RULESET, 0, 0, unix.LANDLOCK_CREATE_RULESET_VERSION)
	if errno != 0 {
		return 0, errno
	}
	return int(v), nil
}

// landlockRuleNetPort is struct landlock_net_port_attr (ABI 4).
type landlockNetPortAttr struct {
	allowedAccess uint64
	port          uint64
}

const landlockRuleNetPort = 2

// devWritable are the devices every program may write.
var devWritable = []string{"/dev/null", "/dev/zero", "/dev/full"}

// restrict applies the rules to the calling thread, which then runs the
// command with execve: file writes, TCP connect (and bind) and, from ABI
// 6, signals and abstract unix sockets scoped to the sandbox. Kernel
// features the ABI lacks are left out (the session's notice names them).
func (c *landlockConfig) restrict() error {
	abi, err := landlockABI()
	if err != nil || abi < 1 {
		return fmt.Errorf("landlock: not available (%v)", err)
	}
	handled := uint64(llWrite) & fsRights(abi)
	attr := unix.LandlockRulesetAttr{Handled_access_fs: handled}
	if abi >= 4 {
		attr.Handled_access_net = unix.LANDLOCK_ACCESS_NET_CONNECT_TCP
		if !c.AllowBind {
			attr.Handled_access_net |= unix.LANDLOCK_ACCESS_NET_BIND_TCP
		}
	}
	if abi >= 6 {
		attr.Scoped = unix.LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET | unix.LANDLOCK_SCOPE_SIGNAL
	}
	rfd, _, errno := unix.Syscall(unix.SYS_LANDLOCK_CREATE_RULESET, uintptr(unsafe.Pointer(&attr)), unsafe.Sizeof(attr), 0)
	if errno != 0 {
		return fmt.Errorf("landlock_create_ruleset: %w", errno)
	}
	ruleset := int(rfd)
	defer unix.Close(ruleset)
	grant := func(paths []string, access uint64) error {
		for _, p := range paths {
			fd, err := unix.Open(p, unix.O_PATH|unix.O_CLOEXEC, 0)
			if errors.Is(err, unix.ENOENT) {
				continue
			}
			if err != nil {
				return fmt.Errorf("landlock: %s: %w", p, err)
			}
			rule := unix.LandlockPathBeneathAttr{Allowed_access: access & handled, Parent_fd: int32(fd)}
			_, _, errno := unix.Syscall6(unix.SYS_LANDLOCK_ADD_RULE, uintptr(ruleset), unix.LANDLOCK_RULE_PATH_BENEATH, uintptr(unsafe.Pointer(&rule)), 0, 0, 0)
			unix.Close(fd)
			if errno != 0 {
				return fmt.Errorf("landlock_add_rule %s: %w", p, errno)
			}
		}
		return nil
	}
	if err := grant(devWritable, llFile); err != nil {
		return err
	}
	if err := grant(c.Dirs, llWrite); err != nil {
		return err
	}
	if err := grant(c.Files, llFile); err != nil {
		return err
	}
	if abi >= 4 {
		for _, p := range c.ConnectPorts {
			rule := landlockNetPortAttr{allowedAccess: unix.LANDLOCK_ACCESS_NET_CONNECT_TCP, port: uint64(p)}
			_, _, errno := unix.Syscall6(unix.SYS_LANDLOCK_ADD_RULE, uintptr(ruleset), landlockRuleNetPort, uintptr(unsafe.Pointer(&rule)), 0, 0, 0)
			if errno != 0 {
				return fmt.Errorf("landlock_add_rule port %d: %w", p, errno)
			}
		}
	}
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("prctl(PR_SET_NO_NEW_PRIVS): %w", err)
	}
	if _, _, errno := unix.Syscall(unix.SYS_LANDLOCK_RESTRICT_SELF, uintptr(ruleset), 0, 0); errno != 0 {
		return fmt.Errorf("landlock_restrict_self: %w", errno)
	}
	return nil
}

// landlockGrants computes the Landlock rules of one command. Landlock only
// grants, and a grant holds for a whole tree, so a directory holding a
// guard (or a git directory, kept read-only whole) gets no right of its
// own; each of its entries is granted instead, recursively, except the
// guarded ones. That is the cost: no entry can be made, removed or
// renamed in such a directory (the top level of every working directory),
// and a guard that does not exist yet cannot be made either. Symbolic
// links are not granted (that would grant what they point to).
func landlockGrants(dirs, files []string, tmp string, g guards, ports []int) (*landlockConfig, error) {
	var stops []string
	for _, gd := range g.guards {
		stops = append(stops, gd.path)
	}
	stops = append(stops, g.gitDirs...)
	c := &landlockConfig{Files: files, ConnectPorts: ports, Dirs: []string{tmp}}
	var grant func(p string, dir bool) error
	grant = func(p string, dir bool) error {
		if contains(stops, p) {
			return nil
		}
		inner := false
		for _, s := range stops {
			if within(s, p) {
				inner = true
			}
		}
		switch {
		case !dir:
			c.Files = append(c.Files, p)
			return nil
		case !inner:
			c.Dirs = append(c.Dirs, p)
			return nil
		}
		entries, err := os.ReadDir(p)
		if err != nil {
			return fmt.Errorf("sandbox: %s: %w", p, err)
		}
		for _, e := range entries {
			switch t := e.Type(); {
			case t.IsDir():
				if err := grant(filepath.Join(p, e.Name()), true); err != nil {
					return err
				}
			case t.IsRegular():
				if err := grant(filepath.Join(p, e.Name()), false); err != nil {
					return err
				}
			}
		}
		return nil
	}
	for _, d := range dirs {
		if err := grant(d, true); err != nil {
			return nil, err
		}
	}
	return c, nil
}
