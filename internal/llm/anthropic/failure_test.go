package anthropic

import (
	"context"
	"errors"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/tackcode/tack/internal/llm"
	"github.com/tackcode/tack/internal/llm/llmtest"
)

func TestRefusedConnectionIsRetriedThenExplained(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	url := "http://" + l.Addr().String()
	l.Close()
	p, waits := newTest(Config{APIKey: "k", BaseURL: url, MaxRetries: 2})
	var causes []string
	_, err = p.Stream(context.Background(), request(), llm.Observer{Retry: func(r llm.Retry) { causes = append(causes, r.Cause) }})
	want := "API unreachable at " + url + ": connection refused (3 attempts). Check ANTHROPIC_BASE_URL and that a server is listening there."
	if err == nil || err.Error() != want {
		t.Fatalf("err %v\nwant %s", err, want)
	}
	if len(*waits) != 2 || len(causes) != 2 || causes[0] != "API unreachable at "+url+": connection refused" {
		t.Errorf("waits %v, retry causes %q", *waits, causes)
	}
}

func TestUntrustedCertificateIsNotRetried(t *testing.T) {
	srv := httptest.NewUnstartedServer(http.NotFoundHandler())
	srv.Config.ErrorLog = log.New(io.Discard, "", 0)
	srv.StartTLS()
	defer srv.Close()
	p, waits := newTest(Config{APIKey: "k", BaseURL: srv.URL})
	_, err := p.Stream(context.Background(), request(), llm.Observer{})
	if !untrustedCertificate(err) || len(*waits) != 0 {
		t.Fatalf("err %v after %d waits", err, len(*waits))
	}
}

func TestAuthFailureIsExplainedAndStaysAnAPIError(t *testing.T) {
	srv := llmtest.New(t, llmtest.Turn{Content: []llm.Block{llmtest.Text("x")},
		Faults: []llmtest.Fault{{Status: 401, Message: "invalid x-api-key"}}})
	p, _ := newTest(Config{AuthToken: "t", BaseURL: srv.URL()})
	_, err := p.Stream(context.Background(), request(), llm.Observer{})
	want := "The API refused the credentials: API error 401 authentication_error: invalid x-api-key. " +
		"Check the token (ANTHROPIC_AUTH_TOKEN), and that ANTHROPIC_BASE_URL is the server it belongs to."
	var apiErr *llm.APIError
	if err == nil || err.Error() != want || !errors.As(err, &apiErr) || apiErr.Status != 401 {
		t.Fatalf("err %v\nwant %s", err, want)
	}
	srv.Close()
}
