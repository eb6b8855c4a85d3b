// Package filter is the sandbox's seccomp policy, assembled into BPF by
// go-seccomp-bpf. The sandbox embeds the programs it assembles for amd64
// (so that the library, whose syscall tables take time to build at
// start-up, is not in the tack binary) and assembles them at run time on
// other architectures.
package filter

import (
	"fmt"
	"slices"

	"github.com/elastic/go-seccomp-bpf"
	"github.com/elastic/go-seccomp-bpf/arch"
	"golang.org/x/net/bpf"
	"golang.org/x/sys/unix"
)

// Config says which policy: the backend and whether unix sockets are
// allowed.
type Config struct {
	// Landlock: the Landlock backend, which has no network namespace.
	Landlock  bool
	AllowUnix bool
}

// Configs are every configuration, in the order the sandbox indexes them:
// 2 for Landlock, plus 1 for AllowUnix.
var Configs = []Config{{}, {AllowUnix: true}, {Landlock: true}, {Landlock: true, AllowUnix: true}}

// Policy is the seccomp policy of a stage: what every sandboxed command
// is refused, whatever the backend. Each refusal is an error (EPERM), not a
// kill, so programs see a failed call.
//
//   - socket(AF_UNIX, …) unless unix sockets are allowed: a socket file
//     (docker.sock, an agent's socket in $HOME) is reachable through a
//     read-only mount. socketpair stays: runtimes use it for pipes.
//   - io_uring, which creates sockets without the socket system call.
//   - keyctl, add_key, request_key: the kernel keyrings are shared with
//     the user's other processes.
//   - ioctl TIOCSTI and TIOCLINUX, which push input into a terminal.
//   - On the Landlock backend, which has no network namespace: every
//     socket that is not TCP over IPv4 or IPv6 (UDP, raw, netlink, packet…
//     Landlock restricts TCP only), and Multipath TCP, which Landlock does
//     not restrict.
//
// The kernel reads these arguments as 32-bit ints and ignores the upper
// half of the register, so every comparison is on the lower 32 bits only.
func Policy(c Config) seccomp.Policy {
	var conds []seccomp.NameWithConditions
	rule := func(name string, sets ...seccomp.ArgumentConditions) {
		for _, c := range sets {
			conds = append(conds, seccomp.NameWithConditions{Name: name, Conditions: c})
		}
	}
	allowed := []uint32{unix.AF_INET, unix.AF_INET6}
	if c.AllowUnix {
		allowed = append(allowed, unix.AF_UNIX)
	}
	switch {
	case c.Landlock:
		rule("socket", valueNotIn(0, allowed)...)
		// The low four bits of the type are the kind: not a stream. (The
		// flags above them, SOCK_NONBLOCK and SOCK_CLOEXEC, are fine.)
		notStream := seccomp.Condition{Argument: 1, Operation: seccomp.BitsSet, Value: 0xf &^ unix.SOCK_STREAM}
		for _, family := range []uint32{unix.AF_INET, unix.AF_INET6} {
			rule("socket", append(lowEquals(0, family), notStream),
				append(lowEquals(0, family), lowEquals(2, unix.IPPROTO_MPTCP)...))
		}
	case !c.AllowUnix:
		rule("socket", lowEquals(0, unix.AF_UNIX))
	}
	rule("ioctl", lowEquals(1, unix.TIOCSTI), lowEquals(1, unix.TIOCLINUX))
	return seccomp.Policy{DefaultAction: seccomp.ActionAllow, Syscalls: []seccomp.SyscallGroup{
		{
			Names:  []string{"io_uring_setup", "io_uring_enter", "io_uring_register", "keyctl", "add_key", "request_key"},
			Action: seccomp.ActionErrno,
		},
		{NamesWithCondtions: conds, Action: seccomp.ActionErrno},
	}}
}

// lowEquals matches argument arg whose lower 32 bits are v, whatever the
// upper ones: every bit of v set, and no other. (The library's BitsSet and
// BitsNotSet look at the upper half only for bits set there in the value.)
func lowEquals(arg uint32, v uint32) seccomp.ArgumentConditions {
	var c seccomp.ArgumentConditions
	for bit := uint32(1); bit != 0; bit <<= 1 {
		if v&bit != 0 {
			c = append(c, seccomp.Condition{Argument: arg, Operation: seccomp.BitsSet, Value: uint64(bit)})
		}
	}
	return append(c, seccomp.Condition{Argument: arg, Operation: seccomp.BitsNotSet, Value: uint64(^v)})
}

// valueNotIn matches argument arg whose lower 32 bits are none of allowed,
// as alternatives: a bit outside all of them, or one of the values made of
// their bits only that is not allowed.
func valueNotIn(arg uint32, allowed []uint32) []seccomp.ArgumentConditions {
	var mask uint32
	for _, a := range allowed {
		mask |= a
	}
	sets := []seccomp.ArgumentConditions{{{Argument: arg, Operation: seccomp.BitsSet, Value: uint64(^mask)}}}
	for v := uint32(0); v <= mask; v++ {
		if v&^mask == 0 && !slices.Contains(allowed, v) {
			sets = append(sets, lowEquals(arg, v))
		}
	}
	return sets
}

// Program assembles c's policy for the running architecture. In front of
// the library's program goes one check of our own: a system call made
// through another architecture's entry point (int 0x80 on x86_64, whose
// socketcall multiplexer no argument filter can see into) fails with
// ENOSYS, where the library would let it through to the default action.
func Program(c Config) ([]unix.SockFilter, error) {
	native, err := arch.GetInfo("")
	if err != nil {
		return nil, fmt.Errorf("seccomp: %w", err)
	}
	policy := Policy(c)
	insts, err := policy.Assemble()
	if err != nil {
		return nil, fmt.Errorf("seccomp: %w", err)
	}
	guard := []bpf.Instruction{
		bpf.LoadAbsolute{Off: 4, Size: 4}, // seccomp_data.arch
		bpf.JumpIf{Cond: bpf.JumpEqual, Val: uint32(native.ID), SkipTrue: 1},
		bpf.RetConstant{Val: uint32(seccomp.ActionErrno) | uint32(unix.ENOSYS)},
	}
	raw, err := bpf.Assemble(append(guard, insts...))
	if err != nil {
		return nil, fmt.Errorf("seccomp: %w", err)
	}
	prog := make([]unix.SockFilter, len(raw))
	for i, r := range raw {
		prog[i] = unix.SockFilter{Code: r.Op, Jt: r.Jt, Jf: r.Jf, K: r.K}
	}
	return prog, nil
}
