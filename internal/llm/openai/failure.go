package openai

import (
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"syscall"

	"github.com/tackcode/tack/internal/llm"
	"github.com/tackcode/tack/internal/llm/retry"
)

// A request that failed for good is reported in one line naming the
// provider, the cause in the user's terms and the setting to check, as the
// Anthropic provider does. The error underneath stays reachable with
// errors.As.

type failure struct {
	msg string
	err error
}

func (f *failure) Error() string { return f.msg }
func (f *failure) Unwrap() error { return f.err }

// explain turns err, which ended a request to model after attempts
// requests, into a failure.
func (p *Provider) explain(err error, model string, attempts int) error {
	var capErr *CapabilityError
	if errors.As(err, &capErr) {
		return err
	}
	cause, hint := p.describeErr(err, model)
	tries := ""
	if attempts > 1 {
		tries = fmt.Sprintf(" (%d attempts)", attempts)
	}
	if hint == "" {
		return &failure{msg: cause + tries, err: err}
	}
	return &failure{msg: cause + tries + ". " + hint + ".", err: err}
}

// cause is what a retry notice says failed.
func (p *Provider) cause(err error) string {
	cause, _ := p.describeErr(err, "")
	return cause
}

func (p *Provider) describeErr(err error, model string) (cause, hint string) {
	name := fmt.Sprintf("provider %q", p.cfg.Name)
	base := strings.TrimRight(p.cfg.BaseURL, "/")
	at := fmt.Sprintf("%s unreachable at %s", name, base)
	check := "Check baseURL in " + p.settingsKey()
	var dnsErr *net.DNSError
	var record tls.RecordHeaderError
	var netErr net.Error
	var apiErr *llm.APIError
	switch {
	case errors.As(err, &dnsErr):
		return fmt.Sprintf("%s: host %q not found", at, dnsErr.Name), check
	case retry.UntrustedCertificate(err):
		return at + ": its TLS certificate is not trusted", check + "; for a private certificate authority, point SSL_CERT_FILE at its certificate"
	case errors.As(err, &record):
		return at + ": the server does not speak TLS", check + " (http:// rather than https://?)"
	case errors.Is(err, syscall.ECONNREFUSED):
		return at + ": connection refused", check + " and that the server is running"
	case errors.Is(err, syscall.ECONNRESET):
		return at + ": the connection was reset", check
	case errors.As(err, &netErr) && netErr.Timeout():
		return at + ": no answer in time", check
	case errors.As(err, &apiErr):
		what := oneLine(fmt.Sprintf("%s: %s", name, apiErr.Error()))
		switch apiErr.Status {
		case http.StatusUnauthorized, http.StatusForbidden:
			return what, fmt.Sprintf("Check the key (%s) in %s", p.keySource(), p.settingsKey())
		case http.StatusNotFound:
			return what, fmt.Sprintf("Check the model id %q and baseURL in %s (requests go to %s)", strings.TrimPrefix(model, p.Prefix()), p.settingsKey(), p.url())
		}
		return what, ""
	}
	return oneLine(name + ": " + err.Error()), ""
}

func (p *Provider) keySource() string {
	if p.cfg.KeySource == "" {
		return "none is configured: apiKey, apiKeyEnv or apiKeyHelper"
	}
	return p.cfg.KeySource
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }
