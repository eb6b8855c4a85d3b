package oauth

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/auth/extauth"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
	"golang.org/x/oauth2"
)

// errStaleClient reports that the client tack registered belongs to another
// authorization server than the one the server now names.
var errStaleClient = errors.New("the registered client belongs to another authorization server")

// runFlow runs the authorization code flow for a challenge and stores the
// token. Called with flowMu held.
func (a *Authenticator) runFlow(ctx context.Context, status int, header http.Header) error {
	if a.server.ClientCredentials {
		return a.clientCredentials(ctx, status, header)
	}
	rec := a.current()
	var cached *record // a client tack registered before, reused
	if a.server.ClientID == "" && rec != nil && rec.Registered && rec.ClientID != "" {
		cached = rec
	}
	for {
		err := a.flowOnce(ctx, status, header, rec, cached)
		if errors.Is(err, errStaleClient) && cached != nil {
			cached = nil // register with the new authorization server
			continue
		}
		return err
	}
}

// flowOnce is one authorization: discovery, registration unless a client is
// known, PKCE authorization through the browser and the local callback,
// code exchange (all in the SDK's AuthorizationCodeHandler), then storing.
func (a *Authenticator) flowOnce(ctx context.Context, status int, header http.Header, rec, cached *record) error {
	port := a.server.CallbackPort
	if cached != nil {
		port = redirectPort(cached.RedirectURI)
	}
	ln, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
	if err != nil && cached != nil {
		// The port the client was registered with is taken: register
		// anew with another.
		cached = nil
		ln, err = net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(a.server.CallbackPort)))
	}
	if err != nil {
		return fmt.Errorf("listening for the OAuth callback: %w", err)
	}
	defer ln.Close()
	redirect := fmt.Sprintf("http://127.0.0.1:%d/callback", ln.Addr().(*net.TCPAddr).Port)

	var granted struct {
		cfg *oauth2.Config
		tok *oauth2.Token
	}
	cfg := &auth.AuthorizationCodeHandlerConfig{
		RedirectURL: redirect,
		AuthorizationCodeFetcher: func(ctx context.Context, args *auth.AuthorizationArgs) (*auth.AuthorizationResult, error) {
			if cached != nil && !sameEndpoint(args.URL, cached.AuthURL) {
				return nil, errStaleClient
			}
			return a.fetchCode(ctx, ln, args.URL)
		},
		// Step-up keeps what was granted before, across tack runs too (the
		// SDK's own union covers one handler's life only).
		ScopeFilter: func(discovered []string) []string {
			if rec == nil {
				return discovered
			}
			return union(rec.Scopes, discovered)
		},
		RequestRefreshToken:   true,
		AcceptUnadvertisedIss: true,
		Client:                a.opts.HTTPClient,
		NewTokenSource: func(_ context.Context, c *oauth2.Config, t *oauth2.Token) (oauth2.TokenSource, error) {
			granted.cfg, granted.tok = c, t
			return oauth2.StaticTokenSource(t), nil
		},
	}
	switch {
	case a.server.ClientID != "":
		cfg.PreregisteredClient = credentials(a.server.ClientID, a.server.ClientSecret)
	case cached != nil:
		cfg.PreregisteredClient = credentials(cached.ClientID, cached.ClientSecret)
	default:
		cfg.DynamicClientRegistrationConfig = &auth.DynamicClientRegistrationConfig{
			Metadata: &oauthex.ClientRegistrationMetadata{
				RedirectURIs:            []string{redirect},
				ClientName:              a.opts.ClientName,
				GrantTypes:              []string{"authorization_code", "refresh_token"},
				ResponseTypes:           []string{"code"},
				TokenEndpointAuthMethod: "none", // a native app keeps no secret
			},
		}
		if a.opts.ClientMetadataURL != "" {
			cfg.ClientIDMetadataDocumentConfig = &auth.ClientIDMetadataDocumentConfig{URL: a.opts.ClientMetadataURL}
		}
	}
	h, err := auth.NewAuthorizationCodeHandler(cfg)
	if err != nil {
		return fmt.Errorf("configuring OAuth: %w", err)
	}
	// The server URL, not the URL of the request that was refused, is the
	// resource: an SSE server posts messages to another path.
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, a.server.URL, nil)
	if err != nil {
		return fmt.Errorf("MCP server URL: %w", err)
	}
	resp := &http.Response{StatusCode: status, Header: header, Body: http.NoBody, Request: req}
	if err := h.Authorize(ctx, req, resp); err != nil {
		if cached != nil && invalidClient(err) {
			// The authorization server forgot tack's registration: the
			// next flow registers again.
			a.tokMu.Lock()
			a.commit(nil)
			a.tokMu.Unlock()
		}
		return err
	}
	if granted.tok == nil {
		return errors.New("the authorization server issued no token")
	}
	c := granted.cfg
	nr := &record{
		Server:    a.server.Name,
		URL:       a.server.URL,
		ClientID:  c.ClientID,
		AuthURL:   c.Endpoint.AuthURL,
		TokenURL:  c.Endpoint.TokenURL,
		AuthStyle: c.Endpoint.AuthStyle,
		Scopes:    scopeOf(granted.tok),
		Token:     fromOAuth2(granted.tok),
	}
	if nr.Scopes == nil {
		nr.Scopes = c.Scopes
	}
	if a.server.ClientID == "" {
		nr.Registered, nr.ClientSecret, nr.RedirectURI = true, c.ClientSecret, redirect
	}
	a.tokMu.Lock()
	defer a.tokMu.Unlock()
	return a.commit(nr)
}

func credentials(id, secret string) *oauthex.ClientCredentials {
	c := &oauthex.ClientCredentials{ClientID: id}
	if secret != "" {
		c.ClientSecretAuth = &oauthex.ClientSecretAuth{ClientSecret: secret}
	}
	return c
}

// callbackResult is what the browser brought back to the callback.
type callbackResult struct {
	res *auth.AuthorizationResult
	err error
}

// fetchCode serves the callback on ln, sends the user to authURL and waits
// for the authorization server to redirect back with a code. A callback whose
// state is not this request's fails the flow: it did not come from this
// authorization.
func (a *Authenticator) fetchCode(ctx context.Context, ln net.Listener, authURL string) (*auth.AuthorizationResult, error) {
	u, err := url.Parse(authURL)
	if err != nil {
		return nil, fmt.Errorf("authorization URL: %w", err)
	}
	state := u.Query().Get("state")
	results := make(chan callbackResult, 1)
	var once sync.Once
	deliver := func(r callbackResult) { once.Do(func() { results <- r }) }

	mux := http.NewServeMux()
	mux.HandleFunc("GET /callback", func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		switch {
		case state == "" || q.Get("state") != state:
			http.Error(w, "tack: this authorization response does not match the request tack made (state mismatch). Start again from tack.", http.StatusBadRequest)
			deliver(callbackResult{err: errors.New("state mismatch in the authorization response")})
		case q.Get("error") != "":
			msg := q.Get("error")
			if d := q.Get("error_description"); d != "" {
				msg += ": " + d
			}
			http.Error(w, "tack: authorization failed: "+msg, http.StatusBadRequest)
			deliver(callbackResult{err: fmt.Errorf("the authorization server answered %s", msg)})
		case q.Get("code") == "":
			http.Error(w, "tack: the authorization response has no code.", http.StatusBadRequest)
			deliver(callbackResult{err: errors.New("the authorization response has no code")})
		default:
			w.Header().Set("Content-Type", "text/plain; charset=utf-8")
			io.WriteString(w, "tack is authorized. You can close this window and return to tack.\n")
			deliver(callbackResult{res: &auth.AuthorizationResult{Code: q.Get("code"), State: q.Get("state"), Iss: q.Get("iss")}})
		}
	})
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go srv.Serve(ln)
	defer func() {
		// Let the page reach the browser before the server goes.
		sctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		srv.Shutdown(sctx)
	}()

	a.openBrowser(authURL)

	timer := time.NewTimer(a.opts.FlowTimeout)
	defer timer.Stop()
	select {
	case r := <-results:
		return r.res, r.err
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-timer.C:
		return nil, fmt.Errorf("the browser did not come back within %v", a.opts.FlowTimeout)
	}
}

// openBrowser sends the user to u: with $BROWSER, or xdg-open when there is
// a display, and always tells them the URL, since the browser may be on
// another machine or not start at all.
func (a *Authenticator) openBrowser(u string) {
	if a.launch(u) {
		a.opts.Notify(fmt.Sprintf("Opening the browser to authorize tack with MCP server %q. If it does not open, visit:\n%s", a.server.Name, u))
		return
	}
	a.opts.Notify(fmt.Sprintf("To authorize tack with MCP server %q, open this URL in a browser:\n%s", a.server.Name, u))
}

// launch starts a browser on u and reports whether one started. $BROWSER is
// a colon-separated list of commands, each given the URL as its last
// argument or in place of %s.
func (a *Authenticator) launch(u string) bool {
	if b := a.opts.Getenv("BROWSER"); b != "" {
		for entry := range strings.SplitSeq(b, ":") {
			args := strings.Fields(entry)
			if len(args) == 0 {
				continue
			}
			if i := slices.IndexFunc(args, func(s string) bool { return strings.Contains(s, "%s") }); i >= 0 {
				args[i] = strings.ReplaceAll(args[i], "%s", u)
			} else {
				args = append(args, u)
			}
			if start(exec.Command(args[0], args[1:]...)) {
				return true
			}
		}
		return false
	}
	if a.opts.Getenv("DISPLAY") == "" && a.opts.Getenv("WAYLAND_DISPLAY") == "" {
		return false
	}
	path, err := exec.LookPath("xdg-open")
	return err == nil && start(exec.Command(path, u))
}

// start starts a browser process and reaps it in the background. It is not
// tied to the flow's context: killing a browser when tack stops waiting
// would close the user's other tabs.
func start(cmd *exec.Cmd) bool {
	if err := cmd.Start(); err != nil {
		return false
	}
	go cmd.Wait()
	return true
}

// redirectPort returns the port of a redirect URI, 0 when it has none.
func redirectPort(uri string) int {
	u, err := url.Parse(uri)
	if err != nil {
		return 0
	}
	p, _ := strconv.Atoi(u.Port())
	return p
}

// sameEndpoint reports whether authURL is an authorization request to the
// endpoint endpoint.
func sameEndpoint(authURL, endpoint string) bool {
	a, err1 := url.Parse(authURL)
	b, err2 := url.Parse(endpoint)
	return err1 == nil && err2 == nil && a.Scheme == b.Scheme && a.Host == b.Host && a.Path == b.Path
}

// invalidClient reports a token endpoint error saying the client is unknown.
func invalidClient(err error) bool {
	var re *oauth2.RetrieveError
	return errors.As(err, &re) && (re.ErrorCode == "invalid_client" || re.ErrorCode == "unauthorized_client")
}

// union returns a's scopes then those of b not in a.
func union(a, b []string) []string {
	out := slices.Clone(a)
	for _, s := range b {
		if !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return out
}

// clientCredentials gets a token with the client credentials grant
// (discovery and the token request are the SDK's extauth handler) and
// stores it. Called with flowMu held.
func (a *Authenticator) clientCredentials(ctx context.Context, status int, header http.Header) error {
	h, err := extauth.NewClientCredentialsHandler(&extauth.ClientCredentialsHandlerConfig{
		Credentials: credentials(a.server.ClientID, a.server.ClientSecret),
		HTTPClient:  a.opts.HTTPClient,
	})
	if err != nil {
		return fmt.Errorf("configuring the client credentials grant: %w", err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, a.server.URL, nil)
	if err != nil {
		return fmt.Errorf("MCP server URL: %w", err)
	}
	resp := &http.Response{StatusCode: status, Header: header, Body: http.NoBody, Request: req}
	if err := h.Authorize(ctx, req, resp); err != nil {
		return err
	}
	ts, err := h.TokenSource(ctx)
	if err != nil || ts == nil {
		return fmt.Errorf("the authorization server issued no token: %v", err)
	}
	tok, err := ts.Token()
	if err != nil {
		return err
	}
	a.tokMu.Lock()
	defer a.tokMu.Unlock()
	return a.commit(&record{Server: a.server.Name, URL: a.server.URL, ClientID: a.server.ClientID,
		Scopes: scopeOf(tok), Token: fromOAuth2(tok)})
}
