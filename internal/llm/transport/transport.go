// Package transport builds the HTTP client model providers send their
// requests with, from the variables Claude Code reads for the network:
// HTTPS_PROXY, HTTP_PROXY and NO_PROXY (either case), custom certificate
// authorities (NODE_EXTRA_CA_CERTS added to the system's, SSL_CERT_FILE in
// their place) and a client certificate for mutual TLS
// (CLAUDE_CODE_CLIENT_CERT, CLAUDE_CODE_CLIENT_KEY).
//
// The variables are read through the session's lookup, so a settings
// file's "env" sets them as the process environment does. Building a
// client costs nothing unless a certificate variable is set: only then is
// a file read, and the system roots are loaded (lazily, by crypto/x509)
// only for a connection that needs them.
package transport

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptrace"
	"net/url"
	"os"
	"strings"
	"sync"
	"sync/atomic"

	"golang.org/x/net/http/httpproxy"
)

// The variables this package reads.
const (
	VarExtraCA    = "NODE_EXTRA_CA_CERTS"
	VarCertFile   = "SSL_CERT_FILE"
	VarClientCert = "CLAUDE_CODE_CLIENT_CERT"
	VarClientKey  = "CLAUDE_CODE_CLIENT_KEY"
	VarPassphrase = "CLAUDE_CODE_CLIENT_KEY_PASSPHRASE"
)

// Setting is one variable's value and the name it was found under (the
// upper- or lower-case spelling of a proxy variable).
type Setting struct {
	Var, Value string
}

// Setup is the network configuration of a session, as read from its
// environment. The zero value is a direct connection with the system's
// certificate authorities.
type Setup struct {
	HTTPSProxy, HTTPProxy, NoProxy Setting
	// ExtraCA is a PEM file of authorities trusted besides the system's.
	ExtraCA string
	// CertFile is a PEM file of authorities trusted instead of the system's.
	CertFile string
	// ClientCert and ClientKey are PEM files of a client certificate and
	// its private key; Passphrase is the key's passphrase when it has one.
	ClientCert, ClientKey, Passphrase string
}

// FromEnv reads the setup through getenv. Proxy variables are looked up
// upper case first, then lower case, as curl and Node's proxy agents do.
func FromEnv(getenv func(string) string) Setup {
	either := func(name string) Setting {
		for _, n := range []string{name, strings.ToLower(name)} {
			if v := strings.TrimSpace(getenv(n)); v != "" {
				return Setting{Var: n, Value: v}
			}
		}
		return Setting{}
	}
	return Setup{
		HTTPSProxy: either("HTTPS_PROXY"),
		HTTPProxy:  either("HTTP_PROXY"),
		NoProxy:    either("NO_PROXY"),
		ExtraCA:    getenv(VarExtraCA),
		CertFile:   getenv(VarCertFile),
		ClientCert: getenv(VarClientCert),
		ClientKey:  getenv(VarClientKey),
		Passphrase: getenv(VarPassphrase),
	}
}

// Lines describe what the setup changes from a direct connection, one
// line each for the proxy, the authorities and the client certificate,
// only those set: for `tack doctor`.
func (s Setup) Lines() []string {
	var out []string
	proxies := []string{}
	for _, p := range []Setting{s.HTTPSProxy, s.HTTPProxy} {
		if p.Value != "" {
			proxies = append(proxies, fmt.Sprintf("%s=%s", p.Var, redact(p.Value)))
		}
	}
	if len(proxies) > 0 {
		line := "proxy " + strings.Join(proxies, ", ")
		if s.NoProxy.Value != "" {
			line += fmt.Sprintf(" (not for %s=%s)", s.NoProxy.Var, s.NoProxy.Value)
		}
		out = append(out, line)
	}
	switch {
	case s.CertFile != "" && s.ExtraCA != "":
		out = append(out, fmt.Sprintf("certificate authorities from %s=%s (instead of the system's) and %s=%s", VarCertFile, s.CertFile, VarExtraCA, s.ExtraCA))
	case s.CertFile != "":
		out = append(out, fmt.Sprintf("certificate authorities from %s=%s (instead of the system's)", VarCertFile, s.CertFile))
	case s.ExtraCA != "":
		out = append(out, fmt.Sprintf("certificate authorities of the system and %s=%s", VarExtraCA, s.ExtraCA))
	}
	if s.ClientCert != "" || s.ClientKey != "" {
		out = append(out, fmt.Sprintf("client certificate %s=%s, key %s=%s", VarClientCert, s.ClientCert, VarClientKey, s.ClientKey))
	}
	return out
}

// redact hides the password of a proxy URL.
func redact(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.User == nil {
		return raw
	}
	return u.Redacted()
}

// Client is the HTTP client for the setup. It is cheap to make: the
// certificate files are read at its first request, so that a session
// that sends none (and the start of one that does) pays nothing for them;
// a file that cannot be used fails that request with a *SetupError.
func (s Setup) Client() *http.Client {
	proxy := s.proxyFunc()
	base := sync.OnceValues(func() (http.RoundTripper, error) {
		tlsCfg, err := s.tlsConfig()
		if err != nil {
			return nil, &SetupError{Err: err}
		}
		t := http.DefaultTransport.(*http.Transport).Clone()
		t.TLSClientConfig = tlsCfg
		t.Proxy = func(r *http.Request) (*url.URL, error) { return proxy(r.URL) }
		return t, nil
	})
	return &http.Client{Transport: &annotate{base: base, proxy: proxy, setup: s}}
}

// Apply sets the setup's proxy and TLS configuration on tr: for clients
// other libraries build themselves (the AWS SDK's, which adds AWS_CA_BUNDLE
// to the authorities only on a transport of its own making).
func (s Setup) Apply(tr *http.Transport) error {
	tlsCfg, err := s.tlsConfig()
	if err != nil {
		return &SetupError{Err: err}
	}
	if tlsCfg != nil {
		tr.TLSClientConfig = tlsCfg
	}
	proxy := s.proxyFunc()
	tr.Proxy = func(r *http.Request) (*url.URL, error) { return proxy(r.URL) }
	return nil
}

// Check reads the setup's certificate files as the client's first request
// would, and returns what is wrong with them, naming the variable.
func (s Setup) Check() error {
	_, err := s.tlsConfig()
	return err
}

// SetupError is a certificate file of the setup that cannot be used.
type SetupError struct{ Err error }

func (e *SetupError) Error() string { return e.Err.Error() }
func (e *SetupError) Unwrap() error { return e.Err }

// proxyFunc chooses the proxy of a request URL. NO_PROXY is matched as
// Go's httpproxy matches it: comma-separated host names (each also
// matching its subdomains; a leading "." or "*." is the same), IP
// addresses and CIDR ranges, each optionally with a port, or "*" for
// all. Requests to localhost and loopback addresses never use a proxy.
func (s Setup) proxyFunc() func(*url.URL) (*url.URL, error) {
	cfg := httpproxy.Config{HTTPSProxy: s.HTTPSProxy.Value, HTTPProxy: s.HTTPProxy.Value, NoProxy: s.NoProxy.Value}
	return cfg.ProxyFunc()
}

// tlsConfig is nil when the setup needs nothing beyond the defaults.
func (s Setup) tlsConfig() (*tls.Config, error) {
	pool, err := s.roots()
	if err != nil {
		return nil, err
	}
	if pool == nil && s.ClientCert == "" && s.ClientKey == "" {
		return nil, nil
	}
	cfg := &tls.Config{MinVersion: tls.VersionTLS12, RootCAs: pool}
	if s.ClientCert != "" || s.ClientKey != "" {
		cert, err := s.clientCertificate()
		if err != nil {
			return nil, err
		}
		cfg.Certificates = []tls.Certificate{cert}
	}
	return cfg, nil
}

// roots are the authorities to trust: SSL_CERT_FILE's in place of the
// system's (as OpenSSL and Go read that variable), with NODE_EXTRA_CA_CERTS's
// added (as Node adds them); nil for the system's, which crypto/x509 then
// loads itself when a connection first needs them. Reading a bundle of a
// few hundred authorities takes milliseconds, so none is read twice: Go's
// system roots already are SSL_CERT_FILE's when the process environment
// sets it, and an extra bundle that is the same file adds nothing (many
// machines point every such variable at the system bundle).
func (s Setup) roots() (*x509.CertPool, error) {
	processFile := os.Getenv(VarCertFile) // what crypto/x509 reads
	ownFile := s.CertFile != "" && s.CertFile != processFile
	trusted := processFile
	if s.CertFile != "" {
		trusted = s.CertFile
	}
	extra := s.ExtraCA != "" && s.ExtraCA != trusted
	if !ownFile && !extra {
		return nil, nil
	}
	var pool *x509.CertPool
	if ownFile {
		pool = x509.NewCertPool()
		if err := addPEM(pool, VarCertFile, s.CertFile); err != nil {
			return nil, err
		}
	} else {
		var err error
		if pool, err = x509.SystemCertPool(); err != nil {
			pool = x509.NewCertPool() // no system store: the extra ones alone
		}
	}
	if extra {
		if err := addPEM(pool, VarExtraCA, s.ExtraCA); err != nil {
			return nil, err
		}
	}
	return pool, nil
}

func addPEM(pool *x509.CertPool, variable, path string) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("%s: read the certificate authorities: %w", variable, err)
	}
	if !pool.AppendCertsFromPEM(data) {
		return fmt.Errorf("%s: %s holds no PEM certificate", variable, path)
	}
	return nil
}

// clientCertificate reads the certificate and key pair; the key may be in
// the certificate's file when CLAUDE_CODE_CLIENT_KEY is unset.
func (s Setup) clientCertificate() (tls.Certificate, error) {
	if s.ClientCert == "" {
		return tls.Certificate{}, fmt.Errorf("%s is set (%s) but %s is not: set both for a client certificate", VarClientKey, s.ClientKey, VarClientCert)
	}
	certPEM, err := os.ReadFile(s.ClientCert)
	if err != nil {
		return tls.Certificate{}, fmt.Errorf("%s: read the client certificate: %w", VarClientCert, err)
	}
	keyVar, keyPath, keyPEM := VarClientCert, s.ClientCert, certPEM
	if s.ClientKey != "" {
		keyVar, keyPath = VarClientKey, s.ClientKey
		if keyPEM, err = os.ReadFile(s.ClientKey); err != nil {
			return tls.Certificate{}, fmt.Errorf("%s: read the client key: %w", VarClientKey, err)
		}
	}
	if encrypted(keyPEM) {
		return tls.Certificate{}, fmt.Errorf("%s: the key in %s is encrypted, and tack reads unencrypted keys only (%s is not supported): decrypt it, e.g. openssl pkey -in %s -out plain.pem",
			keyVar, keyPath, VarPassphrase, keyPath)
	}
	cert, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		return tls.Certificate{}, fmt.Errorf("%s=%s, %s=%s: not a certificate and matching key in PEM: %w", VarClientCert, s.ClientCert, keyVar, keyPath, err)
	}
	return cert, nil
}

// encrypted reports whether the PEM data holds a passphrase-protected key.
func encrypted(data []byte) bool {
	for {
		var b *pem.Block
		b, data = pem.Decode(data)
		if b == nil {
			return false
		}
		if b.Type == "ENCRYPTED PRIVATE KEY" || strings.Contains(b.Headers["Proc-Type"], "ENCRYPTED") {
			return true
		}
	}
}

// ProxyError is a request that failed on its way through a proxy, before
// it reached the server: the proxy could not be reached or refused the
// tunnel. Var names the variable that chose the proxy.
type ProxyError struct {
	Proxy string // the proxy's URL, password hidden
	Var   string
	Err   error
}

func (e *ProxyError) Error() string {
	return fmt.Sprintf("proxy %s (%s): %v", e.Proxy, e.Var, e.Err)
}

func (e *ProxyError) Unwrap() error { return e.Err }

// annotate marks the failures of requests that went to a proxy and never
// got a connection through it, so that an explanation can name the proxy.
type annotate struct {
	base  func() (http.RoundTripper, error)
	proxy func(*url.URL) (*url.URL, error)
	setup Setup
}

func (a *annotate) RoundTrip(r *http.Request) (*http.Response, error) {
	base, err := a.base()
	if err != nil {
		if r.Body != nil {
			r.Body.Close()
		}
		return nil, err
	}
	p, _ := a.proxy(r.URL)
	if p == nil {
		return base.RoundTrip(r)
	}
	var connected atomic.Bool
	trace := &httptrace.ClientTrace{GotConn: func(httptrace.GotConnInfo) { connected.Store(true) }}
	resp, err := base.RoundTrip(r.WithContext(httptrace.WithClientTrace(r.Context(), trace)))
	if err != nil && !connected.Load() && !serverCertificate(err) {
		v := a.setup.HTTPSProxy.Var
		if r.URL.Scheme == "http" {
			v = a.setup.HTTPProxy.Var
		}
		return nil, &ProxyError{Proxy: p.Redacted(), Var: v, Err: err}
	}
	return resp, err
}

// serverCertificate reports whether err is the server's certificate
// failing to verify, which passed the proxy and is the server's problem.
func serverCertificate(err error) bool {
	var verr *tls.CertificateVerificationError
	return errors.As(err, &verr)
}
