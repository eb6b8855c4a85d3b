// Package transporttest has what tests of the network setup need: a
// certificate authority that issues server and client certificates into
// files, and a forward proxy on 127.0.0.1 (CONNECT tunnels and plain HTTP)
// that resolves host names from a table, so that a request can go to a
// name no DNS knows and arrive only if it went through the proxy.
package transporttest

import (
	"bufio"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"io"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

// CA is a test certificate authority. CertFile is its certificate in PEM.
type CA struct {
	t        testing.TB
	dir      string
	cert     *x509.Certificate
	key      *ecdsa.PrivateKey
	CertFile string
	Pool     *x509.CertPool
}

// NewCA makes an authority whose files live in the test's temporary dir.
func NewCA(t testing.TB, name string) *CA {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: name},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(24 * time.Hour),
		IsCA:                  true,
		BasicConstraintsValid: true,
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, _ := x509.ParseCertificate(der)
	ca := &CA{t: t, dir: t.TempDir(), cert: cert, key: key, Pool: x509.NewCertPool()}
	ca.Pool.AddCert(cert)
	ca.CertFile = ca.writeRaw(name+".pem", pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}))
	return ca
}

// issue makes a certificate signed by ca for the names (DNS names or IPs).
func (ca *CA) issue(cn string, names []string, usage x509.ExtKeyUsage) (tls.Certificate, []byte, []byte) {
	ca.t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		ca.t.Fatal(err)
	}
	n, err := rand.Int(rand.Reader, big.NewInt(1<<62))
	if err != nil {
		ca.t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: n,
		Subject:      pkix.Name{CommonName: cn},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{usage},
	}
	for _, name := range names {
		if ip := net.ParseIP(name); ip != nil {
			tmpl.IPAddresses = append(tmpl.IPAddresses, ip)
		} else {
			tmpl.DNSNames = append(tmpl.DNSNames, name)
		}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, &key.PublicKey, ca.key)
	if err != nil {
		ca.t.Fatal(err)
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		ca.t.Fatal(err)
	}
	certPEM := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
	keyPEM := pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER})
	pair, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		ca.t.Fatal(err)
	}
	return pair, certPEM, keyPEM
}

// Server is a certificate for a server of the names (DNS names or IPs).
func (ca *CA) Server(names ...string) tls.Certificate {
	ca.t.Helper()
	pair, _, _ := ca.issue(names[0], names, x509.ExtKeyUsageServerAuth)
	return pair
}

// Client writes a client certificate and its key to files and returns
// their paths.
func (ca *CA) Client(name string) (certFile, keyFile string) {
	ca.t.Helper()
	_, certPEM, keyPEM := ca.issue(name, nil, x509.ExtKeyUsageClientAuth)
	return ca.writeRaw(name+".crt", certPEM), ca.writeRaw(name+".key", keyPEM)
}

func (ca *CA) writeRaw(name string, data []byte) string {
	p := filepath.Join(ca.dir, name)
	if err := os.WriteFile(p, data, 0o600); err != nil {
		ca.t.Fatal(err)
	}
	return p
}

// Proxy is a forward proxy on 127.0.0.1. Hosts maps a host name of a
// request to the address it is sent to; a name not in the table is
// answered 502, so nothing leaves the machine.
type Proxy struct {
	URL string // http://127.0.0.1:PORT

	mu       sync.Mutex
	hosts    map[string]string
	requests []string // "CONNECT host:port" or "GET http://…"
}

// NewProxy starts a proxy that closes when the test ends.
func NewProxy(t testing.TB, hosts map[string]string) *Proxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &Proxy{URL: "http://" + ln.Addr().String(), hosts: hosts}
	srv := &http.Server{Handler: p, ReadHeaderTimeout: 10 * time.Second}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return p
}

// Requests are what the proxy was asked, in order.
func (p *Proxy) Requests() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.requests...)
}

func (p *Proxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	p.mu.Lock()
	if r.Method == http.MethodConnect {
		p.requests = append(p.requests, "CONNECT "+r.Host)
	} else {
		p.requests = append(p.requests, r.Method+" "+r.URL.String())
	}
	p.mu.Unlock()
	host, port, err := net.SplitHostPort(r.Host)
	if err != nil {
		host, port = r.Host, "80"
	}
	target, ok := p.hosts[host]
	if !ok {
		http.Error(w, "unknown host "+host, http.StatusBadGateway)
		return
	}
	if _, _, err := net.SplitHostPort(target); err != nil {
		target = net.JoinHostPort(target, port)
	}
	if r.Method == http.MethodConnect {
		p.tunnel(w, target)
		return
	}
	p.forward(w, r, target)
}

func (p *Proxy) tunnel(w http.ResponseWriter, target string) {
	up, err := net.Dial("tcp", target)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	conn, buf, err := http.NewResponseController(w).Hijack()
	if err != nil {
		up.Close()
		return
	}
	io.WriteString(conn, "HTTP/1.1 200 Connection established\r\n\r\n")
	go func() {
		io.Copy(up, buf)
		up.(*net.TCPConn).CloseWrite()
	}()
	io.Copy(conn, up)
	conn.Close()
	up.Close()
}

func (p *Proxy) forward(w http.ResponseWriter, r *http.Request, target string) {
	up, err := net.Dial("tcp", target)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	defer up.Close()
	out := r.Clone(r.Context())
	out.RequestURI = ""
	out.Header.Del("Proxy-Connection")
	if err := out.Write(up); err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	resp, err := http.ReadResponse(bufio.NewReader(up), out)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	defer resp.Body.Close()
	for k, vs := range resp.Header {
		for _, v := range vs {
			w.Header().Add(k, v)
		}
	}
	w.WriteHeader(resp.StatusCode)
	rc := http.NewResponseController(w)
	b := make([]byte, 32<<10)
	for {
		n, err := resp.Body.Read(b)
		if n > 0 {
			w.Write(b[:n])
			rc.Flush()
		}
		if err != nil {
			return
		}
	}
}
