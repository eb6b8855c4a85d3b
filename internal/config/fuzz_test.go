package config

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

var loadSeeds = []string{
	`{}`,
	``,
	`null`,
	`[]`,
	`{"model": "opus", "env": {"A": "1", "N": 2}, "permissions": {"allow": ["Read", "Bash(npm test *)"], "deny": ["Bash(rm *)"], "defaultMode": "plan"}}`,
	`{"hooks": {"PreToolUse": [{"matcher": "Edit|Write", "hooks": [{"type": "command", "command": "x", "timeout": 3, "if": "Edit(*.ts)"}]}]}}`,
	`{"hooks": {"Stop": [{"hooks": [{"type": "http", "url": "http://h", "headers": {"a": "b"}}, {"type": "mcp_tool", "server": "s", "tool": "t", "input": {}}]}]}}`,
	`{"hooks": {"PreToolUse": [{"matcher": "mcp__.*(", "hooks": []}]}}`,
	`{"hooks": {"Bogus": []}}`,
	`{"permissions": {"allow": ["Bash("]}}`,
	`{"statusLine": {"type": "command", "command": "x", "padding": 1}, "enabledPlugins": {"a@b": true}, "sandbox": [1], "cleanupPeriodDays": 3}`,
	`{"allowManagedHooksOnly": true, "disableAllHooks": true, "unknown": {"deep": [1, {"x": null}]}}`,
	"{\n  // comment\n}",
	`{"a": 1,}`,
	`{"model": "a", "model": "b"}`,
	"\xef\xbb\xbf{\"model\": \"x\"}",
	`{"env": {"A=B": "x"}}`,
	`{"permissions": {"defaultMode": "yolo", "disableBypassPermissionsMode": "disable"}}`,
}

// FuzzLoad feeds arbitrary bytes to Load as a project settings file and as
// inline --settings: nothing may panic, invalid JSON must never be accepted,
// and every error must be one *Error per file that names the file.
func FuzzLoad(f *testing.F) {
	for _, s := range loadSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		// In memory, for speed: the tests of malformed files go through the
		// real file system.
		const project = "/proj"
		path := filepath.Join(project, ".claude", "settings.json")
		opts := LoadOptions{ConfigDir: "/cfg", ProjectDir: project, Cwd: project,
			ManagedPath: "/managed.json", ValidateRule: stubRule, ValidateIf: stubRule}
		inline := bytes.HasPrefix(bytes.TrimLeft(data, " \t\r\n"), []byte("{"))
		if inline {
			opts.FlagSettings = string(data)
		}
		m, err := load(opts, memFS{path: data})

		body := bytes.TrimPrefix(data, []byte("\xef\xbb\xbf"))
		blank := len(bytes.Trim(body, " \t\r\n")) == 0
		if err == nil {
			if !blank && !json.Valid(body) {
				t.Fatalf("invalid JSON accepted: %q", data)
			}
			if m == nil {
				t.Fatal("nil Merged without an error")
			}
			m.Render(io.Discard)
			m.EnvList()
			for _, kv := range m.EnvList() {
				if strings.IndexByte(kv, 0) >= 0 || strings.IndexByte(kv, '=') <= 0 {
					t.Fatalf("bad environment entry %q", kv)
				}
			}
			return
		}
		if m != nil {
			t.Fatal("a result came with an error")
		}
		var leaves []error
		if j, ok := err.(interface{ Unwrap() []error }); ok {
			leaves = j.Unwrap()
		} else {
			leaves = []error{err}
		}
		want := 1
		if inline {
			want = 2 // the same bad text, once as a file and once inline
		}
		if len(leaves) != want {
			t.Fatalf("%d errors for %d bad inputs: %v", len(leaves), want, err)
		}
		for _, leaf := range leaves {
			var e *Error
			if !errors.As(leaf, &e) || (e.Source.Path != path && e.Source.Path != FlagPath) || e.Source.Line < 1 || e.Source.Col < 1 {
				t.Fatalf("error does not name a file and position: %#v", leaf)
			}
			if strings.HasPrefix(e.Msg, "invalid JSON") == json.Valid(body) {
				t.Fatalf("%q: json.Valid = %v but error %v", data, json.Valid(body), e)
			}
		}
	})
}

// memFS is a file system of regular files held in memory.
type memFS map[string][]byte

type memInfo struct {
	name string
	size int64
}

func (i memInfo) Name() string       { return filepath.Base(i.name) }
func (i memInfo) Size() int64        { return i.size }
func (i memInfo) Mode() fs.FileMode  { return 0o644 }
func (i memInfo) ModTime() time.Time { return time.Time{} }
func (i memInfo) IsDir() bool        { return false }
func (i memInfo) Sys() any           { return nil }

func (m memFS) Stat(name string) (fs.FileInfo, error) {
	if b, ok := m[name]; ok {
		return memInfo{name, int64(len(b))}, nil
	}
	return nil, &fs.PathError{Op: "stat", Path: name, Err: fs.ErrNotExist}
}

func (m memFS) Lstat(name string) (fs.FileInfo, error) { return m.Stat(name) }

func (m memFS) ReadFile(name string) ([]byte, error) {
	if b, ok := m[name]; ok {
		return b, nil
	}
	return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrNotExist}
}

func TestLoadSeedsDoNotPanic(t *testing.T) {
	// The seeds run as part of FuzzLoad in every plain `go test` too; this
	// pins a few outcomes so that the fuzz assertions themselves are checked.
	for _, c := range []struct {
		in string
		ok bool
	}{{`{}`, true}, {``, true}, {`null`, false}, {`{"a": 1,}`, false}, {`{"model": "a", "model": "b"}`, false}} {
		e := newEnv(t)
		e.write(ScopeProject, c.in)
		if _, err := Load(e.opts()); (err == nil) != c.ok {
			t.Errorf("%q: err = %v", c.in, err)
		}
	}
}

// realistic is the size and shape of a team's settings.
const realistic = `{
  "model": "opus",
  "env": {"NODE_ENV": "test", "DEBUG": "0"},
  "permissions": {
    "defaultMode": "acceptEdits",
    "allow": ["Bash(npm test *)", "Bash(npm run lint)", "Bash(git status)", "Bash(git diff *)", "Read", "mcp__docs__search", "WebFetch(domain:example.com)"],
    "ask": ["Bash(git push *)"],
    "deny": ["Read(./.env)", "Read(./.env.*)", "Bash(rm -rf *)", "Bash(curl *)"],
    "additionalDirectories": ["../lib"]
  },
  "hooks": {
    "PreToolUse": [
      {"matcher": "Bash", "hooks": [{"type": "command", "command": "\"$CLAUDE_PROJECT_DIR\"/.claude/hooks/block-rm.sh", "timeout": 30, "if": "Bash(rm *)"}]},
      {"matcher": "Edit|Write", "hooks": [{"type": "command", "command": "npx prettier --check", "statusMessage": "formatting"}]},
      {"matcher": "mcp__memory__.*", "hooks": [{"type": "http", "url": "http://127.0.0.1:8080/hook", "headers": {"Authorization": "Bearer $TOKEN"}, "allowedEnvVars": ["TOKEN"]}]}
    ],
    "PostToolUse": [{"matcher": "Write", "hooks": [{"type": "command", "command": "make fmt", "async": true}]}],
    "Stop": [{"hooks": [{"type": "prompt", "prompt": "Is the task done? $ARGUMENTS"}]}]
  },
  "enabledPlugins": {"formatter@tools": true},
  "statusLine": {"type": "command", "command": "~/.claude/status.sh", "padding": 0},
  "enabledMcpjsonServers": ["docs", "memory"],
  "theme": "dark"
}`

// BenchmarkLoad loads user, project and local settings of realistic size:
// tack starts in about 7 ms, and this must stay well under 1 ms.
func BenchmarkLoad(b *testing.B) {
	root := b.TempDir()
	opts := LoadOptions{ConfigDir: filepath.Join(root, "cfg"), ProjectDir: filepath.Join(root, "proj"),
		Cwd: filepath.Join(root, "proj"), ManagedPath: filepath.Join(root, "managed.json"), ValidateRule: stubRule, ValidateIf: stubRule}
	for _, p := range []string{
		filepath.Join(opts.ConfigDir, "settings.json"),
		filepath.Join(opts.ProjectDir, ".claude", "settings.json"),
		filepath.Join(opts.ProjectDir, ".claude", "settings.local.json"),
	} {
		os.MkdirAll(filepath.Dir(p), 0o755)
		os.WriteFile(p, []byte(realistic), 0o644)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Load(opts); err != nil {
			b.Fatal(err)
		}
	}
}
