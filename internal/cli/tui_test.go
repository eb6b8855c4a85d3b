package cli

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/tackcode/tack/agent"
)

// Without -p, tack opens the terminal UI: it needs a terminal, and, in a
// trusted folder, fails before touching one when the session cannot start.
func TestNoPrintFlagOpensTheUI(t *testing.T) {
	t.Chdir(t.TempDir())
	empty := func(string) string { return "" }
	var out, errOut bytes.Buffer
	code := Main(context.Background(), nil, IO{In: strings.NewReader(""), Out: &out, Err: &errOut, Getenv: empty})
	if code != 1 || !strings.Contains(errOut.String(), "needs a terminal") {
		t.Errorf("piped input: code %d, stderr %q", code, errOut.String())
	}

	t.Setenv("ANTHROPIC_API_KEY", "")
	t.Setenv("ANTHROPIC_AUTH_TOKEN", "")
	t.Setenv("CLAUDE_CONFIG_DIR", t.TempDir())
	t.Setenv("HOME", t.TempDir())
	// A trusted folder: the UI asks nothing before starting the session.
	if _, err := agent.TrustWorkspace(agent.Options{}); err != nil {
		t.Fatal(err)
	}
	out.Reset()
	errOut.Reset()
	code = Main(context.Background(), []string{"--model", "haiku", "hello"}, IO{In: strings.NewReader(""), Out: &out, Err: &errOut, StdinIsTerminal: true})
	if code != 1 || !strings.Contains(errOut.String(), "no API key") {
		t.Errorf("no credentials: code %d, stderr %q", code, errOut.String())
	}
	if out.Len() != 0 {
		t.Errorf("the terminal was written to: %q", out.String())
	}

	out.Reset()
	errOut.Reset()
	code = Main(context.Background(), []string{"--permission-mode", "nope"}, IO{In: strings.NewReader(""), Out: &out, Err: &errOut, StdinIsTerminal: true})
	if code != 1 || !strings.Contains(errOut.String(), "invalid --permission-mode") {
		t.Errorf("bad flag: code %d, stderr %q", code, errOut.String())
	}
}
