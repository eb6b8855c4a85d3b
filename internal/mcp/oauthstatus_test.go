package mcp

import (
	"context"
	"net/http"
	"path/filepath"
	"testing"
	"time"

	"github.com/tackcode/tack/internal/mcp/oauth"
	"github.com/tackcode/tack/internal/mcp/oauth/oauthtest"
	"github.com/tackcode/tack/internal/tool"
)

// TestOAuthSignInNeeded: a server behind OAuth, reached through a passive
// flow (one that may not open a browser, as a session's is), needs
// authentication rather than failing, though the flow fails the request
// with an error instead of the 401.
func TestOAuthSignInNeeded(t *testing.T) {
	as := oauthtest.NewAuthServer(t)
	res := oauthtest.NewResource(t, as)
	flow, err := oauth.New(oauth.Options{Dir: filepath.Join(t.TempDir(), "mcp-oauth"), Passive: true,
		Getenv: func(string) string { return "" }, Notify: func(string) {}})
	if err != nil {
		t.Fatal(err)
	}
	srv := oauth.Server{Name: "remote", URL: res.URL}
	m := New(Options{Registry: tool.NewRegistry(), HTTPTransport: func(string) http.RoundTripper { return flow.RoundTripper(srv, nil) }})
	defer m.Close()
	m.Start(context.Background(), []ServerConfig{{Name: "remote", Type: TypeHTTP, URL: res.URL}})
	m.WaitReady(context.Background(), 10*time.Second)
	if st := statusOf(m, "remote"); st.Status != StatusNeedsAuth || st.Error != "authorization required" {
		t.Errorf("status %+v", st)
	}
}
