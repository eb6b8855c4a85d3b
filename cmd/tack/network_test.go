package main

import (
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
)

// networkRun runs `tack -p` against baseURL with two retries allowed and
// returns the last line of standard error (the error) and the retry notices
// printed before it (without --verbose: a retrying run is never silent).
func networkRun(t *testing.T, baseURL string) (last string, retries []string) {
	t.Helper()
	e := newEnv(t)
	e.extra = []string{"ANTHROPIC_BASE_URL=" + baseURL, "CLAUDE_CODE_MAX_RETRIES=2"}
	out, errOut := e.run("-p", "hi")
	if e.status != 1 || out != "" {
		t.Fatalf("exit %d, stdout %q, stderr:\n%s", e.status, out, errOut)
	}
	all := strings.Split(strings.TrimRight(errOut, "\n"), "\n")
	for _, l := range all {
		if strings.Contains(l, "; retrying in ") {
			retries = append(retries, l)
		}
	}
	return all[len(all)-1], retries
}

// statusServer answers every request with status and an API error body,
// counting the requests.
func statusServer(t *testing.T, status int, typ, msg string) (*httptest.Server, *atomic.Int32) {
	var n atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n.Add(1)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		io.WriteString(w, `{"type":"error","error":{"type":"`+typ+`","message":"`+msg+`"}}`)
	}))
	t.Cleanup(srv.Close)
	return srv, &n
}

func TestConnectionRefusedIsOneClearLineAfterTheRetries(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	url := "http://" + l.Addr().String()
	l.Close() // nothing listens there now
	last, retries := networkRun(t, url)
	want := "tack: API unreachable at " + url + ": connection refused (3 attempts). Check ANTHROPIC_BASE_URL and that a server is listening there."
	if last != want {
		t.Errorf("error line\n got %q\nwant %q", last, want)
	}
	if len(retries) != 2 || !strings.HasPrefix(retries[0], "tack: API unreachable at "+url+": connection refused; retrying in ") ||
		!strings.HasSuffix(retries[1], "(attempt 2 of 2)") {
		t.Errorf("retry notices: %q", retries)
	}
}

func TestUnknownHostFailsAtOnce(t *testing.T) {
	last, retries := networkRun(t, "http://tack-test.invalid")
	if !strings.HasPrefix(last, "tack: API unreachable at http://tack-test.invalid: ") || !strings.Contains(last, `"tack-test.invalid"`) {
		t.Fatalf("error line %q", last)
	}
	// A name the resolver says does not exist is not retried; a resolver
	// that cannot be reached (no network) is, as any connection error.
	if strings.Contains(last, "not found") {
		want := `tack: API unreachable at http://tack-test.invalid: host "tack-test.invalid" not found. Check the host name in ANTHROPIC_BASE_URL and the network's DNS.`
		if last != want || len(retries) != 0 {
			t.Errorf("got %q after %d retries\nwant %q at once", last, len(retries), want)
		}
	}
}

func TestUntrustedCertificateFailsAtOnce(t *testing.T) {
	var n atomic.Int32
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { n.Add(1) }))
	srv.Config.ErrorLog = log.New(io.Discard, "", 0) // the refused handshakes
	srv.StartTLS()
	t.Cleanup(srv.Close)
	last, retries := networkRun(t, srv.URL)
	want := "tack: API unreachable at " + srv.URL + ": its TLS certificate is not trusted (x509: certificate signed by unknown authority). " +
		"Check ANTHROPIC_BASE_URL; behind a proxy or gateway with its own certificate authority, add its certificate with NODE_EXTRA_CA_CERTS (or replace the trusted ones with SSL_CERT_FILE)."
	if last != want || len(retries) != 0 || n.Load() != 0 {
		t.Errorf("got %q after %d retries, %d requests\nwant %q at once", last, len(retries), n.Load(), want)
	}
}

func TestAuthAndNotFoundStatusesFailAtOnce(t *testing.T) {
	cases := []struct {
		status    int
		typ, msg  string
		wantStart string
		wantHint  string
	}{
		{401, "authentication_error", "invalid x-api-key", "tack: The API refused the credentials: API error 401 authentication_error: invalid x-api-key.",
			"Check the API key (ANTHROPIC_API_KEY or apiKeyHelper), and that ANTHROPIC_BASE_URL is the server it belongs to."},
		{403, "permission_error", "not allowed", "tack: The API denied access: API error 403 permission_error: not allowed.",
			"Check that the API key (ANTHROPIC_API_KEY or apiKeyHelper) may use the model claude-opus-5-5 (--model) and ANTHROPIC_BASE_URL."},
		{404, "not_found_error", "model: claude-opus-5-5", "tack: The API at %s has no such model or endpoint: API error 404 not_found_error: model: claude-opus-5-5.",
			`Check the model name "claude-opus-5-5" (--model, ANTHROPIC_MODEL) and ANTHROPIC_BASE_URL (requests go to its /v1/messages).`},
	}
	for _, c := range cases {
		t.Run(c.typ, func(t *testing.T) {
			srv, n := statusServer(t, c.status, c.typ, c.msg)
			last, retries := networkRun(t, srv.URL)
			start := strings.Replace(c.wantStart, "%s", srv.URL, 1)
			if want := start + " " + c.wantHint; last != want {
				t.Errorf("error line\n got %q\nwant %q", last, want)
			}
			if len(retries) != 0 || n.Load() != 1 {
				t.Errorf("%d requests, %d retry notices: a %d is not worth retrying", n.Load(), len(retries), c.status)
			}
		})
	}
}
