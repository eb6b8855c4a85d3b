package anthropic

import (
	"cmp"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"syscall"

	"github.com/tackcode/tack/internal/llm"
	"github.com/tackcode/tack/internal/llm/retry"
	"github.com/tackcode/tack/internal/llm/transport"
)

// A request that failed for good is reported in one line that names the
// cause in the user's terms (the address that could not be reached, the
// key that was refused) and what to check, instead of the transport's
// error chain. The error underneath stays reachable with errors.As.

// failure is the error that ended a request, in words.
type failure struct {
	msg string
	err error
}

func (f *failure) Error() string { return f.msg }
func (f *failure) Unwrap() error { return f.err }

// defaultBaseURL is where requests go when ANTHROPIC_BASE_URL is not set.
const defaultBaseURL = "https://api.anthropic.com"

// endpoint says where the provider sends its requests, for explanations.
type endpoint struct {
	baseURL  string // "" for the default
	auth     string // which credential is sent: "key", "token" or ""
	platform *Platform
}

// explain turns err, which ended a request to model after attempts
// requests, into a failure; errors it has nothing to add to pass through.
func (e endpoint) explain(err error, model string, attempts int) error {
	cause, hint := e.describe(err, model)
	if cause == "" {
		return err
	}
	tries := ""
	if attempts > 1 {
		tries = fmt.Sprintf(" (%d attempts)", attempts)
	}
	return &failure{msg: cause + tries + ". " + hint + ".", err: err}
}

// retryCause is what a retry notice says failed: the cause in words where
// it is known, else the error.
func (e endpoint) retryCause(err error, model string) string {
	if cause, _ := e.describe(err, model); cause != "" {
		return cause
	}
	return oneLine(err.Error())
}

// describe names the cause of err and what to check; "" when it is none
// of the failures it knows.
func (e endpoint) describe(err error, model string) (cause, hint string) {
	cause, hint = e.connectionCause(err)
	if cause == "" {
		cause, hint = e.statusCause(err, model)
	}
	return oneLine(cause), hint
}

// connectionCause names a failure to reach the API at all: the host name,
// the connection, TLS.
func (e endpoint) connectionCause(err error) (cause, hint string) {
	at := e.who() + " unreachable at " + e.base()
	var dnsErr *net.DNSError
	var record tls.RecordHeaderError
	var proxyErr *transport.ProxyError
	var setupErr *transport.SetupError
	switch {
	case errors.As(err, &setupErr):
		return setupErr.Error(), "Fix the file, or unset the variable"
	case untrustedCertificate(err):
		return fmt.Sprintf("%s: its TLS certificate is not trusted (%s)", at, tlsDetail(err)),
			"Check " + e.baseSetting() + "; behind a proxy or gateway with its own certificate authority, add its certificate with NODE_EXTRA_CA_CERTS (or replace the trusted ones with SSL_CERT_FILE)"
	case refusedHandshake(err) != "":
		return fmt.Sprintf("%s: the server refused the TLS handshake (%s)", at, refusedHandshake(err)),
			"If it requires a client certificate, set CLAUDE_CODE_CLIENT_CERT and CLAUDE_CODE_CLIENT_KEY to one it accepts"
	case errors.As(err, &proxyErr):
		return fmt.Sprintf("%s through the proxy %s (%s): %s", at, proxyErr.Proxy, proxyErr.Var, proxyCause(proxyErr.Err)),
			fmt.Sprintf("Check %s, or list the host in NO_PROXY to reach it directly", proxyErr.Var)
	case errors.As(err, &dnsErr) && dnsErr.IsNotFound:
		return fmt.Sprintf("%s: host %q not found", at, dnsErr.Name), "Check the host name in " + e.baseSetting() + " and the network's DNS"
	case errors.As(err, &dnsErr):
		return fmt.Sprintf("%s: looking up %q failed: %s", at, dnsErr.Name, dnsErr.Err), "Check the network's DNS and " + e.baseSetting()
	case errors.As(err, &record):
		return at + ": the server does not speak TLS", "Check " + e.baseSetting() + " (http:// rather than https://?)"
	case errors.Is(err, syscall.ECONNREFUSED):
		return at + ": connection refused", "Check " + e.baseSetting() + " and that a server is listening there"
	case errors.Is(err, syscall.ECONNRESET):
		return at + ": the connection was reset", "Check " + e.baseSetting() + " and any proxy or firewall on the way"
	}
	var netErr net.Error
	if errors.As(err, &netErr) && netErr.Timeout() {
		return at + ": no answer in time", "Check " + e.baseSetting() + " and the network"
	}
	return "", ""
}

// statusCause names an HTTP answer that says the request itself cannot
// succeed: the credential, the access, the address or the model.
func (e endpoint) statusCause(err error, model string) (cause, hint string) {
	var apiErr *llm.APIError
	if !errors.As(err, &apiErr) {
		return "", ""
	}
	what := apiErr.Error()
	if e.platform != nil {
		return e.platformStatusCause(apiErr, model)
	}
	switch apiErr.Status {
	case http.StatusUnauthorized:
		return "The API refused the credentials: " + what, e.credentialHint()
	case http.StatusForbidden:
		return "The API denied access: " + what, fmt.Sprintf("Check that %s may use the model %s (--model) and %s", e.credential(), model, e.baseSetting())
	case http.StatusNotFound:
		return fmt.Sprintf("The API at %s has no such model or endpoint: %s", e.base(), what),
			fmt.Sprintf("Check the model name %q (--model, ANTHROPIC_MODEL) and %s (requests go to its /v1/messages)", model, e.baseSetting())
	}
	return "", ""
}

// platformStatusCause is statusCause for a cloud platform, whose refusals
// are about its own credentials, regions and model ids.
func (e endpoint) platformStatusCause(apiErr *llm.APIError, model string) (cause, hint string) {
	p, what := e.platform, apiErr.Error()
	where := ""
	if p.Region != "" {
		where = fmt.Sprintf(" in region %s (%s)", p.Region, p.RegionVar)
	}
	if expired(apiErr) && p.Renew != "" {
		return fmt.Sprintf("%s says %s have expired: %s", p.Name, cmp.Or(p.Credential, "the credentials"), what),
			"Renew them: " + p.Renew
	}
	switch apiErr.Status {
	case http.StatusUnauthorized:
		return p.Name + " refused the credentials: " + what, e.credentialHint()
	case http.StatusForbidden:
		return p.Name + " denied access: " + what,
			fmt.Sprintf("Check that %s may use the model %s%s, that the model is enabled there, or choose another model (--model, ANTHROPIC_MODEL)", e.credential(), model, where)
	case http.StatusNotFound:
		return fmt.Sprintf("%s at %s has no model %s%s: %s", p.Name, e.base(), model, where, what),
			fmt.Sprintf("Check the model id (--model, ANTHROPIC_MODEL) and %s", e.baseSetting())
	}
	return "", ""
}

// expired reports whether a refusal says the credential has expired
// (Bedrock's ExpiredTokenException, an OAuth token past its time).
func expired(apiErr *llm.APIError) bool {
	if apiErr.Status != http.StatusUnauthorized && apiErr.Status != http.StatusForbidden {
		return false
	}
	m := strings.ToLower(apiErr.Message + " " + apiErr.Type)
	return strings.Contains(m, "expired")
}

// who names the service requests go to.
func (e endpoint) who() string {
	if e.platform != nil {
		return e.platform.Name
	}
	return "API"
}

func (e endpoint) base() string {
	if e.baseURL == "" {
		return defaultBaseURL
	}
	return strings.TrimRight(e.baseURL, "/")
}

// baseSetting is what decides the address: the variable, or its absence.
func (e endpoint) baseSetting() string {
	if e.platform != nil {
		return e.platform.BaseVar
	}
	if e.baseURL == "" {
		return "the network (ANTHROPIC_BASE_URL is not set; HTTPS_PROXY applies)"
	}
	return "ANTHROPIC_BASE_URL"
}

func (e endpoint) credential() string {
	if e.platform != nil {
		return cmp.Or(e.platform.Credential, "the credentials")
	}
	switch e.auth {
	case "key":
		return "the API key (ANTHROPIC_API_KEY or apiKeyHelper)"
	case "token":
		return "the token (ANTHROPIC_AUTH_TOKEN)"
	case "helper":
		return "the key apiKeyHelper prints (it was run again after the first refusal)"
	}
	return "the credentials"
}

func (e endpoint) credentialHint() string {
	if e.platform != nil {
		if e.platform.Credential == "" {
			return "No credential was sent (authentication is skipped): check the gateway at " + e.base()
		}
		return "Check " + e.platform.Credential + ", and that " + e.baseSetting() + " is where it belongs"
	}
	if e.auth == "" {
		return "No credential was sent: set ANTHROPIC_API_KEY (or ANTHROPIC_AUTH_TOKEN, apiKeyHelper)"
	}
	return "Check " + e.credential() + ", and that " + e.baseSetting() + " is the server it belongs to"
}

// tlsDetail is the certificate problem without the request around it.
func tlsDetail(err error) string {
	var verr *tls.CertificateVerificationError
	if errors.As(err, &verr) {
		return verr.Err.Error()
	}
	return err.Error()
}

// proxyCause is what went wrong with the proxy, in words.
func proxyCause(err error) string {
	var dnsErr *net.DNSError
	switch {
	case errors.As(err, &dnsErr):
		return fmt.Sprintf("the proxy's host %q cannot be looked up", dnsErr.Name)
	case errors.Is(err, syscall.ECONNREFUSED):
		return "the proxy refused the connection"
	case errors.Is(err, syscall.ECONNRESET):
		return "the proxy reset the connection"
	}
	var op *net.OpError
	if errors.As(err, &op) && op.Op == "proxyconnect" {
		return "the proxy could not be reached: " + op.Err.Error()
	}
	// The proxy answered the tunnel request with an error status.
	return "the proxy refused the tunnel: " + err.Error()
}

func refusedHandshake(err error) string { return retry.RefusedHandshake(err) }

func untrustedCertificate(err error) bool { return retry.UntrustedCertificate(err) }

// oneLine keeps s on one line.
func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}
