// Package oauthtest is what tests of MCP OAuth share: an OAuth 2.1
// authorization server, a real MCP server behind a bearer check, and a
// browser (the test binary run again as $BROWSER) that approves as a user
// would. Only tests import it; the tack binary does not link it.
//
// A test package that uses Browser calls HelperMain first in its TestMain:
//
//	func TestMain(m *testing.M) { oauthtest.HelperMain(); os.Exit(m.Run()) }
//
// and then:
//
//	as := oauthtest.NewAuthServer(t)
//	res := oauthtest.NewResource(t, as)
//	browser, status := oauthtest.Browser(t, oauthtest.Follow)
//	// … set BROWSER=browser, sign in to res.URL …
package oauthtest

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// AuthServer is an OAuth 2.1 authorization server as MCP servers use them:
// metadata, dynamic registration, authorization (auto-approved, redirecting
// to the client with code and state), token with PKCE S256 verification,
// and rotating refresh tokens.
type AuthServer struct {
	srv      *httptest.Server
	url      string
	resource string // the resource the tokens are for

	mu      sync.Mutex
	clients map[string]*client
	codes   map[string]*code
	access  map[string]*grant
	refresh map[string]*grant
	ttl     time.Duration
	counts  Counts
	scopes  []string // requested in the last authorization
}

// Counts are what the server has done so far.
type Counts struct {
	Registrations, Authorizations, CodeGrants, Refreshes int
}

type client struct {
	secret    string
	redirects []string
}

type code struct {
	client, redirect, challenge, resource string
	scopes                                []string
}

type grant struct {
	client string
	scopes []string
	expiry time.Time
}

// NewAuthServer starts an authorization server on 127.0.0.1, closed when
// the test ends.
func NewAuthServer(t testing.TB) *AuthServer {
	as := &AuthServer{clients: map[string]*client{}, codes: map[string]*code{}, access: map[string]*grant{}, refresh: map[string]*grant{}, ttl: time.Hour}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /.well-known/oauth-authorization-server", as.metadata)
	mux.HandleFunc("POST /register", as.register)
	mux.HandleFunc("GET /authorize", as.authorize)
	mux.HandleFunc("POST /token", as.token)
	// Unstarted, so that the fields are set before any handler runs.
	as.srv = httptest.NewUnstartedServer(mux)
	as.url = "http://" + as.srv.Listener.Addr().String()
	as.srv.Start()
	t.Cleanup(as.srv.Close)
	return as
}

// URL is the server's issuer address.
func (as *AuthServer) URL() string { return as.url }

// Resource is the resource the server issues tokens for ("" until a
// Resource is started on it).
func (as *AuthServer) Resource() string {
	as.mu.Lock()
	defer as.mu.Unlock()
	return as.resource
}

// Counts returns what the server has done so far.
func (as *AuthServer) Counts() Counts {
	as.mu.Lock()
	defer as.mu.Unlock()
	return as.counts
}

// LastScopes are the scopes the last authorization asked for.
func (as *AuthServer) LastScopes() []string {
	as.mu.Lock()
	defer as.mu.Unlock()
	return as.scopes
}

// Preregister adds a client registered out of band.
func (as *AuthServer) Preregister(id, secret string, redirects ...string) {
	as.mu.Lock()
	defer as.mu.Unlock()
	as.clients[id] = &client{secret: secret, redirects: redirects}
}

// ExpireAll makes every access token issued so far expired.
func (as *AuthServer) ExpireAll() {
	as.mu.Lock()
	defer as.mu.Unlock()
	for _, g := range as.access {
		g.expiry = time.Now().Add(-time.Minute)
	}
}

// RevokeRefreshTokens forgets every refresh token issued so far.
func (as *AuthServer) RevokeRefreshTokens() {
	as.mu.Lock()
	defer as.mu.Unlock()
	clear(as.refresh)
}

// live returns the live grant of an access token, nil if none.
func (as *AuthServer) live(token string) *grant {
	as.mu.Lock()
	defer as.mu.Unlock()
	g := as.access[token]
	if g == nil || time.Now().After(g.expiry) {
		return nil
	}
	return g
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}

func oauthError(w http.ResponseWriter, status int, code, desc string) {
	writeJSON(w, status, map[string]string{"error": code, "error_description": desc})
}

func (as *AuthServer) metadata(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, 200, map[string]any{
		"issuer":                                as.URL(),
		"authorization_endpoint":                as.URL() + "/authorize",
		"token_endpoint":                        as.URL() + "/token",
		"registration_endpoint":                 as.URL() + "/register",
		"scopes_supported":                      []string{"read", "admin", "offline_access"},
		"response_types_supported":              []string{"code"},
		"grant_types_supported":                 []string{"authorization_code", "refresh_token"},
		"code_challenge_methods_supported":      []string{"S256"},
		"token_endpoint_auth_methods_supported": []string{"client_secret_post", "client_secret_basic", "none"},
	})
}

func (as *AuthServer) register(w http.ResponseWriter, r *http.Request) {
	var meta struct {
		RedirectURIs            []string `json:"redirect_uris"`
		ClientName              string   `json:"client_name"`
		GrantTypes              []string `json:"grant_types"`
		TokenEndpointAuthMethod string   `json:"token_endpoint_auth_method"`
	}
	if err := json.NewDecoder(r.Body).Decode(&meta); err != nil || len(meta.RedirectURIs) == 0 {
		oauthError(w, 400, "invalid_client_metadata", "redirect_uris required")
		return
	}
	for _, u := range meta.RedirectURIs {
		if !strings.HasPrefix(u, "http://127.0.0.1:") || !strings.HasSuffix(u, "/callback") {
			oauthError(w, 400, "invalid_redirect_uri", u)
			return
		}
	}
	id := "dyn-" + rand.Text()
	as.mu.Lock()
	as.clients[id] = &client{redirects: meta.RedirectURIs}
	as.counts.Registrations++
	as.mu.Unlock()
	writeJSON(w, 201, map[string]any{
		"client_id":                  id,
		"redirect_uris":              meta.RedirectURIs,
		"client_name":                meta.ClientName,
		"grant_types":                meta.GrantTypes,
		"token_endpoint_auth_method": "none",
	})
}

func (as *AuthServer) authorize(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	as.mu.Lock()
	defer as.mu.Unlock()
	c := as.clients[q.Get("client_id")]
	switch {
	case c == nil:
		http.Error(w, "unknown client", 400)
		return
	case !slices.Contains(c.redirects, q.Get("redirect_uri")):
		// Exact match: a client that moved its callback must register again.
		http.Error(w, "redirect_uri not registered: "+q.Get("redirect_uri"), 400)
		return
	case q.Get("response_type") != "code", q.Get("code_challenge_method") != "S256", q.Get("code_challenge") == "", q.Get("state") == "":
		http.Error(w, "bad authorization request: "+r.URL.RawQuery, 400)
		return
	case q.Get("resource") != as.resource:
		http.Error(w, "wrong resource "+q.Get("resource"), 400)
		return
	}
	issued := "code-" + rand.Text()
	scopes := strings.Fields(q.Get("scope"))
	as.codes[issued] = &code{client: q.Get("client_id"), redirect: q.Get("redirect_uri"), challenge: q.Get("code_challenge"), resource: q.Get("resource"), scopes: scopes}
	as.counts.Authorizations++
	as.scopes = scopes
	back, _ := url.Parse(q.Get("redirect_uri"))
	bq := back.Query()
	bq.Set("code", issued)
	bq.Set("state", q.Get("state"))
	back.RawQuery = bq.Encode()
	http.Redirect(w, r, back.String(), http.StatusFound)
}

func (as *AuthServer) token(w http.ResponseWriter, r *http.Request) {
	if err := r.ParseForm(); err != nil {
		oauthError(w, 400, "invalid_request", err.Error())
		return
	}
	id, secret, basic := r.BasicAuth()
	if !basic {
		id, secret = r.PostForm.Get("client_id"), r.PostForm.Get("client_secret")
	}
	as.mu.Lock()
	defer as.mu.Unlock()
	if c := as.clients[id]; c == nil || c.secret != secret {
		oauthError(w, 401, "invalid_client", "unknown client or wrong secret")
		return
	}
	var g *grant
	switch r.PostForm.Get("grant_type") {
	case "authorization_code":
		g = as.codeGrant(w, r.PostForm, id)
	case "refresh_token":
		g = as.refreshGrant(w, r.PostForm, id)
	default:
		oauthError(w, 400, "unsupported_grant_type", r.PostForm.Get("grant_type"))
	}
	if g == nil {
		return
	}
	at, rt := "at-"+rand.Text(), "rt-"+rand.Text()
	g.expiry = time.Now().Add(as.ttl)
	as.access[at] = g
	as.refresh[rt] = &grant{client: g.client, scopes: g.scopes}
	writeJSON(w, 200, map[string]any{
		"access_token":  at,
		"token_type":    "Bearer",
		"expires_in":    int(as.ttl.Seconds()),
		"refresh_token": rt,
		"scope":         strings.Join(g.scopes, " "),
	})
}

// codeGrant exchanges an authorization code (single use, PKCE checked)
// for a grant, or answers the error and returns nil. as.mu is held.
func (as *AuthServer) codeGrant(w http.ResponseWriter, form url.Values, id string) *grant {
	c := as.codes[form.Get("code")]
	delete(as.codes, form.Get("code")) // single use
	sum := sha256.Sum256([]byte(form.Get("code_verifier")))
	switch {
	case c == nil || c.client != id:
		oauthError(w, 400, "invalid_grant", "unknown code")
		return nil
	case c.redirect != form.Get("redirect_uri"):
		oauthError(w, 400, "invalid_grant", "redirect_uri differs")
		return nil
	case base64.RawURLEncoding.EncodeToString(sum[:]) != c.challenge:
		oauthError(w, 400, "invalid_grant", "PKCE verification failed")
		return nil
	}
	as.counts.CodeGrants++
	return &grant{client: id, scopes: c.scopes}
}

// refreshGrant exchanges a refresh token (rotated: it is used up) for a
// grant, or answers the error and returns nil. as.mu is held.
func (as *AuthServer) refreshGrant(w http.ResponseWriter, form url.Values, id string) *grant {
	old := as.refresh[form.Get("refresh_token")]
	if old == nil || old.client != id {
		oauthError(w, 400, "invalid_grant", "unknown refresh token")
		return nil
	}
	delete(as.refresh, form.Get("refresh_token")) // rotation
	as.counts.Refreshes++
	return &grant{client: id, scopes: old.scopes}
}
