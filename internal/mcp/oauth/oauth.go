// Package oauth authorizes tack with remote MCP servers that require OAuth 2.0,
// as the MCP authorization specification describes.
//
// When a server answers 401 with a WWW-Authenticate challenge, tack discovers
// the server's protected-resource metadata (RFC 9728) and its authorization
// server's metadata (RFC 8414 / OpenID discovery), registers itself as a
// client (RFC 7591) unless a client id is configured for the server, and runs
// the authorization code flow with PKCE (S256) through a callback on
// 127.0.0.1: the browser is opened with $BROWSER (or xdg-open on a desktop)
// and the URL is always shown to the user. Tokens are stored per server (name
// and URL) in one file each, mode 0600, written atomically; they are
// refreshed when they expire or the server rejects them, and re-authorized
// with the union of scopes when the server answers 403 insufficient_scope
// (step-up).
//
// Discovery, registration, PKCE, the state check and the step-up union are
// the MCP SDK's (auth.AuthorizationCodeHandler, oauthex) and x/oauth2's; this
// package adds the local callback, the browser, the token store, refresh and
// the HTTP round tripper.
package oauth

import (
	"context"
	"errors"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"time"
)

// Server identifies a remote MCP server and how tack registers with its
// authorization server.
type Server struct {
	// Name is the server's name in the MCP configuration.
	Name string
	// URL is the server's MCP endpoint.
	URL string
	// ClientID and ClientSecret are a client registered in advance with the
	// server's authorization server. Without a ClientID tack registers
	// itself dynamically (RFC 7591) and remembers the registration.
	ClientID     string
	ClientSecret string
	// CallbackPort fixes the port of the redirect URI
	// http://127.0.0.1:PORT/callback, for a pre-registered client whose
	// redirect URI names one. Zero picks a free port.
	CallbackPort int
	// ClientCredentials makes tack authorize as the client itself, with
	// the OAuth client credentials grant (SEP-1046) and ClientID and
	// ClientSecret, instead of asking a user through the browser: for
	// machine-to-machine servers. It needs no user, so it runs in Passive
	// mode too.
	ClientCredentials bool
}

// Options configure a Flow.
type Options struct {
	// Dir is the directory tokens are stored in, one file per server,
	// usually DefaultDir(configDir). Required.
	Dir string
	// HTTPClient makes the requests to authorization servers (metadata,
	// registration, token) and the probe of Login. Nil: http.DefaultClient.
	HTTPClient *http.Client
	// Notify shows the user a message: the URL to open to authorize. It
	// must not block. Nil writes to standard error.
	Notify func(msg string)
	// Getenv looks up BROWSER, DISPLAY and WAYLAND_DISPLAY. Nil: os.Getenv.
	Getenv func(key string) string
	// Passive stops round trippers and Authorize from starting a browser
	// flow: a server that asks for authorization the stored tokens cannot
	// give (even after a refresh) fails the request with ErrAuthRequired,
	// and Status reports NeedsAuth until Login succeeds. For connections
	// made in the background, where the user did not ask to log in.
	Passive bool
	// FlowTimeout bounds the wait for the browser to come back to the
	// callback. Zero: 10 minutes.
	FlowTimeout time.Duration
	// ClientName is the client name sent when registering. Empty: "tack".
	ClientName string
	// ClientMetadataURL is the HTTPS URL of tack's client ID metadata
	// document (SEP-991). An authorization server that advertises
	// client_id_metadata_document_supported gets it as the client id;
	// others get dynamic registration. Empty: always register.
	ClientMetadataURL string
}

// DefaultDir is where tack keeps MCP OAuth tokens under its configuration
// directory.
func DefaultDir(configDir string) string { return filepath.Join(configDir, "mcp-oauth") }

// ErrAuthRequired is returned (wrapped) when a server asks for authorization
// that only the user can give: in Passive mode, or when the flow failed.
var ErrAuthRequired = errors.New("authorization required")

// Status is what tack knows of its authorization with a server.
type Status struct {
	// Authorized reports that a token is stored that is valid or can be
	// refreshed.
	Authorized bool
	// NeedsAuth reports that the server asked for authorization tack could
	// not give without the user: Login is needed. A server never contacted
	// does not need it as far as tack knows.
	NeedsAuth bool
	// Expiry is when the access token expires (zero: unknown).
	Expiry time.Time
	// Scopes are the scopes granted.
	Scopes []string
}

// Flow authorizes tack with remote MCP servers. It hands out one
// Authenticator per server, so that a live connection and a Login share
// tokens. It is safe for concurrent use.
type Flow struct {
	opts  Options
	store *store

	mu    sync.Mutex
	auths map[string]*Authenticator // by token file
}

// New returns a Flow storing tokens in opts.Dir.
func New(opts Options) (*Flow, error) {
	if opts.Dir == "" {
		return nil, errors.New("oauth: Options.Dir is required")
	}
	if opts.HTTPClient == nil {
		opts.HTTPClient = http.DefaultClient
	}
	if opts.Notify == nil {
		opts.Notify = func(msg string) { io.WriteString(os.Stderr, msg+"\n") }
	}
	if opts.Getenv == nil {
		opts.Getenv = os.Getenv
	}
	if opts.FlowTimeout <= 0 {
		opts.FlowTimeout = 10 * time.Minute
	}
	if opts.ClientName == "" {
		opts.ClientName = "tack"
	}
	return &Flow{opts: opts, store: &store{dir: opts.Dir}, auths: map[string]*Authenticator{}}, nil
}

// Authenticator returns the authenticator of a server: the same one for the
// same server, a new one when its configuration changed.
func (f *Flow) Authenticator(s Server) *Authenticator {
	key := f.store.path(s)
	f.mu.Lock()
	defer f.mu.Unlock()
	if a, ok := f.auths[key]; ok && a.server == s {
		return a
	}
	a := &Authenticator{opts: &f.opts, store: f.store, server: s}
	f.auths[key] = a
	return a
}

// RoundTripper returns an http.RoundTripper for requests to the server s
// that sends them through base (nil: http.DefaultTransport) with its token.
func (f *Flow) RoundTripper(s Server, base http.RoundTripper) http.RoundTripper {
	return f.Authenticator(s).RoundTripper(base)
}

// Login runs the authorization flow with s now, whether or not a token is
// stored (for /mcp and tack mcp login), even in Passive mode.
func (f *Flow) Login(ctx context.Context, s Server) error {
	return f.Authenticator(s).Login(ctx)
}

// Status reports tack's authorization with s.
func (f *Flow) Status(s Server) Status { return f.Authenticator(s).Status() }

// Logout forgets the tokens of s.
func (f *Flow) Logout(s Server) error { return f.Authenticator(s).Logout() }
