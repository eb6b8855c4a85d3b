// Package retry is the retry policy every model provider shares: which
// failures are worth another attempt, how long to wait before it (the
// server's retry-after advice, else exponential backoff with jitter), and
// how many attempts a request gets.
package retry

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"math/rand/v2"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/tackcode/tack/internal/llm/transport"
)

// DefaultMaxRetries is how often a failing request is retried by default.
const DefaultMaxRetries = 10

const (
	// BaseDelay is the first backoff; each further retry doubles it.
	BaseDelay = 500 * time.Millisecond
	// MaxDelay caps the backoff.
	MaxDelay = 32 * time.Second
	// MaxRetryAfter caps the wait a server may ask for.
	MaxRetryAfter = 5 * time.Minute
)

// Retries turns a configured retry count into the number of retries: zero
// means DefaultMaxRetries, negative means none.
func Retries(configured int) int {
	switch {
	case configured == 0:
		return DefaultMaxRetries
	case configured < 0:
		return 0
	}
	return configured
}

// Status reports whether an HTTP error status is worth another attempt:
// request timeout, conflict, rate limit and server errors.
func Status(status int) bool {
	return status == http.StatusRequestTimeout || status == http.StatusConflict ||
		status == http.StatusTooManyRequests || status >= 500
}

// After reads retry-after-ms or retry-after (seconds or an HTTP date); it
// is negative when neither is given.
func After(h http.Header) time.Duration {
	if v := h.Get("retry-after-ms"); v != "" {
		if ms, err := strconv.ParseFloat(v, 64); err == nil && ms >= 0 {
			return time.Duration(ms * float64(time.Millisecond))
		}
	}
	if v := h.Get("retry-after"); v != "" {
		if s, err := strconv.ParseFloat(v, 64); err == nil && s >= 0 {
			return time.Duration(s * float64(time.Second))
		}
		if t, err := http.ParseTime(v); err == nil {
			return max(0, time.Until(t))
		}
	}
	return -1
}

// Backoff is the wait before retry number attempt+1: the server's advice
// when it gave one (after ≥ 0), else exponential with jitter.
func Backoff(attempt int, after time.Duration) time.Duration {
	if after >= 0 {
		return min(after, MaxRetryAfter)
	}
	d := min(BaseDelay<<min(attempt, 10), MaxDelay)
	return d - time.Duration(rand.Int64N(int64(d/4)+1))
}

// Sleep waits d or until ctx ends.
func Sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// Permanent reports whether err is a connection failure that another
// attempt will not mend: a host name that does not exist, a certificate
// that is not trusted, a server that does not speak TLS or refuses the
// handshake, a certificate file of the setup that cannot be read, a
// platform's credential that cannot be had (an error with NotRetryable).
// A proxy that failed may come back.
func Permanent(err error) bool {
	var dnsErr *net.DNSError
	var record tls.RecordHeaderError
	var proxyErr *transport.ProxyError
	var setupErr *transport.SetupError
	var nr interface{ NotRetryable() bool }
	switch {
	case errors.As(err, &setupErr):
		return true
	case errors.As(err, &proxyErr):
		return false
	}
	return errors.As(err, &dnsErr) && dnsErr.IsNotFound || UntrustedCertificate(err) || errors.As(err, &record) ||
		RefusedHandshake(err) != "" || errors.As(err, &nr) && nr.NotRetryable()
}

// RefusedHandshake is the TLS alert the server ended the handshake with
// ("tls: certificate required"), or "".
func RefusedHandshake(err error) string {
	var op *net.OpError
	if errors.As(err, &op) && op.Op == "remote error" && strings.HasPrefix(op.Err.Error(), "tls: ") {
		return op.Err.Error()
	}
	return ""
}

// UntrustedCertificate reports whether err is a server certificate that
// did not verify: an unknown authority, another host's, an invalid one.
func UntrustedCertificate(err error) bool {
	var unknownCA x509.UnknownAuthorityError
	var hostErr x509.HostnameError
	var invalid x509.CertificateInvalidError
	return errors.As(err, &unknownCA) || errors.As(err, &hostErr) || errors.As(err, &invalid)
}
