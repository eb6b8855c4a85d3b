package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tackcode/tack/internal/llm/llmtest"
)

// cmdEnv is a config dir, a managed settings path and a project, with no
// credentials in the environment.
type cmdEnv struct {
	configDir, project string
}

func newCmdEnv(t *testing.T) cmdEnv {
	t.Helper()
	e := cmdEnv{configDir: t.TempDir(), project: t.TempDir()}
	t.Setenv("CLAUDE_CONFIG_DIR", e.configDir)
	t.Setenv("TACK_MANAGED_SETTINGS", filepath.Join(e.configDir, "managed-settings.json"))
	t.Setenv("ANTHROPIC_API_KEY", "")
	t.Setenv("ANTHROPIC_AUTH_TOKEN", "")
	t.Setenv("ANTHROPIC_BASE_URL", "")
	t.Chdir(e.project)
	return e
}

// tack runs the command in-process with stdin.
func (e cmdEnv) tack(t *testing.T, stdin string, args ...string) (string, string, int) {
	t.Helper()
	var out, errOut bytes.Buffer
	code := Main(context.Background(), args, IO{In: strings.NewReader(stdin), Out: &out, Err: &errOut})
	return out.String(), errOut.String(), code
}

func (e cmdEnv) writeUserSettings(t *testing.T, json string) string {
	t.Helper()
	path := filepath.Join(e.configDir, "settings.json")
	if err := os.WriteFile(path, []byte(json), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// The keys `claude auth status --json` prints (Claude Code 2.1.328, with
// ANTHROPIC_API_KEY set and an empty HOME), in its order.
var claudeAuthKeys = []string{"loggedIn", "authMethod", "apiProvider", "analyticsDisabled", "projectsDirectory",
	"configDirectory", "loginExpiresAt", "consoleProfileSignInOffered", "apiKeySource"}

// jsonKeys are the top-level keys of an object, in order.
func jsonKeys(t *testing.T, s string) []string {
	t.Helper()
	dec := json.NewDecoder(strings.NewReader(s))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		t.Fatalf("not a JSON object: %q", s)
	}
	var keys []string
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			t.Fatal(err)
		}
		keys = append(keys, tok.(string))
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			t.Fatal(err)
		}
	}
	return keys
}

// auth status prints what Claude Code prints, key for key, for each kind
// of credentials, and exits 1 when there are none (still printing JSON,
// which the ACP adapters parse).
func TestAuthStatusJSONIsClaudeCodes(t *testing.T) {
	e := newCmdEnv(t)
	type want struct {
		loggedIn           bool
		method, source     string
		code               int
		withoutSourceField bool
	}
	cases := []struct {
		name  string
		setup func()
		want  want
	}{
		{"none", func() {}, want{false, "none", "", 1, true}},
		{"api key", func() { t.Setenv("ANTHROPIC_API_KEY", "sk-ant-test1234567890abcd") }, want{true, "api_key", "ANTHROPIC_API_KEY", 0, false}},
		{"token", func() { t.Setenv("ANTHROPIC_AUTH_TOKEN", "tok-abcdef1234567890") }, want{true, "oauth_token", "", 0, true}},
		{"helper", func() { e.writeUserSettings(t, `{"apiKeyHelper": "echo sk-from-helper"}`) }, want{true, "api_key_helper", "apiKeyHelper", 0, false}},
		{"stored", func() { e.tack(t, "sk-ant-stored-0123456789\n", "auth", "login") }, want{true, "api_key", "/login managed key", 0, false}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			os.Remove(filepath.Join(e.configDir, "settings.json"))
			os.Remove(filepath.Join(e.configDir, "tack-credentials.json"))
			t.Setenv("ANTHROPIC_API_KEY", "")
			t.Setenv("ANTHROPIC_AUTH_TOKEN", "")
			tc.setup()
			for _, args := range [][]string{{"auth", "status"}, {"auth", "status", "--json"}} {
				out, errOut, code := e.tack(t, "", args...)
				if code != tc.want.code || errOut != "" {
					t.Fatalf("%v: exit %d, err %q", args, code, errOut)
				}
				wantKeys := claudeAuthKeys
				if tc.want.withoutSourceField {
					wantKeys = claudeAuthKeys[:len(claudeAuthKeys)-1]
				}
				if got := jsonKeys(t, out); strings.Join(got, " ") != strings.Join(wantKeys, " ") {
					t.Errorf("%v: keys %v, want %v", args, got, wantKeys)
				}
				var st authStatusJSON
				if err := json.Unmarshal([]byte(out), &st); err != nil {
					t.Fatal(err)
				}
				wantStatus := authStatusJSON{LoggedIn: tc.want.loggedIn, AuthMethod: tc.want.method, APIProvider: "firstParty",
					AnalyticsDisabled: true, ProjectsDirectory: filepath.Join(e.configDir, "projects"), ConfigDirectory: e.configDir,
					APIKeySource: tc.want.source}
				if st != wantStatus {
					t.Errorf("%v: %+v, want %+v", args, st, wantStatus)
				}
			}
		})
	}
}

// The text form says where the credentials come from, and shows the key
// masked, never whole; the helper is named, not run.
func TestAuthStatusTextSaysWhereFrom(t *testing.T) {
	e := newCmdEnv(t)
	settings := e.writeUserSettings(t, `{"env": {"ANTHROPIC_API_KEY": "sk-ant-fromsettings-9876"}}`)
	out, errOut, code := e.tack(t, "", "auth", "status", "--text")
	want := "API key: ANTHROPIC_API_KEY\nFrom: env of user " + settings + ":1:31\nKey: sk-ant…9876\n"
	if code != 0 || out != want {
		t.Errorf("settings env: exit %d, out %q, want %q (err %q)", code, out, want, errOut)
	}

	canary := filepath.Join(t.TempDir(), "ran")
	settings = e.writeUserSettings(t, `{"apiKeyHelper": "touch `+canary+`; echo sk-h"}`)
	out, _, code = e.tack(t, "", "auth", "status", "--text")
	want = "API key from a helper command: apiKeyHelper\nFrom: user " + settings + ":1:18\nHelper: touch " + canary + "; echo sk-h\n"
	if code != 0 || out != want {
		t.Errorf("helper: exit %d, out %q, want %q", code, out, want)
	}
	if _, err := os.Stat(canary); err == nil {
		t.Error("auth status ran the helper")
	}

	os.Remove(settings)
	out, _, code = e.tack(t, "", "auth", "status", "--text")
	if code != 1 || !strings.HasPrefix(out, "Not logged in. Set ANTHROPIC_API_KEY") {
		t.Errorf("none: exit %d, out %q", code, out)
	}
}

// login stores the key given on standard input in a private file, which a
// session then authenticates with; logout removes it.
func TestAuthLoginIsUsedBySessionsAndLogoutRemovesIt(t *testing.T) {
	e := newCmdEnv(t)
	const key = "sk-ant-stored-0123456789"
	out, errOut, code := e.tack(t, key+"\n", "auth", "login")
	path := filepath.Join(e.configDir, "tack-credentials.json")
	if code != 0 || out != "Stored the API key in "+path+".\n" {
		t.Fatalf("login: exit %d, out %q, err %q", code, out, errOut)
	}
	info, err := os.Stat(path)
	if err != nil || info.Mode().Perm() != 0o600 {
		t.Fatalf("credentials file: %v, mode %v", err, info.Mode())
	}
	out, _, _ = e.tack(t, "", "auth", "status", "--text")
	if strings.Contains(out, key) || !strings.Contains(out, "From: "+path+"\n") {
		t.Errorf("status after login: %q", out)
	}

	srv := llmtest.New(t, llmtest.Reply(llmtest.Text("hello")))
	t.Setenv("ANTHROPIC_BASE_URL", srv.URL())
	if out, errOut, code := e.tack(t, "", "-p", "hi"); code != 0 || out != "hello\n" {
		t.Fatalf("session: exit %d, out %q, err %q", code, out, errOut)
	}
	if got := srv.Requests()[0].Header.Get("x-api-key"); got != key {
		t.Errorf("the session sent x-api-key %q, want the stored key", got)
	}

	out, _, code = e.tack(t, "", "auth", "logout")
	if code != 0 || out != "Removed the stored API key ("+path+").\n" {
		t.Errorf("logout: exit %d, out %q", code, out)
	}
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Errorf("the credentials file is still there: %v", err)
	}
	if _, _, code := e.tack(t, "", "auth", "status"); code != 1 {
		t.Errorf("status after logout: exit %d, want 1", code)
	}
	if _, errOut, code := e.tack(t, "", "auth", "login"); code != 1 || !strings.Contains(errOut, "no key given") {
		t.Errorf("login without a key: exit %d, err %q", code, errOut)
	}
}

// A session takes its key from apiKeyHelper, run once at its start, as
// auth status says it would.
func TestSessionUsesTheKeyHelper(t *testing.T) {
	e := newCmdEnv(t)
	e.writeUserSettings(t, `{"apiKeyHelper": "echo sk-from-helper"}`)
	srv := llmtest.New(t, llmtest.Reply(llmtest.Text("hello")))
	t.Setenv("ANTHROPIC_BASE_URL", srv.URL())
	if out, errOut, code := e.tack(t, "", "-p", "hi"); code != 0 || out != "hello\n" {
		t.Fatalf("session: exit %d, out %q, err %q", code, out, errOut)
	}
	if got := srv.Requests()[0].Header.Get("x-api-key"); got != "sk-from-helper" {
		t.Errorf("x-api-key %q, want the helper's", got)
	}

	e.writeUserSettings(t, `{"apiKeyHelper": "echo nope >&2; exit 3"}`)
	_, errOut, code := e.tack(t, "", "-p", "hi")
	if code != 1 || !strings.Contains(errOut, "apiKeyHelper (user ") || !strings.Contains(errOut, "nope") {
		t.Errorf("failing helper: exit %d, err %q", code, errOut)
	}
}
