package configcmd

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/spf13/cobra"

	"github.com/tackcode/tack/internal/cli/cmdio"

	"github.com/tackcode/tack/agent"
	"github.com/tackcode/tack/internal/mcp/mcpconfig"
)

// mcpEnv is a home directory and a project directory for `tack mcp` tests;
// the test's working directory is the project.
type mcpEnv struct {
	t                *testing.T
	home, proj, json string
	check            mcpconfig.HealthCheck
	call             MCPCallFunc
}

func newMCPEnv(t *testing.T) *mcpEnv {
	home, proj := t.TempDir(), t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("CLAUDE_CONFIG_DIR", "")
	t.Chdir(proj)
	// t.TempDir may be reached through a symbolic link (macOS /var);
	// tack keys the project by the working directory as the OS reports it.
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	return &mcpEnv{t: t, home: home, proj: wd, json: filepath.Join(home, ".claude.json")}
}

// run runs `tack ARGS…` with the mcp command registered as cli.go will
// register it, mapping errors to exit codes as Main does.
func (e *mcpEnv) run(args ...string) (string, string, int) {
	e.t.Helper()
	var out, errOut bytes.Buffer
	stdio := cmdio.IO{In: strings.NewReader(""), Out: &out, Err: &errOut, Getenv: os.Getenv}
	root := &cobra.Command{Use: "tack", SilenceUsage: true, SilenceErrors: true}
	root.AddCommand(newMCPCmd(stdio, e.check, nil, e.call))
	root.SetArgs(args)
	root.SetOut(&out)
	root.SetErr(&errOut)
	err := root.ExecuteContext(context.Background())
	code := 0
	var ee *cmdio.ExitError
	switch {
	case err == nil:
	case errors.As(err, &ee):
		code = ee.Code
	default:
		fmt.Fprintf(&errOut, "tack: %v\n", err)
		code = 1
	}
	return out.String(), errOut.String(), code
}

func (e *mcpEnv) write(path, content string) {
	e.t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		e.t.Fatal(err)
	}
}

func (e *mcpEnv) read(path string) string {
	e.t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		e.t.Fatal(err)
	}
	return string(b)
}

func (e *mcpEnv) ok(args ...string) string {
	e.t.Helper()
	out, errOut, code := e.run(args...)
	if code != 0 {
		e.t.Fatalf("tack %s: exit %d\n%s%s", strings.Join(args, " "), code, out, errOut)
	}
	return out
}

func q(s string) string { b, _ := json.Marshal(s); return string(b) }

// claudeJSON is an existing ~/.claude.json: keys Claude Code owns and
// another project's servers, none of which tack may change.
const claudeJSON = `{
  "numStartups": 42,
  "tipsHistory": {
    "new-user-warmup": 7
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
      "hasTrustDialogAccepted": true
    }
  },
  "userID": "0123abcd"
}
`

func TestMCPRoundTripOnEveryScope(t *testing.T) {
	e := newMCPEnv(t)
	e.write(e.json, claudeJSON)
	t.Setenv("TEAM_TOKEN", "t0k3n")
	var mu sync.Mutex
	checked := map[string]bool{}
	e.check = func(ctx context.Context, s mcpconfig.Server) (string, string) {
		mu.Lock()
		checked[s.Name] = true
		mu.Unlock()
		if s.Name == "team" && s.Headers["Authorization"] != "Bearer t0k3n" {
			return "✗ Failed", "header not expanded: " + s.Headers["Authorization"]
		}
		return "✓ Connected", ""
	}

	// add, on each scope.
	out := e.ok("mcp", "add", "-e", "API_KEY=s3cr3t", "--env", "MODE=dev", "mine", "--", "npx", "-y", "pkg", "--flag")
	wantOut := "Added stdio MCP server mine with command: npx -y pkg --flag to local config\n" +
		"File modified: " + e.json + " [project: " + e.proj + "]\n"
	if out != wantOut {
		t.Errorf("add local:\n%s\nwant\n%s", out, wantOut)
	}
	out = e.ok("mcp", "add", "--scope", "project", "--transport", "http", "-H", "Authorization: Bearer ${TEAM_TOKEN}", "team", "https://team.example/mcp")
	wantOut = "Added HTTP MCP server team with URL: https://team.example/mcp to project config\n" +
		"Headers:\n  Authorization: Bearer ${TEAM_TOKEN}\n" +
		"File modified: " + filepath.Join(e.proj, ".mcp.json") + "\n"
	if out != wantOut {
		t.Errorf("add project:\n%s\nwant\n%s", out, wantOut)
	}
	e.ok("mcp", "add", "-s", "user", "-t", "sse", "--client-id", "cid", "everywhere", "https://u.example/sse")
	e.ok("mcp", "add-json", "-s", "user", "weather", `{"command":"weather-cli","args":["--api-key","abc123"],"timeout":5000}`)

	// The files hold exactly the new servers, in Claude Code's format, and
	// ~/.claude.json is otherwise byte for byte what it was.
	wantJSON := strings.Replace(claudeJSON, `      "hasTrustDialogAccepted": true
    }
  },
  "userID": "0123abcd"
}`, `      "hasTrustDialogAccepted": true
    },
    `+q(e.proj)+`: {
      "mcpServers": {
        "mine": {
          "type": "stdio",
          "command": "npx",
          "args": [
            "-y",
            "pkg",
            "--flag"
          ],
          "env": {
            "API_KEY": "s3cr3t",
            "MODE": "dev"
          }
        }
      }
    }
  },
  "userID": "0123abcd",
  "mcpServers": {
    "everywhere": {
      "type": "sse",
      "url": "https://u.example/sse",
      "oauth": {
        "clientId": "cid"
      }
    },
    "weather": {
      "command": "weather-cli",
      "args": [
        "--api-key",
        "abc123"
      ],
      "timeout": 5000
    }
  }
}`, 1)
	if got := e.read(e.json); got != wantJSON {
		t.Fatalf("~/.claude.json:\n%s\nwant\n%s", got, wantJSON)
	}
	wantMCPJSON := `{
  "mcpServers": {
    "team": {
      "type": "http",
      "url": "https://team.example/mcp",
      "headers": {
        "Authorization": "Bearer ${TEAM_TOKEN}"
      }
    }
  }
}
`
	if got := e.read(".mcp.json"); got != wantMCPJSON {
		t.Fatalf(".mcp.json:\n%s", got)
	}
	if info, _ := os.Stat(e.json); info.Mode().Perm() != 0o600 {
		t.Errorf("~/.claude.json mode %v", info.Mode())
	}

	// list: every server, its scope and file, its health; the project
	// server is not started before it is approved.
	out = e.ok("mcp", "list")
	wantList := fmt.Sprintf(`Checking MCP server health...

mine: npx -y pkg --flag - ✓ Connected
    local · %[1]s:24:9
team: https://team.example/mcp (HTTP) - ⚠ Needs approval
    project · %[2]s:3:5
    approve it with: tack mcp approve team
everywhere: https://u.example/sse (SSE) - ✓ Connected
    user · %[1]s:42:5
weather: weather-cli --api-key abc123 - ✓ Connected
    user · %[1]s:49:5
`, e.json, filepath.Join(e.proj, ".mcp.json"))
	if out != wantList {
		t.Errorf("list:\n%s\nwant\n%s", out, wantList)
	}
	if checked["team"] {
		t.Error("an unapproved project server was started by the health check")
	}

	out = e.ok("mcp", "approve", "team")
	if !strings.HasPrefix(out, `Approved MCP server "team" of .mcp.json for `+e.proj) {
		t.Errorf("approve: %s", out)
	}
	if out := e.ok("mcp", "list"); !strings.Contains(out, "team: https://team.example/mcp (HTTP) - ✓ Connected\n") {
		t.Errorf("after approval:\n%s", out)
	}

	// get: details, secrets masked.
	out = e.ok("mcp", "get", "mine")
	wantGet := `mine:
  Scope: Local config (private to you in this project)
  Defined in: ` + e.json + `:24:9
  Status: ✓ Connected
  Type: stdio
  Command: npx
  Args: -y pkg --flag
  Environment:
    API_KEY=****
    MODE=****

To remove this server, run: tack mcp remove "mine" -s local
`
	if out != wantGet {
		t.Errorf("get:\n%s\nwant\n%s", out, wantGet)
	}
	if out := e.ok("mcp", "get", "team"); !strings.Contains(out, "  Headers:\n    Authorization: Bearer ${TEAM_TOKEN}\n") || strings.Contains(out, "t0k3n") {
		t.Errorf("get team:\n%s", out)
	}

	// remove, from each scope: the files go back to what they were.
	out = e.ok("mcp", "remove", "mine")
	if out != "Removed MCP server \"mine\" from local config\nFile modified: "+e.json+" [project: "+e.proj+"]\n" {
		t.Errorf("remove: %s", out)
	}
	e.ok("mcp", "remove", "team", "-s", "project")
	e.ok("mcp", "remove", "-s", "user", "everywhere")
	e.ok("mcp", "remove", "weather")
	wantJSON = strings.Replace(claudeJSON, `      "hasTrustDialogAccepted": true
    }
  },
  "userID": "0123abcd"
}`, `      "hasTrustDialogAccepted": true
    },
    `+q(e.proj)+`: {
      "mcpServers": {},
      "enabledMcpjsonServers": [
        "team"
      ]
    }
  },
  "userID": "0123abcd",
  "mcpServers": {}
}`, 1)
	if got := e.read(e.json); got != wantJSON {
		t.Errorf("~/.claude.json after removals:\n%s\nwant\n%s", got, wantJSON)
	}
	if got := e.read(".mcp.json"); got != "{\n  \"mcpServers\": {}\n}\n" {
		t.Errorf(".mcp.json after removal: %q", got)
	}
	if out := e.ok("mcp", "list"); out != "No MCP servers configured. Use `tack mcp add` to add a server.\n" {
		t.Errorf("empty list: %q", out)
	}

	out = e.ok("mcp", "reset-project-choices")
	if !strings.HasPrefix(out, "All project-scoped (.mcp.json) server approvals and rejections have been reset.\n") {
		t.Errorf("reset: %s", out)
	}
	if got := e.read(e.json); !strings.Contains(got, "      \"mcpServers\": {},\n      \"enabledMcpjsonServers\": []\n") {
		t.Errorf("after reset:\n%s", got)
	}
}

func TestMCPAddWithClaudeConfigDir(t *testing.T) {
	e := newMCPEnv(t)
	dir := t.TempDir()
	t.Setenv("CLAUDE_CONFIG_DIR", dir)
	e.ok("mcp", "add", "-s", "user", "x", "--", "x-server")
	if got := e.read(filepath.Join(dir, ".claude.json")); !strings.Contains(got, `"x": {`) {
		t.Errorf("%s", got)
	}
	if _, err := os.Stat(e.json); !os.IsNotExist(err) {
		t.Error("~/.claude.json was written although CLAUDE_CONFIG_DIR is set")
	}
}

func TestMCPAddArgumentForms(t *testing.T) {
	e := newMCPEnv(t)
	// Claude Code's -e takes several values: -e A=1 B=2 NAME -- CMD.
	e.ok("mcp", "add", "-e", "A=1", "B=x=y", "multi", "--", "cmd", "--", "--literal")
	// No "--" when the command has no options of its own.
	e.ok("mcp", "add", "plain", "python3", "server.py")
	// "--" before the name too.
	e.ok("mcp", "add", "-s", "local", "--", "dashed", "node", "s.js")
	got := e.read(e.json)
	for _, want := range []string{
		`"args": [
            "--",
            "--literal"
          ],
          "env": {
            "A": "1",
            "B": "x=y"
          }`,
		`"plain": {
          "type": "stdio",
          "command": "python3",
          "args": [
            "server.py"
          ],`,
		`"dashed": {
          "type": "stdio",
          "command": "node",`,
	} {
		if !strings.Contains(got, want) {
			t.Errorf("missing %s in\n%s", want, got)
		}
	}
}

func TestMCPAddOptionsAfterName(t *testing.T) {
	e := newMCPEnv(t)
	// As in Claude Code: NAME first, then the options, then -- and the command.
	e.ok("mcp", "add", "after", "-s", "project", "-e", "KEY=V", "K2=W", "--", "npx", "-y", "srv", "-s", "x")
	e.ok("mcp", "add", "remote", "-t", "http", "https://x.example/mcp", "-H", "Authorization: Bearer t", "--scope=project")
	e.ok("mcp", "add", "plain", "-s", "project", "python3", "server.py")
	got := e.read(filepath.Join(e.proj, ".mcp.json"))
	for _, want := range []string{
		`"after": {
      "type": "stdio",
      "command": "npx",
      "args": [
        "-y",
        "srv",
        "-s",
        "x"
      ],
      "env": {
        "KEY": "V",
        "K2": "W"
      }
    }`,
		`"remote": {
      "type": "http",
      "url": "https://x.example/mcp",
      "headers": {
        "Authorization": "Bearer t"
      }
    }`,
		`"plain": {
      "type": "stdio",
      "command": "python3",
      "args": [
        "server.py"
      ],`,
	} {
		if !strings.Contains(got, want) {
			t.Errorf("missing %s in\n%s", want, got)
		}
	}
	if _, err := os.Stat(e.json); err == nil && strings.Contains(e.read(e.json), `"after"`) {
		t.Error("-s project after the name was ignored: the server went to the local scope")
	}
}

func TestMCPUsageErrors(t *testing.T) {
	e := newMCPEnv(t)
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"mcp", "add"}, "tack: missing the server name\nRun 'tack mcp add --help' for usage.\n"},
		{[]string{"mcp", "add", "srv"}, "tack: missing the command that starts the server: tack mcp add srv -- COMMAND [ARGS...]\nRun 'tack mcp add --help' for usage.\n"},
		{[]string{"mcp", "add", "--scope", "global", "srv", "--", "x"}, "tack: invalid scope \"global\" (want local, project or user)\nRun 'tack mcp add --help' for usage.\n"},
		{[]string{"mcp", "add", "-t", "ws", "srv", "wss://x"}, "tack: invalid transport \"ws\" (want stdio, http or sse)\nRun 'tack mcp add --help' for usage.\n"},
		{[]string{"mcp", "add", "--bogus", "srv", "--", "x"}, "tack: unknown flag: --bogus\nRun 'tack mcp add --help' for usage.\n"},
		{[]string{"mcp", "add", "srv", "-s", "global", "--", "x"}, "tack: invalid scope \"global\" (want local, project or user)\nRun 'tack mcp add --help' for usage.\n"},
		{[]string{"mcp", "add", "srv", "npx", "-y", "pkg"}, "tack: option \"-y\" after the server name is not one of tack's: put \"--\" before the command that starts the server\nRun 'tack mcp add --help' for usage.\n"},
		{[]string{"mcp", "add", "srv", "https://x.example/mcp"}, "tack: \"https://x.example/mcp\" is a URL: add --transport http (or sse) before the name\nRun 'tack mcp add --help' for usage.\n"},
		{[]string{"mcp", "add", "-t", "http", "srv"}, "tack: want the server name and its URL: tack mcp add --transport http srv URL\nRun 'tack mcp add --help' for usage.\n"},
		{[]string{"mcp", "add", "-H", "X: y", "srv", "--", "x"}, "tack: --header, --client-id and --callback-port apply to http and sse servers (add --transport http)\nRun 'tack mcp add --help' for usage.\n"},
		{[]string{"mcp", "add", "-t", "http", "-H", "novalue", "srv", "https://x"}, "tack: invalid header \"novalue\": write it as -H \"Name: value\"\nRun 'tack mcp add --help' for usage.\n"},
		{[]string{"mcp", "add", "-e", "NOEQUALS", "srv", "--", "x"}, "tack: invalid environment variable \"NOEQUALS\": write it as -e KEY=value\nRun 'tack mcp add --help' for usage.\n"},
		{[]string{"mcp", "add", "my.server", "--", "x"}, "tack: invalid server name \"my.server\": names can only contain letters, numbers, hyphens and underscores\nRun 'tack mcp add --help' for usage.\n"},
		{[]string{"mcp", "add-json", "j"}, "tack: want a server name and its JSON entry, got 1 arguments\nRun 'tack mcp add-json --help' for usage.\n"},
		{[]string{"mcp", "add-json", "j", `{"command": "x",}`}, "tack: JSON argument:1:16: invalid JSON: trailing comma before '}' (JSON does not allow one)\n"},
		{[]string{"mcp", "add-json", "j", `{"type": "http"}`}, "tack: JSON argument:1:1: j: missing \"url\" (a http server is reached by URL)\n"},
		{[]string{"mcp", "get"}, "tack: want one server name\nRun 'tack mcp get --help' for usage.\n"},
		{[]string{"mcp", "get", "nope"}, "tack: no MCP server found with name: \"nope\"\n"},
		{[]string{"mcp", "remove", "nope"}, "tack: no MCP server found with name: \"nope\"\n"},
		{[]string{"mcp", "remove", "-s", "user", "nope"}, "tack: no such MCP server named \"nope\" in user config (" + e.json + ")\n"},
		{[]string{"mcp", "bogus"}, "tack: unknown command \"bogus\" for \"tack mcp\"\nRun 'tack mcp --help' for usage.\n"},
		{[]string{"mcp", "call", "srv"}, "tack: want a server name, a tool name and optionally the tool's input as a JSON object\nRun 'tack mcp call --help' for usage.\n"},
		{[]string{"mcp", "call", "srv", "tool", "[1]"}, "tack: the tool's input must be a JSON object, such as '{\"query\":\"x\"}'\nRun 'tack mcp call --help' for usage.\n"},
		{[]string{"mcp", "call", "srv", "tool"}, "tack: tack mcp call is not available in this build yet\n"},
		{[]string{"mcp", "serve"}, "tack: tack mcp serve is not available in this build yet\n"},
	}
	for _, c := range cases {
		out, errOut, code := e.run(c.args...)
		if code != 1 || errOut != c.want || out != "" {
			t.Errorf("tack %s: exit %d\nstdout %q\nstderr %q\nwant   %q", strings.Join(c.args, " "), code, out, errOut, c.want)
		}
	}
	if _, err := os.Stat(e.json); !os.IsNotExist(err) {
		t.Error("a failed command wrote ~/.claude.json")
	}
	// An existing server is not replaced behind the user's back.
	e.ok("mcp", "add", "dup", "--", "a")
	_, errOut, code := e.run("mcp", "add", "dup", "--", "b")
	if code != 1 || !strings.HasPrefix(errOut, `tack: MCP server "dup" already exists in local config (`+e.json+":") || !strings.Contains(errOut, `remove it first: tack mcp remove "dup" -s local`) {
		t.Errorf("exit %d: %s", code, errOut)
	}
}

func TestMCPRemoveAmbiguous(t *testing.T) {
	e := newMCPEnv(t)
	e.ok("mcp", "add", "-s", "user", "twice", "--", "u")
	e.ok("mcp", "add", "-s", "project", "twice", "--", "p")
	out, errOut, code := e.run("mcp", "remove", "twice")
	want := fmt.Sprintf(`MCP server "twice" exists in several scopes:
  - project (%s)
  - user (%s)

To remove it from one scope, run:
  tack mcp remove "twice" -s project
  tack mcp remove "twice" -s user
`, filepath.Join(e.proj, ".mcp.json"), e.json)
	if code != 1 || out != "" || errOut != want {
		t.Errorf("exit %d, out %q, err:\n%s\nwant\n%s", code, out, errOut, want)
	}
}

func TestMCPListReportsProblems(t *testing.T) {
	e := newMCPEnv(t)
	e.write(".mcp.json", "{\n  \"mcpServers\": {\n    \"ok\": {\"command\": \"ok\"},\n    \"bad\": {\"command\": \"x\", \"args\": \"-y\"},\n    \"env\": {\"command\": \"${NOT_SET_ANYWHERE_42}\"}\n  }\n}\n")
	e.write(e.json, `{"mcpServers": {"u": {"command": "u"}}, "projects": {`+q(e.proj)+`: {"enabledMcpjsonServers": ["ok"]}}}`)
	out, errOut, code := e.run("mcp", "list")
	mcpJSON := filepath.Join(e.proj, ".mcp.json")
	wantOut := fmt.Sprintf(`ok: ok - (not checked)
    project · %[1]s:3:5
bad: - ✗ Invalid configuration
    project · %[1]s:4:5
env: - ✗ Invalid configuration
    project · %[1]s:5:5
u: u - (not checked)
    user · %[2]s:1:17
`, mcpJSON, e.json)
	wantErr := fmt.Sprintf(`tack: %[1]s:4:37: mcpServers.bad.args: expected a list of strings, got a string
tack: %[1]s:5:24: mcpServers.env.command: environment variable NOT_SET_ANYWHERE_42 is not set; server "env" cannot start (set it, or write ${NOT_SET_ANYWHERE_42:-default})
`, mcpJSON)
	if code != 1 || out != wantOut || errOut != wantErr {
		t.Errorf("exit %d\n%s\nwant\n%s\nstderr\n%s\nwant\n%s", code, out, wantOut, errOut, wantErr)
	}

	// A broken ~/.claude.json: the project's servers are still listed.
	e.write(e.json, "{\n  \"mcpServers\": {\n}")
	out, errOut, code = e.run("mcp", "list")
	if code != 1 || !strings.HasPrefix(out, "ok: ok - ⚠ Needs approval") || errOut != "tack: "+e.json+":1:1: invalid JSON: '{' is not closed before the end of the input\n"+wantErr {
		t.Errorf("exit %d\n%s\n%s", code, out, errOut)
	}
	// And it is not edited.
	_, errOut, code = e.run("mcp", "add", "x", "--", "x")
	if code != 1 || !strings.Contains(errOut, e.json+": line 1, column 1: invalid JSON") {
		t.Errorf("add to a broken file: exit %d %s", code, errOut)
	}
}

func TestMCPSettingsApproveAndExpand(t *testing.T) {
	e := newMCPEnv(t)
	os.MkdirAll(".claude", 0o755)
	e.write(".claude/settings.json", `{"enabledMcpjsonServers": ["team", "plain"], "env": {"TEAM_HOST": "team.example"}}`)
	e.write(".mcp.json", `{"mcpServers": {"team": {"type": "http", "url": "https://${TEAM_HOST}/mcp"}, "other": {"command": "o"}, "plain": {"command": "p"}}}`)
	var checked []string
	e.check = func(ctx context.Context, s mcpconfig.Server) (string, string) {
		checked = append(checked, s.Name)
		return "✓ Connected", ""
	}
	// Until the folder is trusted, its settings approve nothing and set no
	// env: nothing of .mcp.json is started to check it.
	out, errOut, code := e.run("mcp", "list")
	if code != 1 || !strings.Contains(out, "team: - ✗ Invalid configuration\n") || !strings.Contains(out, "other: o - ⚠ Needs approval\n") ||
		!strings.Contains(out, "plain: p - ⚠ Needs approval\n") || len(checked) != 0 {
		t.Errorf("untrusted: exit %d, checked %v:\n%s", code, checked, out)
	}
	if want := "tack: this folder is not trusted, so its settings do not approve its servers (project " + filepath.Join(e.proj, ".claude", "settings.json") + ":1:2): trust it with tack trust\n"; !strings.HasPrefix(errOut, want) ||
		!strings.Contains(errOut, "environment variable TEAM_HOST is not set") {
		t.Errorf("untrusted: stderr %q, want %q and the unset variable", errOut, want)
	}
	if _, err := agent.TrustWorkspace(agent.Options{Cwd: e.proj}); err != nil {
		t.Fatal(err)
	}
	e.check = nil
	out = e.ok("mcp", "list")
	if !strings.Contains(out, "team: https://team.example/mcp (HTTP) - (not checked)\n") || !strings.Contains(out, "other: o - ⚠ Needs approval\n") ||
		!strings.Contains(out, "plain: p - (not checked)\n") {
		t.Errorf("%s", out)
	}
	// reject records a refusal, which list shows.
	e.ok("mcp", "reject", "other")
	if out := e.ok("mcp", "list"); !strings.Contains(out, "other: o - ✗ Rejected\n") {
		t.Errorf("%s", out)
	}
	if _, errOut, code := e.run("mcp", "approve", "nope"); code != 1 || !strings.Contains(errOut, `has no server named "nope"`) {
		t.Errorf("approve nope: %d %s", code, errOut)
	}
}

func TestMCPCallResolvesTheServer(t *testing.T) {
	e := newMCPEnv(t)
	var got []string
	e.call = func(ctx context.Context, stdio cmdio.IO, s mcpconfig.Server, tool string, input json.RawMessage) error {
		got = append(got, s.Name, s.Command, tool, string(input))
		fmt.Fprintln(stdio.Out, "called")
		return nil
	}
	e.ok("mcp", "add", "srv", "--", "srv-bin")
	if out := e.ok("mcp", "call", "srv", "echo", `{"text":"hi"}`); out != "called\n" || strings.Join(got, " ") != `srv srv-bin echo {"text":"hi"}` {
		t.Errorf("%q %v", out, got)
	}
	e.write(".mcp.json", `{"mcpServers": {"p": {"command": "p"}}}`)
	if _, errOut, code := e.run("mcp", "call", "p", "t"); code != 1 || !strings.Contains(errOut, "is not approved: run tack mcp approve p first") {
		t.Errorf("unapproved call: %d %s", code, errOut)
	}
}
