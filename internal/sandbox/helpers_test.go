package sandbox

import (
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"unsafe"

	"github.com/tackcode/tack/internal/sandbox/internal/i386"
	"golang.org/x/sys/unix"
)

func TestMain(m *testing.M) {
	if ok, code := runProbeHelper(); ok {
		os.Exit(code)
	}
	code := m.Run()
	if stagePath != "" {
		os.RemoveAll(filepath.Dir(stagePath))
	}
	os.Exit(code)
}

func init() {
	pid := func(args []string) (int, error) {
		if len(args) != 1 {
			return 0, errors.New("want a pid")
		}
		return strconv.Atoi(args[0])
	}
	probeHelpers["ptrace"] = func(args []string) error {
		p, err := pid(args)
		if err != nil {
			return err
		}
		if err := unix.PtraceAttach(p); err == nil {
			unix.PtraceDetach(p)
			return escaped("attached to %d", p)
		}
		if fd, err := unix.PidfdOpen(p, 0); err == nil {
			if _, err := unix.PidfdGetfd(fd, 0, 0); err == nil {
				return escaped("took a descriptor of %d", p)
			}
		}
		return nil
	}
	probeHelpers["setns"] = func(args []string) error {
		p, err := pid(args)
		if err != nil {
			return err
		}
		for _, ns := range []string{"mnt", "net", "pid", "user"} {
			fd, err := unix.Open(fmt.Sprintf("/proc/%d/ns/%s", p, ns), unix.O_RDONLY, 0)
			if err != nil {
				continue
			}
			if unix.Setns(fd, 0) == nil {
				return escaped("entered the %s namespace of %d", ns, p)
			}
		}
		return nil
	}
	probeHelpers["keyctl"] = func([]string) error {
		const keyctlGetKeyringID, keySpecUserKeyring = 0, -4
		if _, _, e := unix.Syscall(unix.SYS_KEYCTL, keyctlGetKeyringID, uintptr(keySpecUserKeyring&0xffffffff), 0); e == 0 {
			return escaped("reached the user keyring")
		}
		return nil
	}
	probeHelpers["tiocsti"] = func(args []string) error {
		cmd := uintptr(unix.TIOCSTI)
		if len(args) > 0 && args[0] == "high" {
			cmd |= 1 << 32
		}
		c := byte('x')
		if _, _, e := unix.Syscall(unix.SYS_IOCTL, 0, cmd, uintptr(unsafe.Pointer(&c))); e == 0 {
			return escaped("pushed input into the terminal")
		}
		return nil
	}
	probeHelpers["unix"] = func(args []string) error {
		if len(args) != 1 {
			return errors.New("want a socket path")
		}
		if c, err := net.Dial("unix", args[0]); err == nil {
			c.Close()
			return escaped("connected to %s", args[0])
		}
		return nil
	}
	probeHelpers["unix-high-bits"] = func(args []string) error {
		// The kernel reads the family as an int: the upper half is noise.
		fd, _, e := unix.Syscall(unix.SYS_SOCKET, 1<<32|unix.AF_UNIX, unix.SOCK_STREAM, 0)
		if e != 0 {
			return nil
		}
		defer unix.Close(int(fd))
		escaped("made a unix socket past the filter")
		if len(args) == 1 && unix.Connect(int(fd), &unix.SockaddrUnix{Name: args[0]}) == nil {
			return escaped("connected to %s", args[0])
		}
		return nil
	}
	probeHelpers["i386-socket"] = func([]string) error {
		if fd := i386.Socket(unix.AF_UNIX, unix.SOCK_STREAM, 0); fd >= 0 {
			return escaped("made a unix socket through the 32-bit entry point")
		}
		return nil
	}
	probeHelpers["io-uring"] = func([]string) error {
		var params [120]byte
		fd, _, e := unix.Syscall(unix.SYS_IO_URING_SETUP, 1, uintptr(unsafe.Pointer(&params[0])), 0)
		if e == 0 {
			unix.Close(int(fd))
			return escaped("made an io_uring")
		}
		return nil
	}
	probeHelpers["mptcp"] = func(args []string) error {
		if len(args) != 2 {
			return errors.New("want host and port")
		}
		port, _ := strconv.Atoi(args[1])
		fd, err := unix.Socket(unix.AF_INET, unix.SOCK_STREAM, unix.IPPROTO_MPTCP)
		if err != nil {
			return nil
		}
		defer unix.Close(fd)
		ip := net.ParseIP(args[0]).To4()
		if unix.Connect(fd, &unix.SockaddrInet4{Port: port, Addr: [4]byte(ip)}) == nil {
			return escaped("connected with multipath TCP")
		}
		return nil
	}
	probeHelpers["raw"] = func([]string) error {
		if fd, err := unix.Socket(unix.AF_INET, unix.SOCK_RAW, unix.IPPROTO_ICMP); err == nil {
			unix.Close(fd)
			return escaped("made a raw socket")
		}
		if fd, err := unix.Socket(unix.AF_PACKET, unix.SOCK_RAW, 0); err == nil {
			unix.Close(fd)
			return escaped("made a packet socket")
		}
		return nil
	}
	probeHelpers["socketpair"] = func([]string) error {
		fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM, 0)
		if err != nil {
			return fmt.Errorf("BROKEN: socketpair: %w", err)
		}
		unix.Close(fds[0])
		unix.Close(fds[1])
		return nil
	}
	probeHelpers["loopback"] = func([]string) error {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return fmt.Errorf("BROKEN: listen: %w", err)
		}
		defer ln.Close()
		go func() {
			if c, err := ln.Accept(); err == nil {
				c.Write([]byte("ok"))
				c.Close()
			}
		}()
		c, err := net.Dial("tcp", ln.Addr().String())
		if err != nil {
			return fmt.Errorf("BROKEN: dial: %w", err)
		}
		defer c.Close()
		b := make([]byte, 2)
		if _, err := c.Read(b); err != nil || string(b) != "ok" {
			return fmt.Errorf("BROKEN: read %q: %v", b, err)
		}
		return nil
	}

}
