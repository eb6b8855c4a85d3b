package config

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"unicode/utf8"
)

var errBadRule = errors.New("stub: unbalanced parenthesis")

// stubRule refuses rules with an unbalanced "(", as the permission parser would.
func stubRule(rule string) error {
	if strings.Count(rule, "(") != strings.Count(rule, ")") {
		return errBadRule
	}
	return nil
}

// markedPosition removes the ‸ marking where an error must point and
// returns the text and that 1-based line and column (in characters).
func markedPosition(t *testing.T, marked string) (string, int, int) {
	t.Helper()
	i := strings.Index(marked, "‸")
	if i < 0 {
		t.Fatalf("no ‸ in %q", marked)
	}
	before := strings.TrimPrefix(marked[:i], "\ufeff") // editors do not show a byte order mark
	line := strings.Count(before, "\n") + 1
	col := utf8.RuneCountInString(before[strings.LastIndex(before, "\n")+1:]) + 1
	return strings.Replace(marked, "‸", "", 1), line, col
}

// malformed is the corpus: every case is one file with one problem, marked by ‸.
var malformed = []struct {
	name string
	file string // ‸ marks the position the error must name
	key  string // the JSON path the error must name
	msg  string // the error must contain this
}{
	// Invalid JSON.
	{"line comment", "{\n  \"model\": \"opus\", ‸// the default\n  \"agent\": \"x\"\n}", "", "comments are not allowed in JSON"},
	{"block comment", "{\n  ‸/* team policy */\n  \"model\": \"opus\"\n}", "", "comments are not allowed in JSON"},
	{"trailing comma in object", "{\n  \"permissions\": {\n    \"allow\": [\"Read\"]‸,\n  }\n}", "", "trailing comma before '}'"},
	{"trailing comma in list", "{\"permissions\": {\"deny\": [\n  \"Bash(rm *)\"‸,\n]}}", "", "trailing comma before ']'"},
	{"missing comma", "{\n  \"model\": \"opus\"\n  ‸\"agent\": \"x\"\n}", "", "missing ','"},
	{"missing colon", "{\"model\" ‸\"opus\"}", "", "missing ':'"},
	{"unclosed object", "‸{\n  \"permissions\": {\n    \"allow\": [\"Read\"]\n}", "", "'{' is not closed"},
	{"mismatched bracket", "{\"permissions\": {\"allow\": [\"Read\"‸}}", "", "'}' does not close the '[' at line 1, column 27 (want ']')"},
	{"unclosed string", "{\n  \"model\": ‸\"opus\n}", "", "string is not closed"},
	{"single quotes", "{‸'model': 'opus'}", "", "double quotes"},
	{"unquoted value", "{\"model\": ‸opus}", "", "invalid value opus"},
	{"Python literal", "{\"disableAllHooks\": ‸True}", "", "lower case: true"},
	{"bad escape", "{\"statusLine\": {\"command\": \"C:‸\\Users\"}}", "", `invalid escape \U`},
	{"second object", "{\"model\": \"a\"}\n‸{\"agent\": \"b\"}", "", "after the end of the top-level value"},
	{"top level is a list", "‸[\"Bash\"]", "", "settings must be a JSON object, got a list"},

	// Wrong types, at several depths.
	{"string for list", "{\n  \"permissions\": {\n    \"allow\": ‸\"Bash\"\n  }\n}", "permissions.allow", "expected a list of strings, got a string"},
	{"number for string", "{\"model\": ‸4}", "model", "expected a string, got a number"},
	{"string for bool", "{\"disableAllHooks\": ‸\"true\"}", "disableAllHooks", "expected true or false, got a string"},
	{"list element", "{\"permissions\": {\"deny\": [\"Read\", ‸{\"tool\": \"Bash\"}]}}", "permissions.deny[1]", "expected a string, got an object"},
	{"permissions not an object", "{\"permissions\": ‸[\"Read\"]}", "permissions", "expected an object, got a list"},
	{"env value", "{\"env\": {\"OPTS\": ‸[\"-v\"]}}", "env.OPTS", "expected a string, got a list"},
	{"hooks event not a list", "{\"hooks\": {\"Stop\": ‸{\"hooks\": []}}}", "hooks.Stop", "expected a list of matcher groups, got an object"},
	{"handler list not a list", "{\"hooks\": {\"Stop\": [{\"hooks\": ‸\"./x.sh\"}]}}", "hooks.Stop[0].hooks", "expected a list of hook handlers, got a string"},
	{"timeout as string", "{\"hooks\": {\"PreToolUse\": [{\"matcher\": \"Bash\", \"hooks\": [\n  {\"type\": \"command\", \"command\": \"x\", \"timeout\": ‸\"30\"}]}]}}", "hooks.PreToolUse[0].hooks[0].timeout", "expected a number of seconds, got a string"},
	{"headers value", "{\"hooks\": {\"Stop\": [{\"hooks\": [{\"type\": \"http\", \"url\": \"http://h\", \"headers\": {\"X\": ‸1}}]}]}}", "hooks.Stop[0].hooks[0].headers.X", "expected a string, got a number"},
	{"enabledPlugins value", "{\"enabledPlugins\": {\"fmt@tools\": ‸\"yes\"}}", "enabledPlugins.fmt@tools", "expected true or false"},
	{"cleanupPeriodDays fraction", "{\"cleanupPeriodDays\": ‸1.5}", "cleanupPeriodDays", "expected a whole number, got 1.5"},
	{"cleanupPeriodDays negative", "{\"cleanupPeriodDays\": ‸-1}", "cleanupPeriodDays", "must not be negative"},
	{"mcp input not an object", "{\"hooks\": {\"Stop\": [{\"hooks\": [{\"type\": \"mcp_tool\", \"server\": \"s\", \"tool\": \"t\", \"input\": ‸\"x\"}]}]}}", "hooks.Stop[0].hooks[0].input", "expected an object"},

	// Values of the right type that are wrong.
	{"unknown mode", "{\n  \"permissions\": {\n    \"defaultMode\": ‸\"yolo\"\n  }\n}", "permissions.defaultMode", `unknown mode "yolo" (want default, acceptEdits, plan, auto, bypassPermissions or dontAsk)`},
	{"mode with wrong case", "{\"permissions\": {\"defaultMode\": ‸\"acceptedits\"}}", "permissions.defaultMode", `did you mean "acceptEdits"?`},
	{"disableBypassPermissionsMode", "{\"permissions\": {\"disableBypassPermissionsMode\": ‸true}}", "permissions.disableBypassPermissionsMode", `expected "disable", got true`},
	{"bad hook type", "{\"hooks\": {\"PreToolUse\": [{\"matcher\": \"Bash\", \"hooks\": [{\"type\": ‸\"shell\", \"command\": \"x\"}]}]}}", "hooks.PreToolUse[0].hooks[0].type", `unknown hook type "shell" (want command, http, prompt, agent or mcp_tool)`},
	{"missing type", "{\"hooks\": {\"Stop\": [{\"hooks\": [‸{\"command\": \"x\"}]}]}}", "hooks.Stop[0].hooks[0]", `missing "type"`},
	{"missing command", "{\"hooks\": {\"PreToolUse\": [{\"matcher\": \"Bash\", \"hooks\": [\n    ‸{\"type\": \"command\", \"timeout\": 5}\n]}]}}", "hooks.PreToolUse[0].hooks[0]", `missing "command" (required for type "command")`},
	{"empty command", "{\"hooks\": {\"Stop\": [{\"hooks\": [‸{\"type\": \"command\", \"command\": \"  \"}]}]}}", "hooks.Stop[0].hooks[0]", `missing "command"`},
	{"missing url", "{\"hooks\": {\"Stop\": [{\"hooks\": [‸{\"type\": \"http\"}]}]}}", "hooks.Stop[0].hooks[0]", `missing "url" (required for type "http")`},
	{"missing prompt", "{\"hooks\": {\"Stop\": [{\"hooks\": [‸{\"type\": \"prompt\", \"model\": \"haiku\"}]}]}}", "hooks.Stop[0].hooks[0]", `missing "prompt" (required for type "prompt")`},
	{"missing agent prompt", "{\"hooks\": {\"Stop\": [{\"hooks\": [‸{\"type\": \"agent\"}]}]}}", "hooks.Stop[0].hooks[0]", `missing "prompt" (required for type "agent")`},
	{"missing mcp tool", "{\"hooks\": {\"Stop\": [{\"hooks\": [‸{\"type\": \"mcp_tool\", \"server\": \"s\"}]}]}}", "hooks.Stop[0].hooks[0]", `missing "tool" (required for type "mcp_tool")`},
	{"negative timeout", "{\"hooks\": {\"Stop\": [{\"hooks\": [{\"type\": \"command\", \"command\": \"x\", \"timeout\": ‸-5}]}]}}", "hooks.Stop[0].hooks[0].timeout", "negative timeout -5"},
	{"huge timeout", "{\"hooks\": {\"Stop\": [{\"hooks\": [{\"type\": \"command\", \"command\": \"x\", \"timeout\": ‸1e300}]}]}}", "hooks.Stop[0].hooks[0].timeout", "too large"},
	{"unknown event", "{\n  \"hooks\": {\n    ‸\"PreTooluse\": []\n  }\n}", "hooks.PreTooluse", `unknown hook event "PreTooluse" (did you mean "PreToolUse"?)`},
	{"unknown event, no suggestion", "{\"hooks\": {‸\"OnSave\": []}}", "hooks.OnSave", `unknown hook event "OnSave"`},
	{"bad regexp matcher", "{\"hooks\": {\"PreToolUse\": [{\"matcher\": ‸\"mcp__(memory\", \"hooks\": []}]}}", "hooks.PreToolUse[0].matcher", "missing closing )"},
	{"star regexp matcher", "{\"hooks\": {\"PreToolUse\": [{\"matcher\": ‸\"**\", \"hooks\": []}]}}", "hooks.PreToolUse[0].matcher", "missing argument to repetition operator"},
	{"flat hook", "{\"hooks\": {\"PreToolUse\": [‸{\"matcher\": \"Bash\", \"type\": \"command\", \"command\": \"x\"}]}}", "hooks.PreToolUse[0]", "handlers go in a nested list"},
	{"group without hooks", "{\"hooks\": {\"PreToolUse\": [‸{\"matcher\": \"Bash\"}]}}", "hooks.PreToolUse[0]", `missing "hooks"`},
	{"bad rule", "{\"permissions\": {\"allow\": [\"Read\",\n  ‸\"Bash(npm test *\"]}}", "permissions.allow[1]", `invalid rule "Bash(npm test *": stub: unbalanced parenthesis`},
	{"bad deny rule", "{\"permissions\": {\"deny\": [‸\"Bash(rm *\"]}}", "permissions.deny[0]", "invalid rule"},
	{"empty rule", "{\"permissions\": {\"ask\": [‸\"\"]}}", "permissions.ask[0]", "empty rule"},
	{"bad if", "{\"hooks\": {\"PreToolUse\": [{\"matcher\": \"Bash\", \"hooks\": [{\"type\": \"command\", \"command\": \"x\", \"if\": ‸\"Bash(rm *\"}]}]}}", "hooks.PreToolUse[0].hooks[0].if", `invalid condition "Bash(rm *": stub: unbalanced parenthesis`},
	{"duplicate key", "{\n  \"permissions\": {\"deny\": [\"Bash(rm *)\"]},\n  ‸\"permissions\": {\"allow\": [\"Read\"]}\n}", "permissions", "duplicate key (also at line 2, column 3)"},
	{"duplicate env", "{\"env\": {\"A\": \"1\", ‸\"A\": \"2\"}}", "env.A", "duplicate key"},
	{"env name with =", "{\"env\": {‸\"A=B\": \"1\"}}", "env.A=B", "contains '='"},
	{"statusLine without command", "{\"statusLine\": ‸{\"type\": \"command\"}}", "statusLine", `missing "command"`},

	// Positions count characters, whatever the line endings and indentation.
	{"non-ASCII before", "{\"agent\": \"désolé 日本\", \"model\": ‸5}", "model", "expected a string"},
	{"CRLF", "{\r\n  \"model\": \"a\",\r\n  \"permissions\": {\"defaultMode\": ‸\"x\"}\r\n}\r\n", "permissions.defaultMode", "unknown mode"},
	{"tabs", "{\n\t\"permissions\": {\n\t\t\"allow\": ‸true\n\t}\n}", "permissions.allow", "expected a list of strings, got a boolean"},
	{"BOM", "\xef\xbb\xbf{\"model\": ‸true}", "model", "expected a string"},
}

func TestMalformedFiles(t *testing.T) {
	for _, c := range malformed {
		for _, scope := range []Scope{ScopeProject, ScopeManaged} { // managed errors are not ignored either
			t.Run(c.name+"/"+string(scope), func(t *testing.T) {
				e := newEnv(t)
				text, line, col := markedPosition(t, c.file)
				path := e.write(scope, text)
				e.write(ScopeUser, `{"model": "fine"}`) // a good file beside the bad one does not hide it
				o := e.opts()
				o.ValidateRule, o.ValidateIf = stubRule, stubRule
				m, err := Load(o)
				checkOneError(t, m, err, Source{Scope: scope, Path: path, Line: line, Col: col}, c.key, c.msg)
			})
		}
	}
}

// TestMalformedInline: inline --settings errors name --settings.
func TestMalformedInline(t *testing.T) {
	for _, c := range malformed {
		if !strings.HasPrefix(strings.Replace(c.file, "‸", "", 1), "{") {
			continue // not inline JSON: it would be taken for a file name
		}
		t.Run(c.name, func(t *testing.T) {
			e := newEnv(t)
			text, line, col := markedPosition(t, c.file)
			o := e.opts()
			o.FlagSettings = text
			o.ValidateRule, o.ValidateIf = stubRule, stubRule
			m, err := Load(o)
			checkOneError(t, m, err, Source{Scope: ScopeFlag, Path: FlagPath, Line: line, Col: col}, c.key, c.msg)
			if err != nil && !strings.HasPrefix(err.Error(), fmt.Sprintf("--settings:%d:%d: ", line, col)) {
				t.Errorf("error %q does not start with --settings:%d:%d", err, line, col)
			}
		})
	}
}

func checkOneError(t *testing.T, m *Merged, err error, want Source, key, msg string) {
	t.Helper()
	if err == nil {
		t.Fatalf("no error; merged %+v", m)
	}
	if m != nil {
		t.Errorf("a result came with the error")
	}
	e, ok := err.(*Error)
	if !ok {
		t.Fatalf("want exactly one *Error, got %T: %v", err, err)
	}
	if e.Source != want {
		t.Errorf("error at %+v, want %+v\n%v", e.Source, want, err)
	}
	if e.Key != key {
		t.Errorf("key %q, want %q\n%v", e.Key, key, err)
	}
	if !strings.Contains(e.Error(), msg) {
		t.Errorf("error %q lacks %q", e.Error(), msg)
	}
	prefix := fmt.Sprintf("%s:%d:%d: ", want.Path, want.Line, want.Col)
	if key != "" {
		prefix += key + ": "
	}
	if !strings.HasPrefix(e.Error(), prefix) {
		t.Errorf("error %q does not start with %q", e.Error(), prefix)
	}
	if strings.Contains(e.Error(), "\n") {
		t.Errorf("error spans lines: %q", e.Error())
	}
}

// TestBriefExample pins the exact text of an error.
func TestBriefExample(t *testing.T) {
	e := newEnv(t)
	path := e.write(ScopeProject, `{
  "model": "opus",
  "env": {
    "A": "1"
  },
  "permissions": {
    "defaultMode": "yolo"
  }
}`)
	_, err := Load(e.opts())
	want := path + `:7:20: permissions.defaultMode: unknown mode "yolo" (want default, acceptEdits, plan, auto, bypassPermissions or dontAsk)`
	if err == nil || err.Error() != want {
		t.Errorf("got  %v\nwant %s", err, want)
	}
}

func TestValidatorErrorsUnwrap(t *testing.T) {
	e := newEnv(t)
	e.write(ScopeLocal, `{"permissions": {"allow": ["Bash(x"]}}`)
	o := e.opts()
	o.ValidateRule = stubRule
	_, err := Load(o)
	if !errors.Is(err, errBadRule) {
		t.Errorf("errors.Is(%v, errBadRule) = false", err)
	}
	// Without a validator the rule passes: checking it is the caller's choice.
	if _, err := Load(e.opts()); err != nil {
		t.Errorf("without ValidateRule: %v", err)
	}
}

func TestSeveralMalformedFiles(t *testing.T) {
	e := newEnv(t)
	u := e.write(ScopeUser, `{"model": 1}`)
	p := e.write(ScopeProject, `{"permissions": {"defaultMode": "x"}}`)
	e.write(ScopeLocal, `{"model": "fine"}`)
	_, err := Load(e.opts())
	if err == nil {
		t.Fatal("no error")
	}
	lines := strings.Split(err.Error(), "\n")
	if len(lines) != 2 || !strings.HasPrefix(lines[0], u+":1:11: model:") || !strings.HasPrefix(lines[1], p+":1:33: permissions.defaultMode:") {
		t.Errorf("error:\n%v", err)
	}
	var first *Error
	if !errors.As(err, &first) || first.Source.Path != u {
		t.Errorf("errors.As gives %+v", first)
	}
}

// failingFS makes one path unreadable, as chmod 000 would for a user other
// than root.
type failingFS struct {
	osFS
	path string
	err  error
}

func (f failingFS) ReadFile(name string) ([]byte, error) {
	if name == f.path {
		return nil, &fs.PathError{Op: "open", Path: name, Err: f.err}
	}
	return os.ReadFile(name)
}

func TestUnreadableFile(t *testing.T) {
	e := newEnv(t)
	for _, scope := range []Scope{ScopeUser, ScopeProject, ScopeLocal, ScopeManaged} {
		path := e.write(scope, `{}`)
		_, err := load(e.opts(), failingFS{path: path, err: syscall.EACCES})
		want := path + ": cannot read settings: permission denied"
		if err == nil || err.Error() != want {
			t.Errorf("%s: got %v, want %s", scope, err, want)
		}
		if !errors.Is(err, fs.ErrPermission) {
			t.Errorf("%s: errors.Is(err, fs.ErrPermission) = false", scope)
		}
	}
}

func TestUnreadableFileChmod(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("root reads any file; TestUnreadableFile covers this")
	}
	e := newEnv(t)
	path := e.write(ScopeProject, `{}`)
	os.Chmod(path, 0)
	_, err := Load(e.opts())
	if !errors.Is(err, fs.ErrPermission) || !strings.HasPrefix(err.Error(), path+": ") {
		t.Errorf("got %v", err)
	}
}

func TestNotAFile(t *testing.T) {
	e := newEnv(t)
	dir := e.path(ScopeProject)
	os.MkdirAll(dir, 0o755)
	if _, err := Load(e.opts()); err == nil || !strings.Contains(err.Error(), dir+": cannot read settings: not a regular file but a directory") {
		t.Errorf("directory: %v", err)
	}
	os.Remove(dir)
	if err := os.Symlink(filepath.Join(e.root, "nowhere.json"), dir); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(e.opts()); err == nil || !strings.Contains(err.Error(), "symbolic link points to a missing file") {
		t.Errorf("dangling symlink: %v", err)
	}
	os.Remove(dir)
	if err := syscall.Mkfifo(dir, 0o644); err != nil {
		t.Skip("no FIFOs here:", err)
	}
	if _, err := Load(e.opts()); err == nil || !strings.Contains(err.Error(), "not a regular file but a named pipe") {
		t.Errorf("FIFO: %v", err)
	}
}

func TestMissingFlagFile(t *testing.T) {
	e := newEnv(t)
	_, err := Load(func() LoadOptions { o := e.opts(); o.FlagSettings = "nope.json"; return o }())
	want := filepath.Join(e.project, "nope.json") + ": settings file not found: no such file or directory"
	if err == nil || err.Error() != want {
		t.Errorf("got %v, want %s", err, want)
	}
}

func TestTooLarge(t *testing.T) {
	e := newEnv(t)
	path := e.write(ScopeProject, `{"model": "`+strings.Repeat("x", maxFileSize)+`"}`)
	if _, err := Load(e.opts()); err == nil || !strings.HasPrefix(err.Error(), path+": cannot read settings:") || !strings.Contains(err.Error(), "too large") {
		t.Errorf("got %v", err)
	}
}

// TestErrorText: the one error type of settings, extensions and MCP
// configuration renders each of their forms.
func TestErrorText(t *testing.T) {
	cause := errors.New("boom")
	tests := []struct {
		e    Error
		want string
	}{
		{Error{Source: Source{Scope: ScopeProject, Path: "/p/.claude/settings.json", Line: 3, Col: 7}, Key: "model", Msg: "expected a string"},
			"/p/.claude/settings.json:3:7: model: expected a string"},
		{Error{Source: Source{Path: "--settings"}, Msg: "invalid JSON", Err: cause}, "--settings: invalid JSON: boom"},
		{Error{Source: Source{Path: "/p/SKILL.md", Line: 1}, Msg: "no frontmatter"}, "/p/SKILL.md:1: no frontmatter"},
		{Error{Source: Source{Path: "/p/agent.md", Line: 4, Col: 1}, Key: "tool", Msg: "unknown field, ignored", Warning: true},
			"/p/agent.md:4:1: warning: tool: unknown field, ignored"},
		{Error{Source: Source{Path: "/p/.mcp.json", Line: 1, Col: 46}, Key: "mcpServers.s", Server: "s", Msg: "missing \"command\""},
			"/p/.mcp.json:1:46: mcpServers.s: missing \"command\""},
	}
	for _, tt := range tests {
		if got := tt.e.Error(); got != tt.want {
			t.Errorf("got  %q\nwant %q", got, tt.want)
		}
	}
	e := &Error{Source: Source{Path: "x"}, Msg: "m", Err: cause}
	if !errors.Is(e, cause) {
		t.Error("the cause does not unwrap")
	}
}
