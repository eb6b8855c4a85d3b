package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/tackcode/tack/internal/llm/llmtest"

	"github.com/tackcode/tack/internal/testbin"
)

// TestHelperTack runs this test binary as tack, with the arguments after
// "--": the MCP server a doctor test configures (tack mcp serve).
func TestHelperTack(t *testing.T) {
	if os.Getenv("TACK_CLI_HELPER") != "1" {
		t.Skip("a helper process, run by other tests")
	}
	args := os.Args
	for i, a := range args {
		if a == "--" {
			args = args[i+1:]
			break
		}
	}
	os.Exit(Main(context.Background(), args, IO{In: os.Stdin, Out: os.Stdout, Err: os.Stderr}))
}

// writeUserMCP configures user-scope MCP servers in <config dir>/.claude.json.
func (e cmdEnv) writeUserMCP(t *testing.T, servers map[string]any) {
	t.Helper()
	b, err := json.Marshal(map[string]any{"mcpServers": servers})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(e.configDir, ".claude.json"), b, 0o600); err != nil {
		t.Fatal(err)
	}
}

// doctorLine finds the line of check, or fails.
func doctorLine(t *testing.T, out, check string) string {
	t.Helper()
	re := regexp.MustCompile(`(?m)^(ok|warn|fail) +` + regexp.QuoteMeta(check) + `: .*$`)
	line := re.FindString(out)
	if line == "" {
		t.Fatalf("no line for %s in:\n%s", check, out)
	}
	return line
}

// Every check has its line with a verdict; the API is asked once, with the
// credentials; an MCP server that serves is ok and one that cannot start
// fails with its error, which makes the exit status 1.
func TestDoctorChecksEachPart(t *testing.T) {
	e := newCmdEnv(t)
	clearNetworkEnv(t) // a network line each would count as results
	srv := llmtest.New(t)
	t.Setenv("ANTHROPIC_API_KEY", "sk-ant-doctor-0123456789")
	t.Setenv("ANTHROPIC_BASE_URL", srv.URL())
	good := map[string]any{"command": os.Args[0], "args": []string{"-test.run=^TestHelperTack$", "--", "mcp", "serve"},
		"env": map[string]string{"TACK_CLI_HELPER": "1"}}
	e.writeUserMCP(t, map[string]any{"good": good, "broken": map[string]any{"command": "/nonexistent/tack-mcp"}})

	out, errOut, code := e.tack(t, "", "doctor")
	if code != 1 {
		t.Errorf("exit %d, want 1 (a server fails); err %q", code, errOut)
	}
	for check, want := range map[string]string{
		"installation":     "tack ",
		"credentials":      "ok    credentials: ANTHROPIC_API_KEY sk-ant…6789 (environment)",
		"api":              "ok    api: " + srv.URL() + " answers",
		"settings user":    "ok    settings user: " + filepath.Join(e.configDir, "settings.json") + " (none)",
		"settings project": "ok    settings project: " + filepath.Join(e.project, ".claude", "settings.json") + " (none)",
		"settings local":   "ok    settings local: ",
		"settings managed": "ok    settings managed: ",
		"mcp good":         "ok    mcp good: ✓ Connected (user · ",
		"mcp broken":       "fail  mcp broken: ✗ Failed to connect (user · ",
		"sandbox":          "sandbox: ",
	} {
		if line := doctorLine(t, out, check); !strings.Contains(line, want) {
			t.Errorf("%s: %q, want it to hold %q", check, line, want)
		}
	}
	if line := doctorLine(t, out, "mcp broken"); !strings.Contains(line, "→ ") || !strings.Contains(line, "/nonexistent/tack-mcp") {
		t.Errorf("the failing server's line says no error: %q", line)
	}
	reqs := srv.Requests()
	if len(reqs) != 1 || reqs[0].Method != http.MethodGet || reqs[0].Path != "/v1/models" || reqs[0].Header.Get("x-api-key") != "sk-ant-doctor-0123456789" {
		t.Errorf("requests to the API: %+v", reqs)
	}

	e.writeUserMCP(t, map[string]any{"good": good})
	out, _, code = e.tack(t, "", "doctor", "--json")
	var results []checkResult
	if err := json.Unmarshal([]byte(out), &results); err != nil {
		t.Fatalf("--json: %v: %s", err, out)
	}
	if code != 0 || len(results) != 10 {
		t.Errorf("--json, all healthy: exit %d, %d results: %s", code, len(results), out)
	}
	for _, r := range results {
		if r.Check == "" || r.Detail == "" || r.Verdict != "ok" && r.Verdict != "warn" {
			t.Errorf("--json result %+v", r)
		}
	}
}

// Without credentials the credentials check fails with what to set, and
// the API is not asked.
func TestDoctorWithoutCredentials(t *testing.T) {
	e := newCmdEnv(t)
	out, _, code := e.tack(t, "", "doctor")
	if code != 1 {
		t.Errorf("exit %d, want 1", code)
	}
	if line := doctorLine(t, out, "credentials"); !strings.HasPrefix(line, "fail  credentials: no API key, token or apiKeyHelper → set ANTHROPIC_API_KEY") {
		t.Errorf("credentials: %q", line)
	}
	if line := doctorLine(t, out, "api"); !strings.HasPrefix(line, "warn  api: https://api.anthropic.com not checked") {
		t.Errorf("api: %q", line)
	}
}

// An unreachable API and one refusing the key each fail the api check
// with the cause and what to check.
func TestDoctorAPIUnreachableOrRefusing(t *testing.T) {
	e := newCmdEnv(t)
	t.Setenv("ANTHROPIC_API_KEY", "sk-ant-doctor-0123456789")
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := "http://" + ln.Addr().String()
	ln.Close()
	t.Setenv("ANTHROPIC_BASE_URL", closed)
	out, _, code := e.tack(t, "", "doctor")
	line := doctorLine(t, out, "api")
	if code != 1 || !strings.HasPrefix(line, "fail  api: cannot reach "+closed+": ") || !strings.Contains(line, "connection refused") ||
		!strings.HasSuffix(line, "→ check ANTHROPIC_BASE_URL, the network and any proxy") {
		t.Errorf("unreachable: exit %d, %q", code, line)
	}

	refusing := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusUnauthorized)
		fmt.Fprint(w, `{"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key"}}`)
	}))
	defer refusing.Close()
	t.Setenv("ANTHROPIC_BASE_URL", refusing.URL)
	out, _, code = e.tack(t, "", "doctor")
	line = doctorLine(t, out, "api")
	want := "fail  api: " + refusing.URL + " refused the credentials: API error 401 authentication_error: invalid x-api-key → check the API key or token"
	if code != 1 || line != want {
		t.Errorf("refused: exit %d\n%q\nwant\n%q", code, line, want)
	}
}

// A malformed settings file fails its line, naming file:line:col.
func TestDoctorNamesAMalformedSettingsFile(t *testing.T) {
	e := newCmdEnv(t)
	t.Setenv("ANTHROPIC_API_KEY", "sk-ant-doctor-0123456789")
	t.Setenv("ANTHROPIC_BASE_URL", llmtest.New(t).URL())
	path := filepath.Join(e.project, ".claude", "settings.local.json")
	os.MkdirAll(filepath.Dir(path), 0o755)
	os.WriteFile(path, []byte("{\n  \"permissions\": {\"defaultMode\": \"yolo\"}\n}\n"), 0o644)
	out, _, code := e.tack(t, "", "doctor")
	line := doctorLine(t, out, "settings local")
	if code != 1 || !strings.HasPrefix(line, "fail  settings local: "+path+":2:34: permissions.defaultMode: ") ||
		!strings.HasSuffix(line, "→ fix the file at the line and column named") {
		t.Errorf("exit %d, %q", code, line)
	}
	if line := doctorLine(t, out, "settings user"); !strings.HasPrefix(line, "ok ") {
		t.Errorf("the other files: %q", line)
	}
}

// In a folder the user has not trusted, doctor checks the folder's
// settings but does not run its apiKeyHelper; once trusted, the helper's
// key is what the API is asked with.
func TestDoctorRunsNoUntrustedHelper(t *testing.T) {
	e := newCmdEnv(t)
	srv := llmtest.New(t)
	t.Setenv("ANTHROPIC_BASE_URL", srv.URL())
	canary := filepath.Join(t.TempDir(), "ran")
	write(t, filepath.Join(e.project, ".claude", "settings.json"), `{"apiKeyHelper": "touch `+canary+`; echo sk-from-project-helper"}`)

	out, _, code := e.tack(t, "", "doctor")
	if line := doctorLine(t, out, "trust"); code != 1 || !strings.HasPrefix(line, "warn  trust: "+e.project+" is not trusted: ") ||
		!strings.HasSuffix(line, "→ trust it with tack trust "+e.project) {
		t.Errorf("untrusted: exit %d, %q", code, line)
	}
	if line := doctorLine(t, out, "credentials"); !strings.HasPrefix(line, "fail  credentials: ") {
		t.Errorf("untrusted: %q", line)
	}
	if _, err := os.Stat(canary); err == nil || len(srv.Requests()) != 0 {
		t.Fatal("doctor ran the helper of an untrusted folder, or asked the API")
	}

	if _, errOut, code := e.tack(t, "", "trust"); code != 0 {
		t.Fatalf("tack trust: %s", errOut)
	}
	out, _, _ = e.tack(t, "", "doctor")
	if line := doctorLine(t, out, "api"); !strings.HasPrefix(line, "ok    api: ") {
		t.Errorf("trusted: %q\n%s", line, out)
	}
	if _, err := os.Stat(canary); err != nil {
		t.Error("the trusted folder's helper did not run")
	}
	if reqs := srv.Requests(); len(reqs) != 1 || reqs[0].Header.Get("x-api-key") != "sk-from-project-helper" {
		t.Errorf("requests: %+v", reqs)
	}
}

// A sandbox the settings turn on but this machine cannot make fails its
// check, with what to do.
func TestDoctorSandboxEnabledButUnavailable(t *testing.T) {
	e := newCmdEnv(t)
	t.Setenv("ANTHROPIC_API_KEY", "sk-ant-doctor-0123456789")
	t.Setenv("ANTHROPIC_BASE_URL", llmtest.New(t).URL())
	e.writeUserSettings(t, `{"sandbox": {"enabled": true}}`)
	t.Setenv("TACK_SANDBOX", "bwrap")
	t.Setenv("PATH", t.TempDir()) // no bwrap to find
	out, _, code := e.tack(t, "", "doctor")
	line := doctorLine(t, out, "sandbox")
	if code != 1 || !strings.HasPrefix(line, "fail  sandbox: enabled in settings, but unavailable: ") ||
		!strings.HasSuffix(line, "→ install bubblewrap and allow unprivileged user namespaces, or set sandbox.enabled to false") {
		t.Errorf("exit %d, %q", code, line)
	}
}

// Each OpenAI-compatible provider of the settings has its line: ok with
// its models when its server takes the key, a failure naming the key's
// source when it refuses it, a failure naming the address when nothing
// listens there.
func TestDoctorChecksEachProvider(t *testing.T) {
	e := newCmdEnv(t)
	clearNetworkEnv(t)
	srv := llmtest.Start(t, llmtest.Options{ChatKey: "sk-local-good"})
	t.Setenv("ANTHROPIC_API_KEY", "sk-ant-doctor-0123456789")
	t.Setenv("ANTHROPIC_BASE_URL", srv.URL())
	t.Setenv("LOCAL_KEY", "sk-local-good")
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := "http://" + ln.Addr().String() + "/v1"
	ln.Close()
	path := e.writeUserSettings(t, fmt.Sprintf(`{"providers": {
  "local": {"type": "openai", "baseURL": %q, "apiKeyEnv": "LOCAL_KEY", "models": {"qwen3-coder": {"contextWindow": 131072}}},
  "stale": {"type": "openai", "baseURL": %q, "apiKey": "sk-local-old", "models": {"m": {"contextWindow": 8192}}},
  "gone": {"type": "openai", "baseURL": %q, "models": {"m": {"contextWindow": 8192}}}
}}`, srv.URL()+"/v1", srv.URL()+"/v1", closed))

	out, errOut, code := e.tack(t, "", "doctor")
	if code != 1 {
		t.Errorf("exit %d, want 1 (two providers fail); err %q", code, errOut)
	}
	want := map[string]string{
		"providers.local": "ok    providers.local: " + srv.URL() + "/v1 answers (key from apiKeyEnv (LOCAL_KEY)); models local/qwen3-coder",
		"providers.stale": "fail  providers.stale: " + srv.URL() + "/v1 refused the key from apiKey: HTTP 401",
		"providers.gone":  "fail  providers.gone: " + closed + ": ",
	}
	for check, w := range want {
		if line := doctorLine(t, out, check); !strings.HasPrefix(line, w) {
			t.Errorf("%s:\n%q\nwant it to start with\n%q", check, line, w)
		}
	}
	if line := doctorLine(t, out, "providers.stale"); !strings.Contains(line, "HTTP 401") || !strings.Contains(line, "→ check the key of providers.stale (user "+path+":3:3)") {
		t.Errorf("stale: %q", line)
	}
	if line := doctorLine(t, out, "providers.gone"); !strings.Contains(line, "connection refused") || !strings.Contains(line, "→ start the server") {
		t.Errorf("gone: %q", line)
	}
	var sawGood bool
	for _, r := range srv.Requests() {
		if r.Method == http.MethodGet && r.Path == "/v1/models" && r.Header.Get("Authorization") == "Bearer sk-local-good" {
			sawGood = true
		}
	}
	if !sawGood {
		t.Errorf("no GET /v1/models with the local key: %+v", srv.Requests())
	}
}

// tack doctor starts each configured language server once: one that
// starts is ok, one whose command does not exist fails and says what to
// fix.
func TestDoctorChecksEachLanguageServer(t *testing.T) {
	e := newCmdEnv(t)
	clearNetworkEnv(t)
	srv := llmtest.New(t)
	t.Setenv("ANTHROPIC_API_KEY", "sk-ant-doctor-0123456789")
	t.Setenv("ANTHROPIC_BASE_URL", srv.URL())
	gopls := testbin.Gopls(t)
	path := e.writeUserSettings(t, fmt.Sprintf(`{"lspServers": {
  "gopls": {"command": %q, "args": ["serve"], "extensionToLanguage": {".go": "go"}},
  "missing": {"command": "no-such-language-server", "extensionToLanguage": {".zz": "zz"}}
}}`, gopls))
	out, errOut, code := e.tack(t, "", "doctor")
	if code != 1 {
		t.Errorf("exit %d, want 1 (a server fails); err %q", code, errOut)
	}
	if line := doctorLine(t, out, "lsp gopls"); !strings.HasPrefix(line, "ok    lsp gopls: "+gopls+" starts") {
		t.Errorf("gopls: %q", line)
	}
	if line := doctorLine(t, out, "lsp missing"); !strings.HasPrefix(line, "fail  lsp missing: ") || !strings.Contains(line, "no-such-language-server") || !strings.Contains(line, path) {
		t.Errorf("missing: %q", line)
	}
}
