package cli

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tackcode/tack/internal/llm/llmtest"
)

// trustEnv is a project with a SessionStart hook, and a config dir.
type trustEnv struct {
	project, configDir, canary string
}

func newTrustEnv(t *testing.T) trustEnv {
	t.Helper()
	e := trustEnv{project: t.TempDir(), configDir: t.TempDir()}
	e.canary = filepath.Join(t.TempDir(), "session-start")
	if err := os.MkdirAll(filepath.Join(e.project, ".claude"), 0o755); err != nil {
		t.Fatal(err)
	}
	settings := `{"hooks": {"SessionStart": [{"hooks": [{"type": "command", "command": "touch ` + e.canary + `"}]}]}}`
	if err := os.WriteFile(filepath.Join(e.project, ".claude", "settings.json"), []byte(settings), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("CLAUDE_CONFIG_DIR", e.configDir)
	t.Setenv("TACK_MANAGED_SETTINGS", filepath.Join(e.configDir, "managed-settings.json"))
	return e
}

func (e trustEnv) main(t *testing.T, args ...string) (string, string, int) {
	t.Helper()
	var out, errOut bytes.Buffer
	code := Main(context.Background(), args, IO{In: strings.NewReader(""), Out: &out, Err: &errOut})
	return out.String(), errOut.String(), code
}

func (e trustEnv) ran() bool {
	_, err := os.Stat(e.canary)
	return err == nil
}

// Print mode trusts the folder, as Claude Code's does; requireWorkspaceTrust
// in the managed settings makes it refuse until `tack trust DIR`.
func TestPrintModeAndRequireWorkspaceTrust(t *testing.T) {
	e := newTrustEnv(t)
	srv := llmtest.New(t, llmtest.Reply(llmtest.Text("first")), llmtest.Reply(llmtest.Text("after trust")))
	t.Setenv("ANTHROPIC_API_KEY", "k")
	t.Setenv("ANTHROPIC_BASE_URL", srv.URL())
	t.Chdir(e.project)

	out, errOut, code := e.main(t, "-p", "hi")
	if code != 0 || out != "first\n" || !e.ran() {
		t.Fatalf("trusted by default: exit %d, out %q, err %q, hook ran %v", code, out, errOut, e.ran())
	}
	os.Remove(e.canary)

	managed := filepath.Join(e.configDir, "managed-settings.json")
	os.WriteFile(managed, []byte(`{"requireWorkspaceTrust": true}`), 0o644)
	out, errOut, code = e.main(t, "-p", "hi")
	want := "tack: " + e.project + " is not a trusted folder, and requireWorkspaceTrust (managed " + managed +
		":1:27) forbids running in one: trust it first with `tack trust " + e.project + "`\n"
	if code != 1 || out != "" || errOut != want {
		t.Errorf("refused: exit %d, out %q, err\n%q\nwant\n%q", code, out, errOut, want)
	}
	if e.ran() || len(srv.Requests()) != 1 {
		t.Fatal("the refused session ran something")
	}

	out, errOut, code = e.main(t, "trust", e.project)
	if code != 0 || !strings.HasPrefix(out, "Trusted "+e.project+" (recorded in "+filepath.Join(e.configDir, ".claude.json")+").\n") ||
		!strings.Contains(out, "  - hooks (.claude/settings.json)\n") {
		t.Fatalf("tack trust: exit %d, out %q, err %q", code, out, errOut)
	}
	out, errOut, code = e.main(t, "-p", "hi")
	if code != 0 || out != "after trust\n" || !e.ran() {
		t.Errorf("after tack trust: exit %d, out %q, err %q, hook ran %v", code, out, errOut, e.ran())
	}
}

func TestTrustCommand(t *testing.T) {
	e := newTrustEnv(t)
	bare := t.TempDir()
	t.Chdir(bare)

	out, _, code := e.main(t, "trust", "--status", e.project)
	if code != 1 || out != e.project+" is not trusted.\nWhat it brings, which runs only when it is trusted:\n  - hooks (.claude/settings.json)\nTrust it with: tack trust "+e.project+"\n" {
		t.Errorf("--status before: exit %d, out %q", code, out)
	}
	// The working directory by default.
	if out, _, code := e.main(t, "trust"); code != 0 || out != "Trusted "+bare+" (recorded in "+filepath.Join(e.configDir, ".claude.json")+").\nIt brings no code of its own.\n" {
		t.Errorf("tack trust: exit %d, out %q", code, out)
	}
	if out, _, code := e.main(t, "trust", "--status"); code != 0 || out != bare+" is trusted ("+filepath.Join(e.configDir, ".claude.json")+").\nIt brings no code of its own.\n" {
		t.Errorf("--status after: exit %d, out %q", code, out)
	}
	// A bare folder under a trusted one is trusted through it.
	inner := filepath.Join(bare, "inner")
	os.Mkdir(inner, 0o755)
	if out, _, code := e.main(t, "trust", "--status", inner); code != 0 || !strings.HasPrefix(out, inner+" is trusted, through "+bare+" (") {
		t.Errorf("--status inner: exit %d, out %q", code, out)
	}
	if _, errOut, code := e.main(t, "trust", filepath.Join(bare, "missing")); code != 1 || !strings.Contains(errOut, "missing") {
		t.Errorf("a missing folder: exit %d, err %q", code, errOut)
	}
	if _, errOut, code := e.main(t, "trust", "a", "b"); code != 1 || !strings.Contains(errOut, "accepts at most 1 arg") {
		t.Errorf("two folders: exit %d, err %q", code, errOut)
	}
}
