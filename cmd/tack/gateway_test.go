package main

// End-to-end tests of reaching the API through what companies put in the
// way: a key helper whose keys expire, a proxy, a certificate authority of
// their own, client certificates, a bearer token with custom headers, and
// model ids of their own behind the aliases.

import (
	"crypto/tls"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/tackcode/tack/internal/llm"
	"github.com/tackcode/tack/internal/llm/llmtest"
	"github.com/tackcode/tack/internal/llm/transport/transporttest"
)

// gatewayHost is a name no resolver knows: requests reach it only through
// the test proxy, which maps it to the fake API.
const gatewayHost = "api.tack-test.invalid"

// keyHelper writes a helper that prints key-N on its Nth run (counted in a
// file) into the user's settings, and returns the counter file.
func keyHelper(t *testing.T, e *env, more string) string {
	t.Helper()
	counter := filepath.Join(e.home, "runs")
	script := filepath.Join(e.home, "key-helper.sh")
	body := fmt.Sprintf("#!/bin/sh\nn=$(cat %q 2>/dev/null || echo 0); n=$((n+1)); echo $n > %q; echo \"key-$n\"\n", counter, counter)
	if err := os.WriteFile(script, []byte(body), 0o755); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(e.home, ".claude")
	os.MkdirAll(dir, 0o755)
	settings := fmt.Sprintf(`{"apiKeyHelper": %q%s}`, script, more)
	if err := os.WriteFile(filepath.Join(dir, "settings.json"), []byte(settings), 0o644); err != nil {
		t.Fatal(err)
	}
	e.extra = append(e.extra, "ANTHROPIC_API_KEY=")
	return counter
}

func helperRuns(t *testing.T, counter string) int {
	t.Helper()
	b, err := os.ReadFile(counter)
	if err != nil {
		t.Fatal(err)
	}
	var n int
	fmt.Sscan(string(b), &n)
	return n
}

func TestAPIKeyHelperRunsAgainAfterA401(t *testing.T) {
	e := newEnv(t)
	// The gateway takes only the helper's second key: the first has expired.
	e.srv = llmtest.Start(t, llmtest.Options{Turns: []llmtest.Turn{llmtest.Reply(llmtest.Text("through"))},
		Authorize: func(h http.Header) bool { return h.Get("x-api-key") == "key-2" }})
	counter := keyHelper(t, e, "")
	out, errOut := e.run("-p", "hi")
	if e.status != 0 || strings.TrimSpace(out) != "through" {
		t.Fatalf("exit %d, stdout %q, stderr:\n%s", e.status, out, errOut)
	}
	reqs := e.srv.Requests()
	if len(reqs) != 2 || !reqs[0].Unauthorized || reqs[0].Header.Get("x-api-key") != "key-1" {
		t.Fatalf("%d requests: want one refused with key-1, then one with key-2", len(reqs))
	}
	// Sent as Claude Code sends a helper's key: both headers.
	if h := reqs[1].Header; h.Get("x-api-key") != "key-2" || h.Get("Authorization") != "Bearer key-2" {
		t.Errorf("second request: x-api-key %q, authorization %q", h.Get("x-api-key"), h.Get("Authorization"))
	}
	if n := helperRuns(t, counter); n != 2 {
		t.Errorf("the helper ran %d times, want 2 (at the start, after the 401)", n)
	}
	if strings.Contains(errOut, "retrying") {
		t.Errorf("a refreshed key is no retry to announce: %s", errOut)
	}
}

func TestAPIKeyHelperKeyIsFetchedAgainAfterItsTTL(t *testing.T) {
	e := newEnv(t, llmtest.Reply(llmtest.ToolUse("Read", map[string]string{"file_path": "notes.txt"})), llmtest.Reply(llmtest.Text("read it")))
	e.write("notes.txt", "hello")
	counter := keyHelper(t, e, `, "env": {"CLAUDE_CODE_API_KEY_HELPER_TTL_MS": "1"}`)
	out, errOut := e.run("-p", "read notes.txt")
	if e.status != 0 || strings.TrimSpace(out) != "read it" {
		t.Fatalf("exit %d, stdout %q, stderr:\n%s", e.status, out, errOut)
	}
	// The key of the start is stale (1 ms) by the second request at the
	// latest, which comes after a whole response and a tool call.
	if n := helperRuns(t, counter); n < 2 {
		t.Errorf("the helper ran %d times over two requests with a 1 ms TTL", n)
	}
	reqs := e.srv.Requests()
	if len(reqs) != 2 || reqs[1].Header.Get("x-api-key") == "key-1" {
		t.Errorf("the second request still carries the first key")
	}
}

func TestAPIKeyHelperTTLThatIsNoNumberIsRefused(t *testing.T) {
	e := newEnv(t)
	keyHelper(t, e, "")
	e.extra = append(e.extra, "CLAUDE_CODE_API_KEY_HELPER_TTL_MS=5m")
	_, errOut := e.run("-p", "hi")
	if e.status != 1 || !strings.Contains(errOut, `CLAUDE_CODE_API_KEY_HELPER_TTL_MS="5m": want a number of milliseconds`) {
		t.Errorf("exit %d: %s", e.status, errOut)
	}
}

func TestAuthTokenAndCustomHeadersReachTheAPI(t *testing.T) {
	e := newEnv(t, llmtest.Reply(llmtest.Text("ok")))
	e.extra = []string{"ANTHROPIC_API_KEY=", "ANTHROPIC_AUTH_TOKEN=gw-token", "ANTHROPIC_CUSTOM_HEADERS=X-Team: infra\nX-Cost-Center: 42"}
	if out, errOut := e.run("-p", "hi"); e.status != 0 || strings.TrimSpace(out) != "ok" {
		t.Fatalf("exit %d: %s", e.status, errOut)
	}
	h := e.srv.Requests()[0].Header
	if h.Get("Authorization") != "Bearer gw-token" || h.Get("x-api-key") != "" || h.Get("X-Team") != "infra" || h.Get("X-Cost-Center") != "42" {
		t.Errorf("headers %v", h)
	}
}

// tlsAPI is a fake API over TLS with a certificate of ca for gatewayHost
// and 127.0.0.1; configure adjusts the TLS config.
func tlsAPI(t *testing.T, ca *transporttest.CA, configure func(*tls.Config), turns ...llmtest.Turn) *llmtest.Server {
	t.Helper()
	cfg := &tls.Config{Certificates: []tls.Certificate{ca.Server(gatewayHost, "127.0.0.1")}}
	if configure != nil {
		configure(cfg)
	}
	return llmtest.Start(t, llmtest.Options{Turns: turns, TLS: cfg})
}

func hostPort(t *testing.T, url string) string {
	t.Helper()
	_, port, err := net.SplitHostPort(strings.TrimPrefix(url, "https://"))
	if err != nil {
		t.Fatal(err)
	}
	return port
}

func TestHTTPSProxyFromSettingsAndAnExtraCA(t *testing.T) {
	ca := transporttest.NewCA(t, "corp-ca")
	e := newEnv(t)
	e.srv = tlsAPI(t, ca, nil, llmtest.Reply(llmtest.Text("via the proxy")))
	proxy := transporttest.NewProxy(t, map[string]string{gatewayHost: strings.TrimPrefix(e.srv.URL(), "https://")})
	e.settings("settings.local.json", fmt.Sprintf(`{"env": {"HTTPS_PROXY": %q}}`, proxy.URL))
	base := "https://" + gatewayHost + ":" + hostPort(t, e.srv.URL())
	e.extra = []string{"ANTHROPIC_BASE_URL=" + base, "NODE_EXTRA_CA_CERTS=" + ca.CertFile}
	out, errOut := e.run("-p", "hi")
	if e.status != 0 || strings.TrimSpace(out) != "via the proxy" {
		t.Fatalf("exit %d, stdout %q, stderr:\n%s", e.status, out, errOut)
	}
	if got := proxy.Requests(); len(got) == 0 || got[0] != "CONNECT "+gatewayHost+":"+hostPort(t, e.srv.URL()) {
		t.Errorf("the proxy saw %q", got)
	}
	// Without the CA the certificate is refused, and the error says what to set.
	e.srv.Append(llmtest.Reply(llmtest.Text("never")))
	e.extra = []string{"ANTHROPIC_BASE_URL=" + base, "CLAUDE_CODE_MAX_RETRIES=2"}
	_, errOut = e.run("-p", "hi")
	last := lastLine(errOut)
	if e.status != 1 || !strings.Contains(last, "its TLS certificate is not trusted") || !strings.Contains(last, "NODE_EXTRA_CA_CERTS") ||
		!strings.Contains(last, "SSL_CERT_FILE") || strings.Contains(errOut, "retrying") {
		t.Errorf("exit %d: %s", e.status, errOut)
	}
}

func TestHTTPBaseURLThroughHTTPProxy(t *testing.T) {
	e := newEnv(t, llmtest.Reply(llmtest.Text("plain proxy")))
	addr := strings.TrimPrefix(e.srv.URL(), "http://")
	proxy := transporttest.NewProxy(t, map[string]string{gatewayHost: addr})
	base := "http://" + gatewayHost + ":" + hostPort(t, "https://"+addr)
	e.extra = []string{"ANTHROPIC_BASE_URL=" + base, "http_proxy=" + proxy.URL}
	out, errOut := e.run("-p", "hi")
	if e.status != 0 || strings.TrimSpace(out) != "plain proxy" {
		t.Fatalf("exit %d, stdout %q, stderr:\n%s", e.status, out, errOut)
	}
	if got := proxy.Requests(); len(got) == 0 || got[0] != "POST "+base+"/v1/messages" {
		t.Errorf("the proxy saw %q", got)
	}
}

func TestProxyThatRefusesIsNamed(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := "http://" + l.Addr().String()
	l.Close()
	e := newEnv(t)
	e.extra = []string{"ANTHROPIC_BASE_URL=https://" + gatewayHost, "HTTPS_PROXY=" + closed, "CLAUDE_CODE_MAX_RETRIES=1"}
	_, errOut := e.run("-p", "hi")
	want := "tack: API unreachable at https://" + gatewayHost + " through the proxy " + closed +
		" (HTTPS_PROXY): the proxy refused the connection (2 attempts). Check HTTPS_PROXY, or list the host in NO_PROXY to reach it directly."
	if e.status != 1 || lastLine(errOut) != want {
		t.Errorf("exit %d, last line\n got %q\nwant %q", e.status, lastLine(errOut), want)
	}
}

func TestClientCertificateForMutualTLS(t *testing.T) {
	ca := transporttest.NewCA(t, "corp-ca")
	e := newEnv(t)
	e.srv = tlsAPI(t, ca, func(c *tls.Config) {
		c.ClientAuth = tls.RequireAndVerifyClientCert
		c.ClientCAs = ca.Pool
		// In TLS 1.2 the refusal ends the handshake; in 1.3 it comes after
		// it, as a broken write or a reset, depending on timing.
		c.MaxVersion = tls.VersionTLS12
	}, llmtest.Reply(llmtest.Text("mutual")))
	cert, key := ca.Client("laptop")
	e.extra = []string{"SSL_CERT_FILE=" + ca.CertFile, "CLAUDE_CODE_CLIENT_CERT=" + cert, "CLAUDE_CODE_CLIENT_KEY=" + key}
	out, errOut := e.run("-p", "hi")
	if e.status != 0 || strings.TrimSpace(out) != "mutual" {
		t.Fatalf("exit %d, stdout %q, stderr:\n%s", e.status, out, errOut)
	}
	// Without it the server ends the handshake, and the error says what to set.
	e.extra = []string{"SSL_CERT_FILE=" + ca.CertFile, "CLAUDE_CODE_MAX_RETRIES=2"}
	_, errOut = e.run("-p", "hi")
	last := lastLine(errOut)
	if e.status != 1 || !strings.Contains(last, "the server refused the TLS handshake") || !strings.Contains(last, "CLAUDE_CODE_CLIENT_CERT") {
		t.Errorf("exit %d: %s", e.status, errOut)
	}
	// A certificate file that is not there fails the first request at
	// once, naming it.
	missing := filepath.Join(e.home, "gone.crt")
	e.extra = []string{"SSL_CERT_FILE=" + ca.CertFile, "CLAUDE_CODE_CLIENT_CERT=" + missing, "CLAUDE_CODE_CLIENT_KEY=" + key}
	_, errOut = e.run("-p", "hi")
	if want := "tack: CLAUDE_CODE_CLIENT_CERT: read the client certificate: open " + missing + ": no such file or directory. Fix the file, or unset the variable."; e.status != 1 || lastLine(errOut) != want {
		t.Errorf("exit %d, last line\n got %q\nwant %q", e.status, lastLine(errOut), want)
	}
	if n := len(e.srv.Requests()); n != 1 {
		t.Errorf("%d requests reached the API, want only the one with the certificate", n)
	}
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return lines[len(lines)-1]
}

// The aliases opus, sonnet and haiku resolve to the deployment's ids
// (ANTHROPIC_DEFAULT_*_MODEL) wherever a model is named: the default main
// model, --model, --fallback-model, a subagent's model and the small model
// (here the auto-mode classifier's).
func TestAliasesResolveToTheDeploymentsModelIDs(t *testing.T) {
	const opus, sonnet, haiku = "claude-opus-5-5-gateway", "claude-sonnet-5-5-gateway", "claude-haiku-4-5-gateway"
	aliases := []string{"ANTHROPIC_DEFAULT_OPUS_MODEL=" + opus, "ANTHROPIC_DEFAULT_SONNET_MODEL=" + sonnet, "ANTHROPIC_DEFAULT_HAIKU_MODEL=" + haiku}
	quick := llmtest.FirstUserContains("QUICK-JOB")
	main := func(r *llmtest.Request) bool { return !quick(r) && r.Tool("decide") == nil }
	classifier := func(r *llmtest.Request) bool { return !quick(r) && r.Tool("decide") != nil }
	allow := llm.Block(llmtest.ToolUse("decide", map[string]string{"decision": "allow", "reason": "asked for"}))
	e := newEnv(t)
	e.srv = llmtest.Start(t, llmtest.Options{Turns: []llmtest.Turn{
		{Content: []llm.Block{llmtest.ToolUse("Bash", map[string]any{"command": "touch made.txt"})}, When: main},
		{Content: []llm.Block{allow}, When: classifier},
		{Content: []llm.Block{llmtest.ToolUse("Agent", map[string]any{"subagent_type": "quick", "description": "a task", "prompt": "QUICK-JOB"})}, When: main},
		{Content: []llm.Block{allow}, When: classifier},
		{Content: []llm.Block{llmtest.Text("quick done")}, When: quick},
		{Content: []llm.Block{llmtest.Text("all done")}, When: main},
	}})
	e.extra = aliases
	out, errOut := e.run("-p", "go", "--permission-mode", "auto", "--agents", `{"quick": {"description": "Quick", "prompt": "You are quick.", "model": "haiku"}}`)
	if e.status != 0 || strings.TrimSpace(out) != "all done" {
		t.Fatalf("exit %d, stdout %q, stderr:\n%s", e.status, out, errOut)
	}
	models := map[string][]string{}
	for _, r := range e.srv.Requests() {
		kind := "main"
		switch {
		case quick(&r):
			kind = "subagent"
		case classifier(&r):
			kind = "small"
		}
		models[kind] = append(models[kind], r.Model)
	}
	for kind, want := range map[string]string{"main": opus, "subagent": haiku, "small": haiku} {
		got := slices.Compact(models[kind])
		if len(got) != 1 || got[0] != want {
			t.Errorf("%s requests asked for %q, want %s", kind, models[kind], want)
		}
	}

	// --model and --fallback-model: the main model stays overloaded, and
	// the fallback takes over.
	overloaded := []llmtest.Fault{{Status: 529, RetryAfter: "0"}, {Status: 529, RetryAfter: "0"}}
	e.srv = llmtest.New(t, llmtest.Turn{Content: []llm.Block{llmtest.Text("fell back")}, Faults: overloaded})
	e.extra = append(aliases, "CLAUDE_CODE_MAX_RETRIES=1")
	out, errOut = e.run("-p", "hi", "--model", "sonnet", "--fallback-model", "opus")
	if e.status != 0 || strings.TrimSpace(out) != "fell back" {
		t.Fatalf("exit %d, stdout %q, stderr:\n%s", e.status, out, errOut)
	}
	var got []string
	for _, r := range e.srv.Requests() {
		got = append(got, r.Model)
	}
	if want := []string{sonnet, sonnet, opus}; !slices.Equal(got, want) {
		t.Errorf("models asked %q, want %q", got, want)
	}
}
