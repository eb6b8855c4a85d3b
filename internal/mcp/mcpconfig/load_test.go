package mcpconfig

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// fixture is a home directory and a project directory in t.TempDir().
type fixture struct {
	t     *testing.T
	files Files
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	home, proj := t.TempDir(), t.TempDir()
	return &fixture{t, Files{ClaudeJSON: filepath.Join(home, ".claude.json"), ProjectDir: proj}}
}

func (f *fixture) write(path, content string) {
	f.t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		f.t.Fatal(err)
	}
}

func (f *fixture) read(path string) string {
	f.t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		f.t.Fatal(err)
	}
	return string(b)
}

// claudeJSON writes ~/.claude.json with user servers and this project's
// entry (a JSON object's members, without braces).
func (f *fixture) claudeJSON(user, project string) {
	f.write(f.files.ClaudeJSON, `{
  "numStartups": 12,
  "mcpServers": {`+user+`},
  "projects": {
    "/some/other/project": {"mcpServers": {"other": {"command": "other-cmd"}}},
    `+jsonString(f.files.Key())+`: {`+project+`}
  }
}`)
}

func jsonString(s string) string { return string(appendQuoted(nil, s)) }

func (f *fixture) load(opts Options) *Set {
	f.t.Helper()
	if opts.Files == (Files{}) {
		opts.Files = f.files
	}
	if opts.LookupEnv == nil {
		opts.LookupEnv = env(nil)
	}
	s, err := Load(opts)
	if err != nil {
		f.t.Fatal(err)
	}
	return s
}

func names(servers []*Server) []string {
	var out []string
	for _, s := range servers {
		out = append(out, s.Name+"@"+string(s.Scope))
	}
	return out
}

func noProblems(t *testing.T, s *Set) {
	t.Helper()
	for _, p := range s.Problems() {
		t.Errorf("unexpected problem: %v", p)
	}
}

func TestPrecedenceLocalOverProjectOverUser(t *testing.T) {
	f := newFixture(t)
	f.claudeJSON(
		`"shared": {"command": "user-cmd"}, "user-only": {"command": "u"}, "pu": {"command": "user-pu"}`,
		`"mcpServers": {"shared": {"command": "local-cmd"}, "local-only": {"type": "http", "url": "https://l.example/mcp"}}`)
	f.write(f.files.MCPJSON(), `{"mcpServers": {
  "shared": {"command": "project-cmd"},
  "pu": {"command": "project-pu"},
  "project-only": {"command": "p"}
}}`)
	s := f.load(Options{})
	noProblems(t, s)
	want := []string{"shared@local", "local-only@local", "pu@project", "project-only@project", "user-only@user"}
	if got := names(s.Servers()); !slices.Equal(got, want) {
		t.Errorf("servers %v, want %v", got, want)
	}
	line6 := strings.Split(f.read(f.files.ClaudeJSON), "\n")[5]
	wantSrc := Source{f.files.ClaudeJSON, 6, strings.Index(line6, `"shared"`) + 1}
	if srv, _ := s.Lookup("shared"); srv.Command != "local-cmd" || srv.Source != wantSrc {
		t.Errorf("shared: %+v", srv)
	}
	if got := names(s.Definitions("shared")); !slices.Equal(got, []string{"shared@local", "shared@project", "shared@user"}) {
		t.Errorf("definitions %v", got)
	}
	if got := names(s.Shadowed()); !slices.Equal(got, []string{"shared@project", "shared@user", "pu@user"}) {
		t.Errorf("shadowed %v", got)
	}
	if _, ok := s.Lookup("other"); ok {
		t.Error("another project's local server was read")
	}
	if srv, _ := s.Lookup("project-only"); srv.Source.String() != f.files.MCPJSON()+":4:3" {
		t.Errorf("source %s", srv.Source)
	}
}

func TestMCPConfigFlagWinsAndStrictReadsOnlyIt(t *testing.T) {
	f := newFixture(t)
	f.claudeJSON(`"a": {"command": "user-a"}, "b": {"command": "user-b"}`, `"mcpServers": {"a": {"command": "local-a"}}`)
	f.write(filepath.Join(f.files.ProjectDir, "extra.json"), `{"mcpServers": {"a": {"command": "file-a"}, "c": {"command": "file-c"}}}`)
	inline := `{"mcpServers": {"c": {"command": "inline-c"}}}`

	s := f.load(Options{MCPConfig: []string{"extra.json", inline}})
	noProblems(t, s)
	if got := names(s.Servers()); !slices.Equal(got, []string{"c@dynamic", "a@dynamic", "b@user"}) {
		t.Errorf("servers %v", got)
	}
	if a, _ := s.Lookup("a"); a.Command != "file-a" {
		t.Errorf("a = %q, want the --mcp-config file's", a.Command)
	}
	if c, _ := s.Lookup("c"); c.Command != "inline-c" || c.Source.String() != "--mcp-config #2:1:17" {
		t.Errorf("a later --mcp-config must win: %q from %s", c.Command, c.Source)
	}

	// Strict: the other sources are not even read (a broken one is no
	// problem).
	f.write(f.files.ClaudeJSON, "{oops")
	s = f.load(Options{MCPConfig: []string{inline}, Strict: true})
	noProblems(t, s)
	if got := names(s.Servers()); !slices.Equal(got, []string{"c@dynamic"}) {
		t.Errorf("strict servers %v", got)
	}
	s.Add(&Server{Name: "p", Scope: PluginScope("kit"), Command: "x"}, &Server{Name: "g", Scope: AgentScope("rev"), Command: "y"})
	if got := names(s.Servers()); !slices.Equal(got, []string{"c@dynamic", "g@agent:rev"}) {
		t.Errorf("strict mode must drop plugin servers but keep agent ones: %v", got)
	}
}

func TestMCPConfigProblems(t *testing.T) {
	f := newFixture(t)
	s := f.load(Options{MCPConfig: []string{"missing.json", `{"mcpServers": {"x": {"command": 1}}}`, "{\n  \"mcpServers\": [] }"}})
	var got []string
	for _, p := range s.Problems() {
		got = append(got, p.Error())
	}
	want := []string{
		filepath.Join(f.files.ProjectDir, "missing.json") + ": --mcp-config file not found",
		"--mcp-config #3:2:17: mcpServers: expected an object of servers by name, got a list",
		"--mcp-config #2:1:34: mcpServers.x.command: expected a string, got a number",
	}
	if !slices.Equal(got, want) {
		t.Errorf("problems\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func TestAddedServersRankLast(t *testing.T) {
	f := newFixture(t)
	f.claudeJSON(`"github": {"command": "mine"}`, ``)
	s := f.load(Options{})
	s.Add(&Server{Name: "github", Scope: PluginScope("evil"), Command: "theirs"}, &Server{Name: "lint", Scope: PluginScope("kit"), Command: "l"})
	if g, _ := s.Lookup("github"); g.Command != "mine" {
		t.Error("a plugin took over a server the user configured")
	}
	if got := names(s.Shadowed()); !slices.Equal(got, []string{"github@plugin:evil"}) {
		t.Errorf("shadowed %v", got)
	}
	if l, ok := s.Lookup("lint"); !ok || l.Scope.Describe() != "Plugin kit" {
		t.Errorf("lint %+v", l)
	}
}

func TestSources(t *testing.T) {
	f := newFixture(t)
	f.claudeJSON(`"u": {"command": "u"}`, `"mcpServers": {"l": {"command": "l"}}`)
	f.write(f.files.MCPJSON(), `{"mcpServers": {"p": {"command": "p"}}}`)
	s := f.load(Options{Sources: []Scope{ScopeUser, ScopeProject}})
	if got := names(s.Servers()); !slices.Equal(got, []string{"p@project", "u@user"}) {
		t.Errorf("servers %v", got)
	}
	s = f.load(Options{Sources: []Scope{}})
	if len(s.Servers()) != 0 {
		t.Errorf("no source selected, got %v", names(s.Servers()))
	}
}

func TestExpansionInEveryField(t *testing.T) {
	f := newFixture(t)
	f.write(f.files.MCPJSON(), `{"mcpServers": {
  "stdio": {"command": "${BIN:-npx}", "args": ["-y", "${PKG}", "$LITERAL", "cost: $5"], "env": {"KEY": "${API_KEY}", "MODE": "${MODE:-dev}"}},
  "remote": {"type": "http", "url": "https://${HOST}/mcp", "headers": {"Authorization": "Bearer ${API_KEY}"}},
  "broken": {"type": "sse", "url": "https://x.example/sse", "headers": {"A": "${NOPE}", "B": "${NOPE2}"}},
  "bad-url": {"type": "http", "url": "${UNSET_URL}"}
}}`)
	s := f.load(Options{LookupEnv: env(map[string]string{"PKG": "srv", "API_KEY": "k3y", "HOST": "h.example"})})
	st, _ := s.Lookup("stdio")
	if st.Err != nil || st.Command != "npx" || !slices.Equal(st.Args, []string{"-y", "srv", "$LITERAL", "cost: $5"}) || st.Env["KEY"] != "k3y" || st.Env["MODE"] != "dev" {
		t.Errorf("stdio %+v %v", st, st.Err)
	}
	r, _ := s.Lookup("remote")
	if r.Err != nil || r.URL != "https://h.example/mcp" || r.Headers["Authorization"] != "Bearer k3y" {
		t.Errorf("remote %+v", r)
	}
	if got := r.MaskedHeaders(); len(got) != 1 || got[0].Value != "Bearer ${API_KEY}" {
		t.Errorf("masked headers %v", got)
	}
	b, _ := s.Lookup("broken")
	want := f.files.MCPJSON() + `:4:78: mcpServers.broken.headers.A: environment variables NOPE, NOPE2 are not set; server "broken" cannot start (set it, or write ${NOPE:-default})`
	if b.Err == nil || b.Err.Error() != want || !slices.Equal(b.Err.Missing, []string{"NOPE", "NOPE2"}) {
		t.Errorf("broken: %v\nwant      %s", b.Err, want)
	}
	// An unset variable in a URL is reported as such, not as a bad URL.
	if u, _ := s.Lookup("bad-url"); u.Err == nil || !strings.Contains(u.Err.Msg, "UNSET_URL is not set") {
		t.Errorf("bad-url: %v", u.Err)
	}
	p := s.Plan()
	if got := names(p.Start); len(got) != 0 {
		t.Errorf("unapproved project servers would start: %v", got)
	}
	if got := names(p.Broken); !slices.Equal(got, []string{"broken@project", "bad-url@project"}) {
		t.Errorf("broken %v", got)
	}
}

func TestMalformedEntriesAreReportedAtTheirPosition(t *testing.T) {
	cases := []struct{ entry, want string }{
		{`"x"`, `1:46: mcpServers.s: a server must be an object, got a string`},
		{`{"args": ["a"]}`, `1:46: mcpServers.s: missing "command" (the program that runs the server)`},
		{`{"comand": "npx"}`, `1:46: mcpServers.s: missing "command" (the program that runs the server) (is "comand" a misspelling of "command"?)`},
		{`{"url": "https://x.example/mcp"}`, `1:46: mcpServers.s: missing "command"; a server reached by URL needs "type": "http" or "sse"`},
		{`{"command": ""}`, `1:58: mcpServers.s.command: command is empty`},
		{`{"command": ["npx"]}`, `1:58: mcpServers.s.command: expected a string, got a list`},
		{`{"command": "npx", "args": "-y"}`, `1:73: mcpServers.s.args: expected a list of strings, got a string`},
		{`{"command": "npx", "args": ["-y", 3]}`, `1:80: mcpServers.s.args[1]: expected a string, got a number`},
		{`{"command": "npx", "env": {"PORT": 8080}}`, `1:81: mcpServers.s.env.PORT: expected a string, got a number`},
		{`{"command": "npx", "env": ["A=1"]}`, `1:72: mcpServers.s.env: expected an object of strings, got a list`},
		{`{"type": "websocket", "url": "wss://x"}`, `1:55: mcpServers.s.type: unknown type "websocket" (want stdio, http, sse or ws)`},
		{`{"type": 1}`, `1:55: mcpServers.s.type: expected a string, got a number`},
		{`{"type": "http"}`, `1:46: mcpServers.s: missing "url" (a http server is reached by URL)`},
		{`{"type": "http", "url": "localhost:3000/mcp"}`, `1:70: mcpServers.s.url: invalid URL "localhost:3000/mcp": want an http:// or https:// URL`},
		{`{"type": "sse", "url": "https:///mcp"}`, `1:69: mcpServers.s.url: invalid URL "https:///mcp": no host`},
		{`{"type": "http", "url": "https://x.example", "headers": {"A": true}}`, `1:108: mcpServers.s.headers.A: expected a string, got a boolean`},
		{`{"type": "http", "url": "https://x.example", "oauth": {"callbackPort": 80.5}}`, `1:117: mcpServers.s.oauth.callbackPort: invalid port 80.5 (want a whole number from 1 to 65535)`},
		{`{"type": "http", "url": "https://x.example", "oauth": {"clientId": 7}}`, `1:113: mcpServers.s.oauth.clientId: expected a string, got a number`},
	}
	for _, c := range cases {
		f := newFixture(t)
		f.write(f.files.MCPJSON(), `{"mcpServers": {"ok": {"command": "a"}, "s": `+c.entry+`}}`)
		s := f.load(Options{})
		srv, _ := s.Lookup("s")
		if srv == nil || srv.Err == nil || srv.Err.Error() != f.files.MCPJSON()+":"+c.want {
			t.Errorf("%s:\n got %v\nwant %s", c.entry, srv.Err, c.want)
			continue
		}
		if srv.Err.Server != "s" {
			t.Errorf("%s: error names server %q", c.entry, srv.Err.Server)
		}
		// One bad entry disables that server only.
		if ok, _ := s.Lookup("ok"); ok.Err != nil {
			t.Errorf("%s: the good server was disabled too: %v", c.entry, ok.Err)
		}
		if len(s.Problems()) != 1 {
			t.Errorf("%s: problems %v", c.entry, s.Problems())
		}
	}
}

func TestMalformedFilesAreReportedAndSkipped(t *testing.T) {
	cases := []struct{ name, content, want string }{
		{"bad JSON", "{\n  \"mcpServers\": {\n    \"a\": {\"command\": \"x\"},\n  }\n}", ":3:26: invalid JSON: trailing comma before '}' (JSON does not allow one)"},
		{"array", `[]`, `:1:1: an MCP configuration must be a JSON object such as {"mcpServers": {…}}, got a list`},
		{"servers not an object", `{"mcpServers": "a"}`, `:1:16: mcpServers: expected an object of servers by name, got a string`},
		{"bare map", `{"a": {"command": "x"}}`, `:1:1: no "mcpServers" key: the servers go in {"mcpServers": {"name": {…}}}`},
	}
	for _, c := range cases {
		f := newFixture(t)
		f.claudeJSON(`"u": {"command": "u"}`, ``)
		f.write(f.files.MCPJSON(), c.content)
		s := f.load(Options{})
		probs := s.Problems()
		if len(probs) != 1 || probs[0].Error() != f.files.MCPJSON()+c.want {
			t.Errorf("%s: problems %v, want …%s", c.name, probs, c.want)
		}
		// The other files still count.
		if got := names(s.Servers()); !slices.Equal(got, []string{"u@user"}) {
			t.Errorf("%s: servers %v", c.name, got)
		}
	}

	// A broken ~/.claude.json loses the user and local servers, not the
	// project's, and says where it is broken.
	f := newFixture(t)
	f.write(f.files.ClaudeJSON, "{\n  \"numStartups\": 3\n  \"mcpServers\": {}\n}")
	f.write(f.files.MCPJSON(), `{"mcpServers": {"p": {"command": "p"}}}`)
	s := f.load(Options{})
	if probs := s.Problems(); len(probs) != 1 || probs[0].Error() != f.files.ClaudeJSON+":3:3: invalid JSON: missing ',' before this key" {
		t.Errorf("problems %v", probs)
	}
	if got := names(s.Servers()); !slices.Equal(got, []string{"p@project"}) {
		t.Errorf("servers %v", got)
	}
	// Wrong types in this project's entry are reported, not fatal.
	f.claudeJSON(``, `"mcpServers": {"l": {"command": "l"}}, "enabledMcpjsonServers": "p"`)
	s = f.load(Options{})
	if probs := s.Problems(); len(probs) != 1 || !strings.Contains(probs[0].Error(), `.enabledMcpjsonServers: expected a list of server names, got a string (ignored)`) {
		t.Errorf("problems %v", probs)
	}
	if got := names(s.Servers()); !slices.Equal(got, []string{"l@local", "p@project"}) {
		t.Errorf("servers %v", got)
	}
}

func TestDuplicateNamesKeepTheLastAtTheFirstPlace(t *testing.T) {
	f := newFixture(t)
	f.write(f.files.MCPJSON(), `{"mcpServers": {"a": {"command": "first"}, "b": {"command": "b"}, "a": {"command": "second"}}}`)
	s := f.load(Options{})
	if got := names(s.Servers()); !slices.Equal(got, []string{"a@project", "b@project"}) {
		t.Errorf("servers %v", got)
	}
	if a, _ := s.Lookup("a"); a.Command != "second" {
		t.Errorf("a = %q; JSON.parse keeps the last", a.Command)
	}
}

func TestUnknownKeysAreKept(t *testing.T) {
	f := newFixture(t)
	f.write(f.files.MCPJSON(), `{"mcpServers": {"r": {"type": "streamable-http", "url": "https://x.example/mcp", "timeout": 5000, "alwaysLoad": true, "headersHelper": "get-headers", "oauth": {"clientId": "cid", "callbackPort": 8080}}}}`)
	s := f.load(Options{})
	noProblems(t, s)
	r, _ := s.Lookup("r")
	if r.Type != TypeHTTP || string(r.Extra["timeout"]) != "5000" || string(r.Extra["alwaysLoad"]) != "true" || len(r.Extra) != 2 {
		t.Errorf("%+v", r)
	}
	if r.HeadersHelper != "get-headers" || r.OAuth == nil || *r.OAuth != (OAuth{ClientID: "cid", CallbackPort: 8080}) {
		t.Errorf("helper %q oauth %+v", r.HeadersHelper, r.OAuth)
	}
}

func TestApproval(t *testing.T) {
	f := newFixture(t)
	f.write(f.files.MCPJSON(), `{"mcpServers": {
  "new": {"command": "n"}, "ok": {"command": "o"}, "no": {"command": "x"},
  "both": {"command": "b"}, "by-settings": {"command": "s"}, "dotted.name": {"command": "d"}
}}`)
	f.claudeJSON(`"u": {"command": "u"}`, `"enabledMcpjsonServers": ["ok", "both", "dotted_name"], "disabledMcpjsonServers": ["no", "both"], "disabledMcpServers": ["u"]`)
	s := f.load(Options{Settings: ApprovalSettings{EnabledMcpjsonServers: []string{"by-settings"}}})
	noProblems(t, s)
	check := func(name string, approved, decided bool) {
		t.Helper()
		srv, _ := s.Lookup(name)
		if a, d := s.Approval(srv); a != approved || d != decided {
			t.Errorf("%s: approved %v decided %v, want %v %v", name, a, d, approved, decided)
		}
	}
	check("new", false, false)
	check("ok", true, true)
	check("no", false, true)
	check("both", false, true) // a refusal wins
	check("by-settings", true, true)
	check("dotted.name", true, true) // names compare in tool-name form
	check("u", true, true)           // only project servers need approval

	p := s.Plan()
	for _, c := range []struct {
		list []*Server
		want []string
	}{
		{p.Start, []string{"ok@project", "by-settings@project", "dotted.name@project"}},
		{p.Pending, []string{"new@project"}},
		{p.Rejected, []string{"no@project", "both@project"}},
		{p.Disabled, []string{"u@user"}},
	} {
		if got := names(c.list); !slices.Equal(got, c.want) {
			t.Errorf("plan %v, want %v", got, c.want)
		}
	}
	if n := PendingNotice(p.Pending[0]); !strings.Contains(n, `"new"`) || !strings.Contains(n, f.files.MCPJSON()+":2:3") || !strings.Contains(n, "tack mcp approve new") {
		t.Errorf("notice %q", n)
	}

	// enableAllProjectMcpServers, in settings or in ~/.claude.json.
	s = f.load(Options{Settings: ApprovalSettings{EnableAllProjectMcpServers: true}})
	if srv, _ := s.Lookup("new"); !must(s.Approval(srv)) {
		t.Error("enableAllProjectMcpServers did not approve")
	}
	if srv, _ := s.Lookup("no"); must(s.Approval(srv)) {
		t.Error("enableAllProjectMcpServers overrode a refusal")
	}

	// SetApproval records the answer and the set sees it at once.
	s = f.load(Options{})
	if err := s.SetApproval("new", true); err != nil {
		t.Fatal(err)
	}
	if err := s.SetApproval("ok", false); err != nil {
		t.Fatal(err)
	}
	for _, ss := range []*Set{s, f.load(Options{})} {
		if srv, _ := ss.Lookup("new"); !must(ss.Approval(srv)) {
			t.Error("new is not approved")
		}
		if srv, _ := ss.Lookup("ok"); must(ss.Approval(srv)) {
			t.Error("ok is still approved")
		}
	}
	if !strings.Contains(f.read(f.files.ClaudeJSON), `"enabledMcpjsonServers": ["both", "dotted_name", "new"], "disabledMcpjsonServers": ["no", "both", "ok"]`) {
		t.Errorf("stored lists:\n%s", f.read(f.files.ClaudeJSON))
	}
}

func must(approved, _ bool) bool { return approved }

func TestParseEntryForCallers(t *testing.T) {
	src := Source{Path: "/plugins/kit/.claude-plugin/plugin.json"}
	s := ParseEntry("db", []byte(`{"command": "${CLAUDE_PLUGIN_ROOT}/bin/db", "args": ["--ro"]}`), PluginScope("kit"), src,
		env(map[string]string{"CLAUDE_PLUGIN_ROOT": "/plugins/kit"}))
	if s.Err != nil || s.Command != "/plugins/kit/bin/db" || s.Scope != "plugin:kit" || s.Source != src {
		t.Errorf("%+v %v", s, s.Err)
	}
	s = ParseEntry("db", []byte(`{"args": []}`), AgentScope("a"), src, env(nil))
	if s.Err == nil || s.Err.Error() != src.Path+`: db: missing "command" (the program that runs the server)` {
		t.Errorf("%v", s.Err)
	}
}
