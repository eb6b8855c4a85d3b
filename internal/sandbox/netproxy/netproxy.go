// Package netproxy is the filtering proxy through which sandboxed commands
// reach the network: an HTTP proxy (absolute-URI requests and CONNECT
// tunnels) and a SOCKS5 proxy, both serving connections handed to them by the
// sandbox's socket bridge, and both letting through only the hosts a
// [Policy] (the settings' sandbox.network.allowedDomains and deniedDomains)
// allows.
//
// The proxy judges the name the client asked for, before any lookup (a
// denied name is never even resolved), and dials exactly the host it judged.
// It then judges the address the connection reached, so that an allowed name
// resolving to a denied address (DNS rebinding) is refused too. CONNECT and
// SOCKS tunnels carry bytes untouched: what a client sends inside a tunnel
// to an allowed host is that host's business, and TLS is never intercepted.
//
// Binding local ports and reaching unix sockets are the sandbox's concern,
// not this package's.
package netproxy

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Options configures a [Proxy].
type Options struct {
	// Policy says which hosts may be reached; nil refuses every host.
	Policy *Policy
	// Dial connects to an allowed destination; nil uses a net.Dialer with a
	// timeout. It is called with network "tcp" and addr "host:port", host as
	// the policy judged it (lower case, no trailing dot, IPv6 in brackets).
	Dial func(ctx context.Context, network, addr string) (net.Conn, error)
	// OnDenied is told of each refused destination (the session turns it into
	// a notice). It is called from the goroutine serving the connection, may be
	// called from several at once, and should return quickly.
	OnDenied func(host string, port int)
}

// Proxy serves HTTP and SOCKS5 proxy connections under one policy. Its
// methods may be called from several goroutines.
type Proxy struct {
	policy    *Policy
	dial      func(ctx context.Context, network, addr string) (net.Conn, error)
	onDenied  func(host string, port int)
	transport *http.Transport

	mu        sync.Mutex
	closed    bool
	conns     map[io.Closer]struct{} // client and upstream connections, listeners
	serving   sync.WaitGroup         // connections and listeners being served
	closeOnce sync.Once
}

// dialTimeout bounds connecting to an upstream host with the default dialer.
const dialTimeout = 30 * time.Second

// New returns a proxy; it serves nothing until handed connections or
// listeners.
func New(opts Options) *Proxy {
	p := &Proxy{
		policy:   opts.Policy,
		dial:     opts.Dial,
		onDenied: opts.OnDenied,
		conns:    map[io.Closer]struct{}{},
	}
	if p.dial == nil {
		p.dial = p.defaultDial()
	}
	p.transport = &http.Transport{
		Proxy:       nil, // never the environment's proxy: this is the proxy
		DialContext: p.transportDial,
		// The client's Accept-Encoding and the body go through as they are.
		DisableCompression:  true,
		MaxIdleConnsPerHost: 8,
		IdleConnTimeout:     90 * time.Second,
		TLSHandshakeTimeout: 10 * time.Second,
	}
	return p
}

// Close ends every connection being served, stops the listeners given to
// [Proxy.ServeHTTP] and [Proxy.ServeSOCKS], and returns when all of them
// have returned. Connections handed to the proxy after Close are closed at
// once.
func (p *Proxy) Close() error {
	p.closeOnce.Do(func() {
		p.mu.Lock()
		p.closed = true
		open := make([]io.Closer, 0, len(p.conns))
		for c := range p.conns {
			open = append(open, c)
		}
		p.mu.Unlock()
		// Closed outside the lock, which the goroutines serving them take
		// as they end.
		for _, c := range open {
			c.Close()
		}
		p.transport.CloseIdleConnections()
	})
	p.serving.Wait()
	return nil
}

// begin starts serving c (a client connection or a listener); it reports
// false, having closed c, when the proxy is closed.
func (p *Proxy) begin(c io.Closer) bool {
	return p.record(c, true)
}

// end closes c and marks it served.
func (p *Proxy) end(c io.Closer) {
	p.release(c)
	p.serving.Done()
}

// hold records c so that Close ends it; it reports false, having closed c,
// when the proxy is closed.
func (p *Proxy) hold(c io.Closer) bool {
	return p.record(c, false)
}

// record is hold, and begin when serving: under the lock that Close takes
// before waiting, so that nothing is added once it waits.
func (p *Proxy) record(c io.Closer, serving bool) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		c.Close()
		return false
	}
	p.conns[c] = struct{}{}
	if serving {
		p.serving.Add(1)
	}
	return true
}

// release closes c and forgets it.
func (p *Proxy) release(c io.Closer) {
	c.Close()
	p.mu.Lock()
	delete(p.conns, c)
	p.mu.Unlock()
}

// dest is a destination as the policy judges it.
type dest struct {
	host string // canonicalHost's form
	port int
}

func (d dest) String() string { return net.JoinHostPort(d.host, strconv.Itoa(d.port)) }

// deniedError is a destination the policy refuses.
type deniedError struct {
	dest
	resolved string // the address a name reached, when that is what was refused
	verdict  verdict
}

func (e *deniedError) Error() string {
	host := e.host
	if e.resolved != "" {
		host += " (" + e.resolved + ")"
	}
	return fmt.Sprintf("tack sandbox: network access to %s is not allowed (%s)", host, e.verdict.setting())
}

// proxyError is a constant error (no package-level variables: nothing runs
// at init).
type proxyError string

func (e proxyError) Error() string { return string(e) }

const errClosed = proxyError("the proxy is closed")

// check returns a *deniedError when the policy refuses d.
func (p *Proxy) check(d dest) error {
	if v := p.policy.verdict(d.host); v != allowed {
		return &deniedError{dest: d, verdict: v}
	}
	return nil
}

// refused reports whether err is a refusal by the policy, telling OnDenied.
func (p *Proxy) refused(err error) (*deniedError, bool) {
	var de *deniedError
	if !errors.As(err, &de) {
		return nil, false
	}
	if p.onDenied != nil {
		host := de.host
		if de.resolved != "" {
			host = de.resolved
		}
		p.onDenied(host, de.port)
	}
	return de, true
}

// open connects to d if the policy allows it, both the name asked for and the
// address reached, and holds the connection so that Close ends it.
func (p *Proxy) open(ctx context.Context, d dest) (net.Conn, error) {
	if err := p.check(d); err != nil {
		return nil, err
	}
	c, err := p.dial(ctx, "tcp", d.String())
	if err != nil {
		var de *deniedError
		if errors.As(err, &de) { // the default dialer's check of the address
			return nil, &deniedError{dest: d, resolved: de.host, verdict: de.verdict}
		}
		return nil, fmt.Errorf("cannot connect to %s: %w", d, err)
	}
	if ip, ok := remoteIP(c); ok && p.policy.deniesIP(ip) {
		c.Close()
		return nil, &deniedError{dest: d, resolved: ip.String(), verdict: listDenied}
	}
	if !p.hold(c) {
		return nil, errClosed
	}
	return c, nil
}

// remoteIP is the address c reached, when it is an IP connection.
func remoteIP(c net.Conn) (netip.Addr, bool) {
	if a, ok := c.RemoteAddr().(*net.TCPAddr); ok {
		return a.AddrPort().Addr().Unmap(), true
	}
	return netip.Addr{}, false
}

// defaultDial connects with a net.Dialer that refuses, before connecting, any
// address the name resolved to that a Denied entry names. A name with a dot
// is looked up as absolute, so the resolver's search domains cannot turn it
// into another host.
func (p *Proxy) defaultDial() func(ctx context.Context, network, addr string) (net.Conn, error) {
	d := &net.Dialer{
		Timeout: dialTimeout,
		Control: func(_, address string, _ syscall.RawConn) error {
			ap, err := netip.ParseAddrPort(address)
			if err == nil && p.policy.deniesIP(ap.Addr()) {
				return &deniedError{dest: dest{ap.Addr().Unmap().String(), int(ap.Port())}, verdict: listDenied}
			}
			return nil
		},
	}
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		host, port, err := net.SplitHostPort(addr)
		if err == nil && strings.Contains(host, ".") && !strings.HasSuffix(host, ".") {
			if _, err := netip.ParseAddr(host); err != nil {
				addr = net.JoinHostPort(host+".", port)
			}
		}
		return d.DialContext(ctx, network, addr)
	}
}

// transportDial is how forwarded HTTP requests connect: through open, so the
// policy is applied to every connection the transport makes.
func (p *Proxy) transportDial(ctx context.Context, _, addr string) (net.Conn, error) {
	d, err := parseHostPort(addr, 0)
	if err != nil {
		return nil, err
	}
	c, err := p.open(ctx, d)
	if err != nil {
		return nil, err
	}
	return &pooledConn{Conn: c, p: p}, nil
}

// pooledConn is an upstream connection kept by the transport between
// requests; closing it forgets it.
type pooledConn struct {
	net.Conn
	p *Proxy
}

func (c *pooledConn) Close() error {
	err := c.Conn.Close()
	c.p.release(c.Conn)
	return err
}

// tunnel copies bytes both ways between a client and an upstream connection
// until both directions end, passing on half-closes; fromClient reads the
// client (it may hold bytes the client sent early). It releases upstream.
func (p *Proxy) tunnel(client net.Conn, fromClient io.Reader, upstream net.Conn) {
	defer p.release(upstream)
	done := make(chan struct{})
	go func() {
		defer close(done)
		io.Copy(upstream, fromClient)
		closeWrite(upstream)
	}()
	io.Copy(client, upstream)
	closeWrite(client)
	<-done
}

// closeWrite half-closes c where it can, and closes it where it cannot.
func closeWrite(c net.Conn) {
	if hc, ok := c.(interface{ CloseWrite() error }); ok {
		hc.CloseWrite()
		return
	}
	c.Close()
}

// serve accepts connections on l and serves each with one until ctx is done,
// the proxy is closed or Accept fails.
func (p *Proxy) serve(ctx context.Context, l net.Listener, one func(context.Context, net.Conn)) error {
	if !p.begin(l) {
		return nil
	}
	defer p.end(l)
	stop := context.AfterFunc(ctx, func() { l.Close() })
	defer stop()
	for {
		c, err := l.Accept()
		if err != nil {
			if ctx.Err() != nil || p.isClosed() {
				return nil
			}
			return fmt.Errorf("tack sandbox proxy: accept on %s: %w", l.Addr(), err)
		}
		if !p.begin(c) {
			return nil
		}
		go func() {
			defer p.end(c)
			one(ctx, c)
		}()
	}
}

func (p *Proxy) isClosed() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.closed
}

// ServeHTTP accepts connections on l and serves each as [Proxy.ServeHTTPConn]
// does, until ctx is done or the proxy is closed (it then returns nil) or
// Accept fails. It closes l when it returns.
func (p *Proxy) ServeHTTP(ctx context.Context, l net.Listener) error {
	return p.serve(ctx, l, p.serveHTTP)
}

// ServeSOCKS accepts connections on l and serves each as
// [Proxy.ServeSOCKSConn] does, until ctx is done or the proxy is closed (it
// then returns nil) or Accept fails. It closes l when it returns.
func (p *Proxy) ServeSOCKS(ctx context.Context, l net.Listener) error {
	return p.serve(ctx, l, p.serveSOCKS)
}

// ServeHTTPConn serves one client connection speaking HTTP proxy:
// absolute-URI requests (GET http://host/…, forwarded, keep-alive) and
// CONNECT host:port tunnels. It returns when the connection ends, ctx is
// done or the proxy is closed, and closes c.
//
// A refused destination gets 403 with the one-line body "tack sandbox:
// network access to HOST is not allowed (sandbox.network.allowedDomains)"
// (or deniedDomains); a request that is not a proxy request, whose Host
// header names another host than its URL, or whose host is malformed gets
// 400.
func (p *Proxy) ServeHTTPConn(ctx context.Context, c net.Conn) {
	if !p.begin(c) {
		return
	}
	defer p.end(c)
	p.serveHTTP(ctx, c)
}

// ServeSOCKSConn serves one client connection speaking SOCKS5 (RFC 1928):
// CONNECT with no authentication; domain names are resolved by the proxy
// (socks5h), so the policy sees names. A refused destination gets reply
// 0x02 (connection not allowed by ruleset). It returns when the connection
// ends, ctx is done or the proxy is closed, and closes c.
func (p *Proxy) ServeSOCKSConn(ctx context.Context, c net.Conn) {
	if !p.begin(c) {
		return
	}
	defer p.end(c)
	p.serveSOCKS(ctx, c)
}
