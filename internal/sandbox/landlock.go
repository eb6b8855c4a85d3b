package sandbox

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/landlock-lsm/go-landlock/landlock"
	llsys "github.com/landlock-lsm/go-landlock/landlock/syscall"
)

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
	llWrite = llsys.AccessFSWriteFile | llsys.AccessFSRemoveDir | llsys.AccessFSRemoveFile |
		llsys.AccessFSMakeChar | llsys.AccessFSMakeDir | llsys.AccessFSMakeReg | llsys.AccessFSMakeSock |
		llsys.AccessFSMakeFifo | llsys.AccessFSMakeBlock | llsys.AccessFSMakeSym | llsys.AccessFSRefer |
		llsys.AccessFSTruncate | llsys.AccessFSIoctlDev
	llFile = llsys.AccessFSWriteFile | llsys.AccessFSTruncate
)

// devWritable are the devices every program may write.
var devWritable = []string{"/dev/null", "/dev/zero", "/dev/full"}

// restrict applies the rules to the process: file writes, TCP connect
// (and bind) and, from ABI 6, signals and abstract unix sockets scoped to
// the sandbox. Kernel features the ABI lacks are left out (the session's
// notice names them).
func (c *landlockConfig) restrict() error {
	handledNet := landlock.AccessNetSet(llsys.AccessNetConnectTCP)
	if !c.AllowBind {
		handledNet |= llsys.AccessNetBindTCP
	}
	cfg := landlock.Config{
		HandledAccessFS:  landlock.AccessFSSet(llWrite),
		HandledAccessNet: handledNet,
		Scoped:           landlock.ScopedSet(llsys.ScopeAbstractUnixSocket | llsys.ScopeSignal),
	}
	rules := []landlock.Rule{
		landlock.PathAccess(landlock.AccessFSSet(llFile), devWritable...).IgnoreIfMissing(),
	}
	if len(c.Dirs) > 0 {
		rules = append(rules, landlock.PathAccess(landlock.AccessFSSet(llWrite), c.Dirs...).IgnoreIfMissing())
	}
	if len(c.Files) > 0 {
		rules = append(rules, landlock.PathAccess(landlock.AccessFSSet(llFile), c.Files...).IgnoreIfMissing())
	}
	for _, p := range c.ConnectPorts {
		rules = append(rules, landlock.ConnectTCP(uint16(p)))
	}
	if err := cfg.BestEffort().Restrict(rules...); err != nil {
		return fmt.Errorf("landlock: %w", err)
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
