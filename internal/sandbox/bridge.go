package sandbox

import (
	"fmt"
	"net"
	"os"
	"strconv"
	"sync"

	"golang.org/x/sys/unix"
)

// The kinds of connection the bridge hands over, in the one byte sent
// with each descriptor.
const (
	bridgeHTTP  byte = 'h'
	bridgeSOCKS byte = 's'
)

// bridgeConfig tells the stage where to serve the proxy's ports and what
// to hand their connections through.
type bridgeConfig struct {
	// FD is the stage's end of the socket pair tack reads.
	FD int `json:"fd"`
	// HTTPPort and SOCKSPort are the ports to listen on, on the
	// sandbox's own 127.0.0.1; 0: not served.
	HTTPPort  int `json:"httpPort,omitempty"`
	SOCKSPort int `json:"socksPort,omitempty"`
}

// bridge is the stage's side: listeners inside the network namespace whose
// connections go, descriptor and all, to tack outside. It never makes a
// unix socket of its own, so the seccomp filter does not stop it.
type bridge struct {
	pair *net.UnixConn
	lns  []net.Listener
	kind []byte
	mu   sync.Mutex
}

// openBridge listens on the configured ports.
func openBridge(cfg bridgeConfig) (*bridge, error) {
	unix.CloseOnExec(cfg.FD) // the command must not inherit it
	f := os.NewFile(uintptr(cfg.FD), "bridge")
	c, err := net.FileConn(f)
	f.Close()
	if err != nil {
		return nil, fmt.Errorf("bridge: %w", err)
	}
	pair, ok := c.(*net.UnixConn)
	if !ok {
		c.Close()
		return nil, fmt.Errorf("bridge: descriptor %d is not a unix socket", cfg.FD)
	}
	b := &bridge{pair: pair}
	for _, p := range []struct {
		port int
		kind byte
	}{{cfg.HTTPPort, bridgeHTTP}, {cfg.SOCKSPort, bridgeSOCKS}} {
		if p.port == 0 {
			continue
		}
		ln, err := net.Listen("tcp4", "127.0.0.1:"+strconv.Itoa(p.port))
		if err != nil {
			b.close()
			return nil, fmt.Errorf("bridge: %w", err)
		}
		b.lns = append(b.lns, ln)
		b.kind = append(b.kind, p.kind)
	}
	return b, nil
}

// serve hands over every accepted connection until close.
func (b *bridge) serve() {
	for i, ln := range b.lns {
		go func(ln net.Listener, kind byte) {
			for {
				c, err := ln.Accept()
				if err != nil {
					return
				}
				b.handOver(c.(*net.TCPConn), kind)
			}
		}(ln, b.kind[i])
	}
}

// handOver sends c's descriptor to tack and closes the stage's copy.
func (b *bridge) handOver(c *net.TCPConn, kind byte) {
	defer c.Close()
	f, err := c.File()
	if err != nil {
		return
	}
	defer f.Close()
	b.mu.Lock()
	defer b.mu.Unlock()
	_, _, _ = b.pair.WriteMsgUnix([]byte{kind}, unix.UnixRights(int(f.Fd())), nil)
}

func (b *bridge) close() {
	for _, ln := range b.lns {
		ln.Close()
	}
	b.pair.Close()
}
