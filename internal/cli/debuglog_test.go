package cli

import (
	"bytes"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestDebugFilter(t *testing.T) {
	cases := []struct {
		filter      string
		kept, extra []string // categories kept; unknown names warned about
	}{
		{"all", []string{"", "api", "hooks", "mcp", "permissions"}, nil},
		{"api,hooks", []string{"api", "hooks"}, nil},
		{"!mcp,!statsig", []string{"", "api", "hooks", "permissions"}, nil},
		{"fix the bug", nil, []string{"fix the bug"}},
	}
	for _, c := range cases {
		f, unknown := parseDebugFilter(c.filter)
		var kept []string
		for _, cat := range []string{"", "api", "hooks", "mcp", "permissions"} {
			if f.allows(cat) {
				kept = append(kept, cat)
			}
		}
		if strings.Join(kept, "|") != strings.Join(c.kept, "|") || strings.Join(unknown, "|") != strings.Join(c.extra, "|") {
			t.Errorf("%q keeps %q and warns of %q", c.filter, kept, unknown)
		}
	}
}

// TestDebugLogOfTheUI: the UI owns the terminal, so its debug log goes to
// a file under the config dir, which "latest" links to; the path is told
// on stderr before the UI starts.
func TestDebugLogOfTheUI(t *testing.T) {
	dir := t.TempDir()
	var errOut bytes.Buffer
	stdio := IO{Err: &errOut, Getenv: func(k string) string {
		if k == "CLAUDE_CONFIG_DIR" {
			return dir
		}
		return ""
	}}
	cmd := newRootCmd(stdio)
	f := &printFlags{}
	cmd.ResetFlags()
	f.register(cmd)
	if err := cmd.ParseFlags([]string{"--debug=hooks"}); err != nil {
		t.Fatal(err)
	}
	log, closeLog, err := f.debugLog(cmd, stdio, true)
	if err != nil {
		t.Fatal(err)
	}
	log.With("category", "hooks").Debug("hook ended", "exit_code", 2)
	log.With("category", "api").Debug("API response")
	closeLog()
	data, err := os.ReadFile(filepath.Join(dir, "debug", "latest"))
	if err != nil {
		t.Fatal(err)
	}
	if s := string(data); !strings.Contains(s, "[DEBUG] [hooks] hook ended exit_code=2\n") || strings.Contains(s, "API response") {
		t.Errorf("the log file:\n%s", s)
	}
	if !strings.HasPrefix(errOut.String(), "tack: debug log: "+filepath.Join(dir, "debug", "tack-")) {
		t.Errorf("stderr %q", errOut.String())
	}
	if log.Handler().Enabled(t.Context(), slog.LevelDebug) {
		t.Error("lines of no category are kept under a category filter")
	}
}
