package configcmd_test

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/tackcode/tack/internal/cli"
)

// plugEnv is a user configuration directory and a project for `tack
// plugin` and `tack agents` tests; the test's working directory is the
// project.
type plugEnv struct {
	t                  *testing.T
	home, config, proj string
}

func newPlugEnv(t *testing.T) *plugEnv {
	t.Helper()
	home := t.TempDir()
	config := filepath.Join(home, ".claude")
	mkdir(t, config)
	t.Setenv("HOME", home)
	t.Setenv("CLAUDE_CONFIG_DIR", config)
	t.Chdir(t.TempDir())
	wd, err := os.Getwd() // t.TempDir may be behind a symbolic link
	if err != nil {
		t.Fatal(err)
	}
	return &plugEnv{t: t, home: home, config: config, proj: wd}
}

// tack runs `tack ARGS…` through Main.
func (e *plugEnv) tack(args ...string) (stdout, stderr string, code int) {
	e.t.Helper()
	var out, errOut bytes.Buffer
	code = cli.Main(context.Background(), args, cli.IO{In: strings.NewReader(""), Out: &out, Err: &errOut, Getenv: os.Getenv})
	return out.String(), errOut.String(), code
}

// ok runs tack and fails the test unless it exits 0.
func (e *plugEnv) ok(args ...string) string {
	e.t.Helper()
	out, errOut, code := e.tack(args...)
	if code != 0 {
		e.t.Fatalf("tack %s: exit %d\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), code, out, errOut)
	}
	return out
}

// fails runs tack, expects exit 1 and returns its standard error.
func (e *plugEnv) fails(args ...string) string {
	e.t.Helper()
	out, errOut, code := e.tack(args...)
	if code != 1 {
		e.t.Fatalf("tack %s: exit %d, want 1\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), code, out, errOut)
	}
	return errOut
}

func mkdir(t *testing.T, dir string) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
}

// writeFile creates root/rel with content (and its folders); it returns
// the path.
func writeFile(t *testing.T, root, rel, content string) string {
	t.Helper()
	p := filepath.Join(root, rel)
	mkdir(t, filepath.Dir(p))
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// writePlugin lays out the seed example plugin my-first-plugin under dir,
// with an agent, and returns its root.
func writePlugin(t *testing.T, dir string) string {
	t.Helper()
	root := filepath.Join(dir, "my-first-plugin")
	writeFile(t, root, ".claude-plugin/plugin.json", `{
  "name": "my-first-plugin",
  "description": "A greeting plugin to learn the basics",
  "version": "1.0.0",
  "author": { "name": "Your Name" }
}
`)
	writeFile(t, root, "skills/hello/SKILL.md", "---\ndescription: Greet the user by name\nargument-hint: [name]\n---\nSay hello to $ARGUMENTS warmly.\n")
	writeFile(t, root, "agents/reviewer.md", "---\nname: reviewer\ndescription: Reviews greetings\ntools: Read, Grep\nmodel: haiku\n---\nReview the greeting.\n")
	bin := writeFile(t, root, "bin/log-command", "#!/bin/sh\necho logged\n")
	if err := os.Chmod(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	return root
}

// writeMarketplace makes dir a marketplace "team-tools" holding
// my-first-plugin.
func writeMarketplace(t *testing.T, dir string) {
	t.Helper()
	writePlugin(t, filepath.Join(dir, "plugins"))
	writeFile(t, dir, ".claude-plugin/marketplace.json", `{
  "name": "team-tools",
  "owner": {"name": "Team"},
  "plugins": [
    {"name": "my-first-plugin", "source": "./plugins/my-first-plugin", "description": "Greetings"}
  ]
}
`)
}

// gitCommitAll makes dir a git repository with everything in it committed.
func gitCommitAll(t *testing.T, dir string) {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not installed")
	}
	for _, args := range [][]string{{"init", "-q"}, {"add", "-A"}, {"commit", "-q", "-m", "marketplace"}} {
		cmd := exec.Command("git", append([]string{"-c", "user.name=t", "-c", "user.email=t@example.com",
			"-c", "init.defaultBranch=main", "-c", "commit.gpgsign=false"}, args...)...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
}

// row finds the line of a table that starts with first and returns its
// columns.
func row(t *testing.T, table, first string) []string {
	t.Helper()
	for _, l := range strings.Split(table, "\n") {
		if f := strings.Fields(l); len(f) > 0 && f[0] == first {
			return f
		}
	}
	t.Fatalf("no row %q in:\n%s", first, table)
	return nil
}

func TestPluginMarketplaceLifecycle(t *testing.T) {
	e := newPlugEnv(t)
	market := t.TempDir()
	writeMarketplace(t, market)
	const id = "my-first-plugin@team-tools"

	// The user settings have other keys, an unusual layout and a blank
	// line; the project settings are indented with tabs.
	userSettings := filepath.Join(e.config, "settings.json")
	userOriginal := "{\n    \"model\":   \"opus\",\n    \"permissions\": { \"allow\": [ \"Bash(ls *)\" ] },\n\n" +
		"    \"enabledPlugins\": {\n        \"other@elsewhere\": false\n    },\n    \"env\": {\"X\": \"\\u00e9\"}\n}\n"
	writeFile(t, e.config, "settings.json", userOriginal)
	projSettings := filepath.Join(e.proj, ".claude", "settings.json")
	projOriginal := "{\n\t\"permissions\": {\n\t\t\"deny\": [\"Read(.env)\"]\n\t},\n\t\"outputStyle\": \"Explanatory\"\n}\n"
	writeFile(t, e.proj, ".claude/settings.json", projOriginal)

	out := e.ok("plugin", "marketplace", "add", market)
	if !strings.Contains(out, "Added marketplace team-tools from "+market+" (1 plugin)") || !strings.Contains(out, "my-first-plugin — Greetings") {
		t.Errorf("add said:\n%s", out)
	}
	if f := row(t, e.ok("plugin", "marketplace", "list"), "team-tools"); len(f) != 4 || f[1] != market || f[2] != "1" || f[3] != market {
		t.Errorf("marketplace row %q", f)
	}
	if msg := e.fails("plugin", "marketplace", "add", market); !strings.Contains(msg, `marketplace "team-tools" is already added`) {
		t.Errorf("second add: %s", msg)
	}

	// Install (user scope by default): enabled in the user settings, and
	// nothing else of the file changes.
	out = e.ok("plugin", "install", id)
	cache := filepath.Join(e.config, "plugins", "cache", "team-tools", "my-first-plugin", "1.0.0")
	if !strings.Contains(out, "Installed "+id+" 1.0.0 in "+cache) || !strings.Contains(out, "Enabled in "+userSettings+" (user scope)") {
		t.Errorf("install said:\n%s", out)
	}
	userOn := strings.Replace(userOriginal, "\"other@elsewhere\": false\n", "\"other@elsewhere\": false,\n        \""+id+"\": true\n", 1)
	if got := readFile(t, userSettings); got != userOn {
		t.Errorf("user settings after install:\n%s\nwant:\n%s", got, userOn)
	}
	if got := readFile(t, projSettings); got != projOriginal {
		t.Errorf("project settings changed by a user-scope install:\n%s", got)
	}
	if _, err := os.Stat(filepath.Join(cache, "agents", "reviewer.md")); err != nil {
		t.Errorf("plugin not copied into the cache: %v", err)
	}
	if f := row(t, e.ok("plugin", "list"), id); strings.Join(f, " ") != id+" 1.0.0 user yes "+cache {
		t.Errorf("list row %q", f)
	}
	// The enabled plugin's agent is in effect.
	if out := e.ok("agents"); !strings.Contains(out, "my-first-plugin:reviewer · plugin my-first-plugin ("+filepath.Join(cache, "agents", "reviewer.md")+")") {
		t.Errorf("agents do not list the installed plugin's agent:\n%s", out)
	}

	// Disable in the project: the project settings win, and only they change.
	out = e.ok("plugin", "disable", "my-first-plugin", "--scope", "project")
	if !strings.Contains(out, "Disabled "+id+" in "+projSettings+" (project scope)") {
		t.Errorf("disable said:\n%s", out)
	}
	projOff := strings.Replace(projOriginal, "\t\"outputStyle\": \"Explanatory\"\n",
		"\t\"outputStyle\": \"Explanatory\",\n\t\"enabledPlugins\": {\n\t\t\""+id+"\": false\n\t}\n", 1)
	if got := readFile(t, projSettings); got != projOff {
		t.Errorf("project settings after disable:\n%s\nwant:\n%s", got, projOff)
	}
	if got := readFile(t, userSettings); got != userOn {
		t.Errorf("user settings changed by a project-scope disable:\n%s", got)
	}
	if f := row(t, e.ok("plugin", "list"), id); f[2] != "project" || f[3] != "no" {
		t.Errorf("list row after disable %q", f)
	}
	if out := e.ok("agents"); strings.Contains(out, "my-first-plugin:reviewer") {
		t.Errorf("a disabled plugin's agent is listed:\n%s", out)
	}

	// Enabling at user scope changes nothing (already true) and notes that
	// the project's false wins.
	_, errOut, code := e.tack("plugin", "enable", id)
	if code != 0 || !strings.Contains(errOut, projSettings+" (project scope) sets it to false, which wins") {
		t.Errorf("enable at user scope: exit %d: %s", code, errOut)
	}
	if got := readFile(t, userSettings); got != userOn {
		t.Errorf("user settings rewritten by a no-op enable:\n%s", got)
	}
	e.ok("plugin", "enable", id, "-s", "project")
	if got, want := readFile(t, projSettings), strings.Replace(projOff, "\": false", "\": true", 1); got != want {
		t.Errorf("project settings after enable:\n%s\nwant:\n%s", got, want)
	}
	if f := row(t, e.ok("plugin", "list"), id); f[2] != "project" || f[3] != "yes" {
		t.Errorf("list row after enable %q", f)
	}

	// Uninstall (user scope): the copy and the record go, the user settings
	// are exactly what they were; the project still names it.
	out, errOut, code = e.tack("plugin", "uninstall", id)
	if code != 0 || !strings.Contains(out, "Uninstalled "+id) || !strings.Contains(errOut, id+" is still enabled in "+projSettings) {
		t.Errorf("uninstall: exit %d\n%s\n%s", code, out, errOut)
	}
	if got := readFile(t, userSettings); got != userOriginal {
		t.Errorf("user settings after uninstall:\n%s\nwant:\n%s", got, userOriginal)
	}
	if _, err := os.Stat(cache); !os.IsNotExist(err) {
		t.Errorf("cache copy left behind: %v", err)
	}
	if f := row(t, e.ok("plugin", "list"), id); strings.Join(f[1:], " ") != "- project yes (not installed)" {
		t.Errorf("list row of an enabled, uninstalled plugin %q", f)
	}
	if _, errOut, code := e.tack("agents"); code != 0 || !strings.Contains(errOut, "enabled in the settings but not installed") {
		t.Errorf("agents with an uninstalled plugin enabled: exit %d: %s", code, errOut)
	}
	out = e.ok("plugin", "uninstall", id, "--scope", "project")
	if !strings.Contains(out, "Removed "+id+" from enabledPlugins in "+projSettings+" (it was not installed)") {
		t.Errorf("uninstall of a setting only: %s", out)
	}
	if got, want := readFile(t, projSettings), strings.Replace(projOff, "\n\t\t\""+id+"\": false\n\t", "", 1); got != want {
		t.Errorf("project settings after uninstall:\n%q\nwant:\n%q", got, want)
	}
	if out := e.ok("plugin", "list"); !strings.Contains(out, "No plugins installed") {
		t.Errorf("list after uninstall:\n%s", out)
	}

	// Clear errors.
	for args, want := range map[string]string{
		"plugin install nope@team-tools":          `marketplace team-tools has no plugin "nope"`,
		"plugin install my-first-plugin@nowhere":  `marketplace "nowhere" is not known`,
		"plugin install nope":                     `no known marketplace lists a plugin "nope"`,
		"plugin enable " + id:                     "plugin " + id + " is not installed (tack plugin install " + id + ")",
		"plugin disable my-first-plugin":          `plugin "my-first-plugin" is not installed`,
		"plugin uninstall " + id:                  "plugin " + id + " is not installed",
		"plugin install " + id + " --scope team":  `invalid scope "team" (want user, project or local)`,
		"plugin install":                          "tack: missing the plugin (NAME@MARKETPLACE)\nRun 'tack plugin install --help' for usage.",
		"plugin enable nope@":                     `plugin "nope@": write it NAME@MARKETPLACE`,
		"plugin marketplace remove nowhere":       `marketplace "nowhere" is not known`,
		"plugin marketplace add ./does-not-exist": `marketplace source "./does-not-exist" is neither an existing folder`,
		"plugin frobnicate":                       `unknown command "frobnicate" for "tack plugin"`,
	} {
		if msg := e.fails(strings.Fields(args)...); !strings.Contains(msg, want) {
			t.Errorf("tack %s: %s\nwant it to say %s", args, msg, want)
		}
	}

	// Removing the marketplace keeps its folder (it was read in place).
	e.ok("plugin", "install", id, "--scope", "local")
	local := filepath.Join(e.proj, ".claude", "settings.local.json")
	if got := readFile(t, local); got != "{\n  \"enabledPlugins\": {\n    \""+id+"\": true\n  }\n}\n" {
		t.Errorf("new local settings file:\n%s", got)
	}
	out, errOut, code = e.tack("plugin", "marketplace", "remove", "team-tools")
	if code != 0 || !strings.Contains(out, "Removed marketplace team-tools") || !strings.Contains(errOut, "still installed from it: "+id) {
		t.Errorf("remove: exit %d\n%s\n%s", code, out, errOut)
	}
	if out := e.ok("plugin", "marketplace", "list"); !strings.Contains(out, "No marketplaces") {
		t.Errorf("list after remove:\n%s", out)
	}
	if _, err := os.Stat(filepath.Join(market, ".claude-plugin", "marketplace.json")); err != nil {
		t.Errorf("a folder marketplace was deleted: %v", err)
	}
}

func TestPluginGitMarketplace(t *testing.T) {
	e := newPlugEnv(t)
	repo := t.TempDir()
	writeMarketplace(t, repo)
	gitCommitAll(t, repo)
	// Not committed, so not in the clone.
	writeFile(t, repo, "plugins/my-first-plugin/agents/draft.md", "---\nname: draft\ndescription: d\n---\nx\n")

	url := "file://" + repo
	out := e.ok("plugin", "marketplace", "add", url)
	if !strings.Contains(out, "Added marketplace team-tools from "+url+" (1 plugin)") {
		t.Errorf("add said:\n%s", out)
	}
	clone := filepath.Join(e.config, "plugins", "marketplaces", "team-tools")
	if f := row(t, e.ok("plugin", "marketplace", "list"), "team-tools"); strings.Join(f[1:], " ") != url+" 1 "+clone {
		t.Errorf("marketplace row %q", f)
	}
	// The same marketplace by its folder is the same name.
	if msg := e.fails("plugin", "marketplace", "add", repo); !strings.Contains(msg, "already added (from "+url+")") {
		t.Errorf("second add: %s", msg)
	}

	e.ok("plugin", "install", "my-first-plugin@team-tools")
	cache := filepath.Join(e.config, "plugins", "cache", "team-tools", "my-first-plugin", "1.0.0")
	if _, err := os.Stat(filepath.Join(cache, "agents", "reviewer.md")); err != nil {
		t.Errorf("installed copy: %v", err)
	}
	if _, err := os.Stat(filepath.Join(cache, "agents", "draft.md")); !os.IsNotExist(err) {
		t.Errorf("an uncommitted file was installed: %v", err)
	}
	if got := readFile(t, filepath.Join(e.config, "settings.json")); got != "{\n  \"enabledPlugins\": {\n    \"my-first-plugin@team-tools\": true\n  }\n}\n" {
		t.Errorf("new user settings:\n%s", got)
	}

	e.ok("plugin", "marketplace", "remove", "team-tools")
	if _, err := os.Stat(clone); !os.IsNotExist(err) {
		t.Errorf("clone left behind: %v", err)
	}
	// A local repository added by its path is read in place.
	e.ok("plugin", "marketplace", "add", repo)
	if f := row(t, e.ok("plugin", "marketplace", "list"), "team-tools"); f[1] != repo || f[3] != repo {
		t.Errorf("marketplace row %q", f)
	}
}

func TestPluginValidate(t *testing.T) {
	e := newPlugEnv(t)
	good := writePlugin(t, t.TempDir())
	out := e.ok("plugin", "validate", good)
	if !strings.Contains(out, "plugin my-first-plugin 1.0.0: 1 agent, 1 skill, bin/") || !strings.HasSuffix(out, "Validation passed\n") {
		t.Errorf("valid plugin:\n%s", out)
	}

	bad := writePlugin(t, t.TempDir())
	broken := writeFile(t, bad, "agents/broken.md", "---\nname: broken\n---\nNo description.\n")
	out, _, code := e.tack("plugin", "validate", bad)
	if code != 1 {
		t.Errorf("exit %d for a broken plugin", code)
	}
	if !regexp.MustCompile(`(?m)^`+regexp.QuoteMeta(broken)+`:2:1: description: missing "description"`).MatchString(out) ||
		!strings.Contains(out, "Validation failed: 1 error, 0 warnings") {
		t.Errorf("broken plugin:\n%s", out)
	}

	// A marketplace folder: its catalogue is checked.
	market := t.TempDir()
	writeMarketplace(t, market)
	if out := e.ok("plugin", "validate", market); out != "marketplace team-tools: 1 plugin\nValidation passed\n" {
		t.Errorf("marketplace:\n%s", out)
	}
	catalogue := writeFile(t, market, ".claude-plugin/marketplace.json", "{\n  \"name\": \"team-tools\",\n  \"plugins\": [\n    {\"source\": \"./p\"}\n  ]\n}\n")
	out, _, code = e.tack("plugin", "validate", market)
	if code != 1 || !strings.HasPrefix(out, catalogue+":4:5: plugins[0].name: missing or invalid \"name\"") {
		t.Errorf("broken marketplace: exit %d\n%s", code, out)
	}

	// A relative folder is read from the working directory.
	noManifest := filepath.Join(e.proj, "empty")
	mkdir(t, noManifest)
	out, _, code = e.tack("plugin", "validate", "empty")
	if code != 1 || !strings.Contains(out, filepath.Join(noManifest, ".claude-plugin", "plugin.json")) {
		t.Errorf("folder without a manifest: exit %d\n%s", code, out)
	}
	if msg := e.fails("plugin", "validate", "missing"); !strings.Contains(msg, filepath.Join(e.proj, "missing")+" does not exist") {
		t.Errorf("missing folder: %s", msg)
	}
}
