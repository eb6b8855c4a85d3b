package oauth

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tackcode/tack/internal/mcp/oauth/oauthtest"
)

// harness is a Flow configured for tests: tokens in a temporary directory,
// the environment given, messages collected.
type harness struct {
	t    *testing.T
	dir  string
	env  map[string]string
	mu   sync.Mutex
	msgs []string
	// onNotify, if set, sees each message (the user reading the URL).
	onNotify func(string)
}

func newHarness(t *testing.T) *harness {
	return &harness{t: t, dir: filepath.Join(t.TempDir(), "mcp-oauth"), env: map[string]string{}}
}

// browser sets BROWSER to a browser in mode (oauthtest.Follow…),
// reporting the callback's answer in the returned file.
func (h *harness) browser(mode string) string {
	browser, status := oauthtest.Browser(h.t, mode)
	h.env["BROWSER"] = browser
	return status
}

func (h *harness) flow(passive bool) *Flow {
	f, err := New(Options{
		Dir:     h.dir,
		Passive: passive,
		Getenv:  func(k string) string { return h.env[k] },
		Notify: func(m string) {
			h.mu.Lock()
			h.msgs = append(h.msgs, m)
			h.mu.Unlock()
			if h.onNotify != nil {
				h.onNotify(m)
			}
		},
		FlowTimeout: 20 * time.Second,
	})
	if err != nil {
		h.t.Fatal(err)
	}
	return f
}

func (h *harness) messages() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return slices.Clone(h.msgs)
}

// connect opens an MCP session to the resource through the flow's round
// tripper.
func connect(t *testing.T, f *Flow, s Server) (*mcp.ClientSession, error) {
	t.Helper()
	client := mcp.NewClient(&mcp.Implementation{Name: "tack-test", Version: "1"}, nil)
	cs, err := client.Connect(t.Context(), &mcp.StreamableClientTransport{
		Endpoint:   s.URL,
		HTTPClient: &http.Client{Transport: f.RoundTripper(s, nil)},
		MaxRetries: -1,
	}, nil)
	if err == nil {
		t.Cleanup(func() { cs.Close() })
	}
	return cs, err
}

func callText(t *testing.T, cs *mcp.ClientSession, name string) string {
	t.Helper()
	res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: name, Arguments: map[string]any{}})
	if err != nil {
		t.Fatalf("calling %s: %v", name, err)
	}
	if res.IsError || len(res.Content) != 1 {
		t.Fatalf("calling %s: %+v", name, res)
	}
	return res.Content[0].(*mcp.TextContent).Text
}

func readRecord(t *testing.T, st *store, s Server) *record {
	t.Helper()
	rec, err := st.load(s)
	if err != nil {
		t.Fatal(err)
	}
	return rec
}

// The whole life of a dynamically registered client: first login through
// the browser, reuse by a later tack, refresh, step-up, logout.
func TestDynamicRegistrationLifecycle(t *testing.T) {
	as := oauthtest.NewAuthServer(t)
	res := oauthtest.NewResource(t, as)
	h := newHarness(t)
	browserStatus := h.browser(oauthtest.Follow)
	srv := Server{Name: "remote", URL: res.URL}
	st := &store{dir: h.dir}

	f1 := h.flow(false)
	t.Run("first login", func(t *testing.T) {
		cs, err := connect(t, f1, srv)
		if err != nil {
			t.Fatalf("connect: %v", err)
		}
		if got := callText(t, cs, "whoami"); got != "hello" {
			t.Errorf("whoami: %q", got)
		}
		c := as.Counts()
		if c.Registrations != 1 || c.Authorizations != 1 || c.CodeGrants != 1 {
			t.Errorf("counts %+v, want one registration, authorization and code grant", c)
		}
		if data := oauthtest.WaitFile(t, browserStatus); !strings.HasPrefix(string(data), "200 ") {
			t.Errorf("the browser saw %q", data)
		}
		msgs := h.messages()
		if len(msgs) != 1 || !strings.Contains(msgs[0], "Opening the browser") || !strings.Contains(msgs[0], as.URL()+"/authorize?") {
			t.Errorf("messages %q", msgs)
		}
		if !slices.Contains(as.LastScopes(), "read") || !slices.Contains(as.LastScopes(), "offline_access") {
			t.Errorf("requested scopes %v", as.LastScopes())
		}
		st := f1.Status(srv)
		if !st.Authorized || st.NeedsAuth || !slices.Contains(st.Scopes, "read") || st.Expiry.Before(time.Now().Add(50*time.Minute)) {
			t.Errorf("status %+v", st)
		}
	})

	t.Run("token file", func(t *testing.T) {
		p := st.path(srv)
		info, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		if info.Mode().Perm() != 0o600 {
			t.Errorf("token file mode %v", info.Mode().Perm())
		}
		if dinfo, _ := os.Stat(h.dir); dinfo.Mode().Perm() != 0o700 {
			t.Errorf("token dir mode %v", dinfo.Mode().Perm())
		}
		rec := readRecord(t, st, srv)
		if rec.Server != "remote" || rec.URL != res.URL || !rec.Registered || !strings.HasPrefix(rec.ClientID, "dyn-") ||
			rec.Token == nil || rec.Token.RefreshToken == "" || !strings.HasPrefix(rec.RedirectURI, "http://127.0.0.1:") {
			t.Errorf("record %+v", rec)
		}
		entries, _ := os.ReadDir(h.dir)
		if len(entries) != 1 {
			t.Errorf("files left in the token directory: %v", entries)
		}
	})

	t.Run("reuse across instances", func(t *testing.T) {
		before := as.Counts()
		delete(h.env, "BROWSER") // a flow now would print, and fail the test below
		f2 := h.flow(false)
		cs, err := connect(t, f2, srv)
		if err != nil {
			t.Fatalf("connect: %v", err)
		}
		callText(t, cs, "whoami")
		if as.Counts() != before {
			t.Errorf("counts went from %+v to %+v", before, as.Counts())
		}
		if n := len(h.messages()); n != 1 {
			t.Errorf("%d messages", n)
		}
	})

	t.Run("refresh after expiry", func(t *testing.T) {
		before := as.Counts()
		old := readRecord(t, st, srv)
		// Time passes: the server no longer takes the token and tack's clock says so too.
		as.ExpireAll()
		old.Token.Expiry = time.Now().Add(-time.Minute)
		if err := st.save(srv, old); err != nil {
			t.Fatal(err)
		}
		f3 := h.flow(false)
		cs, err := connect(t, f3, srv)
		if err != nil {
			t.Fatalf("connect: %v", err)
		}
		callText(t, cs, "whoami")
		c := as.Counts()
		if c.Refreshes != before.Refreshes+1 || c.Authorizations != before.Authorizations {
			t.Errorf("counts went from %+v to %+v, want one refresh", before, c)
		}
		rec := readRecord(t, st, srv)
		if rec.Token.AccessToken == old.Token.AccessToken || rec.Token.RefreshToken == old.Token.RefreshToken || !rec.Token.Expiry.After(time.Now()) {
			t.Errorf("the refreshed token was not stored: %+v", rec.Token)
		}
	})

	t.Run("refresh on 401", func(t *testing.T) {
		// The server drops the token while tack still thinks it valid.
		before := as.Counts()
		as.ExpireAll()
		cs, err := connect(t, f1, srv)
		if err != nil {
			t.Fatalf("connect: %v", err)
		}
		callText(t, cs, "whoami")
		c := as.Counts()
		if c.Refreshes != before.Refreshes+1 || c.Authorizations != before.Authorizations {
			t.Errorf("counts went from %+v to %+v, want one refresh", before, c)
		}
	})

	t.Run("step-up", func(t *testing.T) {
		h.browser(oauthtest.Follow)
		before := as.Counts()
		cs, err := connect(t, f1, srv)
		if err != nil {
			t.Fatalf("connect: %v", err)
		}
		if got := callText(t, cs, "admin"); got != "admin ok" {
			t.Errorf("admin: %q", got)
		}
		c := as.Counts()
		if c.Authorizations != before.Authorizations+1 || c.Registrations != before.Registrations {
			t.Errorf("counts went from %+v to %+v: want one more authorization with the same client", before, c)
		}
		for _, s := range []string{"read", "admin", "offline_access"} {
			if !slices.Contains(as.LastScopes(), s) {
				t.Errorf("step-up asked for %v, lacking %s", as.LastScopes(), s)
			}
		}
		if st := f1.Status(srv); !slices.Contains(st.Scopes, "admin") || !slices.Contains(st.Scopes, "read") {
			t.Errorf("status scopes %v", st.Scopes)
		}
		// The whole session keeps working, and a later tack has the scope.
		callText(t, cs, "whoami")
		cs2, err := connect(t, h.flow(false), srv)
		if err != nil {
			t.Fatal(err)
		}
		callText(t, cs2, "admin")
		if as.Counts().Authorizations != c.Authorizations {
			t.Error("a later tack authorized again")
		}
	})

	t.Run("logout", func(t *testing.T) {
		if err := f1.Logout(srv); err != nil {
			t.Fatal(err)
		}
		if _, err := os.Stat(st.path(srv)); !os.IsNotExist(err) {
			t.Errorf("token file after logout: %v", err)
		}
		if s := f1.Status(srv); s.Authorized || s.NeedsAuth {
			t.Errorf("status after logout %+v", s)
		}
		// Without tokens, a passive tack reports the need to log in.
		f := h.flow(true)
		_, err := connect(t, f, srv)
		if err == nil {
			t.Fatal("connected without a token")
		}
		if !f.Status(srv).NeedsAuth {
			t.Errorf("status %+v", f.Status(srv))
		}
	})
}

// A stored token that cannot be refreshed (none, or the grant was revoked)
// leads to a new authorization, with the client registered before.
func TestDeadGrantReauthorizes(t *testing.T) {
	as := oauthtest.NewAuthServer(t)
	res := oauthtest.NewResource(t, as)
	h := newHarness(t)
	h.browser(oauthtest.Follow)
	srv := Server{Name: "remote", URL: res.URL}
	st := &store{dir: h.dir}
	if err := h.flow(false).Login(t.Context(), srv); err != nil {
		t.Fatal(err)
	}

	// Revoked refresh token: the refresh fails with invalid_grant.
	as.ExpireAll()
	as.RevokeRefreshTokens()
	cs, err := connect(t, h.flow(false), srv)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	callText(t, cs, "whoami")
	if c := as.Counts(); c.Authorizations != 2 || c.Registrations != 1 {
		t.Errorf("counts %+v", c)
	}

	// An expired token without a refresh token.
	rec := readRecord(t, st, srv)
	rec.Token.RefreshToken = ""
	rec.Token.Expiry = time.Now().Add(-time.Hour)
	st.save(srv, rec)
	f := h.flow(false)
	if s := f.Status(srv); s.Authorized || !s.NeedsAuth {
		t.Errorf("status of an expired token %+v", s)
	}
	cs, err = connect(t, f, srv)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	callText(t, cs, "whoami")
	if c := as.Counts(); c.Authorizations != 3 || c.Registrations != 1 {
		t.Errorf("counts %+v", c)
	}

	// The port the client was registered with is taken: tack registers
	// again with another.
	rec = readRecord(t, st, srv)
	ln, err := net.Listen("tcp", strings.TrimSuffix(strings.TrimPrefix(rec.RedirectURI, "http://"), "/callback"))
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	if err := f.Login(t.Context(), srv); err != nil {
		t.Fatal(err)
	}
	if c := as.Counts(); c.Authorizations != 4 || c.Registrations != 2 {
		t.Errorf("counts %+v", c)
	}
	if now := readRecord(t, st, srv); now.ClientID == rec.ClientID || now.RedirectURI == rec.RedirectURI {
		t.Errorf("the client was not registered again: %+v", now)
	}
}

// Concurrent requests rejected together run one authorization between them.
func TestConcurrentRequestsShareOneFlow(t *testing.T) {
	as := oauthtest.NewAuthServer(t)
	res := oauthtest.NewResource(t, as)
	h := newHarness(t)
	h.browser(oauthtest.Follow)
	f := h.flow(false)
	srv := Server{Name: "remote", URL: res.URL}
	client := &http.Client{Transport: f.RoundTripper(srv, nil)}

	var wg sync.WaitGroup
	errs := make(chan error, 5)
	for i := range 5 {
		wg.Go(func() {
			body := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`, i)
			req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, res.URL, strings.NewReader(body))
			req.GetBody = nil // force the round tripper to keep a copy for the retry
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "application/json, text/event-stream")
			resp, err := client.Do(req)
			if err != nil {
				errs <- err
				return
			}
			resp.Body.Close()
			if resp.StatusCode != 200 {
				errs <- fmt.Errorf("status %d", resp.StatusCode)
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if c := as.Counts(); c.Authorizations != 1 || c.Registrations != 1 {
		t.Errorf("counts %+v, want one flow", c)
	}
}

// A client id configured for the server is used as is: no registration,
// its secret authenticates at the token endpoint, the fixed port is the
// callback's.
func TestPreregisteredClient(t *testing.T) {
	as := oauthtest.NewAuthServer(t)
	res := oauthtest.NewResource(t, as)
	port := freePort(t)
	redirect := fmt.Sprintf("http://127.0.0.1:%d/callback", port)
	as.Preregister("tack-pre", "s3cret", redirect)
	h := newHarness(t)
	h.browser(oauthtest.Follow)
	srv := Server{Name: "pre", URL: res.URL, ClientID: "tack-pre", ClientSecret: "s3cret", CallbackPort: port}
	f := h.flow(true) // Login works in passive mode too

	if err := f.Login(t.Context(), srv); err != nil {
		t.Fatalf("Login: %v", err)
	}
	c := as.Counts()
	if c.Registrations != 0 || c.CodeGrants != 1 {
		t.Errorf("counts %+v", c)
	}
	rec := readRecord(t, &store{dir: h.dir}, srv)
	if rec.ClientID != "tack-pre" || rec.Registered || rec.ClientSecret != "" {
		t.Errorf("record %+v: the configured secret must stay out of the file", rec)
	}
	cs, err := connect(t, f, srv)
	if err != nil {
		t.Fatal(err)
	}
	callText(t, cs, "whoami")

	// Refreshing authenticates with the configured secret.
	as.ExpireAll()
	callText(t, cs, "whoami")
	if as.Counts().Refreshes != 1 {
		t.Errorf("counts %+v", as.Counts())
	}

	// A wrong secret is refused at the token endpoint.
	bad := srv
	bad.ClientSecret = "wrong"
	bad.Name = "pre-bad"
	if err := f.Login(t.Context(), bad); err == nil || !strings.Contains(err.Error(), "invalid_client") {
		t.Errorf("Login with a wrong secret: %v", err)
	}
}

// A callback whose state is not the request's is refused, and the flow fails.
func TestWrongStateRejected(t *testing.T) {
	as := oauthtest.NewAuthServer(t)
	res := oauthtest.NewResource(t, as)
	h := newHarness(t)
	status := h.browser(oauthtest.ForgeState)
	f := h.flow(false)
	srv := Server{Name: "remote", URL: res.URL}

	err := f.Login(t.Context(), srv)
	if err == nil || !strings.Contains(err.Error(), "state mismatch") {
		t.Fatalf("Login: %v", err)
	}
	if data := oauthtest.WaitFile(t, status); !strings.HasPrefix(string(data), "400 ") {
		t.Errorf("the forged callback got %q", data)
	}
	if as.Counts().CodeGrants != 0 {
		t.Error("a code was exchanged")
	}
	if s := f.Status(srv); s.Authorized {
		t.Errorf("status %+v", s)
	}
	if _, err := os.Stat((&store{dir: h.dir}).path(srv)); !os.IsNotExist(err) {
		t.Errorf("a token file exists: %v", err)
	}
}

// Without BROWSER (and no display) the URL is printed; the user's browser
// then reaches the callback.
func TestPrintedURL(t *testing.T) {
	as := oauthtest.NewAuthServer(t)
	res := oauthtest.NewResource(t, as)
	h := newHarness(t)
	urlRE := regexp.MustCompile(`https?://\S+`)
	visited := make(chan error, 1)
	h.onNotify = func(m string) {
		u := urlRE.FindString(m)
		if !strings.Contains(m, "open this URL") || u == "" {
			visited <- fmt.Errorf("message %q", m)
			return
		}
		go func() {
			// The default client follows the redirect to the callback.
			resp, err := http.Get(u)
			if err == nil {
				resp.Body.Close()
				if resp.StatusCode != 200 {
					err = fmt.Errorf("callback answered %d", resp.StatusCode)
				}
			}
			visited <- err
		}()
	}
	f := h.flow(false)
	srv := Server{Name: "remote", URL: res.URL}
	if err := f.Login(t.Context(), srv); err != nil {
		t.Fatalf("Login: %v", err)
	}
	if err := <-visited; err != nil {
		t.Error(err)
	}
	if !f.Status(srv).Authorized {
		t.Errorf("status %+v", f.Status(srv))
	}
}

// In passive mode a server asking for authorization fails the request with
// ErrAuthRequired and no browser; Login then answers that challenge.
func TestPassiveThenLogin(t *testing.T) {
	as := oauthtest.NewAuthServer(t)
	res := oauthtest.NewResource(t, as)
	h := newHarness(t)
	status := h.browser(oauthtest.Follow)
	f := h.flow(true)
	srv := Server{Name: "remote", URL: res.URL}
	client := &http.Client{Transport: f.RoundTripper(srv, nil)}
	post := func() (*http.Response, error) {
		req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, res.URL, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		return client.Do(req)
	}

	if s := f.Status(srv); s.NeedsAuth || s.Authorized {
		t.Errorf("status before contact %+v", s)
	}
	_, err := post()
	if !errors.Is(err, ErrAuthRequired) {
		t.Fatalf("request: %v, want ErrAuthRequired", err)
	}
	if _, err := os.Stat(status); err == nil || len(h.messages()) != 0 {
		t.Error("a passive flow opened the browser")
	}
	if s := f.Status(srv); !s.NeedsAuth || s.Authorized {
		t.Errorf("status %+v", s)
	}
	// Through the SDK's client, the error is still recognizable.
	if _, err := connect(t, f, srv); !errors.Is(err, ErrAuthRequired) {
		t.Errorf("connect: %v, want ErrAuthRequired", err)
	}

	if err := f.Login(t.Context(), srv); err != nil {
		t.Fatalf("Login: %v", err)
	}
	if s := f.Status(srv); s.NeedsAuth || !s.Authorized {
		t.Errorf("status after login %+v", s)
	}
	resp, err := post()
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("after login: %v %v", resp, err)
	}
	resp.Body.Close()

	// Step-up in passive mode: reported, then granted by Login.
	cs, err := connect(t, f, srv)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "admin", Arguments: map[string]any{}}); err == nil {
		t.Error("admin without the scope succeeded")
	}
	if !f.Status(srv).NeedsAuth {
		t.Error("a refused step-up is not reported")
	}
	if err := f.Login(t.Context(), srv); err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(as.LastScopes(), "admin") || !slices.Contains(as.LastScopes(), "read") {
		t.Errorf("login after step-up asked for %v", as.LastScopes())
	}
	cs2, err := connect(t, f, srv)
	if err != nil {
		t.Fatal(err)
	}
	callText(t, cs2, "admin")
}

// A login by another tack (tack mcp login in another terminal) is taken up
// by a running one without a restart.
func TestLoginElsewhereIsPickedUp(t *testing.T) {
	as := oauthtest.NewAuthServer(t)
	res := oauthtest.NewResource(t, as)
	h := newHarness(t)
	h.browser(oauthtest.Follow)
	srv := Server{Name: "remote", URL: res.URL}
	running := h.flow(true)
	if _, err := connect(t, running, srv); !errors.Is(err, ErrAuthRequired) {
		t.Fatalf("connect: %v", err)
	}
	if !running.Status(srv).NeedsAuth {
		t.Error("no need for authorization reported")
	}
	if err := h.flow(false).Login(t.Context(), srv); err != nil {
		t.Fatal(err)
	}
	if s := running.Status(srv); s.NeedsAuth || !s.Authorized {
		t.Errorf("status after a login elsewhere %+v", s)
	}
	cs, err := connect(t, running, srv)
	if err != nil {
		t.Fatalf("connect after a login elsewhere: %v", err)
	}
	callText(t, cs, "whoami")
}

// A redirect to another origin does not carry the server's token.
func TestTokenStaysWithItsOrigin(t *testing.T) {
	as := oauthtest.NewAuthServer(t)
	res := oauthtest.NewResource(t, as)
	h := newHarness(t)
	h.browser(oauthtest.Follow)
	srv := Server{Name: "remote", URL: res.URL}
	f := h.flow(false)
	if err := f.Login(t.Context(), srv); err != nil {
		t.Fatal(err)
	}
	got := make(chan string, 2)
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got <- r.Header.Get("Authorization")
	}))
	defer other.Close()
	client := &http.Client{Transport: f.RoundTripper(srv, nil)}
	for _, u := range []string{res.URL, other.URL} {
		resp, err := client.Get(u + "?probe")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
	if a := <-got; a != "" {
		t.Errorf("another origin got %q", a)
	}
}

// The fake authorization server checks PKCE, so the flows above prove tack
// sends the verifier of its challenge.
func TestFakeRejectsWrongVerifier(t *testing.T) {
	as := oauthtest.NewAuthServer(t)
	oauthtest.NewResource(t, as)
	redirect := "http://127.0.0.1:1/callback"
	as.Preregister("c", "", redirect)
	verifier := rand.Text() + rand.Text()
	sum := sha256.Sum256([]byte(verifier))
	noRedirect := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	code := func() string {
		q := url.Values{"client_id": {"c"}, "redirect_uri": {redirect}, "response_type": {"code"}, "state": {"s"},
			"code_challenge": {base64.RawURLEncoding.EncodeToString(sum[:])}, "code_challenge_method": {"S256"}, "resource": {as.Resource()}}
		resp, err := noRedirect.Get(as.URL() + "/authorize?" + q.Encode())
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		loc, err := resp.Location()
		if err != nil {
			t.Fatalf("authorize: %d %v", resp.StatusCode, err)
		}
		return loc.Query().Get("code")
	}
	exchange := func(code, verifier string) (int, string) {
		resp, err := http.PostForm(as.URL()+"/token", url.Values{"grant_type": {"authorization_code"}, "client_id": {"c"}, "code": {code}, "redirect_uri": {redirect}, "code_verifier": {verifier}})
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var body struct {
			Error string `json:"error"`
		}
		json.NewDecoder(resp.Body).Decode(&body)
		return resp.StatusCode, body.Error
	}
	if st, e := exchange(code(), verifier+"x"); st != 400 || e != "invalid_grant" {
		t.Errorf("wrong verifier: %d %s", st, e)
	}
	if st, e := exchange(code(), verifier); st != 200 {
		t.Errorf("right verifier: %d %s", st, e)
	}
}

func TestStorePaths(t *testing.T) {
	st := &store{dir: "/d"}
	a := st.path(Server{Name: "srv", URL: "https://a.example/mcp"})
	b := st.path(Server{Name: "srv", URL: "https://b.example/mcp"})
	c := st.path(Server{Name: "../../etc/passwd", URL: "https://a.example/mcp"})
	if a == b {
		t.Error("two URLs share a token file")
	}
	if filepath.Dir(c) != "/d" || strings.Contains(filepath.Base(c), "/") {
		t.Errorf("path %s escapes the directory", c)
	}
	// A record is only read back for the server it belongs to.
	dir := t.TempDir()
	st = &store{dir: dir}
	s := Server{Name: "x", URL: "https://x.example"}
	if err := st.save(s, &record{Server: "x", URL: "https://other.example"}); err != nil {
		t.Fatal(err)
	}
	if _, err := st.load(s); err == nil {
		t.Error("loaded a record of another server")
	}
}

func TestLaunchBrowser(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "args")
	script := filepath.Join(dir, "browser.sh")
	os.WriteFile(script, []byte("#!/bin/sh\nprintf '%s\\n' \"$@\" > "+out+".tmp && mv "+out+".tmp "+out+"\n"), 0o755)
	for _, tc := range []struct {
		browser string
		want    string
	}{
		{script + " --new-window", "--new-window\nhttps://as.example/a?b=c\n"},
		{"/nonexistent/browser:" + script + " open=%s now", "open=https://as.example/a?b=c\nnow\n"},
	} {
		os.Remove(out)
		a := &Authenticator{opts: &Options{Getenv: func(k string) string {
			if k == "BROWSER" {
				return tc.browser
			}
			return ""
		}}}
		if !a.launch("https://as.example/a?b=c") {
			t.Errorf("%s: not launched", tc.browser)
			continue
		}
		if got := oauthtest.WaitFile(t, out); string(got) != tc.want {
			t.Errorf("%s: arguments %q, want %q", tc.browser, got, tc.want)
		}
	}
	none := &Authenticator{opts: &Options{Getenv: func(string) string { return "" }}}
	if none.launch("https://x") {
		t.Error("launched a browser without BROWSER or a display")
	}
}

func freePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}
