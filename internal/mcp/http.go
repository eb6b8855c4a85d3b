package mcp

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tackcode/tack/internal/mcp/oauth"
)

// remoteTransport returns the SDK transport for a remote server, with a
// client whose every request carries the configured headers and goes
// through the injected round tripper (OAuth's seam).
func remoteTransport(cfg ServerConfig, next http.RoundTripper, watch *httpWatch) (mcp.Transport, error) {
	u, err := url.Parse(cfg.URL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("invalid URL %q: want http(s)://host/path", cfg.URL)
	}
	if next == nil {
		next = http.DefaultTransport
	}
	// No client timeout: streams stay open for the whole session. Calls
	// are bounded by their contexts.
	client := &http.Client{Transport: &headerTransport{headers: cfg.Headers, next: next, watch: watch}}
	switch cfg.transport() {
	case TypeHTTP:
		return &mcp.StreamableClientTransport{Endpoint: cfg.URL, HTTPClient: client}, nil
	case TypeSSE:
		return &mcp.SSEClientTransport{Endpoint: cfg.URL, HTTPClient: client}, nil
	}
	return nil, fmt.Errorf("unknown transport type %q", cfg.Type)
}

// headerTransport sets the server's headers on every request and notes
// authentication challenges in the responses.
type headerTransport struct {
	headers map[string]string
	next    http.RoundTripper
	watch   *httpWatch
}

func (t *headerTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if len(t.headers) > 0 {
		req = req.Clone(req.Context())
		for k, v := range t.headers {
			req.Header.Set(k, v)
		}
	}
	resp, err := t.next.RoundTrip(req)
	if err != nil {
		// OAuth's round tripper, when it may not open a browser now,
		// fails the request instead of returning the 401.
		if errors.Is(err, oauth.ErrAuthRequired) {
			t.watch.setAuthRequired(err)
		}
		return resp, err
	}
	switch resp.StatusCode {
	case http.StatusUnauthorized:
		if ch := resp.Header.Get("WWW-Authenticate"); ch != "" {
			t.watch.setChallenge(ch)
		}
	case http.StatusNotFound, http.StatusBadRequest:
		// The specification answers an unknown session with 404; servers
		// built on the TypeScript SDK's example answer 400.
		if req.Header.Get("Mcp-Session-Id") != "" {
			t.watch.setSessionGone()
		}
	}
	return resp, err
}

// httpWatch remembers what the SDK does not tell in its errors: the last
// authentication challenge of a server (a 401 is reported only as
// "Unauthorized", without the header that tells an OAuth flow where to
// start), the sign-in the round tripper said the server needs (the SDK
// does not keep that error in its chain), and whether the server said it
// does not know the session.
type httpWatch struct {
	mu           sync.Mutex
	challenge    string
	authRequired error
	sessionGone  bool
}

func (w *httpWatch) setAuthRequired(err error) {
	w.mu.Lock()
	w.authRequired = err
	w.mu.Unlock()
}

// takeAuthRequired returns the sign-in asked for since the last take, and
// forgets it.
func (w *httpWatch) takeAuthRequired() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	err := w.authRequired
	w.authRequired = nil
	return err
}

func (w *httpWatch) setChallenge(ch string) {
	w.mu.Lock()
	w.challenge = ch
	w.mu.Unlock()
}

func (w *httpWatch) setSessionGone() {
	w.mu.Lock()
	w.sessionGone = true
	w.mu.Unlock()
}

// takeChallenge returns the challenge seen since the last take, and
// forgets it.
func (w *httpWatch) takeChallenge() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	ch := w.challenge
	w.challenge = ""
	return ch
}

// takeSessionGone reports whether a request was refused for its session
// since the last take, and forgets it.
func (w *httpWatch) takeSessionGone() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	gone := w.sessionGone
	w.sessionGone = false
	return gone
}
