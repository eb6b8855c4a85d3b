package transport_test

import (
	"crypto/tls"
	"errors"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/tackcode/tack/internal/llm/transport"
	"github.com/tackcode/tack/internal/llm/transport/transporttest"
)

// apiHost is a name no resolver knows: a request to it arrives only
// through the test proxy, which maps it to the test server.
const apiHost = "api.tack-test.invalid"

// tlsServer serves "ok" over TLS with a certificate of ca for apiHost and
// 127.0.0.1; configure adjusts its TLS config before it starts.
func tlsServer(t *testing.T, ca *transporttest.CA, configure func(*tls.Config)) *httptest.Server {
	t.Helper()
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.TLS != nil && len(r.TLS.PeerCertificates) > 0 {
			w.Header().Set("X-Client", r.TLS.PeerCertificates[0].Subject.CommonName)
		}
		io.WriteString(w, "ok")
	}))
	srv.Config.ErrorLog = log.New(io.Discard, "", 0) // refused handshakes
	srv.TLS = &tls.Config{Certificates: []tls.Certificate{ca.Server(apiHost, "127.0.0.1")}}
	if configure != nil {
		configure(srv.TLS)
	}
	srv.StartTLS()
	t.Cleanup(srv.Close)
	return srv
}

func get(t *testing.T, s transport.Setup, url string) (*http.Response, error) {
	t.Helper()
	resp, err := s.Client().Get(url)
	if err == nil {
		t.Cleanup(func() { resp.Body.Close() })
	}
	return resp, err
}

func port(t *testing.T, srv *httptest.Server) string {
	_, p, err := net.SplitHostPort(srv.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestHTTPSGoesThroughTheConnectProxy(t *testing.T) {
	ca := transporttest.NewCA(t, "test-ca")
	srv := tlsServer(t, ca, nil)
	proxy := transporttest.NewProxy(t, map[string]string{apiHost: srv.Listener.Addr().String()})
	s := transport.FromEnv(envOf(map[string]string{"HTTPS_PROXY": proxy.URL, transport.VarExtraCA: ca.CertFile}))
	target := "https://" + apiHost + ":" + port(t, srv) + "/v1/models"
	resp, err := get(t, s, target)
	if err != nil {
		t.Fatalf("GET through the proxy: %v", err)
	}
	if resp.StatusCode != 200 {
		t.Fatalf("status %d", resp.StatusCode)
	}
	if want := []string{"CONNECT " + apiHost + ":" + port(t, srv)}; !slices.Equal(proxy.Requests(), want) {
		t.Errorf("proxy saw %q, want %q", proxy.Requests(), want)
	}
}

func TestHTTPGoesThroughTheHTTPProxyAndLowerCaseIsRead(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "plain") }))
	t.Cleanup(srv.Close)
	proxy := transporttest.NewProxy(t, map[string]string{apiHost: srv.Listener.Addr().String()})
	s := transport.FromEnv(envOf(map[string]string{"http_proxy": proxy.URL}))
	if s.HTTPProxy.Var != "http_proxy" {
		t.Errorf("HTTPProxy read from %q, want http_proxy", s.HTTPProxy.Var)
	}
	target := "http://" + apiHost + ":" + port(t, srv) + "/x"
	resp, err := get(t, s, target)
	if err != nil {
		t.Fatalf("GET through the proxy: %v", err)
	}
	body, _ := io.ReadAll(resp.Body)
	if string(body) != "plain" {
		t.Errorf("body %q", body)
	}
	if want := []string{"GET " + target}; !slices.Equal(proxy.Requests(), want) {
		t.Errorf("proxy saw %q, want %q", proxy.Requests(), want)
	}
}

func TestUpperCaseProxyWinsOverLowerCase(t *testing.T) {
	s := transport.FromEnv(envOf(map[string]string{"HTTPS_PROXY": "http://upper:1", "https_proxy": "http://lower:1"}))
	if s.HTTPSProxy != (transport.Setting{Var: "HTTPS_PROXY", Value: "http://upper:1"}) {
		t.Errorf("got %+v", s.HTTPSProxy)
	}
}

func TestNoProxySkipsTheProxyForMatchingHosts(t *testing.T) {
	proxy := transporttest.NewProxy(t, map[string]string{apiHost: "127.0.0.1:1"})
	for _, noProxy := range []string{"tack-test.invalid", ".tack-test.invalid", apiHost, "*"} {
		s := transport.FromEnv(envOf(map[string]string{"HTTPS_PROXY": proxy.URL, "NO_PROXY": noProxy}))
		_, err := get(t, s, "https://"+apiHost+"/")
		var dnsErr *net.DNSError
		if !errors.As(err, &dnsErr) {
			t.Errorf("NO_PROXY=%s: want a direct lookup of %s failing, got %v", noProxy, apiHost, err)
		}
	}
	if len(proxy.Requests()) != 0 {
		t.Errorf("the proxy was asked %q", proxy.Requests())
	}
	// A host NO_PROXY does not list still goes through it.
	s := transport.FromEnv(envOf(map[string]string{"HTTPS_PROXY": proxy.URL, "NO_PROXY": "example.invalid"}))
	get(t, s, "https://"+apiHost+"/")
	if len(proxy.Requests()) != 1 {
		t.Errorf("the proxy was asked %q, want one CONNECT", proxy.Requests())
	}
}

func TestProxyFailuresAreProxyErrorsNamingTheVariable(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := "http://" + l.Addr().String()
	l.Close()
	refusing := transporttest.NewProxy(t, nil) // answers every CONNECT 502
	cases := []struct{ name, proxy, want string }{
		{"unreachable", closed, "connection refused"},
		{"refuses the tunnel", refusing.URL, "Bad Gateway"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := transport.FromEnv(envOf(map[string]string{"https_proxy": c.proxy}))
			_, err := get(t, s, "https://"+apiHost+"/")
			var pe *transport.ProxyError
			if !errors.As(err, &pe) {
				t.Fatalf("want a *ProxyError, got %T %v", err, err)
			}
			if pe.Var != "https_proxy" || pe.Proxy != c.proxy || !strings.Contains(pe.Err.Error(), c.want) {
				t.Errorf("got %+v, want var https_proxy, proxy %s, error with %q", pe, c.proxy, c.want)
			}
		})
	}
}

func TestExtraCAIsTrustedBesidesTheSystemRoots(t *testing.T) {
	ca := transporttest.NewCA(t, "corp-ca")
	srv := tlsServer(t, ca, nil)
	_, err := get(t, transport.Setup{}, srv.URL)
	var unknown *tls.CertificateVerificationError
	if !errors.As(err, &unknown) {
		t.Fatalf("without the CA: want a verification error, got %v", err)
	}
	for _, v := range []string{transport.VarExtraCA, transport.VarCertFile} {
		resp, err := get(t, transport.FromEnv(envOf(map[string]string{v: ca.CertFile})), srv.URL)
		if err != nil || resp.StatusCode != 200 {
			t.Errorf("%s=%s: %v", v, ca.CertFile, err)
		}
	}
}

func TestCertFileReplacesTheRootsAndExtraCAAddsToThem(t *testing.T) {
	ca, other := transporttest.NewCA(t, "corp-ca"), transporttest.NewCA(t, "other-ca")
	srv := tlsServer(t, ca, nil)
	// SSL_CERT_FILE of another authority: the server's is not trusted.
	_, err := get(t, transport.FromEnv(envOf(map[string]string{transport.VarCertFile: other.CertFile})), srv.URL)
	if err == nil {
		t.Fatal("a server of an authority SSL_CERT_FILE does not hold was trusted")
	}
	// NODE_EXTRA_CA_CERTS adds to SSL_CERT_FILE's.
	resp, err := get(t, transport.FromEnv(envOf(map[string]string{transport.VarCertFile: other.CertFile, transport.VarExtraCA: ca.CertFile})), srv.URL)
	if err != nil || resp.StatusCode != 200 {
		t.Errorf("with both: %v", err)
	}
}

func TestClientCertificateIsPresented(t *testing.T) {
	ca := transporttest.NewCA(t, "corp-ca")
	srv := tlsServer(t, ca, func(c *tls.Config) {
		c.ClientAuth = tls.RequireAndVerifyClientCert
		c.ClientCAs = ca.Pool
	})
	if _, err := get(t, transport.FromEnv(envOf(map[string]string{transport.VarExtraCA: ca.CertFile})), srv.URL); err == nil {
		t.Fatal("a server requiring a client certificate answered without one")
	}
	cert, key := ca.Client("laptop-42")
	s := transport.FromEnv(envOf(map[string]string{transport.VarExtraCA: ca.CertFile, transport.VarClientCert: cert, transport.VarClientKey: key}))
	resp, err := get(t, s, srv.URL)
	if err != nil {
		t.Fatalf("with the client certificate: %v", err)
	}
	if got := resp.Header.Get("X-Client"); got != "laptop-42" {
		t.Errorf("server saw client %q", got)
	}
	// The key may sit in the certificate's file.
	both := filepath.Join(t.TempDir(), "both.pem")
	certPEM, _ := os.ReadFile(cert)
	keyPEM, _ := os.ReadFile(key)
	os.WriteFile(both, append(certPEM, keyPEM...), 0o600)
	resp, err = get(t, transport.FromEnv(envOf(map[string]string{transport.VarExtraCA: ca.CertFile, transport.VarClientCert: both})), srv.URL)
	if err != nil || resp.Header.Get("X-Client") != "laptop-42" {
		t.Errorf("certificate and key in one file: %v", err)
	}
}

func TestBadFilesAreErrorsNamingTheVariableAndFile(t *testing.T) {
	dir := t.TempDir()
	junk := filepath.Join(dir, "junk.pem")
	os.WriteFile(junk, []byte("not a certificate\n"), 0o600)
	missing := filepath.Join(dir, "missing.pem")
	encKey := filepath.Join(dir, "enc.key")
	os.WriteFile(encKey, []byte("-----BEGIN ENCRYPTED PRIVATE KEY-----\nAAAA\n-----END ENCRYPTED PRIVATE KEY-----\n"), 0o600)
	ca := transporttest.NewCA(t, "corp-ca")
	cert, _ := ca.Client("c")
	cases := []struct {
		env  map[string]string
		want []string
	}{
		{map[string]string{transport.VarExtraCA: missing}, []string{"NODE_EXTRA_CA_CERTS", missing, "no such file"}},
		{map[string]string{transport.VarCertFile: junk}, []string{"SSL_CERT_FILE", junk, "no PEM certificate"}},
		{map[string]string{transport.VarClientCert: missing}, []string{"CLAUDE_CODE_CLIENT_CERT", missing}},
		{map[string]string{transport.VarClientCert: junk, transport.VarClientKey: junk}, []string{"CLAUDE_CODE_CLIENT_CERT=" + junk, "CLAUDE_CODE_CLIENT_KEY=" + junk}},
		{map[string]string{transport.VarClientKey: junk}, []string{"CLAUDE_CODE_CLIENT_CERT is not"}},
		{map[string]string{transport.VarClientCert: cert, transport.VarClientKey: encKey}, []string{"CLAUDE_CODE_CLIENT_KEY", encKey, "encrypted"}},
	}
	for _, c := range cases {
		err := transport.FromEnv(envOf(c.env)).Check()
		if err == nil {
			t.Errorf("%v: no error", c.env)
			continue
		}
		for _, w := range c.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%v: error %q does not say %q", c.env, err, w)
			}
		}
	}
}

func TestBadFileFailsTheFirstRequestNotTheClient(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "corp.pem")
	c := transport.FromEnv(envOf(map[string]string{transport.VarExtraCA: missing})).Client()
	_, err := c.Get("https://" + apiHost + "/")
	var se *transport.SetupError
	if !errors.As(err, &se) || !strings.Contains(se.Error(), "NODE_EXTRA_CA_CERTS: read the certificate authorities: open "+missing) {
		t.Errorf("got %v, want a *SetupError naming the variable and the file", err)
	}
}

// A bundle that is the one already trusted is not read again: a file that
// cannot be parsed, named twice, is then not read at all.
func TestTheSameBundleIsNotReadTwice(t *testing.T) {
	junk := filepath.Join(t.TempDir(), "junk.pem")
	os.WriteFile(junk, []byte("junk"), 0o600)
	err := transport.FromEnv(envOf(map[string]string{transport.VarCertFile: junk, transport.VarExtraCA: junk})).Check()
	if err == nil || !strings.Contains(err.Error(), "SSL_CERT_FILE") {
		t.Errorf("got %v: want SSL_CERT_FILE's file read, once", err)
	}
	t.Setenv(transport.VarCertFile, junk) // crypto/x509 reads it for the system roots, lazily
	if err := transport.FromEnv(os.Getenv).Check(); err != nil {
		t.Errorf("SSL_CERT_FILE of the process is crypto/x509's to read: %v", err)
	}
	t.Setenv(transport.VarExtraCA, junk)
	if err := transport.FromEnv(os.Getenv).Check(); err != nil {
		t.Errorf("NODE_EXTRA_CA_CERTS naming the SSL_CERT_FILE of the process was read: %v", err)
	}
}

func TestLinesNameOnlyWhatIsSet(t *testing.T) {
	if l := transport.FromEnv(envOf(nil)).Lines(); len(l) != 0 {
		t.Errorf("nothing set: %q", l)
	}
	got := transport.FromEnv(envOf(map[string]string{
		"HTTPS_PROXY": "http://user:secret@proxy.corp:3128", "no_proxy": "localhost,.corp",
		transport.VarExtraCA: "/etc/corp.pem", transport.VarClientCert: "/c.pem", transport.VarClientKey: "/k.pem",
	})).Lines()
	want := []string{
		"proxy HTTPS_PROXY=http://user:xxxxx@proxy.corp:3128 (not for no_proxy=localhost,.corp)",
		"certificate authorities of the system and NODE_EXTRA_CA_CERTS=/etc/corp.pem",
		"client certificate CLAUDE_CODE_CLIENT_CERT=/c.pem, key CLAUDE_CODE_CLIENT_KEY=/k.pem",
	}
	if !slices.Equal(got, want) {
		t.Errorf("lines\n got %q\nwant %q", got, want)
	}
}

func envOf(m map[string]string) func(string) string {
	return func(k string) string { return m[k] }
}
