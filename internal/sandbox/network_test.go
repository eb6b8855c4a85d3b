package sandbox

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
)

// TestNetworkAllowList: commands reach the allowed names through the proxy
// — plain HTTP, HTTPS through CONNECT, and SOCKS5 — with curl inside the
// real sandbox, on both backends; denied names fail with the proxy's
// message, deniedDomains beat allowedDomains, nothing is reached around
// the proxy, and without allowedDomains there is no network at all. Two
// local servers stand for the internet: the proxy's dial hook maps every
// test name to them.
func TestNetworkAllowList(t *testing.T) {
	if _, err := exec.LookPath("curl"); err != nil {
		t.Fatal("curl is not installed: scripts/test installs it")
	}
	hello := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fmt.Fprintf(w, "hello from %s", r.Host) })
	plain := httptest.NewServer(hello)
	defer plain.Close()
	secure := httptest.NewTLSServer(hello)
	defer secure.Close()
	var dialed sync.Map
	dial := func(ctx context.Context, network, addr string) (net.Conn, error) {
		host, port, err := net.SplitHostPort(addr)
		if err != nil {
			return nil, err
		}
		if !strings.HasSuffix(host, ".test") {
			return nil, fmt.Errorf("the test dials no real host (%s)", addr)
		}
		dialed.Store(host, true)
		to := plain.Listener.Addr().String()
		if port == "443" {
			to = secure.Listener.Addr().String()
		}
		var d net.Dialer
		return d.DialContext(ctx, network, to)
	}
	direct := plain.Listener.Addr().(*net.TCPAddr).Port

	for _, be := range []string{kindBwrap, kindLandlock} {
		t.Run(be, func(t *testing.T) {
			needBackend(t, be)
			var mu sync.Mutex
			var notices []string
			run := func(t *testing.T, s Settings, script string) string {
				t.Helper()
				dir := t.TempDir()
				sb, err := New(s, Options{
					Writable: func() []string { return []string{dir} },
					Getenv: func(k string) string {
						if k == "TACK_SANDBOX" {
							return be
						}
						return os.Getenv(k)
					},
					Dial: dial,
					Notify: func(m string) {
						mu.Lock()
						notices = append(notices, m)
						mu.Unlock()
					},
				})
				if err != nil {
					t.Fatal(err)
				}
				defer sb.Close()
				cmd := exec.Command("/bin/bash", "-c", script)
				cmd.Dir = dir
				cmd.Env = append(os.Environ(), fmt.Sprintf("DIRECT=%d", direct))
				var out bytes.Buffer
				cmd.Stdout, cmd.Stderr = &out, &out
				release, err := sb.Wrap(cmd, script, false, nil)
				if err != nil {
					t.Fatal(err)
				}
				cmd.Run()
				release()
				return out.String()
			}
			allow := Settings{Enabled: true, Network: Network{
				AllowedDomains: []string{"allowed.test", "*.allowed.test"},
				DeniedDomains:  []string{"bad.allowed.test"},
			}}
			for _, tc := range []struct {
				name, script, want string
			}{
				{"http", `curl -sS http://allowed.test/`, "hello from allowed.test"},
				{"https-connect", `curl -sSk https://www.allowed.test/`, "hello from www.allowed.test"},
				{"socks", `curl -sS --proxy "$ALL_PROXY" http://allowed.test/`, "hello from allowed.test"},
				{"http-denied", `curl -sS http://denied.test/`, "network access to denied.test is not allowed"},
				{"https-denied", `curl -sSk https://denied.test/; echo " exit=$?"`, "403"},
				{"socks-denied", `curl -sS --proxy "$ALL_PROXY" http://denied.test/; echo " exit=$?"`, "exit=97"},
				{"denied-wins", `curl -sS http://bad.allowed.test/`, "network access to bad.allowed.test is not allowed"},
				{"around-the-proxy", `curl -sS --max-time 5 --noproxy '*' "http://127.0.0.1:$DIRECT/" || echo unreachable`, "unreachable"},
			} {
				t.Run(tc.name, func(t *testing.T) {
					if out := run(t, allow, tc.script); !strings.Contains(out, tc.want) {
						t.Errorf("%s:\n%s\nwant %q", tc.script, out, tc.want)
					}
				})
			}
			if _, ok := dialed.Load("denied.test"); ok {
				t.Error("the proxy dialed a denied name")
			}
			mu.Lock()
			if !strings.Contains(strings.Join(notices, "\n"), "denied.test") {
				t.Errorf("no notice of the refused destinations: %q", notices)
			}
			mu.Unlock()

			t.Run("own-proxy", func(t *testing.T) {
				// The user's own HTTP proxy on the host's loopback: every
				// request goes to it, whatever the name.
				own := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					fmt.Fprintf(w, "own proxy got %s", r.URL)
				}))
				defer own.Close()
				port := own.Listener.Addr().(*net.TCPAddr).Port
				out := run(t, Settings{Enabled: true, Network: Network{HTTPProxyPort: port}}, `curl -sS http://anywhere.example/x`)
				if !strings.Contains(out, "own proxy got http://anywhere.example/x") {
					t.Errorf("through the user's proxy:\n%s", out)
				}
			})
			t.Run("no-allowed-domains", func(t *testing.T) {
				out := run(t, Settings{Enabled: true}, `env | grep -i _proxy; curl -sS --max-time 5 http://allowed.test/ || echo unreachable; curl -sS --max-time 5 "http://127.0.0.1:$DIRECT/" || echo unreachable`)
				if strings.Contains(out, "hello") || strings.Count(out, "unreachable") != 2 || strings.Contains(strings.ToLower(out), "http_proxy=") {
					t.Errorf("without allowedDomains:\n%s", out)
				}
			})
		})
	}
}

// TestUnixSocketsAllowed: network.allowAllUnixSockets (and, as Linux cannot
// filter by path, network.allowUnixSockets) lift the unix socket filter,
// and the session is told.
func TestUnixSocketsAllowed(t *testing.T) {
	for _, be := range []string{kindBwrap, kindLandlock} {
		for _, n := range []Network{{AllowAllUnixSockets: true}, {AllowUnixSockets: []string{"/run/x.sock"}}} {
			t.Run(fmt.Sprintf("%s/%v", be, n.AllowAllUnixSockets), func(t *testing.T) {
				needBackend(t, be)
				dir := t.TempDir()
				sock := dir + "/s.sock"
				ln, err := net.Listen("unix", sock)
				if err != nil {
					t.Fatal(err)
				}
				defer ln.Close()
				go func() {
					for {
						c, err := ln.Accept()
						if err != nil {
							return
						}
						c.Close()
					}
				}()
				var notice string
				sb, err := New(Settings{Enabled: true, Network: n}, Options{
					Writable:   func() []string { return []string{dir} },
					Getenv:     func(k string) string { return map[string]string{"TACK_SANDBOX": be}[k] },
					Executable: stageCopy(t),
					Notify:     func(m string) { notice = m },
				})
				if err != nil {
					t.Fatal(err)
				}
				defer sb.Close()
				if !strings.Contains(notice, "unix socket") {
					t.Errorf("notice %q", notice)
				}
				cmd := exec.Command(stageCopy(t), sock)
				cmd.Env = []string{"TACK_PROBE=unix"}
				release, err := sb.Wrap(cmd, "probe", false, nil)
				if err != nil {
					t.Fatal(err)
				}
				out, _ := cmd.CombinedOutput()
				release()
				if !strings.Contains(string(out), "connected") {
					t.Errorf("the command could not reach the socket:\n%s", out)
				}
			})
		}
	}
}
