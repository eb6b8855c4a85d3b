package sandbox

import (
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"strconv"
	"sync"

	"github.com/tackcode/tack/internal/sandbox/netproxy"
	"golang.org/x/sys/unix"
)

// The ports the proxy has inside a network namespace of the sandbox, when
// the settings name none.
const (
	defaultHTTPPort  = 3128
	defaultSOCKSPort = 1080
)

// proxySide is the proxy side of the sandbox: tack's filtering proxy (or the
// user's own, on httpProxyPort/socksProxyPort), started on first use.
type proxySide struct {
	settings Network
	dial     func(ctx context.Context, network, addr string) (net.Conn, error)
	notify   func(string)

	once    sync.Once
	err     error
	proxy   *netproxy.Proxy
	ctx     context.Context
	cancel  context.CancelFunc
	mu      sync.Mutex
	denied  map[string]bool
	conns   sync.WaitGroup
	hostLns []net.Listener
	// hostHTTP and hostSOCKS are the ports on the host's loopback
	// (Landlock backend: the command connects to them directly).
	hostHTTP, hostSOCKS int
}

func newProxySide(s Network, dial func(ctx context.Context, network, addr string) (net.Conn, error), notify func(string)) *proxySide {
	ctx, cancel := context.WithCancel(context.Background())
	return &proxySide{settings: s, dial: dial, notify: notify, ctx: ctx, cancel: cancel, denied: map[string]bool{}}
}

// validate checks the domain lists.
func (n *proxySide) validate() error {
	if len(n.settings.AllowedDomains) == 0 {
		return nil
	}
	if _, err := netproxy.NewPolicy(n.settings.AllowedDomains, n.settings.DeniedDomains); err != nil {
		return fmt.Errorf("sandbox.network: %w", err)
	}
	return nil
}

// ours reports whether tack's proxy serves the HTTP (or SOCKS) side, or
// the user's own does.
func (n *proxySide) oursHTTP() bool  { return n.settings.HTTPProxyPort == 0 }
func (n *proxySide) oursSOCKS() bool { return n.settings.SOCKSProxyPort == 0 }

// start makes tack's proxy, once, when the first command needs it.
func (n *proxySide) start(landlock bool) error {
	n.once.Do(func() {
		if len(n.settings.AllowedDomains) > 0 {
			policy, err := netproxy.NewPolicy(n.settings.AllowedDomains, n.settings.DeniedDomains)
			if err != nil {
				n.err = fmt.Errorf("sandbox.network: %w", err)
				return
			}
			n.proxy = netproxy.New(netproxy.Options{Policy: policy, Dial: n.dial, OnDenied: n.refused})
		}
		if !landlock {
			return
		}
		// Without a network namespace the command reaches the proxy on
		// the host's loopback.
		listen := func(serve func(context.Context, net.Listener) error) (int, error) {
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				return 0, fmt.Errorf("sandbox: proxy: %w", err)
			}
			n.hostLns = append(n.hostLns, ln)
			go serve(n.ctx, ln)
			return ln.Addr().(*net.TCPAddr).Port, nil
		}
		if n.proxy != nil && n.oursHTTP() {
			if n.hostHTTP, n.err = listen(n.proxy.ServeHTTP); n.err != nil {
				return
			}
		}
		if n.proxy != nil && n.oursSOCKS() {
			n.hostSOCKS, n.err = listen(n.proxy.ServeSOCKS)
		}
	})
	return n.err
}

// refused tells the session, once per destination, that the proxy refused
// it.
func (n *proxySide) refused(host string, port int) {
	dest := net.JoinHostPort(host, strconv.Itoa(port))
	n.mu.Lock()
	seen := n.denied[dest]
	n.denied[dest] = true
	n.mu.Unlock()
	if !seen && n.notify != nil {
		n.notify(fmt.Sprintf("sandbox: a command's connection to %s was refused (not in sandbox.network.allowedDomains)", dest))
	}
}

// attach gives cmd its way to the proxy: for bubblewrap, one end of a
// socket pair the stage hands each connection through (configured in
// stage); for Landlock, the host ports it may connect to. It returns the
// proxy variables for the command's environment.
func (n *proxySide) attach(cmd *exec.Cmd, stage *stageConfig, kind string) (env []string, release func(), err error) {
	if err := n.start(kind == kindLandlock); err != nil {
		return nil, nil, err
	}
	httpPort, socksPort := 0, 0
	if kind == kindLandlock {
		httpPort, socksPort = n.settings.HTTPProxyPort, n.settings.SOCKSProxyPort
		if n.oursHTTP() {
			httpPort = n.hostHTTP
		}
		if n.oursSOCKS() {
			socksPort = n.hostSOCKS
		}
		for _, p := range []int{httpPort, socksPort} {
			if p != 0 {
				stage.connectPorts = append(stage.connectPorts, p)
			}
		}
		release = func() {}
	} else {
		if !n.oursHTTP() || n.proxy != nil {
			httpPort = portOr(n.settings.HTTPProxyPort, defaultHTTPPort)
		}
		if !n.oursSOCKS() || n.proxy != nil {
			socksPort = portOr(n.settings.SOCKSProxyPort, defaultSOCKSPort)
		}
		fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_SEQPACKET|unix.SOCK_CLOEXEC, 0)
		if err != nil {
			return nil, nil, fmt.Errorf("sandbox: bridge: %w", err)
		}
		ours, theirs := os.NewFile(uintptr(fds[0]), "bridge"), os.NewFile(uintptr(fds[1]), "bridge")
		conn, err := net.FileConn(ours)
		ours.Close()
		if err != nil {
			theirs.Close()
			return nil, nil, fmt.Errorf("sandbox: bridge: %w", err)
		}
		stage.Bridge = &bridgeConfig{FD: 3 + len(cmd.ExtraFiles), HTTPPort: httpPort, SOCKSPort: socksPort}
		cmd.ExtraFiles = append(cmd.ExtraFiles, theirs)
		done := make(chan struct{})
		go func() {
			defer close(done)
			n.receive(conn.(*net.UnixConn))
		}()
		release = func() {
			theirs.Close()
			conn.Close()
			<-done
		}
	}
	return proxyEnv(httpPort, socksPort), release, nil
}

// receive serves the connections the stage hands over until the pair
// closes.
func (n *proxySide) receive(c *net.UnixConn) {
	buf := make([]byte, 1)
	oob := make([]byte, unix.CmsgSpace(4))
	for {
		k, oobn, _, _, err := c.ReadMsgUnix(buf, oob)
		if err != nil || k == 0 {
			return
		}
		msgs, err := unix.ParseSocketControlMessage(oob[:oobn])
		if err != nil {
			continue
		}
		for _, m := range msgs {
			fds, err := unix.ParseUnixRights(&m)
			if err != nil {
				continue
			}
			for _, fd := range fds {
				f := os.NewFile(uintptr(fd), "sandboxed connection")
				conn, err := net.FileConn(f)
				f.Close()
				if err != nil {
					continue
				}
				n.conns.Add(1)
				go func(kind byte) {
					defer n.conns.Done()
					n.serve(kind, conn)
				}(buf[0])
			}
		}
	}
}

// serve serves one connection from the sandbox with the proxy of its
// kind.
func (n *proxySide) serve(kind byte, c net.Conn) {
	defer c.Close()
	own, ours := n.settings.HTTPProxyPort, n.oursHTTP()
	if kind == bridgeSOCKS {
		own, ours = n.settings.SOCKSProxyPort, n.oursSOCKS()
	}
	switch {
	case !ours:
		splice(n.ctx, c, own)
	case n.proxy == nil:
	case kind == bridgeSOCKS:
		n.proxy.ServeSOCKSConn(n.ctx, c)
	default:
		n.proxy.ServeHTTPConn(n.ctx, c)
	}
}

// splice relays c to the user's own proxy on the host's loopback.
func splice(ctx context.Context, c net.Conn, port int) {
	var d net.Dialer
	up, err := d.DialContext(ctx, "tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
	if err != nil {
		return
	}
	defer up.Close()
	done := make(chan struct{}, 2)
	go func() { io.Copy(up, c); done <- struct{}{} }()
	go func() { io.Copy(c, up); done <- struct{}{} }()
	select {
	case <-done:
	case <-ctx.Done():
	}
}

// close ends the proxy and every connection it serves.
func (n *proxySide) close() error {
	n.cancel()
	var err error
	if n.proxy != nil {
		err = n.proxy.Close()
	}
	for _, ln := range n.hostLns {
		ln.Close()
	}
	n.conns.Wait()
	return err
}

// proxyEnv points a command's HTTP, HTTPS and SOCKS clients at the proxy.
func proxyEnv(httpPort, socksPort int) []string {
	var env []string
	if httpPort != 0 {
		u := "http://127.0.0.1:" + strconv.Itoa(httpPort)
		env = append(env, "HTTP_PROXY="+u, "HTTPS_PROXY="+u, "http_proxy="+u, "https_proxy="+u)
	}
	if socksPort != 0 {
		u := "socks5h://127.0.0.1:" + strconv.Itoa(socksPort)
		env = append(env, "ALL_PROXY="+u, "all_proxy="+u)
	}
	if len(env) > 0 {
		env = append(env, "NO_PROXY=localhost,127.0.0.1,::1", "no_proxy=localhost,127.0.0.1,::1")
	}
	return env
}

func portOr(p, def int) int {
	if p != 0 {
		return p
	}
	return def
}
