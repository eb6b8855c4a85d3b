package mcpconfig

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// bigClaudeJSON is a ~/.claude.json as Claude Code writes it, with another
// project's servers and state tack must not touch.
const bigClaudeJSON = `{
  "numStartups": 42,
  "installMethod": "native",
  "tipsHistory": {
    "new-user-warmup": 7
  },
  "mcpServers": {
    "everywhere": {
      "type": "stdio",
      "command": "npx",
      "args": [
        "-y",
        "everything"
      ],
      "env": {}
    }
  },
  "projects": {
    "/work/other": {
      "allowedTools": [],
      "history": [
        {
          "display": "fix the \"bug\" \u00e9\/",
          "pastedContents": {}
        }
      ],
      "mcpServers": {
        "theirs": {
          "command": "theirs"
        }
      },
      "enabledMcpjsonServers": [],
      "disabledMcpjsonServers": [],
      "hasTrustDialogAccepted": true,
      "lastCost": 0.1234
    }
  },
  "userID": "0123abcd"
}`

func TestAddAndRemoveEditOnlyTheirMember(t *testing.T) {
	f := newFixture(t)
	f.write(f.files.ClaudeJSON, bigClaudeJSON)

	// user scope: a new member at the end of the top-level mcpServers.
	path, err := f.files.AddServer(ScopeUser, "u1", StdioEntry("uvx", []string{"srv"}, []KV{{"K", "v"}}), false)
	if err != nil || path != f.files.ClaudeJSON {
		t.Fatal(path, err)
	}
	wantUser := strings.Replace(bigClaudeJSON, `      "env": {}
    }
  },
  "projects"`, `      "env": {}
    },
    "u1": {
      "type": "stdio",
      "command": "uvx",
      "args": [
        "srv"
      ],
      "env": {
        "K": "v"
      }
    }
  },
  "projects"`, 1)
	if got := f.read(f.files.ClaudeJSON); got != wantUser {
		t.Fatalf("user add:\n%s", got)
	}

	// local scope: this project's entry is created after the other one.
	if _, err := f.files.AddServer(ScopeLocal, "l1", RemoteEntry(TypeHTTP, "https://l.example/mcp", []KV{{"Authorization", "Bearer ${T}"}}, nil), false); err != nil {
		t.Fatal(err)
	}
	wantLocal := strings.Replace(wantUser, `      "lastCost": 0.1234
    }
  },`, `      "lastCost": 0.1234
    },
    `+jsonString(f.files.Key())+`: {
      "mcpServers": {
        "l1": {
          "type": "http",
          "url": "https://l.example/mcp",
          "headers": {
            "Authorization": "Bearer ${T}"
          }
        }
      }
    }
  },`, 1)
	if got := f.read(f.files.ClaudeJSON); got != wantLocal {
		t.Fatalf("local add:\n%s", got)
	}

	// Adding again is refused, replacing is not.
	if _, err := f.files.AddServer(ScopeLocal, "l1", StdioEntry("x", nil, nil), false); !errors.Is(err, ErrExists) ||
		!strings.Contains(err.Error(), `MCP server "l1" already exists in local config (`+f.files.ClaudeJSON+":") {
		t.Errorf("second add: %v", err)
	}
	if _, err := f.files.AddServer(ScopeLocal, "l1", StdioEntry("x", nil, nil), true); err != nil {
		t.Fatal(err)
	}
	if _, err := f.files.AddServer(ScopeLocal, "l1", RemoteEntry(TypeHTTP, "https://l.example/mcp", []KV{{"Authorization", "Bearer ${T}"}}, nil), true); err != nil {
		t.Fatal(err)
	}
	if got := f.read(f.files.ClaudeJSON); got != wantLocal {
		t.Fatalf("replace and back:\n%s", got)
	}

	// Removing both gives the original file back, byte for byte, except
	// for this project's now empty entry.
	if sc, _, err := f.files.RemoveServer("", "l1"); err != nil || sc != ScopeLocal {
		t.Fatal(sc, err)
	}
	if sc, _, err := f.files.RemoveServer(ScopeUser, "u1"); err != nil || sc != ScopeUser {
		t.Fatal(sc, err)
	}
	want := strings.Replace(bigClaudeJSON, `      "lastCost": 0.1234
    }
  },`, `      "lastCost": 0.1234
    },
    `+jsonString(f.files.Key())+`: {
      "mcpServers": {}
    }
  },`, 1)
	if got := f.read(f.files.ClaudeJSON); got != want {
		t.Fatalf("after removal:\n%s", got)
	}
	if info, _ := os.Stat(f.files.ClaudeJSON); info.Mode().Perm() != 0o600 {
		t.Errorf("mode %v", info.Mode())
	}
	if _, _, err := f.files.RemoveServer(ScopeUser, "u1"); !errors.Is(err, ErrNotFound) {
		t.Errorf("removing twice: %v", err)
	}
}

func TestAddCreatesFiles(t *testing.T) {
	f := newFixture(t)
	if _, err := f.files.AddServer(ScopeProject, "docs", RemoteEntry(TypeHTTP, "https://code.claude.com/docs/mcp", nil, &OAuth{CallbackPort: 8080}), false); err != nil {
		t.Fatal(err)
	}
	want := `{
  "mcpServers": {
    "docs": {
      "type": "http",
      "url": "https://code.claude.com/docs/mcp",
      "oauth": {
        "callbackPort": 8080
      }
    }
  }
}
`
	if got := f.read(f.files.MCPJSON()); got != want {
		t.Errorf(".mcp.json:\n%s", got)
	}
	if info, _ := os.Stat(f.files.MCPJSON()); info.Mode().Perm() != 0o644 {
		t.Errorf(".mcp.json mode %v", info.Mode())
	}
	if _, err := f.files.AddServer(ScopeUser, "u", StdioEntry("u", nil, nil), false); err != nil {
		t.Fatal(err)
	}
	if info, _ := os.Stat(f.files.ClaudeJSON); info.Mode().Perm() != 0o600 {
		t.Errorf("~/.claude.json mode %v", info.Mode())
	}
	if got := f.read(f.files.ClaudeJSON); got != "{\n  \"mcpServers\": {\n    \"u\": {\n      \"type\": \"stdio\",\n      \"command\": \"u\",\n      \"args\": [],\n      \"env\": {}\n    }\n  }\n}\n" {
		t.Errorf("~/.claude.json:\n%s", got)
	}
}

func TestAddRefusesBadEntriesAndNames(t *testing.T) {
	f := newFixture(t)
	for _, c := range []struct{ name, entry, want string }{
		{"bad.name", `{"command": "x"}`, `invalid server name "bad.name"`},
		{"s", `{"command": 1}`, `the server entry:1:13: s.command: expected a string, got a number`},
		{"s", `{"type": "http", "url": "ftp://x"}`, `want an http:// or https:// URL`},
		{"s", `{"type": "http", "url": "${BASE}/mcp"}`, ``}, // variables are resolved at start
	} {
		_, err := f.files.AddServer(ScopeUser, c.name, []byte(c.entry), true)
		if c.want == "" && err != nil || c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)) {
			t.Errorf("%s %s: %v, want %q", c.name, c.entry, err, c.want)
		}
	}
}

func TestEditsRefuseABrokenFileAndLeaveItAlone(t *testing.T) {
	f := newFixture(t)
	broken := "{\n  \"numStartups\": 1,\n  \"projects\": {\n}"
	f.write(f.files.ClaudeJSON, broken)
	_, err := f.files.AddServer(ScopeUser, "u", StdioEntry("u", nil, nil), false)
	if err == nil || err.Error() != f.files.ClaudeJSON+": line 1, column 1: invalid JSON: '{' is not closed before the end of the input" {
		t.Errorf("%v", err)
	}
	if err := f.files.SetApproval("x", true); err == nil {
		t.Error("SetApproval wrote a broken file")
	}
	if got := f.read(f.files.ClaudeJSON); got != broken {
		t.Errorf("broken file changed: %q", got)
	}
}

func TestRemoveFindsTheScope(t *testing.T) {
	f := newFixture(t)
	f.claudeJSON(`"both": {"command": "u"}`, `"mcpServers": {"both": {"command": "l"}, "mine": {"command": "m"}}`)
	f.write(f.files.MCPJSON(), `{"mcpServers": {"team": {"command": "t"}}}`)
	if got, _ := f.files.Defined("both"); !slices.Equal(got, []Scope{ScopeLocal, ScopeUser}) {
		t.Errorf("defined %v", got)
	}
	_, _, err := f.files.RemoveServer("", "both")
	var amb *AmbiguousError
	if !errors.As(err, &amb) || !slices.Equal(amb.Scopes, []Scope{ScopeLocal, ScopeUser}) {
		t.Errorf("ambiguous: %v", err)
	}
	if _, _, err := f.files.RemoveServer("", "ghost"); !errors.Is(err, ErrNotFound) {
		t.Errorf("ghost: %v", err)
	}
	if sc, path, err := f.files.RemoveServer("", "team"); sc != ScopeProject || path != f.files.MCPJSON() || err != nil {
		t.Errorf("team: %s %s %v", sc, path, err)
	}
	if got := f.read(f.files.MCPJSON()); got != `{"mcpServers": {}}` {
		t.Errorf(".mcp.json %q", got)
	}
}

func TestResetProjectChoices(t *testing.T) {
	f := newFixture(t)
	f.claudeJSON(``, `"enabledMcpjsonServers": ["a"], "disabledMcpjsonServers": [], "enableAllProjectMcpServers": true, "hasTrustDialogAccepted": true`)
	changed, err := f.files.ResetProjectChoices()
	if err != nil || !changed {
		t.Fatal(changed, err)
	}
	if got := f.read(f.files.ClaudeJSON); !strings.Contains(got, `{"enabledMcpjsonServers": [], "disabledMcpjsonServers": [], "enableAllProjectMcpServers": false, "hasTrustDialogAccepted": true}`) {
		t.Errorf("%s", got)
	}
	before := f.read(f.files.ClaudeJSON)
	if changed, err := f.files.ResetProjectChoices(); err != nil || changed {
		t.Errorf("second reset: %v %v", changed, err)
	}
	if f.read(f.files.ClaudeJSON) != before {
		t.Error("a reset with nothing to reset rewrote the file")
	}
}

func TestEditWritesThroughASymlink(t *testing.T) {
	f := newFixture(t)
	real := filepath.Join(t.TempDir(), "dotfiles-claude.json")
	os.WriteFile(real, []byte("{}"), 0o640)
	if err := os.Symlink(real, f.files.ClaudeJSON); err != nil {
		t.Skip(err)
	}
	if _, err := f.files.AddServer(ScopeUser, "u", StdioEntry("u", nil, nil), false); err != nil {
		t.Fatal(err)
	}
	if fi, _ := os.Lstat(f.files.ClaudeJSON); fi.Mode()&os.ModeSymlink == 0 {
		t.Error("the symbolic link was replaced by a file")
	}
	if got := f.read(real); !strings.Contains(got, `"u"`) {
		t.Errorf("target %q", got)
	}
	if fi, _ := os.Stat(real); fi.Mode().Perm() != 0o640 {
		t.Errorf("mode %v", fi.Mode())
	}
}

// The edit holds Claude Code's lock (config.EditClaudeJSON): a lock left
// behind by a dead Claude Code is taken over, and released after.
func TestStaleLockIsTakenOver(t *testing.T) {
	f := newFixture(t)
	lock := f.files.ClaudeJSON + ".lock"
	if err := os.Mkdir(lock, 0o700); err != nil {
		t.Fatal(err)
	}
	old := time.Now().Add(-time.Minute)
	os.Chtimes(lock, old, old)
	if _, err := f.files.AddServer(ScopeUser, "u", StdioEntry("u", nil, nil), false); err != nil {
		t.Fatalf("stale lock: %v", err)
	}
	if _, err := os.Stat(lock); !os.IsNotExist(err) {
		t.Errorf("lock not released: %v", err)
	}
}
