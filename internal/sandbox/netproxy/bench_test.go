package netproxy

import (
	"context"
	"crypto/rand"
	"io"
	"net"
	"net/http"
	"net/url"
	"testing"
)

// The benchmarks compare a request or a transfer made directly with the same
// one made through the proxy, on loopback:
//
//	go test -run '^$' -bench . -benchmem ./internal/sandbox/netproxy
//
// BenchmarkRequest's ns/op is the time of one small keep-alive GET, so the
// difference between its sub-benchmarks is the latency the proxy adds;
// BenchmarkTransfer's MB/s is the throughput of a 16 MiB body.

const benchBody = 16 << 20

// benchSetup starts an upstream (/small answers a few bytes, /big
// benchBody random bytes) and a proxy allowing allowed.test, which its Dial
// hook sends to the upstream; it returns the upstream's and the proxy's
// HTTP and SOCKS addresses.
func benchSetup(b *testing.B) (upstream, httpProxy, socksProxy string) {
	big := make([]byte, benchBody)
	rand.Read(big)
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/big" {
			w.Write(big)
			return
		}
		io.WriteString(w, "ok")
	})}
	ul := benchListen(b)
	go srv.Serve(ul)
	b.Cleanup(func() { srv.Close() })
	upstream = ul.Addr().String()

	p := New(Options{
		Policy: &Policy{Allowed: []string{"allowed.test"}},
		Dial: func(ctx context.Context, network, _ string) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, network, upstream)
		},
	})
	b.Cleanup(func() { p.Close() })
	hl, sl := benchListen(b), benchListen(b)
	go p.ServeHTTP(context.Background(), hl)
	go p.ServeSOCKS(context.Background(), sl)
	return upstream, hl.Addr().String(), sl.Addr().String()
}

func benchListen(b *testing.B) net.Listener {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	return l
}

// benchClients are the three ways to the upstream: the URL base to ask for
// and the client to ask with.
func benchClients(b *testing.B) []struct {
	name, base string
	client     *http.Client
} {
	upstream, httpProxy, socksProxy := benchSetup(b)
	via := func(proxy string) *http.Client {
		u, _ := url.Parse(proxy)
		tr := &http.Transport{Proxy: http.ProxyURL(u), DisableCompression: true}
		b.Cleanup(tr.CloseIdleConnections)
		return &http.Client{Transport: tr}
	}
	direct := &http.Transport{DisableCompression: true}
	b.Cleanup(direct.CloseIdleConnections)
	return []struct {
		name, base string
		client     *http.Client
	}{
		{"direct", "http://" + upstream, &http.Client{Transport: direct}},
		{"http-proxy", "http://allowed.test", via("http://" + httpProxy)},
		{"socks5", "http://allowed.test", via("socks5h://" + socksProxy)},
	}
}

func BenchmarkRequest(b *testing.B) {
	for _, c := range benchClients(b) {
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				benchGet(b, c.client, c.base+"/small")
			}
		})
	}
}

func BenchmarkTransfer(b *testing.B) {
	for _, c := range benchClients(b) {
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(benchBody)
			for b.Loop() {
				benchGet(b, c.client, c.base+"/big")
			}
		})
	}
}

// BenchmarkTunnel is the throughput of a CONNECT tunnel, which copies bytes
// without reading HTTP.
func BenchmarkTunnel(b *testing.B) {
	_, httpProxy, _ := benchSetup(b)
	b.SetBytes(benchBody)
	for b.Loop() {
		c, err := net.Dial("tcp", httpProxy)
		if err != nil {
			b.Fatal(err)
		}
		io.WriteString(c, "CONNECT allowed.test:80 HTTP/1.1\r\n\r\nGET /big HTTP/1.1\r\nHost: allowed.test\r\nConnection: close\r\n\r\n")
		n, err := io.Copy(io.Discard, c)
		c.Close()
		if err != nil || n < benchBody {
			b.Fatalf("read %d bytes, %v", n, err)
		}
	}
}

func benchGet(b *testing.B, c *http.Client, u string) {
	resp, err := c.Get(u)
	if err != nil {
		b.Fatal(err)
	}
	_, err = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if err != nil || resp.StatusCode != 200 {
		b.Fatalf("GET %s: %s, %v", u, resp.Status, err)
	}
}
