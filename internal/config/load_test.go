package config

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

// testEnv is a home directory, a project and a managed settings path in a
// temporary directory.
type testEnv struct {
	t       *testing.T
	root    string
	config  string // ~/.claude
	project string
	managed string
}

func newEnv(t *testing.T) *testEnv {
	t.Helper()
	root := t.TempDir()
	return &testEnv{
		t:       t,
		root:    root,
		config:  filepath.Join(root, "home", ".claude"),
		project: filepath.Join(root, "proj"),
		managed: filepath.Join(root, "etc", "claude-code", "managed-settings.json"),
	}
}

// path is where the file of scope lives; the flag file is flag.json in the
// project directory.
func (e *testEnv) path(s Scope) string {
	switch s {
	case ScopeUser:
		return filepath.Join(e.config, "settings.json")
	case ScopeProject:
		return filepath.Join(e.project, ".claude", "settings.json")
	case ScopeLocal:
		return filepath.Join(e.project, ".claude", "settings.local.json")
	case ScopeFlag:
		return filepath.Join(e.project, "flag.json")
	}
	return e.managed
}

func (e *testEnv) write(s Scope, content string) string {
	e.t.Helper()
	p := e.path(s)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		e.t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		e.t.Fatal(err)
	}
	return p
}

func (e *testEnv) opts() LoadOptions {
	return LoadOptions{ConfigDir: e.config, ProjectDir: e.project, Cwd: e.project, ManagedPath: e.managed}
}

func (e *testEnv) load(edit func(*LoadOptions)) *Merged {
	e.t.Helper()
	o := e.opts()
	if edit != nil {
		edit(&o)
	}
	m, err := Load(o)
	if err != nil {
		e.t.Fatalf("Load: %v", err)
	}
	return m
}

func withFlagFile(o *LoadOptions) { o.FlagSettings = "flag.json" }

var allScopes = []Scope{ScopeUser, ScopeProject, ScopeLocal, ScopeFlag, ScopeManaged}

// TestScalarPrecedence writes "model" in every pair of scopes and checks
// that the higher one wins, and that Origin names it.
func TestScalarPrecedence(t *testing.T) {
	for i, lo := range allScopes {
		for _, hi := range allScopes[i+1:] {
			t.Run(string(lo)+"<"+string(hi), func(t *testing.T) {
				e := newEnv(t)
				e.write(lo, `{"model": "`+string(lo)+`", "agent": "only-`+string(lo)+`"}`)
				hiPath := e.write(hi, "{\n  \"model\": \""+string(hi)+"\"\n}")
				m := e.load(func(o *LoadOptions) {
					if lo == ScopeFlag || hi == ScopeFlag {
						withFlagFile(o)
					}
				})
				if m.Model != string(hi) {
					t.Errorf("model = %q, want %q", m.Model, hi)
				}
				want := Source{Scope: hi, Path: hiPath, Line: 2, Col: 12}
				if got, ok := m.Origin("model"); !ok || got != want {
					t.Errorf("Origin(model) = %+v, %v; want %+v", got, ok, want)
				}
				if m.Agent != "only-"+string(lo) {
					t.Errorf("agent = %q: a key the higher file does not set must keep the lower value", m.Agent)
				}
				if got, _ := m.Origin("agent"); got.Scope != lo {
					t.Errorf("Origin(agent) = %+v", got)
				}
				if len(m.Files) != 2 || m.Files[0].Scope != lo || m.Files[1].Scope != hi || m.Files[1].Line != 0 {
					t.Errorf("Files = %+v", m.Files)
				}
			})
		}
	}
}

func TestInlineFlagSettings(t *testing.T) {
	e := newEnv(t)
	e.write(ScopeLocal, `{"model": "local", "permissions": {"allow": ["Read"]}}`)
	m := e.load(func(o *LoadOptions) {
		o.FlagSettings = ` {"model": "inline", "permissions": {"allow": ["Read", "Edit"]}}`
	})
	if m.Model != "inline" {
		t.Errorf("model = %q", m.Model)
	}
	src, _ := m.Origin("model")
	if src != (Source{Scope: ScopeFlag, Path: FlagPath, Line: 1, Col: 12}) {
		t.Errorf("Origin(model) = %+v", src)
	}
	if got := Texts(m.Permissions.Allow); !reflect.DeepEqual(got, []string{"Read", "Edit"}) {
		t.Errorf("allow = %v", got)
	}
	if m.Permissions.Allow[1].Source.Path != FlagPath {
		t.Errorf("Edit came from %+v", m.Permissions.Allow[1].Source)
	}
}

func TestFlagSettingsFile(t *testing.T) {
	e := newEnv(t)
	p := e.write(ScopeFlag, `{"model": "from-file"}`)
	for _, value := range []string{"flag.json", "./flag.json", p} {
		m := e.load(func(o *LoadOptions) { o.FlagSettings = value })
		if src, _ := m.Origin("model"); m.Model != "from-file" || src.Path != p || src.Scope != ScopeFlag {
			t.Errorf("--settings %s: model %q from %+v", value, m.Model, src)
		}
	}
	// A relative path is relative to Cwd, not to the project.
	sub := filepath.Join(e.root, "elsewhere")
	os.MkdirAll(sub, 0o755)
	os.WriteFile(filepath.Join(sub, "flag.json"), []byte(`{"model": "elsewhere"}`), 0o644)
	m := e.load(func(o *LoadOptions) { o.FlagSettings = "flag.json"; o.Cwd = sub })
	if m.Model != "elsewhere" {
		t.Errorf("relative --settings read from the wrong directory: %q", m.Model)
	}
}

func TestListsAccumulate(t *testing.T) {
	e := newEnv(t)
	e.write(ScopeUser, `{"permissions": {"allow": ["A", "B"], "deny": ["X"], "additionalDirectories": ["../lib"]},
		"enabledMcpjsonServers": ["s1"], "claudeMdExcludes": ["**/vendor/**"], "allowedHttpHookUrls": ["https://a/*"]}`)
	e.write(ScopeProject, `{"permissions": {"allow": ["B", "C"], "ask": ["Bash(git push *)"], "deny": ["X", "Y"]},
		"enabledMcpjsonServers": ["s2", "s1"], "disabledMcpjsonServers": ["bad"], "httpHookAllowedEnvVars": ["TOKEN"]}`)
	e.write(ScopeLocal, `{"permissions": {"allow": ["D"], "additionalDirectories": ["../lib", "/opt"]}}`)
	e.write(ScopeFlag, `{"permissions": {"allow": ["A", "E"]}, "allowedHttpHookUrls": ["https://b/*"]}`)
	e.write(ScopeManaged, `{"permissions": {"allow": ["F"], "deny": ["Z"]}, "claudeMdExcludes": ["**/vendor/**"]}`)
	m := e.load(withFlagFile)
	for name, c := range map[string]struct {
		got  []Item
		want []string
	}{
		"allow":                  {m.Permissions.Allow, []string{"A", "B", "C", "D", "E", "F"}},
		"ask":                    {m.Permissions.Ask, []string{"Bash(git push *)"}},
		"deny":                   {m.Permissions.Deny, []string{"X", "Y", "Z"}},
		"additionalDirectories":  {m.Permissions.AdditionalDirectories, []string{"../lib", "/opt"}},
		"enabledMcpjsonServers":  {m.EnabledMcpjsonServers, []string{"s1", "s2"}},
		"disabledMcpjsonServers": {m.DisabledMcpjsonServers, []string{"bad"}},
		"claudeMdExcludes":       {m.ClaudeMdExcludes, []string{"**/vendor/**"}},
		"allowedHttpHookUrls":    {m.AllowedHTTPHookURLs, []string{"https://a/*", "https://b/*"}},
		"httpHookAllowedEnvVars": {m.HTTPHookAllowedEnvVars, []string{"TOKEN"}},
	} {
		if got := Texts(c.got); !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s = %v, want %v", name, got, c.want)
		}
	}
	// A duplicate keeps the lowest scope's source; every item has one.
	wantScopes := []Scope{ScopeUser, ScopeUser, ScopeProject, ScopeLocal, ScopeFlag, ScopeManaged}
	for i, it := range m.Permissions.Allow {
		if it.Source.Scope != wantScopes[i] || it.Source.Path != e.path(wantScopes[i]) || it.Source.Line == 0 {
			t.Errorf("allow[%d] %q from %+v, want %s", i, it.Text, it.Source, wantScopes[i])
		}
	}
	if src := m.Permissions.Allow[0].Source; src.Line != 1 || src.Col != 28 {
		t.Errorf("A is at %d:%d, want 1:28", src.Line, src.Col)
	}
}

func TestMapsMergePerKey(t *testing.T) {
	e := newEnv(t)
	e.write(ScopeUser, `{"env": {"A": "1", "B": "1", "PORT": 8080, "DEBUG": true}, "enabledPlugins": {"p@m": true, "q@m": true}}`)
	e.write(ScopeProject, `{"env": {"B": "2"}, "enabledPlugins": {"q@m": false}}`)
	e.write(ScopeLocal, `{"env": {"C": "3", "A": null}}`)
	m := e.load(nil)
	wantEnv := map[string]string{"A": "1", "B": "2", "C": "3", "PORT": "8080", "DEBUG": "true"}
	if !reflect.DeepEqual(m.Env, wantEnv) {
		t.Errorf("env = %v", m.Env)
	}
	if got := m.EnvList(); !reflect.DeepEqual(got, []string{"A=1", "B=2", "C=3", "DEBUG=true", "PORT=8080"}) {
		t.Errorf("EnvList = %v", got)
	}
	for key, scope := range map[string]Scope{"env.A": ScopeUser, "env.B": ScopeProject, "env.C": ScopeLocal,
		"enabledPlugins.p@m": ScopeUser, "enabledPlugins.q@m": ScopeProject} {
		if src, ok := m.Origin(key); !ok || src.Scope != scope {
			t.Errorf("Origin(%s) = %+v, %v; want %s", key, src, ok, scope)
		}
	}
	if !reflect.DeepEqual(m.EnabledPlugins, map[string]bool{"p@m": true, "q@m": false}) {
		t.Errorf("enabledPlugins = %v", m.EnabledPlugins)
	}
}

func TestScalarsOfEveryKind(t *testing.T) {
	e := newEnv(t)
	e.write(ScopeUser, `{"includeCoAuthoredBy": true, "cleanupPeriodDays": 10, "statusLine": {"type": "command", "command": "a", "padding": 2},
		"sandbox": {"enabled": true}, "outputStyle": "Explanatory", "apiKeyHelper": "/bin/key", "alwaysThinkingEnabled": true,
		"enableAllProjectMcpServers": true, "permissions": {"defaultMode": "plan"}}`)
	e.write(ScopeProject, `{"includeCoAuthoredBy": false, "cleanupPeriodDays": 30.0, "statusLine": {"type": "command", "command": "b"},
		"sandbox": {"network": {}}, "model": null, "permissions": {"defaultMode": "acceptEdits", "disableBypassPermissionsMode": "disable"}}`)
	e.write(ScopeLocal, `{"permissions": {"defaultMode": "bypassPermissions"}}`)
	m := e.load(nil)
	if m.IncludeCoAuthoredBy == nil || *m.IncludeCoAuthoredBy {
		t.Errorf("includeCoAuthoredBy = %v, want false from project", m.IncludeCoAuthoredBy)
	}
	if m.CleanupPeriodDays == nil || *m.CleanupPeriodDays != 30 {
		t.Errorf("cleanupPeriodDays = %v", m.CleanupPeriodDays)
	}
	// statusLine is one value: the project's has no padding, and does not inherit the user's.
	if m.StatusLine == nil || *m.StatusLine != (StatusLine{Type: "command", Command: "b"}) {
		t.Errorf("statusLine = %+v", m.StatusLine)
	}
	if string(m.Sandbox) != `{"network": {}}` {
		t.Errorf("sandbox = %s", m.Sandbox)
	}
	if m.OutputStyle != "Explanatory" || m.APIKeyHelper != "/bin/key" || m.AlwaysThinkingEnabled == nil || !*m.AlwaysThinkingEnabled ||
		m.EnableAllProjectMcpServers == nil || !*m.EnableAllProjectMcpServers {
		t.Errorf("user scalars lost: %+v", m.Settings)
	}
	if _, ok := m.Origin("model"); ok || m.Model != "" {
		t.Errorf("null model should leave model unset, got %q", m.Model)
	}
	if m.Permissions.DefaultMode != "bypassPermissions" || !m.Permissions.DisableBypassPermissionsMode {
		t.Errorf("permissions = %+v", m.Permissions)
	}
	if src, _ := m.Origin("permissions.defaultMode"); src.Scope != ScopeLocal {
		t.Errorf("Origin(permissions.defaultMode) = %+v", src)
	}
	if src, _ := m.Origin("permissions.disableBypassPermissionsMode"); src.Scope != ScopeProject {
		t.Errorf("Origin(permissions.disableBypassPermissionsMode) = %+v", src)
	}
	if m.DisableAllHooks != nil || m.AllowManagedHooksOnly != nil {
		t.Errorf("unset bools should be nil")
	}
}

func TestManagedWins(t *testing.T) {
	e := newEnv(t)
	e.write(ScopeUser, `{"model": "u", "permissions": {"defaultMode": "bypassPermissions"}, "env": {"K": "u"}}`)
	e.write(ScopeLocal, `{"model": "l", "permissions": {"defaultMode": "acceptEdits"}, "env": {"K": "l"}}`)
	e.write(ScopeManaged, `{"model": "m", "permissions": {"defaultMode": "default", "disableBypassPermissionsMode": "disable"}, "env": {"K": "m"}}`)
	m := e.load(func(o *LoadOptions) { o.FlagSettings = `{"model": "f", "env": {"K": "f"}}` })
	if m.Model != "m" || m.Permissions.DefaultMode != "default" || m.Env["K"] != "m" || !m.Permissions.DisableBypassPermissionsMode {
		t.Errorf("managed did not win: model %q mode %q env %q", m.Model, m.Permissions.DefaultMode, m.Env["K"])
	}
	for _, k := range []string{"model", "permissions.defaultMode", "env.K", "permissions.disableBypassPermissionsMode"} {
		if src, _ := m.Origin(k); src.Scope != ScopeManaged || src.Path != e.managed {
			t.Errorf("Origin(%s) = %+v", k, src)
		}
	}
}

func TestSettingSources(t *testing.T) {
	for _, c := range []struct {
		name    string
		sources []Scope
		want    []Scope
	}{
		{"nil reads all", nil, []Scope{ScopeUser, ScopeProject, ScopeLocal, ScopeFlag, ScopeManaged}},
		{"project only", []Scope{ScopeProject}, []Scope{ScopeProject, ScopeFlag, ScopeManaged}},
		{"user,local", []Scope{ScopeLocal, ScopeUser}, []Scope{ScopeUser, ScopeLocal, ScopeFlag, ScopeManaged}},
		{"empty reads none of the three", []Scope{}, []Scope{ScopeFlag, ScopeManaged}},
	} {
		t.Run(c.name, func(t *testing.T) {
			e := newEnv(t)
			for _, s := range allScopes {
				e.write(s, `{"permissions": {"allow": ["`+string(s)+`"]}}`)
			}
			m := e.load(func(o *LoadOptions) { o.Sources = c.sources; o.FlagSettings = "flag.json" })
			var got []Scope
			for _, f := range m.Files {
				got = append(got, f.Scope)
			}
			if !reflect.DeepEqual(got, c.want) {
				t.Errorf("files read: %v, want %v", got, c.want)
			}
			var wantRules []string
			for _, s := range c.want {
				wantRules = append(wantRules, string(s))
			}
			if rules := Texts(m.Permissions.Allow); !reflect.DeepEqual(rules, wantRules) {
				t.Errorf("rules %v, want %v", rules, wantRules)
			}
		})
	}
	if _, err := Load(LoadOptions{Cwd: t.TempDir(), ManagedPath: "/nonexistent", Sources: []Scope{ScopeManaged}}); err == nil {
		t.Error("Sources accepted the managed scope")
	}
}

func TestParseSources(t *testing.T) {
	for in, want := range map[string][]Scope{
		"":                    {},
		"user,project,local":  {ScopeUser, ScopeProject, ScopeLocal},
		" project , local ,,": {ScopeProject, ScopeLocal},
	} {
		got, err := ParseSources(in)
		if err != nil || !reflect.DeepEqual(got, want) || got == nil {
			t.Errorf("ParseSources(%q) = %#v, %v", in, got, err)
		}
	}
	if _, err := ParseSources("user,managed"); err == nil || !strings.Contains(err.Error(), `"managed"`) {
		t.Errorf("ParseSources accepted managed: %v", err)
	}
}

const hookJSON = `{"hooks": {"PreToolUse": [{"matcher": "%s", "hooks": [{"type": "command", "command": "%s"}]}]}}`

func hooksOf(m *Merged, event string) []string {
	var out []string
	for _, g := range m.Hooks[event] {
		for _, h := range g.Hooks {
			out = append(out, string(g.Source.Scope)+":"+g.Matcher+":"+h.Command)
		}
	}
	return out
}

func TestHooksAccumulate(t *testing.T) {
	e := newEnv(t)
	e.write(ScopeUser, `{"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "u.sh", "timeout": 1.5}]}]}}`)
	p := e.write(ScopeProject, `{"hooks": {
  "PreToolUse": [{"matcher": "Edit|Write", "hooks": [
    {"type": "command", "command": "p.sh", "if": "Edit(*.ts)", "async": true, "once": true, "statusMessage": "checking"},
    {"type": "http", "url": "http://127.0.0.1/h", "headers": {"Authorization": "Bearer $TOKEN"}, "allowedEnvVars": ["TOKEN"]}]}],
  "Stop": [{"hooks": [{"type": "prompt", "prompt": "done? $ARGUMENTS", "model": "haiku"},
    {"type": "mcp_tool", "server": "s", "tool": "t", "input": {"x": 1}}, {"type": "agent", "prompt": "verify"}]}],
  "SessionStart": [{"matcher": "startup", "hooks": []}]
}}`)
	e.write(ScopeManaged, `{"hooks": {"PreToolUse": [{"matcher": "*", "hooks": [{"type": "command", "command": "m.sh"}]}]}}`)
	m := e.load(nil)
	if got := hooksOf(m, "PreToolUse"); !reflect.DeepEqual(got, []string{"user:Bash:u.sh", "project:Edit|Write:p.sh", "project:Edit|Write:", "managed:*:m.sh"}) {
		t.Errorf("PreToolUse = %v", got)
	}
	g := m.Hooks["PreToolUse"][1]
	if g.Source != (Source{Scope: ScopeProject, Path: p, Line: 2, Col: 18}) {
		t.Errorf("group source %+v", g.Source)
	}
	h := g.Hooks[0]
	if h.If != "Edit(*.ts)" || !h.Async || !h.Once || h.StatusMessage != "checking" || h.Source.Line != 3 || h.Source.Col != 5 {
		t.Errorf("hook = %+v", h)
	}
	if m.Hooks["PreToolUse"][0].Hooks[0].Timeout != 1500*time.Millisecond {
		t.Errorf("timeout = %v", m.Hooks["PreToolUse"][0].Hooks[0].Timeout)
	}
	http := g.Hooks[1]
	if http.Type != "http" || http.URL != "http://127.0.0.1/h" || http.Headers["Authorization"] != "Bearer $TOKEN" || !reflect.DeepEqual(http.AllowedEnvVars, []string{"TOKEN"}) {
		t.Errorf("http hook = %+v", http)
	}
	stop := m.Hooks["Stop"][0]
	if stop.Matcher != "" || len(stop.Hooks) != 3 || stop.Hooks[0].Prompt != "done? $ARGUMENTS" || stop.Hooks[0].Model != "haiku" ||
		stop.Hooks[1].Server != "s" || stop.Hooks[1].Tool != "t" || string(stop.Hooks[1].Input) != `{"x": 1}` || stop.Hooks[2].Type != "agent" {
		t.Errorf("Stop = %+v", stop)
	}
	if len(m.Hooks["SessionStart"]) != 1 {
		t.Errorf("an empty handler list is still a group: %+v", m.Hooks["SessionStart"])
	}
}

func TestHookGuards(t *testing.T) {
	cmd := func(matcher, command string) string {
		return strings.Replace(strings.Replace(hookJSON, "%s", matcher, 1), "%s", command, 1)
	}
	withKey := func(js, key string) string { return strings.Replace(js, `{"hooks"`, `{"`+key+`": true, "hooks"`, 1) }
	for _, c := range []struct {
		name           string
		files          map[Scope]string
		want           []string
		warn           string // a warning must contain this; "" = no warning
		managedOnlySet bool
	}{
		{"no guard", map[Scope]string{ScopeUser: cmd("Bash", "u"), ScopeManaged: cmd("Bash", "m")},
			[]string{"user:Bash:u", "managed:Bash:m"}, "", false},
		{"allowManagedHooksOnly in managed", map[Scope]string{ScopeUser: cmd("Bash", "u"), ScopeProject: cmd("Edit", "p"),
			ScopeManaged: withKey(cmd("Bash", "m"), "allowManagedHooksOnly")},
			[]string{"managed:Bash:m"}, "2 hook matcher group(s) outside managed settings are ignored", true},
		{"allowManagedHooksOnly elsewhere is ignored", map[Scope]string{ScopeProject: withKey(cmd("Edit", "p"), "allowManagedHooksOnly"),
			ScopeUser: cmd("Bash", "u")},
			[]string{"user:Bash:u", "project:Edit:p"}, "only in managed settings", false},
		{"disableAllHooks in project keeps managed hooks", map[Scope]string{ScopeUser: cmd("Bash", "u"),
			ScopeProject: withKey(cmd("Edit", "p"), "disableAllHooks"), ScopeManaged: cmd("Bash", "m")},
			[]string{"managed:Bash:m"}, "managed hooks still run", false},
		{"disableAllHooks in project, no managed hooks", map[Scope]string{ScopeUser: cmd("Bash", "u"),
			ScopeProject: withKey(cmd("Edit", "p"), "disableAllHooks")},
			nil, "", false},
		{"disableAllHooks in managed", map[Scope]string{ScopeUser: cmd("Bash", "u"), ScopeManaged: withKey(cmd("Bash", "m"), "disableAllHooks")},
			nil, "", false},
		{"disableAllHooks false in local re-enables", map[Scope]string{ScopeUser: withKey(cmd("Bash", "u"), "disableAllHooks"),
			ScopeLocal: `{"disableAllHooks": false}`},
			[]string{"user:Bash:u"}, "", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			e := newEnv(t)
			for s, js := range c.files {
				e.write(s, js)
			}
			m := e.load(nil)
			if got := hooksOf(m, "PreToolUse"); !reflect.DeepEqual(got, c.want) {
				t.Errorf("hooks = %v, want %v", got, c.want)
			}
			var warnings []string
			for _, w := range m.Warnings {
				warnings = append(warnings, w.Error())
			}
			if all := strings.Join(warnings, "\n"); (c.warn == "") != (all == "") || !strings.Contains(all, c.warn) {
				t.Errorf("warnings %q, want one containing %q", all, c.warn)
			}
			if got := m.AllowManagedHooksOnly != nil && *m.AllowManagedHooksOnly; got != c.managedOnlySet {
				t.Errorf("AllowManagedHooksOnly = %v", got)
			}
			if len(c.want) == 0 && m.Hooks != nil {
				t.Errorf("Hooks should be nil, is %v", m.Hooks)
			}
		})
	}
}

func TestUnknownKeysKept(t *testing.T) {
	e := newEnv(t)
	e.write(ScopeUser, `{"theme": "dark", "spinnerTipsEnabled": true, "spinnerTipsEnabled": false, "permisions": {"allow": ["Bash"]}, "nothing": null}`)
	e.write(ScopeProject, `{"theme": {"name": "light"}, "permissions": {"allow": ["Read"], "future": 1, "future": 2, "deni": ["x"]},
		"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "x", "shell": "bash"}], "extra": 1}]}}`)
	m := e.load(nil)
	if string(m.Unknown["theme"]) != `{"name": "light"}` || string(m.Unknown["spinnerTipsEnabled"]) != "false" || string(m.Unknown["permisions"]) != `{"allow": ["Bash"]}` || string(m.Unknown["nothing"]) != "null" {
		t.Errorf("Unknown = %v", m.Unknown)
	}
	// A duplicate unknown key is not tack's business: the last one wins, as in any JSON parser.
	if src, _ := m.Origin("theme"); src.Scope != ScopeProject {
		t.Errorf("Origin(theme) = %+v", src)
	}
	if got := Texts(m.Permissions.Allow); !reflect.DeepEqual(got, []string{"Read"}) {
		t.Errorf("allow = %v: a misspelt key must not count", got)
	}
	var got []string
	for _, w := range m.Warnings {
		got = append(got, w.Key+": "+w.Msg)
	}
	want := []string{`permisions: unknown key is ignored (did you mean "permissions"?)`,
		`permissions.deni: unknown key is ignored (did you mean "deny"?)`}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("warnings = %q, want %q", got, want)
	}
}

func TestMissingAndEmptyFiles(t *testing.T) {
	e := newEnv(t)
	m := e.load(nil)
	if len(m.Files) != 0 || m.Hooks != nil || m.Env != nil || len(m.Warnings) != 0 {
		t.Errorf("nothing to read gave %+v", m)
	}
	if m.EnvList() == nil || len(m.EnvList()) != 0 {
		t.Errorf("EnvList of nothing = %#v", m.EnvList())
	}
	e.write(ScopeProject, "  \n")
	e.write(ScopeLocal, "\xef\xbb\xbf{\"model\": \"bom\"}")
	// ".claude" being a file means there is no settings file under it.
	os.MkdirAll(filepath.Dir(e.config), 0o755)
	os.WriteFile(e.config, []byte("not a dir"), 0o644)
	m = e.load(nil)
	if len(m.Files) != 2 || m.Files[0].Scope != ScopeProject {
		t.Errorf("Files = %+v", m.Files)
	}
	if src, _ := m.Origin("model"); m.Model != "bom" || src.Col != 11 {
		t.Errorf("BOM file: model %q at %+v (the column must not count the BOM)", m.Model, src)
	}
}

// TestHomeIsProject: run from the home directory, ~/.claude/settings.json is
// both the user and the project file; its hooks must not run twice.
func TestHomeIsProject(t *testing.T) {
	e := newEnv(t)
	e.write(ScopeUser, strings.Replace(strings.Replace(hookJSON, "%s", "Bash", 1), "%s", "h", 1))
	home := filepath.Dir(e.config)
	m := e.load(func(o *LoadOptions) { o.ProjectDir = home; o.Cwd = home })
	if got := hooksOf(m, "PreToolUse"); !reflect.DeepEqual(got, []string{"user:Bash:h"}) {
		t.Errorf("hooks = %v", got)
	}
	if len(m.Files) != 1 {
		t.Errorf("Files = %+v", m.Files)
	}
}

func TestDefaults(t *testing.T) {
	env := map[string]string{"HOME": "/home/u"}
	get := func(k string) string { return env[k] }
	if got := DefaultConfigDir(get); got != "/home/u/.claude" {
		t.Errorf("DefaultConfigDir = %q", got)
	}
	env["CLAUDE_CONFIG_DIR"] = "/cfg"
	if got := DefaultConfigDir(get); got != "/cfg" {
		t.Errorf("DefaultConfigDir with CLAUDE_CONFIG_DIR = %q", got)
	}
	if p := DefaultManagedPath(); !filepath.IsAbs(p) && !strings.Contains(p, `:\`) || !strings.HasSuffix(p, "managed-settings.json") {
		t.Errorf("DefaultManagedPath = %q", p)
	}
	if !IsHookEvent("PreToolUse") || IsHookEvent("pretooluse") || len(HookEvents()) != 29 {
		t.Errorf("hook events wrong")
	}
	ev := HookEvents()
	ev[0] = "changed"
	if HookEvents()[0] == "changed" {
		t.Error("HookEvents shares its backing array")
	}
}

func TestRender(t *testing.T) {
	e := newEnv(t)
	u := e.write(ScopeUser, `{"model": "sonnet", "env": {"B": "2", "A": "1"}, "permissions": {"allow": ["Read"]}, "zeta": [1, 2], "alpha": {"x": true}}`)
	p := e.write(ScopeProject, "{\n  \"model\": \"opus\",\n  \"hooks\": {\"PreToolUse\": [{\"matcher\": \"Bash\", \"hooks\": [{\"type\": \"command\", \"command\": \"./check.sh\", \"timeout\": 30, \"if\": \"Bash(rm *)\"}]}]},\n  \"permisions\": {}\n}")
	m := e.load(nil)
	var b strings.Builder
	if err := m.Render(&b); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	if want := "settings files, lowest precedence first:\n  user     " + u + "\n  project  " + p + "\n\n"; !strings.HasPrefix(out, want) {
		t.Errorf("Render output does not start with %q:\n%s", want, out)
	}
	lines := strings.Split(out, "\n")
	for _, want := range [][]string{
		{"model ", `"opus"`, "project " + p + ":2:12"},
		{"permissions.allow[] ", `"Read"`, "user " + u + ":1:76"},
		{"env.A ", `"1"`, "user " + u + ":1:44"},
		{"env.B ", `"2"`, "user " + u + ":1:34"},
		{"hooks.PreToolUse ", `matcher "Bash": command "./check.sh" if="Bash(rm *)" timeout=30s`, "project " + p + ":3:58"},
		{"alpha ", `{"x":true} (not used by tack)`, "user " + u + ":1:111"},
		{"zeta ", `[1,2] (not used by tack)`},
		{"  " + p + `:4:3: permisions: unknown key is ignored (did you mean "permissions"?)`},
	} {
		found := false
		for _, l := range lines {
			if strings.HasPrefix(l, want[0]) {
				found = true
				for _, frag := range want[1:] {
					if !strings.Contains(l, frag) {
						t.Errorf("line %q lacks %q", l, frag)
					}
				}
			}
		}
		if !found {
			t.Errorf("no line starts with %q:\n%s", want[0], out)
		}
	}
	if strings.Contains(out, `"sonnet"`) {
		t.Errorf("an overridden value is shown:\n%s", out)
	}
	order := []string{"model", "permissions.allow[]", "env.A", "env.B", "hooks.PreToolUse", "alpha", "permisions  ", "zeta", "warnings:"}
	last := -1
	for _, k := range order {
		i := strings.Index(out, "\n"+k)
		if i < 0 && k != "permisions  " {
			t.Errorf("no line starts with %q", k)
			continue
		}
		if i >= 0 && i < last {
			t.Errorf("%q is out of order:\n%s", k, out)
		}
		if i >= 0 {
			last = i
		}
	}
	var again strings.Builder
	m.Render(&again)
	if again.String() != out {
		t.Error("Render is not stable")
	}
}

// Files lists what Load reads, present or not, in Load's order.
func TestLoadOptionsFiles(t *testing.T) {
	opts := LoadOptions{ConfigDir: "/u", ProjectDir: "/p", Cwd: "/c", ManagedPath: "/m.json", FlagSettings: "extra.json"}
	want := []Source{
		{Scope: ScopeUser, Path: "/u/settings.json"},
		{Scope: ScopeProject, Path: "/p/.claude/settings.json"},
		{Scope: ScopeLocal, Path: "/p/.claude/settings.local.json"},
		{Scope: ScopeFlag, Path: "/c/extra.json"},
		{Scope: ScopeManaged, Path: "/m.json"},
	}
	if got := opts.Files(); !reflect.DeepEqual(got, want) {
		t.Errorf("Files = %v, want %v", got, want)
	}
	opts.Sources, opts.FlagSettings = []Scope{ScopeLocal}, `{"model":"x"}`
	want = []Source{{Scope: ScopeLocal, Path: "/p/.claude/settings.local.json"}, {Scope: ScopeManaged, Path: "/m.json"}}
	if got := opts.Files(); !reflect.DeepEqual(got, want) {
		t.Errorf("with --setting-sources local and inline --settings: Files = %v, want %v", got, want)
	}
}
