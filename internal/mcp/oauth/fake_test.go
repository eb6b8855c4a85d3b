package oauth

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tackcode/tack/internal/atomicfile"
)

// fakeAS is an OAuth 2.1 authorization server as MCP servers use them:
// metadata, dynamic registration, authorization (auto-approved, redirecting
// to the client with code and state), token with PKCE S256 verification,
// and rotating refresh tokens.
type fakeAS struct {
	t        *testing.T
	srv      *httptest.Server
	url      string
	resource string // the resource the tokens are for

	mu       sync.Mutex
	clients  map[string]*fakeClient
	codes    map[string]*fakeCode
	access   map[string]*fakeGrant
	refresh  map[string]*fakeGrant
	ttl      time.Duration
	counts   fakeCounts
	scopes   []string // requested in the last authorization
	verifier string   // the last code verifier accepted
}

type fakeCounts struct {
	registrations, authorizations, codeGrants, refreshes int
}

type fakeClient struct {
	secret    string
	redirects []string
}

type fakeCode struct {
	client, redirect, challenge, resource string
	scopes                                []string
}

type fakeGrant struct {
	client string
	scopes []string
	expiry time.Time
}

func newFakeAS(t *testing.T) *fakeAS {
	as := &fakeAS{t: t, clients: map[string]*fakeClient{}, codes: map[string]*fakeCode{}, access: map[string]*fakeGrant{}, refresh: map[string]*fakeGrant{}, ttl: time.Hour}
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

func (as *fakeAS) URL() string { return as.url }

func (as *fakeAS) count() fakeCounts {
	as.mu.Lock()
	defer as.mu.Unlock()
	return as.counts
}

func (as *fakeAS) lastScopes() []string {
	as.mu.Lock()
	defer as.mu.Unlock()
	return as.scopes
}

// preregister adds a client registered out of band.
func (as *fakeAS) preregister(id, secret string, redirects ...string) {
	as.mu.Lock()
	defer as.mu.Unlock()
	as.clients[id] = &fakeClient{secret: secret, redirects: redirects}
}

// expireAll makes every access token issued so far expired.
func (as *fakeAS) expireAll() {
	as.mu.Lock()
	defer as.mu.Unlock()
	for _, g := range as.access {
		g.expiry = time.Now().Add(-time.Minute)
	}
}

// revokeRefreshTokens forgets every refresh token issued so far.
func (as *fakeAS) revokeRefreshTokens() {
	as.mu.Lock()
	defer as.mu.Unlock()
	clear(as.refresh)
}

// grant returns the live grant of an access token, nil if none.
func (as *fakeAS) grant(token string) *fakeGrant {
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

func (as *fakeAS) metadata(w http.ResponseWriter, r *http.Request) {
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

func (as *fakeAS) register(w http.ResponseWriter, r *http.Request) {
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
	as.clients[id] = &fakeClient{redirects: meta.RedirectURIs}
	as.counts.registrations++
	as.mu.Unlock()
	writeJSON(w, 201, map[string]any{
		"client_id":                  id,
		"redirect_uris":              meta.RedirectURIs,
		"client_name":                meta.ClientName,
		"grant_types":                meta.GrantTypes,
		"token_endpoint_auth_method": "none",
	})
}

func (as *fakeAS) authorize(w http.ResponseWriter, r *http.Request) {
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
	code := "code-" + rand.Text()
	scopes := strings.Fields(q.Get("scope"))
	as.codes[code] = &fakeCode{client: q.Get("client_id"), redirect: q.Get("redirect_uri"), challenge: q.Get("code_challenge"), resource: q.Get("resource"), scopes: scopes}
	as.counts.authorizations++
	as.scopes = scopes
	back, _ := url.Parse(q.Get("redirect_uri"))
	bq := back.Query()
	bq.Set("code", code)
	bq.Set("state", q.Get("state"))
	back.RawQuery = bq.Encode()
	http.Redirect(w, r, back.String(), http.StatusFound)
}

func (as *fakeAS) token(w http.ResponseWriter, r *http.Request) {
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
	c := as.clients[id]
	if c == nil || c.secret != secret {
		oauthError(w, 401, "invalid_client", "unknown client or wrong secret")
		return
	}
	var g *fakeGrant
	switch r.PostForm.Get("grant_type") {
	case "authorization_code":
		code := as.codes[r.PostForm.Get("code")]
		delete(as.codes, r.PostForm.Get("code")) // single use
		sum := sha256.Sum256([]byte(r.PostForm.Get("code_verifier")))
		switch {
		case code == nil || code.client != id:
			oauthError(w, 400, "invalid_grant", "unknown code")
			return
		case code.redirect != r.PostForm.Get("redirect_uri"):
			oauthError(w, 400, "invalid_grant", "redirect_uri differs")
			return
		case base64.RawURLEncoding.EncodeToString(sum[:]) != code.challenge:
			oauthError(w, 400, "invalid_grant", "PKCE verification failed")
			return
		}
		as.verifier = r.PostForm.Get("code_verifier")
		as.counts.codeGrants++
		g = &fakeGrant{client: id, scopes: code.scopes}
	case "refresh_token":
		old := as.refresh[r.PostForm.Get("refresh_token")]
		if old == nil || old.client != id {
			oauthError(w, 400, "invalid_grant", "unknown refresh token")
			return
		}
		delete(as.refresh, r.PostForm.Get("refresh_token")) // rotation
		as.counts.refreshes++
		g = &fakeGrant{client: id, scopes: old.scopes}
	default:
		oauthError(w, 400, "unsupported_grant_type", r.PostForm.Get("grant_type"))
		return
	}
	at, rt := "at-"+rand.Text(), "rt-"+rand.Text()
	g.expiry = time.Now().Add(as.ttl)
	as.access[at] = g
	as.refresh[rt] = &fakeGrant{client: g.client, scopes: g.scopes}
	writeJSON(w, 200, map[string]any{
		"access_token":  at,
		"token_type":    "Bearer",
		"expires_in":    int(as.ttl.Seconds()),
		"refresh_token": rt,
		"scope":         strings.Join(g.scopes, " "),
	})
}

// fakeResource is a protected MCP server: without a live token it answers
// 401 with a resource_metadata challenge; the tool "admin" needs the scope
// "admin" and answers 403 insufficient_scope without it, naming only that
// scope (the client keeps what it had: the step-up union).
type fakeResource struct {
	srv  *httptest.Server
	as   *fakeAS
	base string
	url  string // the MCP endpoint
}

func newFakeResource(t *testing.T, as *fakeAS) *fakeResource {
	res := &fakeResource{as: as}
	server := mcp.NewServer(&mcp.Implementation{Name: "protected", Version: "1"}, nil)
	server.AddTool(&mcp.Tool{Name: "whoami", InputSchema: json.RawMessage(`{"type":"object"}`)}, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "hello"}}}, nil
	})
	server.AddTool(&mcp.Tool{Name: "admin", InputSchema: json.RawMessage(`{"type":"object"}`)}, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "admin ok"}}}, nil
	})
	mcpHandler := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return server }, nil)

	mux := http.NewServeMux()
	mux.HandleFunc("GET /.well-known/oauth-protected-resource/mcp", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, 200, map[string]any{
			"resource":              res.url,
			"authorization_servers": []string{as.URL()},
			"scopes_supported":      []string{"read", "admin"},
		})
	})
	mux.HandleFunc("/mcp", func(w http.ResponseWriter, r *http.Request) {
		prm := res.base + "/.well-known/oauth-protected-resource/mcp"
		g := as.grant(bearer(r.Header))
		if g == nil {
			w.Header().Set("WWW-Authenticate", fmt.Sprintf(`Bearer resource_metadata="%s", scope="read"`, prm))
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		if r.Method == http.MethodPost {
			body, _ := io.ReadAll(r.Body)
			r.Body = io.NopCloser(bytes.NewReader(body))
			var msg struct {
				Method string `json:"method"`
				Params struct {
					Name string `json:"name"`
				} `json:"params"`
			}
			json.Unmarshal(body, &msg)
			if msg.Method == "tools/call" && msg.Params.Name == "admin" && !slices.Contains(g.scopes, "admin") {
				w.Header().Set("WWW-Authenticate", fmt.Sprintf(`Bearer error="insufficient_scope", scope="admin", resource_metadata="%s"`, prm))
				http.Error(w, "insufficient scope", http.StatusForbidden)
				return
			}
		}
		mcpHandler.ServeHTTP(w, r)
	})
	res.srv = httptest.NewUnstartedServer(mux)
	res.base = "http://" + res.srv.Listener.Addr().String()
	res.url = res.base + "/mcp"
	as.mu.Lock()
	as.resource = res.url
	as.mu.Unlock()
	res.srv.Start()
	t.Cleanup(res.srv.Close)
	return res
}

// browserHelper is the test binary run as $BROWSER: it follows the
// authorization server's redirects to tack's callback like a browser whose
// user approves, and writes the callback's status and body to a file.
// Mode "forge-state" changes the state on the way, as a forged callback would.
//
// The status file is written atomically: the test polls for it, and a file
// created but not yet written would read as an empty status.
func browserHelper(mode, statusFile, u string) int {
	// The test waits, before its folders are removed, for every helper
	// that started to be done (see harness.browser).
	pid := strconv.Itoa(os.Getpid())
	atomicfile.Write(statusFile+".started."+pid, nil, 0o600)
	defer atomicfile.Write(statusFile+".done."+pid, nil, 0o600)
	c := &http.Client{
		Timeout:       10 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
	for range 10 {
		resp, err := c.Get(u)
		if err != nil {
			atomicfile.Write(statusFile, []byte("error "+err.Error()), 0o600)
			return 1
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if loc := resp.Header.Get("Location"); resp.StatusCode/100 == 3 && loc != "" {
			next, err := resp.Request.URL.Parse(loc)
			if err != nil {
				return 1
			}
			if mode == "forge-state" && next.Path == "/callback" {
				q := next.Query()
				q.Set("state", "forged")
				next.RawQuery = q.Encode()
			}
			u = next.String()
			continue
		}
		atomicfile.Write(statusFile, fmt.Appendf(nil, "%d %s", resp.StatusCode, body), 0o600)
		if resp.StatusCode != 200 {
			return 1
		}
		return 0
	}
	return 1
}

func TestMain(m *testing.M) {
	if len(os.Args) == 5 && os.Args[1] == "browser-helper" {
		os.Exit(browserHelper(os.Args[2], os.Args[3], os.Args[4]))
	}
	os.Exit(m.Run())
}
