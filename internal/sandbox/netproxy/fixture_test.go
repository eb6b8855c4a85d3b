package netproxy

import (
	"bufio"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// fixture is a proxy serving on two local listeners (HTTP and SOCKS5) whose
// Dial hook sends every name to local servers by port: 80 to a plain HTTP
// server, 443 to a TLS one, other ports to raw TCP servers a test adds. The
// hook, the servers and OnDenied keep logs, so a test can prove that a
// refused host was never dialed nor reached.
type fixture struct {
	t         *testing.T
	p         *Proxy
	plain     *httptest.Server
	tls       *httptest.Server
	httpAddr  string
	socksAddr string

	mu      sync.Mutex
	ports   map[int]string // the port asked for → the local server's address
	dialed  []string       // addresses the Dial hook was asked for
	reached []string       // Host of each request an HTTP server answered
	denied  []string       // "host:port" told to OnDenied
	gates   sync.Map       // X-Gate → chan struct{} holding a /stream response
}

func newFixture(t *testing.T, allowed, denied []string) *fixture {
	t.Helper()
	policy, err := NewPolicy(allowed, denied)
	if err != nil {
		t.Fatal(err)
	}
	f := &fixture{t: t, ports: map[int]string{}}
	f.plain = httptest.NewServer(http.HandlerFunc(f.serveUpstream))
	t.Cleanup(f.plain.Close)
	f.tls = httptest.NewUnstartedServer(http.HandlerFunc(f.serveUpstream))
	// Handshakes that tests make fail on purpose are not news.
	f.tls.Config.ErrorLog = log.New(io.Discard, "", 0)
	f.tls.StartTLS()
	t.Cleanup(f.tls.Close)
	f.ports[80] = f.plain.Listener.Addr().String()
	f.ports[443] = f.tls.Listener.Addr().String()
	f.p = New(Options{Policy: policy, Dial: f.dial, OnDenied: func(host string, port int) {
		f.mu.Lock()
		f.denied = append(f.denied, net.JoinHostPort(host, strconv.Itoa(port)))
		f.mu.Unlock()
	}})
	f.httpAddr = f.serve(f.p.ServeHTTP)
	f.socksAddr = f.serve(f.p.ServeSOCKS)
	t.Cleanup(func() { f.p.Close() })
	return f
}

// serve runs one of the proxy's accept loops on a new local listener.
func (f *fixture) serve(loop func(context.Context, net.Listener) error) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		f.t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- loop(context.Background(), l) }()
	f.t.Cleanup(func() {
		f.p.Close()
		if err := <-done; err != nil {
			f.t.Errorf("accept loop on %s: %v", l.Addr(), err)
		}
	})
	return l.Addr().String()
}

func (f *fixture) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	_, port, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, err
	}
	n, _ := strconv.Atoi(port)
	f.mu.Lock()
	f.dialed = append(f.dialed, addr)
	target, ok := f.ports[n]
	f.mu.Unlock()
	if !ok {
		return nil, fmt.Errorf("no test server for port %d: %w", n, errNoServer)
	}
	var d net.Dialer
	return d.DialContext(ctx, network, target)
}

const errNoServer = proxyError("connection refused by the fixture")

// serveUpstream answers as the hosts behind the proxy. /echo returns the
// request body; /ignore-body answers without reading it; /stream sends a first line, waits for the test to release
// it, then a second; anything else says which host and path it served.
func (f *fixture) serveUpstream(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	f.reached = append(f.reached, r.Host)
	f.mu.Unlock()
	switch r.URL.Path {
	case "/echo":
		io.Copy(w, r.Body)
	case "/ignore-body":
		io.WriteString(w, "ignored")
	case "/no-content":
		w.WriteHeader(http.StatusNoContent)
	case "/stream":
		io.WriteString(w, "first\n")
		w.(http.Flusher).Flush()
		<-f.gate(r.Header.Get("X-Gate"))
		io.WriteString(w, "second\n")
	default:
		fmt.Fprintf(w, "hello from %s%s", r.Host, r.URL.Path)
	}
}

// gate holds /stream responses until the test closes it: a request names
// its gate in the X-Gate header.
func (f *fixture) gate(name string) chan struct{} {
	ch, _ := f.gates.LoadOrStore(name, make(chan struct{}))
	return ch.(chan struct{})
}

// log returns a copy of one of the fixture's logs.
func (f *fixture) log(l *[]string) []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(*l)
}

// neverContacted fails the test if a host was dialed or reached.
func (f *fixture) neverContacted(host string) {
	f.t.Helper()
	for _, addr := range f.log(&f.dialed) {
		if h, _, _ := net.SplitHostPort(addr); strings.EqualFold(strings.TrimSuffix(h, "."), host) {
			f.t.Errorf("the proxy dialed %s", addr)
		}
	}
	for _, h := range f.log(&f.reached) {
		if hh, _, err := net.SplitHostPort(h); err == nil {
			h = hh
		}
		if strings.EqualFold(strings.TrimSuffix(h, "."), host) {
			f.t.Errorf("a request reached %s", h)
		}
	}
}

// rawServer adds a TCP server for port that records what it receives and
// answers "ready\n"; the connection stays open until the client or the
// proxy closes it.
func (f *fixture) rawServer(port int) *rawServer {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		f.t.Fatal(err)
	}
	s := &rawServer{l: l, got: make(chan []byte, 8)}
	f.mu.Lock()
	f.ports[port] = l.Addr().String()
	f.mu.Unlock()
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			s.wg.Add(1)
			go func() {
				defer s.wg.Done()
				defer c.Close()
				io.WriteString(c, "ready\n")
				b, _ := io.ReadAll(c)
				s.got <- b
			}()
		}
	}()
	f.t.Cleanup(func() { l.Close(); s.wg.Wait() })
	return s
}

type rawServer struct {
	l   net.Listener
	wg  sync.WaitGroup
	got chan []byte // what each connection received, when it ended
}

// client is Go's HTTP client using the fixture as its HTTP (or SOCKS5)
// proxy, trusting the TLS server's certificate (issued for example.com).
func (f *fixture) client(proxyURL string) *http.Client {
	pool := x509.NewCertPool()
	pool.AddCert(f.tls.Certificate())
	u, err := url.Parse(proxyURL)
	if err != nil {
		f.t.Fatal(err)
	}
	tr := &http.Transport{
		Proxy:           http.ProxyURL(u),
		TLSClientConfig: &tls.Config{RootCAs: pool, ServerName: "example.com"},
	}
	f.t.Cleanup(tr.CloseIdleConnections)
	return &http.Client{Transport: tr, Timeout: 30 * time.Second}
}

// get fetches u with c; it returns the status and body, or the error.
func get(c *http.Client, u string) (int, string, error) {
	resp, err := c.Get(u)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), err
}

// rawConn is a client connection to the HTTP proxy on which a test writes
// bytes of its own.
type rawConn struct {
	t *testing.T
	net.Conn
	br *bufio.Reader
}

func (f *fixture) raw(addr string) *rawConn {
	f.t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		f.t.Fatal(err)
	}
	f.t.Cleanup(func() { c.Close() })
	c.SetDeadline(time.Now().Add(30 * time.Second))
	return &rawConn{t: f.t, Conn: c, br: bufio.NewReader(c)}
}

// pipeConn serves one end of a pipe with serve and returns the other.
func pipeConn(t *testing.T, serve func(context.Context, net.Conn)) *rawConn {
	client, server := net.Pipe()
	go serve(context.Background(), server)
	t.Cleanup(func() { client.Close() })
	client.SetDeadline(time.Now().Add(30 * time.Second))
	return &rawConn{t: t, Conn: client, br: bufio.NewReader(client)}
}

func (c *rawConn) send(s string) {
	c.t.Helper()
	if _, err := io.WriteString(c, s); err != nil {
		c.t.Fatal(err)
	}
}

// response reads one response; method is the request's.
func (c *rawConn) response(method string) (*http.Response, string) {
	c.t.Helper()
	resp, err := http.ReadResponse(c.br, &http.Request{Method: method})
	if err != nil {
		c.t.Fatalf("reading a response: %v", err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		c.t.Fatalf("reading a response body: %v", err)
	}
	return resp, string(b)
}

// closed reports whether the proxy closed the connection (a read ends with
// EOF or a reset rather than data).
func (c *rawConn) closed() bool {
	var b [1]byte
	_, err := c.br.Read(b[:])
	return errors.Is(err, io.EOF) || errors.Is(err, net.ErrClosed) || isReset(err)
}

func isReset(err error) bool {
	return err != nil && strings.Contains(err.Error(), "connection reset")
}

// refusal is the body of a 403 for host.
func refusal(host, setting string) string {
	return "tack sandbox: network access to " + host + " is not allowed (sandbox.network." + setting + ")\n"
}

// noLeak waits until the goroutines started since before have ended,
// failing with their stacks if some never do.
func noLeak(t *testing.T, before int) {
	t.Helper()
	for deadline := time.Now().Add(20 * time.Second); runtime.NumGoroutine() > before; {
		if time.Now().After(deadline) {
			buf := make([]byte, 1<<20)
			t.Fatalf("%d goroutines left running, %d before:\n%s", runtime.NumGoroutine(), before, buf[:runtime.Stack(buf, true)])
		}
		time.Sleep(10 * time.Millisecond)
	}
}
