package netproxy

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
)

func TestHTTPProxyWithGoClient(t *testing.T) {
	f := newFixture(t,
		[]string{"allowed.test", "*.allowed.test", "denied.test"},
		[]string{"denied.test", "secret.allowed.test"})
	c := f.client("http://" + f.httpAddr)
	tests := []struct {
		url        string
		status     int
		body       string
		deniedHost string // told to OnDenied
	}{
		{url: "http://allowed.test/a/path?q=1", status: 200, body: "hello from allowed.test/a/path"},
		{url: "https://allowed.test/over/tls", status: 200, body: "hello from allowed.test/over/tls"},
		{url: "http://api.allowed.test/", status: 200, body: "hello from api.allowed.test/"},
		{url: "https://deep.api.allowed.test/", status: 200, body: "hello from deep.api.allowed.test/"},
		{url: "http://denied.test/", status: 403, body: refusal("denied.test", "deniedDomains"), deniedHost: "denied.test:80"},
		{url: "http://secret.allowed.test/x", status: 403, body: refusal("secret.allowed.test", "deniedDomains"), deniedHost: "secret.allowed.test:80"},
		{url: "http://other.test/", status: 403, body: refusal("other.test", "allowedDomains"), deniedHost: "other.test:80"},
		{url: "http://127.0.0.1/", status: 403, body: refusal("127.0.0.1", "allowedDomains"), deniedHost: "127.0.0.1:80"},
		// A CONNECT refused: Go's client reports the status as an error.
		{url: "https://denied.test/", deniedHost: "denied.test:443"},
		{url: "https://other.test:8443/", deniedHost: "other.test:8443"},
	}
	var wantDenied []string
	for _, tt := range tests {
		t.Run(tt.url, func(t *testing.T) {
			status, body, err := get(c, tt.url)
			if tt.status == 0 {
				if err == nil || !strings.Contains(err.Error(), "Forbidden") {
					t.Fatalf("GET %s: err = %v, want a refused CONNECT (Forbidden)", tt.url, err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if status != tt.status || body != tt.body {
				t.Errorf("GET %s = %d %q, want %d %q", tt.url, status, body, tt.status, tt.body)
			}
		})
		if tt.deniedHost != "" {
			wantDenied = append(wantDenied, tt.deniedHost)
		}
	}
	if got := f.log(&f.denied); !reflect.DeepEqual(got, wantDenied) {
		t.Errorf("OnDenied was told %q, want %q", got, wantDenied)
	}
	for _, h := range []string{"denied.test", "secret.allowed.test", "other.test", "127.0.0.1"} {
		f.neverContacted(h)
	}
}

func TestEmptyAllowListRefusesEverything(t *testing.T) {
	f := newFixture(t, nil, nil)
	c := f.client("http://" + f.httpAddr)
	if status, body, err := get(c, "http://allowed.test/"); err != nil || status != 403 || body != refusal("allowed.test", "allowedDomains") {
		t.Errorf("GET http://allowed.test/ = %d %q %v, want 403 and the refusal", status, body, err)
	}
	if _, _, err := get(c, "https://allowed.test/"); err == nil {
		t.Error("a CONNECT went through an empty allow list")
	}
	if _, _, err := get(f.client("socks5h://"+f.socksAddr), "http://allowed.test/"); err == nil {
		t.Error("a SOCKS connection went through an empty allow list")
	}
	f.neverContacted("allowed.test")

	// A proxy without a policy refuses everything too.
	p := New(Options{Dial: f.dial})
	defer p.Close()
	rc := pipeConn(t, p.ServeHTTPConn)
	rc.send("GET http://allowed.test/ HTTP/1.1\r\nHost: allowed.test\r\n\r\n")
	if resp, _ := rc.response("GET"); resp.StatusCode != 403 {
		t.Errorf("a proxy with no policy answered %s", resp.Status)
	}
	f.neverContacted("allowed.test")
}

// TestHTTPProxyJudgesTheHostItConnectsTo sends requests whose target is
// written in every way that could make the host judged differ from the host
// reached.
func TestHTTPProxyJudgesTheHostItConnectsTo(t *testing.T) {
	f := newFixture(t,
		[]string{"allowed.test", "*.allowed.test", "::1", "10.0.0.1"},
		[]string{"denied.test"})
	tests := []struct {
		name, request string
		status        int
		body          string // a prefix of it
	}{
		{"uppercase and a trailing dot",
			"GET http://ALLOWED.Test./x HTTP/1.1\r\nHost: allowed.TEST\r\n\r\n", 200, "hello from ALLOWED.Test./x"},
		{"an explicit default port in the Host header",
			"GET http://allowed.test/x HTTP/1.1\r\nHost: allowed.test:80\r\n\r\n", 200, "hello from allowed.test/x"},
		{"no Host header (HTTP/1.0)",
			"GET http://allowed.test/x HTTP/1.0\r\n\r\n", 200, "hello from allowed.test/x"},
		{"a bracketed IPv6 literal that is listed",
			"GET http://[::1]/v6 HTTP/1.1\r\nHost: [::1]\r\n\r\n", 200, "hello from [::1]/v6"},
		{"a punycode name under an allowed wildcard",
			"GET http://xn--bcher-kva.allowed.test/ HTTP/1.1\r\nHost: xn--bcher-kva.allowed.test\r\n\r\n", 200, "hello from xn--bcher-kva.allowed.test/"},
		{"a Host header naming a denied host",
			"GET http://allowed.test/ HTTP/1.1\r\nHost: denied.test\r\n\r\n", 400, "tack sandbox proxy: the Host header \"denied.test\" does not name the request's host allowed.test:80"},
		{"a Host header naming another port",
			"GET http://allowed.test/ HTTP/1.1\r\nHost: allowed.test:8080\r\n\r\n", 400, "tack sandbox proxy: the Host header"},
		{"an allowed Host header on a denied URL",
			"GET http://denied.test/ HTTP/1.1\r\nHost: allowed.test\r\n\r\n", 400, "tack sandbox proxy: the Host header"},
		{"user information naming an allowed host",
			"GET http://allowed.test:80@denied.test/ HTTP/1.1\r\nHost: denied.test\r\n\r\n", 403, refusal("denied.test", "deniedDomains")},
		{"two at-signs: the host is after the last one, and it is the host reached",
			"GET http://allowed.test@denied.test@allowed.test/ HTTP/1.1\r\nHost: allowed.test\r\n\r\n", 200, "hello from allowed.test/"},
		{"a percent-encoded host",
			"GET http://%64enied.test/ HTTP/1.1\r\nHost: denied.test\r\n\r\n", 400, "tack sandbox proxy: malformed request"},
		{"a denied host in upper case",
			"GET http://DENIED.test./ HTTP/1.1\r\nHost: DENIED.test.\r\n\r\n", 403, refusal("denied.test", "deniedDomains")},
		{"a non-ASCII name",
			"GET http://bücher.allowed.test/ HTTP/1.1\r\nHost: bücher.allowed.test\r\n\r\n", 400, "tack sandbox proxy:"},
		{"an address in disguise",
			"GET http://167772161/ HTTP/1.1\r\nHost: 167772161\r\n\r\n", 400, "tack sandbox proxy: \"167772161\" is neither a host name nor an IP address"},
		{"an IPv4-mapped IPv6 form of a listed address",
			"GET http://[::ffff:10.0.0.1]/ HTTP/1.1\r\nHost: [::ffff:10.0.0.1]\r\n\r\n", 200, "hello from [::ffff:10.0.0.1]/"},
		{"a zoned IPv6 address",
			"GET http://[fe80::1%25lo]/ HTTP/1.1\r\nHost: [fe80::1%25lo]\r\n\r\n", 400, "tack sandbox proxy:"},
		{"an empty host",
			"GET http:///x HTTP/1.1\r\nHost: allowed.test\r\n\r\n", 400, "tack sandbox proxy: empty host"},
		{"port zero",
			"GET http://allowed.test:0/ HTTP/1.1\r\nHost: allowed.test:0\r\n\r\n", 400, "tack sandbox proxy:"},
		{"a port out of range",
			"GET http://allowed.test:65536/ HTTP/1.1\r\nHost: allowed.test:65536\r\n\r\n", 400, "tack sandbox proxy:"},
		{"an origin-form request (not a proxy request)",
			"GET /x HTTP/1.1\r\nHost: allowed.test\r\n\r\n", 400, "tack sandbox proxy: only absolute http:// and https:// URLs and CONNECT are served"},
		{"another scheme",
			"GET ftp://allowed.test/ HTTP/1.1\r\nHost: allowed.test\r\n\r\n", 400, "tack sandbox proxy: only absolute"},
		{"an asterisk",
			"OPTIONS * HTTP/1.1\r\nHost: allowed.test\r\n\r\n", 400, "tack sandbox proxy: only absolute"},
		{"two Host headers",
			"GET http://allowed.test/ HTTP/1.1\r\nHost: allowed.test\r\nHost: denied.test\r\n\r\n", 400, "tack sandbox proxy: malformed request"},
		{"CONNECT without a port",
			"CONNECT allowed.test HTTP/1.1\r\nHost: allowed.test\r\n\r\n", 400, "tack sandbox proxy: \"allowed.test\": a port from 1 to 65535 is needed"},
		{"CONNECT with user information",
			"CONNECT allowed.test@denied.test:443 HTTP/1.1\r\n\r\n", 400, "tack sandbox proxy: CONNECT takes host:port"},
		{"CONNECT with a path",
			"CONNECT allowed.test:443/x HTTP/1.1\r\n\r\n", 400, "tack sandbox proxy: CONNECT takes host:port"},
		{"CONNECT to an unbracketed IPv6 address",
			"CONNECT ::1:443 HTTP/1.1\r\n\r\n", 400, "tack sandbox proxy: malformed request"},
		{"CONNECT with a Host header naming another host",
			"CONNECT allowed.test:443 HTTP/1.1\r\nHost: denied.test:443\r\n\r\n", 400, "tack sandbox proxy: the Host header"},
		{"CONNECT to a denied host",
			"CONNECT denied.test:443 HTTP/1.1\r\nHost: denied.test:443\r\n\r\n", 403, refusal("denied.test", "deniedDomains")},
		{"CONNECT to an address in disguise",
			"CONNECT 0x7f.1:443 HTTP/1.1\r\n\r\n", 400, "tack sandbox proxy:"},
		{"CONNECT to an unlisted address",
			"CONNECT 127.0.0.1:443 HTTP/1.1\r\n\r\n", 403, refusal("127.0.0.1", "allowedDomains")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := f.raw(f.httpAddr)
			c.send(tt.request)
			method, _, _ := strings.Cut(tt.request, " ")
			resp, body := c.response(method)
			if resp.StatusCode != tt.status || !strings.HasPrefix(body, tt.body) {
				t.Errorf("answer %d %q, want %d %q…", resp.StatusCode, body, tt.status, tt.body)
			}
			if tt.status != 200 && !c.closed() {
				t.Error("the connection stayed open after a refusal")
			}
		})
	}
	f.neverContacted("denied.test")
	f.neverContacted("127.0.0.1")
	for _, addr := range f.log(&f.dialed) {
		if h, _, _ := net.SplitHostPort(addr); h != "allowed.test" && h != "::1" && h != "10.0.0.1" && h != "xn--bcher-kva.allowed.test" {
			t.Errorf("the proxy dialed %s", addr)
		}
	}
}

// TestHTTPProxyJudgesEveryRequestOfAConnection checks keep-alive and
// pipelined requests one by one, including a request hidden in another's
// body by conflicting framing headers.
func TestHTTPProxyJudgesEveryRequestOfAConnection(t *testing.T) {
	f := newFixture(t, []string{"allowed.test"}, nil)

	c := f.raw(f.httpAddr)
	c.send("GET http://allowed.test/1 HTTP/1.1\r\nHost: allowed.test\r\n\r\n" +
		"GET http://allowed.test/2 HTTP/1.1\r\nHost: allowed.test\r\n\r\n" +
		"GET http://denied.test/3 HTTP/1.1\r\nHost: denied.test\r\n\r\n" +
		"GET http://allowed.test/4 HTTP/1.1\r\nHost: allowed.test\r\n\r\n")
	for _, want := range []struct {
		status int
		body   string
	}{
		{200, "hello from allowed.test/1"},
		{200, "hello from allowed.test/2"},
		{403, refusal("denied.test", "allowedDomains")},
	} {
		if resp, body := c.response("GET"); resp.StatusCode != want.status || body != want.body {
			t.Errorf("pipelined answer %d %q, want %d %q", resp.StatusCode, body, want.status, want.body)
		}
	}
	if !c.closed() {
		t.Error("the connection stayed open after the refusal")
	}

	// Content-Length and chunked together: the chunked framing wins (RFC
	// 9112 §6.1), so what follows the empty chunk is a request of its own,
	// judged as such, not bytes passed on inside the first one's body.
	c = f.raw(f.httpAddr)
	smuggled := "GET http://denied.test/ HTTP/1.1\r\nHost: denied.test\r\n\r\n"
	c.send("POST http://allowed.test/echo HTTP/1.1\r\nHost: allowed.test\r\nContent-Length: " +
		strconv.Itoa(5+len(smuggled)) + "\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n" + smuggled)
	if resp, body := c.response("POST"); resp.StatusCode != 200 || body != "" {
		t.Errorf("the POST got %d %q, want 200 and an empty echo", resp.StatusCode, body)
	}
	if resp, body := c.response("GET"); resp.StatusCode != 403 || body != refusal("denied.test", "allowedDomains") {
		t.Errorf("the request after the body got %d %q, want the refusal", resp.StatusCode, body)
	}
	f.neverContacted("denied.test")
	if got := f.log(&f.reached); !reflect.DeepEqual(got, []string{"allowed.test", "allowed.test", "allowed.test"}) {
		t.Errorf("the servers answered requests for %q", got)
	}
}

// TestCONNECTTunnelIsRaw checks that what a client sends inside a tunnel,
// before or after the proxy's answer, reaches the tunnel's host untouched,
// even when it looks like another CONNECT: the proxy does not read it.
func TestCONNECTTunnelIsRaw(t *testing.T) {
	f := newFixture(t, []string{"allowed.test"}, nil)
	up := f.rawServer(7000)
	c := f.raw(f.httpAddr)
	inner := "CONNECT denied.test:443 HTTP/1.1\r\nHost: denied.test:443\r\n\r\n"
	// The first bytes of the tunnel go in the same write as the request.
	c.send("CONNECT allowed.test:7000 HTTP/1.1\r\nHost: allowed.test:7000\r\n\r\nearly:")
	resp, err := http.ReadResponse(c.br, &http.Request{Method: "CONNECT"})
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("CONNECT allowed.test:7000 = %v, %v", resp, err)
	}
	if line, err := c.br.ReadString('\n'); err != nil || line != "ready\n" {
		t.Fatalf("the tunnel's host said %q, %v", line, err)
	}
	c.send(inner)
	c.Conn.(*net.TCPConn).CloseWrite()
	if got := string(<-up.got); got != "early:"+inner {
		t.Errorf("the tunnel's host received %q, want %q", got, "early:"+inner)
	}
	if !c.closed() {
		t.Error("the tunnel stayed open after both sides closed")
	}
	if got := f.log(&f.dialed); !reflect.DeepEqual(got, []string{"allowed.test:7000"}) {
		t.Errorf("the proxy dialed %q", got)
	}
}

func TestHTTPProxyStreamsResponses(t *testing.T) {
	f := newFixture(t, []string{"allowed.test"}, nil)
	release := sync.OnceFunc(func() { close(f.gate("g1")) })
	t.Cleanup(release) // before the servers close, should the test fail
	c := f.raw(f.httpAddr)
	c.send("GET http://allowed.test/stream HTTP/1.1\r\nHost: allowed.test\r\nX-Gate: g1\r\n\r\n")
	resp, err := http.ReadResponse(c.br, &http.Request{Method: "GET"})
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	// The upstream holds the rest of its answer until the first line has
	// come through the proxy: a proxy that buffered the body would hang here
	// until the deadline.
	line := make([]byte, len("first\n"))
	if _, err := io.ReadFull(resp.Body, line); err != nil || string(line) != "first\n" {
		t.Fatalf("first line %q, %v", line, err)
	}
	release()
	rest, err := io.ReadAll(resp.Body)
	if err != nil || string(rest) != "second\n" {
		t.Errorf("rest %q, %v", rest, err)
	}
	if resp.TransferEncoding == nil {
		t.Error("a body of unknown length was not sent chunked to an HTTP/1.1 client")
	}
	// The connection carries the next request.
	c.send("GET http://allowed.test/next HTTP/1.1\r\nHost: allowed.test\r\n\r\n")
	if resp, body := c.response("GET"); resp.StatusCode != 200 || body != "hello from allowed.test/next" {
		t.Errorf("next request: %d %q", resp.StatusCode, body)
	}
}

func TestHTTPProxyExpectContinue(t *testing.T) {
	f := newFixture(t, []string{"allowed.test"}, nil)

	c := f.raw(f.httpAddr)
	c.send("PUT http://allowed.test/echo HTTP/1.1\r\nHost: allowed.test\r\nContent-Length: 5\r\nExpect: 100-continue\r\n\r\n")
	if line, err := c.br.ReadString('\n'); err != nil || line != "HTTP/1.1 100 Continue\r\n" {
		t.Fatalf("before the body the proxy said %q, %v; want 100 Continue", line, err)
	}
	if line, _ := c.br.ReadString('\n'); line != "\r\n" {
		t.Fatalf("100 Continue followed by %q", line)
	}
	c.send("hello")
	if resp, body := c.response("PUT"); resp.StatusCode != 200 || body != "hello" {
		t.Errorf("PUT = %d %q, want 200 \"hello\"", resp.StatusCode, body)
	}

	// A refused request is answered at once; its body is not awaited.
	c = f.raw(f.httpAddr)
	c.send("PUT http://denied.test/echo HTTP/1.1\r\nHost: denied.test\r\nContent-Length: 5\r\nExpect: 100-continue\r\n\r\n")
	if resp, body := c.response("PUT"); resp.StatusCode != 403 || body != refusal("denied.test", "allowedDomains") {
		t.Errorf("refused PUT = %d %q", resp.StatusCode, body)
	}
	f.neverContacted("denied.test")
}

func TestHTTPProxyFramesResponsesForTheClient(t *testing.T) {
	f := newFixture(t, []string{"allowed.test"}, nil)
	c := f.raw(f.httpAddr)
	c.send("HEAD http://allowed.test/x HTTP/1.1\r\nHost: allowed.test\r\n\r\n" +
		"GET http://allowed.test/no-content HTTP/1.1\r\nHost: allowed.test\r\n\r\n" +
		"POST http://allowed.test/echo HTTP/1.1\r\nHost: allowed.test\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n2\r\nde\r\n0\r\n\r\n" +
		"GET http://allowed.test/last HTTP/1.1\r\nHost: allowed.test\r\nConnection: close\r\n\r\n")
	resp, body := c.response("HEAD")
	if resp.StatusCode != 200 || body != "" || resp.ContentLength != int64(len("hello from allowed.test/x")) {
		t.Errorf("HEAD = %d %q length %d", resp.StatusCode, body, resp.ContentLength)
	}
	if resp, body := c.response("GET"); resp.StatusCode != 204 || body != "" {
		t.Errorf("no-content = %d %q", resp.StatusCode, body)
	}
	if resp, body := c.response("POST"); resp.StatusCode != 200 || body != "abcde" {
		t.Errorf("chunked POST = %d %q", resp.StatusCode, body)
	}
	if resp, body := c.response("GET"); resp.StatusCode != 200 || body != "hello from allowed.test/last" || !resp.Close {
		t.Errorf("last = %d %q close=%v", resp.StatusCode, body, resp.Close)
	}
	if !c.closed() {
		t.Error("the connection stayed open after Connection: close")
	}

	// An HTTP/1.0 client gets a response it can read: no chunks, and the
	// connection closed to end a body of unknown length.
	c = f.raw(f.httpAddr)
	c.send("GET http://allowed.test/stream HTTP/1.0\r\nX-Gate: g10\r\n\r\n")
	close(f.gate("g10"))
	all, err := io.ReadAll(c.br)
	if err != nil && !isReset(err) {
		t.Fatal(err)
	}
	if s := string(all); !strings.HasPrefix(s, "HTTP/1.1 200 OK\r\n") || strings.Contains(s, "chunked") || !strings.HasSuffix(s, "\r\n\r\nfirst\nsecond\n") {
		t.Errorf("HTTP/1.0 answer:\n%s", s)
	}
}

func TestHTTPProxyDropsHopByHopHeaders(t *testing.T) {
	var got http.Header
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got = r.Header.Clone()
		w.Header().Set("Connection", "X-Hop")
		w.Header().Set("X-Hop", "upstream's")
		w.Header().Set("X-End", "kept")
	}))
	defer up.Close()
	p := New(Options{Policy: &Policy{Allowed: []string{"allowed.test"}}, Dial: func(ctx context.Context, network, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, network, up.Listener.Addr().String())
	}})
	defer p.Close()
	c := pipeConn(t, p.ServeHTTPConn)
	c.send("GET http://user:pw@allowed.test/ HTTP/1.1\r\nHost: allowed.test\r\nProxy-Authorization: Basic c2VjcmV0\r\n" +
		"Connection: keep-alive, X-Private\r\nX-Private: for the proxy\r\nKeep-Alive: 5\r\nUpgrade: websocket\r\nAccept-Encoding: br\r\nX-End: kept\r\n\r\n")
	resp, _ := c.response("GET")
	for _, h := range []string{"Proxy-Authorization", "Connection", "X-Private", "Keep-Alive", "Upgrade", "Authorization"} {
		if v := got.Get(h); v != "" {
			t.Errorf("the upstream received %s: %q", h, v)
		}
	}
	if got.Get("X-End") != "kept" || got.Get("Accept-Encoding") != "br" {
		t.Errorf("end-to-end headers lost: %v", got)
	}
	if resp.Header.Get("X-Hop") != "" || resp.Header.Get("X-End") != "kept" {
		t.Errorf("response headers: %v", resp.Header)
	}
}

// TestDeniedAddressBehindAnAllowedName is DNS rebinding: an allowed name
// that leads to an address deniedDomains lists is refused.
func TestDeniedAddressBehindAnAllowedName(t *testing.T) {
	t.Run("through the Dial hook", func(t *testing.T) {
		f := newFixture(t, []string{"*.allowed.test"}, []string{"127.0.0.1"})
		c := f.client("http://" + f.httpAddr)
		status, body, err := get(c, "http://rebind.allowed.test/")
		if err != nil || status != 403 || body != refusal("rebind.allowed.test (127.0.0.1)", "deniedDomains") {
			t.Errorf("GET = %d %q %v, want the refusal", status, body, err)
		}
		if _, _, err := get(f.client("socks5h://"+f.socksAddr), "http://rebind.allowed.test/"); err == nil {
			t.Error("SOCKS reached a denied address")
		}
		if _, _, err := get(c, "https://rebind.allowed.test/"); err == nil {
			t.Error("CONNECT reached a denied address")
		}
		if got := f.log(&f.reached); len(got) != 0 {
			t.Errorf("requests reached %q", got)
		}
		if got, want := f.log(&f.denied), []string{"127.0.0.1:80", "127.0.0.1:80", "127.0.0.1:443"}; !reflect.DeepEqual(got, want) {
			t.Errorf("OnDenied was told %q, want %q", got, want)
		}
	})
	t.Run("through the default dialer", func(t *testing.T) {
		var conns atomic.Int32
		up := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			io.WriteString(w, "reached")
		}))
		// Connections made, not their other events: the first one goes
		// idle after its response is out, which may be after the client
		// has read it.
		up.Config.ConnState = func(_ net.Conn, s http.ConnState) {
			if s == http.StateNew {
				conns.Add(1)
			}
		}
		up.Start()
		defer up.Close()
		port := up.Listener.Addr().(*net.TCPAddr).Port

		p := New(Options{Policy: &Policy{Allowed: []string{"localhost", "127.0.0.1"}, Denied: []string{"::1"}}})
		defer p.Close()
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		go p.ServeHTTP(context.Background(), l)
		c := (&fixture{t: t}).raw(l.Addr().String())
		// The literal address is allowed and reached by the real dialer.
		c.send(fmt.Sprintf("GET http://127.0.0.1:%d/ HTTP/1.1\r\nHost: 127.0.0.1:%d\r\n\r\n", port, port))
		if resp, body := c.response("GET"); resp.StatusCode != 200 || body != "reached" {
			t.Fatalf("GET 127.0.0.1 = %d %q", resp.StatusCode, body)
		}
		seen := conns.Load()

		// Now deny it: localhost resolves to it, and is refused before any
		// connection is made.
		p2 := New(Options{Policy: &Policy{Allowed: []string{"localhost"}, Denied: []string{"127.0.0.1", "::1"}}})
		defer p2.Close()
		rc := pipeConn(t, p2.ServeHTTPConn)
		rc.send(fmt.Sprintf("GET http://localhost:%d/ HTTP/1.1\r\nHost: localhost:%d\r\n\r\n", port, port))
		resp, body := rc.response("GET")
		if resp.StatusCode != 403 || !strings.HasPrefix(body, "tack sandbox: network access to localhost (") || !strings.HasSuffix(body, ") is not allowed (sandbox.network.deniedDomains)\n") {
			t.Errorf("GET localhost = %d %q, want the refusal", resp.StatusCode, body)
		}
		if n := conns.Load(); n != seen {
			t.Errorf("the server saw %d more connections after the refusal", n-seen)
		}
	})
}

func TestServeHTTPConnEndsWithItsContext(t *testing.T) {
	f := newFixture(t, []string{"allowed.test"}, nil)
	f.rawServer(7001)
	ctx, cancel := context.WithCancel(context.Background())
	client, server := net.Pipe()
	done := make(chan struct{})
	go func() { defer close(done); f.p.ServeHTTPConn(ctx, server) }()
	c := &rawConn{t: t, Conn: client, br: bufio.NewReader(client)}
	c.send("CONNECT allowed.test:7001 HTTP/1.1\r\n\r\n")
	if resp, err := http.ReadResponse(c.br, &http.Request{Method: "CONNECT"}); err != nil || resp.StatusCode != 200 {
		t.Fatalf("CONNECT = %v, %v", resp, err)
	}
	cancel()
	<-done
	if !c.closed() {
		t.Error("the client connection stayed open after its context ended")
	}
}

func TestHTTPProxyReportsUnreachableHosts(t *testing.T) {
	f := newFixture(t, []string{"allowed.test"}, nil)
	tests := []struct{ request, method, body string }{
		{"CONNECT allowed.test:7999 HTTP/1.1\r\n\r\n", "CONNECT",
			"tack sandbox proxy: cannot connect to allowed.test:7999: no test server for port 7999"},
		{"GET http://allowed.test:7999/ HTTP/1.1\r\nHost: allowed.test:7999\r\n\r\n", "GET",
			"tack sandbox proxy: forwarding to allowed.test:7999 failed: "},
		// The proxy speaks TLS itself for an https:// URL, and checks the
		// certificate (the test server's is for example.com).
		{"GET https://allowed.test/ HTTP/1.1\r\nHost: allowed.test\r\n\r\n", "GET",
			"tack sandbox proxy: forwarding to allowed.test:443 failed: tls: failed to verify certificate"},
	}
	for _, tt := range tests {
		c := f.raw(f.httpAddr)
		c.send(tt.request)
		resp, body := c.response(tt.method)
		if resp.StatusCode != 502 || !strings.HasPrefix(body, tt.body) || strings.Count(body, "\n") != 1 {
			t.Errorf("%q: %d %q, want 502 and one line starting %q", tt.request, resp.StatusCode, body, tt.body)
		}
	}
	if got := f.log(&f.denied); len(got) != 0 {
		t.Errorf("OnDenied was told %q of hosts that were allowed", got)
	}
}

// TestHTTPProxyReadsTheNextRequestWhereItStarts sends a body the upstream
// answers without reading, then another request on the same connection:
// the proxy must skip the rest of the body, not read it as a request.
func TestHTTPProxyReadsTheNextRequestWhereItStarts(t *testing.T) {
	f := newFixture(t, []string{"allowed.test"}, nil)
	c := f.raw(f.httpAddr)
	hidden := "GET http://denied.test/ HTTP/1.1\r\nHost: denied.test\r\n\r\n"
	body := strings.Repeat(hidden, 100<<10/len(hidden))
	go io.WriteString(c, fmt.Sprintf("POST http://allowed.test/ignore-body HTTP/1.1\r\nHost: allowed.test\r\nContent-Length: %d\r\n\r\n%s", len(body), body)+
		"GET http://allowed.test/next HTTP/1.1\r\nHost: allowed.test\r\n\r\n")
	if resp, got := c.response("POST"); resp.StatusCode != 200 || got != "ignored" {
		t.Errorf("POST = %d %q", resp.StatusCode, got)
	}
	if resp, got := c.response("GET"); resp.StatusCode != 200 || got != "hello from allowed.test/next" {
		t.Errorf("the request after the body = %d %q", resp.StatusCode, got)
	}
	f.neverContacted("denied.test")
	if got := f.log(&f.denied); len(got) != 0 {
		t.Errorf("a request hidden in a body was judged: %q", got)
	}
}

func TestHTTPProxyRefusesHugeHeaders(t *testing.T) {
	f := newFixture(t, []string{"allowed.test"}, nil)
	c := f.raw(f.httpAddr)
	go io.WriteString(c, "GET http://allowed.test/ HTTP/1.1\r\nHost: allowed.test\r\nX-Big: "+strings.Repeat("a", maxHeadBytes)+"\r\n\r\n")
	if resp, body := c.response("GET"); resp.StatusCode != 431 || body != "tack sandbox proxy: request headers larger than 64 KiB\n" {
		t.Errorf("answer %d %q, want 431", resp.StatusCode, body)
	}
	if got := f.log(&f.dialed); len(got) != 0 {
		t.Errorf("the proxy dialed %q", got)
	}
}
