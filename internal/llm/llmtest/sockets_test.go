package llmtest

import (
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// The fake's own delays must not swamp what the benchmarks measure: its
// connections disable Nagle's algorithm (else a streamed response's last
// small write waits about 40 ms for the client's ACK), and its listener
// queues at least 128 connections (else a burst of clients is refused or
// retried).
func TestServerSocketsAreTunedForBenchmarks(t *testing.T) {
	s := New(t, Reply(Text("hi")))
	u, err := url.Parse(s.URL())
	if err != nil {
		t.Fatal(err)
	}
	port, _ := strconv.Atoi(u.Port())

	// Keep one connection open, then look at the server's end of it among
	// this process's sockets.
	client := &http.Client{Transport: &http.Transport{}}
	defer client.CloseIdleConnections()
	req, err := http.NewRequest(http.MethodPost, s.URL()+"/v1/messages",
		strings.NewReader(`{"model":"claude-sonnet-4-5","max_tokens":10,"stream":true,"messages":[{"role":"user","content":"say hi"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("content-type", "application/json")
	req.Header.Set("anthropic-version", "2023-06-01")
	req.Header.Set("x-api-key", "k")
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if _, err := resp.Body.Read(make([]byte, 1)); err != nil {
		t.Fatal(err)
	}
	served := 0
	fds, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skip("no /proc/self/fd:", err)
	}
	for _, e := range fds {
		fd, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		sa, err := syscall.Getsockname(fd)
		if err != nil {
			continue // not a socket
		}
		in, ok := sa.(*syscall.SockaddrInet4)
		if !ok || in.Port != port {
			continue
		}
		if listening, _ := syscall.GetsockoptInt(fd, syscall.SOL_SOCKET, syscall.SO_ACCEPTCONN); listening == 1 {
			continue
		}
		served++
		if v, err := syscall.GetsockoptInt(fd, syscall.IPPROTO_TCP, syscall.TCP_NODELAY); err != nil || v != 1 {
			t.Errorf("server connection fd %d: TCP_NODELAY = %d, %v", fd, v, err)
		}
	}
	if served == 0 {
		t.Fatal("found no server end of the connection")
	}

	ss, err := exec.LookPath("ss")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("ss is not installed (scripts/test installs iproute2)")
		}
		t.Skip("ss is not installed")
	}
	out, err := exec.Command(ss, "-ltnH", "sport = :"+u.Port()).Output()
	if err != nil {
		t.Fatalf("ss: %v", err)
	}
	// State Recv-Q Send-Q Local Peer: a listener's Send-Q is its backlog.
	f := strings.Fields(string(out))
	if len(f) < 4 {
		t.Fatalf("ss printed %q", out)
	}
	if backlog, err := strconv.Atoi(f[2]); err != nil || backlog < 128 {
		t.Errorf("listen backlog %q, want at least 128 (ss: %q)", f[2], out)
	}
}
