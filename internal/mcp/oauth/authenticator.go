package oauth

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
	"golang.org/x/oauth2"
)

// Authenticator holds tack's authorization with one server. It makes round
// trippers for any HTTP transport (streamable HTTP or SSE) and also
// implements the SDK's auth.OAuthHandler, for
// mcp.StreamableClientTransport.OAuthHandler. A connection uses one or the
// other, not both. It is safe for concurrent use.
type Authenticator struct {
	opts   *Options
	store  *store
	server Server

	// flowMu makes one authorization (forced refresh or flow) run at a
	// time: requests rejected together wait for the first, then retry with
	// its token instead of opening one browser tab each.
	flowMu sync.Mutex
	// tokMu serializes reading, refreshing and replacing the token, so that
	// a rotated refresh token is used once. Taken after flowMu, never before.
	tokMu sync.Mutex

	mu        sync.Mutex
	loaded    bool
	rec       *record    // what is stored; nil: nothing
	challenge *challenge // the last request for authorization nobody answered
}

// challenge is a response asking for authorization: 401, or 403
// insufficient_scope.
type challenge struct {
	status int
	header http.Header
	token  string // the access token refused; "" for none
}

var _ auth.OAuthHandler = (*Authenticator)(nil)

// Server returns the server a is for.
func (a *Authenticator) Server() Server { return a.server }

// current returns a copy of the stored record, loading it on first use.
func (a *Authenticator) current() *record {
	a.mu.Lock()
	if a.loaded {
		defer a.mu.Unlock()
		return a.rec.clone()
	}
	rec, err := a.store.load(a.server)
	a.rec, a.loaded = rec, true
	a.mu.Unlock()
	if err != nil {
		// A damaged file is replaced by the next authorization; the user
		// should know why they are asked again.
		a.opts.Notify(fmt.Sprintf("MCP server %q: ignoring stored OAuth tokens: %v", a.server.Name, err))
	}
	return rec.clone()
}

// commit replaces the record in memory and on disk (nil removes it).
// Called with tokMu held.
func (a *Authenticator) commit(rec *record) error {
	a.mu.Lock()
	a.rec, a.loaded = rec.clone(), true
	a.mu.Unlock()
	if rec == nil {
		return a.store.remove(a.server)
	}
	return a.store.save(a.server, rec)
}

func (a *Authenticator) setChallenge(c *challenge) {
	a.mu.Lock()
	a.challenge = c
	a.mu.Unlock()
}

func (a *Authenticator) pendingChallenge() *challenge {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.challenge
}

// token returns the token to send: the stored one, refreshed when it has
// expired (or always, with force). Nil without error when there is none.
func (a *Authenticator) token(ctx context.Context, force bool) (*oauth2.Token, error) {
	a.tokMu.Lock()
	defer a.tokMu.Unlock()
	rec := a.current()
	if !force && rec != nil && rec.Token != nil && rec.Token.oauth2().Valid() {
		return rec.Token.oauth2(), nil
	}
	// Another tack may have logged in, or refreshed and so rotated the
	// refresh token this one holds: take its result rather than ask the
	// user again or spend a dead grant.
	if disk, err := a.store.load(a.server); err == nil && disk != nil && disk.Token != nil &&
		(rec == nil || rec.Token == nil || disk.Token.AccessToken != rec.Token.AccessToken) {
		a.mu.Lock()
		a.rec = disk.clone()
		a.mu.Unlock()
		rec = disk
		if tok := disk.Token.oauth2(); tok.Valid() {
			return tok, nil
		}
	}
	if rec == nil || rec.Token == nil || rec.Token.RefreshToken == "" {
		return nil, nil
	}
	tok := rec.Token.oauth2()
	cctx := context.WithValue(ctx, oauth2.HTTPClient, a.opts.HTTPClient)
	nt, err := rec.config(a.server).TokenSource(cctx, &oauth2.Token{RefreshToken: tok.RefreshToken}).Token()
	if err != nil {
		var re *oauth2.RetrieveError
		if errors.As(err, &re) && re.ErrorCode == "invalid_grant" {
			// The grant is gone: drop the token so that Status asks for a
			// login, but keep the client registration for it.
			rec.Token = nil
			if serr := a.commit(rec); serr != nil {
				a.opts.Notify(serr.Error())
			}
		}
		return nil, fmt.Errorf("refreshing the OAuth token of MCP server %q: %w", a.server.Name, err)
	}
	if nt.RefreshToken == "" {
		nt.RefreshToken = tok.RefreshToken // the server kept the grant as it was
	}
	rec.Token = fromOAuth2(nt)
	if s := scopeOf(nt); s != nil {
		rec.Scopes = s
	}
	if err := a.commit(rec); err != nil {
		// The token works for this process; the next one refreshes again.
		a.opts.Notify(err.Error())
	}
	return nt, nil
}

// TokenSource implements auth.OAuthHandler. Its Token returns a nil token
// when none is stored, so that the request goes out without one and the
// server's 401 leads to Authorize.
func (a *Authenticator) TokenSource(ctx context.Context) (oauth2.TokenSource, error) {
	return tokenSourceFunc(func() (*oauth2.Token, error) { return a.token(ctx, false) }), nil
}

type tokenSourceFunc func() (*oauth2.Token, error)

func (f tokenSourceFunc) Token() (*oauth2.Token, error) { return f() }

// Authorize implements auth.OAuthHandler: it answers a 401 or 403 response
// to req by refreshing the token or running the authorization flow, after
// which the request may be retried. It closes resp.Body.
func (a *Authenticator) Authorize(ctx context.Context, req *http.Request, resp *http.Response) error {
	status, header := resp.StatusCode, resp.Header.Clone()
	drain(resp)
	return a.authorize(ctx, status, header, bearer(req.Header))
}

// authorize answers a challenge to a request sent with the access token sent.
func (a *Authenticator) authorize(ctx context.Context, status int, header http.Header, sent string) error {
	if status == http.StatusForbidden && !insufficientScope(header) {
		return nil // a refusal no token changes: the retry reports it
	}
	a.flowMu.Lock()
	defer a.flowMu.Unlock()
	// While this request waited, another refreshed or re-authorized (or the
	// token expired and refreshes now): retry with that token first.
	if tok, _ := a.token(ctx, false); tok != nil && tok.AccessToken != sent {
		return nil
	}
	if status == http.StatusUnauthorized {
		// The server rejected a token still valid by the clock (revoked,
		// or clocks disagree): a refresh needs no user.
		if rec := a.current(); rec != nil && rec.Token != nil && rec.Token.RefreshToken != "" {
			if tok, err := a.token(ctx, true); err == nil && tok != nil {
				return nil
			}
		}
	}
	ch := &challenge{status: status, header: header, token: sent}
	if a.opts.Passive && !a.server.ClientCredentials {
		a.setChallenge(ch)
		if status == http.StatusForbidden {
			return fmt.Errorf("MCP server %q: %w: it asks for more scope (%s)", a.server.Name, ErrAuthRequired, challengeParam(header, "scope"))
		}
		return fmt.Errorf("MCP server %q: %w", a.server.Name, ErrAuthRequired)
	}
	if err := a.runFlow(ctx, status, header); err != nil {
		a.setChallenge(ch)
		return fmt.Errorf("MCP server %q: %w: %w", a.server.Name, ErrAuthRequired, err)
	}
	a.setChallenge(nil)
	return nil
}

// Login runs the authorization flow now, even in Passive mode and with a
// token stored: with the server's last unanswered challenge, or with the
// one it answers a request without a token.
func (a *Authenticator) Login(ctx context.Context) error {
	a.flowMu.Lock()
	defer a.flowMu.Unlock()
	ch := a.pendingChallenge()
	if ch == nil {
		status, header, err := a.probe(ctx)
		if err != nil {
			return err
		}
		if status != http.StatusUnauthorized && status != http.StatusForbidden {
			return fmt.Errorf("MCP server %q did not ask for authorization (HTTP %d)", a.server.Name, status)
		}
		ch = &challenge{status: status, header: header}
	}
	status := ch.status
	if status == http.StatusForbidden && !insufficientScope(ch.header) {
		status = http.StatusUnauthorized // the SDK starts a flow only for these two
	}
	if err := a.runFlow(ctx, status, ch.header); err != nil {
		return fmt.Errorf("authorizing with MCP server %q: %w", a.server.Name, err)
	}
	a.setChallenge(nil)
	return nil
}

// probe sends the server a request without a token (a JSON-RPC ping, which
// a server that needs no authorization answers harmlessly) to read its
// challenge.
func (a *Authenticator) probe(ctx context.Context) (int, http.Header, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, a.server.URL, strings.NewReader(`{"jsonrpc":"2.0","id":0,"method":"ping"}`))
	if err != nil {
		return 0, nil, fmt.Errorf("MCP server %q: %w", a.server.Name, err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := a.opts.HTTPClient.Do(req)
	if err != nil {
		return 0, nil, fmt.Errorf("contacting MCP server %q: %w", a.server.Name, err)
	}
	drain(resp)
	return resp.StatusCode, resp.Header, nil
}

// Status reports tack's authorization with the server, as stored now (a
// login by another tack counts).
func (a *Authenticator) Status() Status {
	rec := a.current()
	if disk, err := a.store.load(a.server); err == nil {
		rec = disk
	}
	var st Status
	current := ""
	if rec != nil {
		st.Scopes = rec.Scopes
		if rec.Token != nil {
			tok := rec.Token.oauth2()
			st.Expiry = tok.Expiry
			st.Authorized = tok.Valid() || tok.RefreshToken != ""
			current = tok.AccessToken
		}
	}
	switch ch := a.pendingChallenge(); {
	case ch != nil:
		// A challenge is answered once the token it refused is replaced
		// (by a login here or in another tack).
		st.NeedsAuth = !st.Authorized || current == ch.token
	case rec != nil:
		st.NeedsAuth = !st.Authorized // the grant was revoked or expired
	}
	return st
}

// Logout forgets the server's tokens and client registration, on disk and
// in memory. The authorization server is not told.
func (a *Authenticator) Logout() error {
	a.flowMu.Lock()
	defer a.flowMu.Unlock()
	a.tokMu.Lock()
	defer a.tokMu.Unlock()
	a.setChallenge(nil)
	if err := a.commit(nil); err != nil {
		return fmt.Errorf("logging out of MCP server %q: %w", a.server.Name, err)
	}
	return nil
}

// RoundTripper returns a round tripper sending requests through base (nil:
// http.DefaultTransport) with the server's bearer token. A request the
// server answers 401, or 403 insufficient_scope, is authorized (refresh,
// or the browser flow unless Passive) and sent once more.
func (a *Authenticator) RoundTripper(base http.RoundTripper) http.RoundTripper {
	if base == nil {
		base = http.DefaultTransport
	}
	return &roundTripper{a: a, base: base}
}

type roundTripper struct {
	a    *Authenticator
	base http.RoundTripper
}

func (t *roundTripper) RoundTrip(req *http.Request) (*http.Response, error) {
	if !t.a.sameOrigin(req.URL) {
		// A redirect elsewhere gets no token meant for this server.
		return t.base.RoundTrip(req)
	}
	retryBody, err := replayable(req)
	if err != nil {
		return nil, err
	}
	first, sent := t.prepare(req)
	if req.GetBody == nil && retryBody != nil {
		if first.Body, err = retryBody(); err != nil {
			return nil, err
		}
	}
	resp, err := t.base.RoundTrip(first)
	if err != nil || !wantsAuthorization(resp) {
		return resp, err
	}
	status, header := resp.StatusCode, resp.Header.Clone()
	drain(resp)
	if err := t.a.authorize(req.Context(), status, header, sent); err != nil {
		return nil, err
	}
	second, _ := t.prepare(req)
	if retryBody != nil {
		if second.Body, err = retryBody(); err != nil {
			return nil, err
		}
	}
	return t.base.RoundTrip(second)
}

// prepare clones req with the current token, returning the token sent.
func (t *roundTripper) prepare(req *http.Request) (*http.Request, string) {
	r := req.Clone(req.Context())
	// A refresh that fails sends the request without a token: the server's
	// 401 then leads to authorize, which knows what to do.
	tok, _ := t.a.token(req.Context(), false)
	if tok == nil {
		return r, ""
	}
	r.Header.Set("Authorization", "Bearer "+tok.AccessToken)
	return r, tok.AccessToken
}

// sameOrigin reports whether u is on the server's origin (scheme, host and
// port).
func (a *Authenticator) sameOrigin(u *url.URL) bool {
	s, err := url.Parse(a.server.URL)
	return err == nil && strings.EqualFold(s.Scheme, u.Scheme) && strings.EqualFold(s.Host, u.Host)
}

// replayable returns what gives the request's body again for the retry: its
// GetBody, or a copy of the body read into memory (MCP messages are small).
// Nil for a request without a body.
func replayable(req *http.Request) (func() (io.ReadCloser, error), error) {
	if req.Body == nil || req.Body == http.NoBody {
		return nil, nil
	}
	if req.GetBody != nil {
		return req.GetBody, nil
	}
	data, err := io.ReadAll(req.Body)
	req.Body.Close()
	if err != nil {
		return nil, fmt.Errorf("reading the request body: %w", err)
	}
	return func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(data)), nil }, nil
}

// wantsAuthorization reports a response that a token could change: 401, or
// 403 with error="insufficient_scope".
func wantsAuthorization(resp *http.Response) bool {
	switch resp.StatusCode {
	case http.StatusUnauthorized:
		return true
	case http.StatusForbidden:
		return insufficientScope(resp.Header)
	}
	return false
}

func insufficientScope(h http.Header) bool {
	return challengeParam(h, "error") == "insufficient_scope"
}

// challengeParam returns a parameter of the Bearer challenge in h.
func challengeParam(h http.Header, name string) string {
	cs, err := oauthex.ParseWWWAuthenticate(h.Values("WWW-Authenticate"))
	if err != nil {
		return ""
	}
	for _, c := range cs {
		if c.Scheme == "bearer" {
			if v := c.Params[name]; v != "" {
				return v
			}
		}
	}
	return ""
}

func bearer(h http.Header) string {
	v := h.Get("Authorization")
	if len(v) > 7 && strings.EqualFold(v[:7], "bearer ") {
		return strings.TrimSpace(v[7:])
	}
	return ""
}

// drain reads a little of an unwanted body, so that the connection can be
// reused, and closes it.
func drain(resp *http.Response) {
	io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	resp.Body.Close()
}

// scopeOf returns the scopes a token response granted, nil when it does
// not say.
func scopeOf(t *oauth2.Token) []string {
	if s, ok := t.Extra("scope").(string); ok && strings.TrimSpace(s) != "" {
		return strings.Fields(s)
	}
	return nil
}
