package agent_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/tackcode/tack/agent"
	"github.com/tackcode/tack/internal/llm/llmtest"
)

// settingsClient starts a client in opts.Cwd that reads only the user's
// settings, so that the local settings file is the test's to write.
func settingsClient(t *testing.T, opts agent.Options) *agent.Client {
	t.Helper()
	opts.SettingSources = []string{"user"}
	c, err := agent.NewClient(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

var allowLS = agent.PermissionUpdate{Type: "addRules", Behavior: "allow", Destination: "localSettings",
	Rules: []agent.PermissionRuleValue{{ToolName: "Bash", RuleContent: "ls *"}}}

// A rule saved to the local settings is inserted in place: only the bytes
// of the new element (or member) are added, the rest of the file and its
// mode kept.
func TestUpdatePermissionsSavesTheRuleInPlace(t *testing.T) {
	tests := []struct {
		name, before, want string
	}{
		{"no file", "", "{\n  \"permissions\": {\n    \"allow\": [\"Bash(ls *)\"]\n  }\n}\n"},
		{"other keys kept", "{\n    \"model\": \"opus\"\n}\n",
			"{\n    \"model\": \"opus\",\n    \"permissions\": {\n        \"allow\": [\"Bash(ls *)\"]\n    }\n}\n"},
		{"permissions without allow", "{\n  \"permissions\": {\n    \"deny\": [\"Read(./.env)\"]\n  }\n}\n",
			"{\n  \"permissions\": {\n    \"deny\": [\"Read(./.env)\"],\n    \"allow\": [\"Bash(ls *)\"]\n  }\n}\n"},
		{"appended", "{\"permissions\": {\"allow\": [\"Read\"]}}", "{\"permissions\": {\"allow\": [\"Read\", \"Bash(ls *)\"]}}"},
		{"empty list", "{\"permissions\": {\"allow\": []}}", "{\"permissions\": {\"allow\": [\"Bash(ls *)\"]}}"},
		{"already there", "{\"permissions\": {\"allow\": [\"Bash(ls *)\"]}}", "{\"permissions\": {\"allow\": [\"Bash(ls *)\"]}}"},
		{"crlf", "{\r\n  \"a\": 1\r\n}\r\n", "{\r\n  \"a\": 1,\r\n  \"permissions\": {\r\n    \"allow\": [\"Bash(ls *)\"]\r\n  }\r\n}\r\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			opts := testOptions(t, llmtest.New(t))
			path := filepath.Join(opts.Cwd, ".claude", "settings.local.json")
			if tt.before != "" {
				if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(path, []byte(tt.before), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			if err := settingsClient(t, opts).UpdatePermissions(allowLS); err != nil {
				t.Fatal(err)
			}
			got, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tt.want {
				t.Errorf("got\n%q\nwant\n%q", got, tt.want)
			}
			if !json.Valid(got) {
				t.Error("invalid JSON")
			}
			if tt.before != "" {
				if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o600 {
					t.Errorf("mode %v", fi.Mode().Perm())
				}
			}
		})
	}
}

// A settings file that is not an object with a permissions object is
// refused, and left as it was.
func TestUpdatePermissionsRefusesNonObjects(t *testing.T) {
	for _, content := range []string{`[]`, `{"permissions": []}`, `{"permissions": {"allow": "x"}}`, `{bad`} {
		opts := testOptions(t, llmtest.New(t))
		path := filepath.Join(opts.Cwd, ".claude", "settings.local.json")
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := settingsClient(t, opts).UpdatePermissions(allowLS); err == nil {
			t.Errorf("%s: no error", content)
		}
		if got, _ := os.ReadFile(path); string(got) != content {
			t.Errorf("%s: file changed to %s", content, got)
		}
	}
}

// Settings are the session's own: the files it read, their rules with
// their scopes, their hooks and status line, and the rules it saved since.
func TestClientSettings(t *testing.T) {
	opts := testOptions(t, llmtest.New(t))
	user := filepath.Join(opts.Env["CLAUDE_CONFIG_DIR"], "settings.json")
	if err := os.WriteFile(user, []byte(`{"permissions": {"deny": ["Read(./.env)"]},
  "statusLine": {"type": "command", "command": "echo status"},
  "hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "true"}]}]},
  "modle": "typo"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	c := settingsClient(t, opts)
	s := c.Settings()
	if len(s.Files) != 1 || !bytes.Contains([]byte(s.Files[0]), []byte(user)) {
		t.Errorf("files %q", s.Files)
	}
	if len(s.Warnings) != 1 || !bytes.Contains([]byte(s.Warnings[0]), []byte("settings.json:4:")) {
		t.Errorf("warnings %q", s.Warnings)
	}
	if !slices.Equal(s.Deny, []agent.SettingsRule{{Rule: "Read(./.env)", Scope: "user"}}) || len(s.Allow) != 0 {
		t.Errorf("rules %+v %+v", s.Allow, s.Deny)
	}
	if s.StatusLine == nil || s.StatusLine.Command != "echo status" {
		t.Errorf("status line %+v", s.StatusLine)
	}
	if g := s.Hooks[agent.HookPreToolUse]; len(g) != 1 || g[0].Matcher != "Bash" || len(g[0].Hooks) != 1 ||
		g[0].Hooks[0] != (agent.SettingsHook{Type: "command", Run: "true"}) || g[0].Scope != "user" {
		t.Errorf("hooks %+v", s.Hooks)
	}
	if err := c.UpdatePermissions(allowLS, agent.PermissionUpdate{Type: "addRules", Behavior: "deny",
		Rules: []agent.PermissionRuleValue{{ToolName: "WebFetch"}}}); err != nil {
		t.Fatal(err)
	}
	// The saved rule is shown with its file's scope; a rule for the session
	// only is in no settings file.
	s = c.Settings()
	if !slices.Equal(s.Allow, []agent.SettingsRule{{Rule: "Bash(ls *)", Scope: "local"}}) || len(s.Deny) != 1 {
		t.Errorf("after the update: %+v %+v", s.Allow, s.Deny)
	}
}

func TestParsePermissionRule(t *testing.T) {
	for in, want := range map[string]agent.PermissionRuleValue{
		"Bash(git push:*)": {ToolName: "Bash", RuleContent: "git push:*"},
		"Read":             {ToolName: "Read"},
		"mcp__github":      {ToolName: "mcp__github"},
	} {
		got, err := agent.ParsePermissionRule(in)
		if err != nil || got != want || got.String() != in {
			t.Errorf("%s: %+v %v", in, got, err)
		}
	}
	if _, err := agent.ParsePermissionRule("Bash(unclosed"); err == nil {
		t.Error("a malformed rule was read")
	}
}
