package netproxy

import (
	"context"
	"io"
	"net"
	"net/http"
	"runtime"
	"testing"
)

// TestCloseEndsEverything opens every kind of connection the proxy serves
// (a CONNECT tunnel, a SOCKS tunnel, an idle keep-alive connection with a
// pooled upstream connection behind it, connections handed to
// ServeHTTPConn and ServeSOCKSConn directly) and checks that Close ends
// them all, stops the accept loops, and leaves no goroutine behind.
func TestCloseEndsEverything(t *testing.T) {
	policy := &Policy{Allowed: []string{"allowed.test"}}
	f := &fixture{t: t, ports: map[int]string{}}
	up := f.rawServer(7003)
	plain := newUpstream(t, f)
	f.ports[80] = plain

	before := runtime.NumGoroutine()
	p := New(Options{Policy: policy, Dial: f.dial})
	loops := make(chan error, 2)
	httpL, socksL := listen(t), listen(t)
	go func() { loops <- p.ServeHTTP(context.Background(), httpL) }()
	go func() { loops <- p.ServeSOCKS(context.Background(), socksL) }()

	// A CONNECT tunnel.
	tunnel := f.raw(httpL.Addr().String())
	tunnel.send("CONNECT allowed.test:7003 HTTP/1.1\r\n\r\n")
	if resp, err := http.ReadResponse(tunnel.br, &http.Request{Method: "CONNECT"}); err != nil || resp.StatusCode != 200 {
		t.Fatalf("CONNECT = %v, %v", resp, err)
	}
	if line, _ := tunnel.br.ReadString('\n'); line != "ready\n" {
		t.Fatalf("tunnel: %q", line)
	}
	// A SOCKS tunnel.
	socks := f.raw(socksL.Addr().String())
	socks.send("\x05\x01\x00")
	socks.send(string(socksRequest(1, socksDomain, []byte("allowed.test"), 7003)))
	if _, err := io.ReadFull(socks.br, make([]byte, 2+10)); err != nil {
		t.Fatal(err)
	}
	if line, _ := socks.br.ReadString('\n'); line != "ready\n" {
		t.Fatalf("SOCKS tunnel: %q", line)
	}
	// An idle keep-alive connection, its upstream connection pooled.
	idle := f.raw(httpL.Addr().String())
	idle.send("GET http://allowed.test/ HTTP/1.1\r\nHost: allowed.test\r\n\r\n")
	if resp, _ := idle.response("GET"); resp.StatusCode != 200 {
		t.Fatalf("GET = %s", resp.Status)
	}
	// Connections handed over one by one, waiting for a request.
	direct := []*rawConn{pipeConn(t, p.ServeHTTPConn), pipeConn(t, p.ServeSOCKSConn)}

	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	for _, c := range append([]*rawConn{tunnel, socks, idle}, direct...) {
		if !c.closed() {
			t.Errorf("a connection to %s stayed open after Close", c.RemoteAddr())
		}
	}
	for range 2 {
		if err := <-loops; err != nil {
			t.Errorf("an accept loop ended with %v, want nil after Close", err)
		}
	}
	// Both tunnels' upstream connections were closed too: the server saw
	// them end.
	for range 2 {
		<-up.got
	}
	// Handed a connection after Close, the proxy closes it at once.
	after := pipeConn(t, p.ServeHTTPConn)
	if !after.closed() {
		t.Error("a connection handed over after Close stayed open")
	}
	if _, err := net.Dial("tcp", httpL.Addr().String()); err == nil {
		t.Error("the listener still accepts after Close")
	}
	noLeak(t, before)
}

func TestServeEndsWithItsContext(t *testing.T) {
	p := New(Options{Policy: &Policy{Allowed: []string{"allowed.test"}}})
	defer p.Close()
	ctx, cancel := context.WithCancel(context.Background())
	l := listen(t)
	done := make(chan error, 1)
	go func() { done <- p.ServeSOCKS(ctx, l) }()
	cancel()
	if err := <-done; err != nil {
		t.Errorf("ServeSOCKS ended with %v, want nil", err)
	}
}

func listen(t *testing.T) net.Listener {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	return l
}

// newUpstream starts a plain HTTP server answering for f's hosts and
// returns its address.
func newUpstream(t *testing.T, f *fixture) string {
	srv := &http.Server{Handler: http.HandlerFunc(f.serveUpstream)}
	l := listen(t)
	go srv.Serve(l)
	t.Cleanup(func() { srv.Close() })
	return l.Addr().String()
}
