package extension

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// git runs git in dir, failing the test on error.
func gitRun(t *testing.T, dir string, args ...string) {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-c", "user.name=t", "-c", "user.email=t@example.com", "-c", "init.defaultBranch=main", "-c", "commit.gpgsign=false"}, args...)...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "HOME="+dir)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
}

// bareRepo commits the files of src into a new bare repository and
// returns its path.
func bareRepo(t *testing.T, src string) string {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not installed")
	}
	base := t.TempDir()
	bare := filepath.Join(base, "repo.git")
	gitRun(t, base, "init", "--bare", "-q", bare)
	gitRun(t, src, "init", "-q")
	gitRun(t, src, "add", "-A")
	gitRun(t, src, "commit", "-q", "-m", "init")
	gitRun(t, src, "push", "-q", bare, "HEAD:refs/heads/main")
	return bare
}

func TestMarketplaceLifecycle(t *testing.T) {
	ctx := context.Background()
	for _, kind := range []string{"folder", "git"} {
		t.Run(kind, func(t *testing.T) {
			e := newEnv(t)
			market := t.TempDir()
			seedPlugin(t, filepath.Join(market, "plugins"))
			write(t, market, MarketplaceManifestPath, `{
  "name": "team-tools",
  "owner": {"name": "Team"},
  "plugins": [
    {"name": "my-first-plugin", "source": "./plugins/my-first-plugin", "description": "Greetings"},
    {"name": "remote", "source": {"source": "github", "repo": "someone/remote-plugin"}}
  ]
}`)
			arg := market
			if kind == "git" {
				arg = "file://" + bareRepo(t, market)
			}
			settings := filepath.Join(e.config, "settings.json")
			original := "{\n  \"model\": \"opus\",\n  \"permissions\": {\"allow\": [\"Bash(ls *)\"]},\n  \"enabledPlugins\": {\n    \"other@elsewhere\": false\n  },\n  \"env\": {\"X\": \"\\u00e9\"}\n}\n"
			write(t, e.config, "settings.json", original)

			store := NewStore(e.config)
			src, err := ParseMarketplaceSource(arg, e.project)
			if err != nil {
				t.Fatal(err)
			}
			km, cat, err := store.AddMarketplace(ctx, src)
			if err != nil {
				t.Fatal(err)
			}
			if km.Name != "team-tools" || len(cat.Plugins) != 2 {
				t.Fatalf("added %+v %+v", km, cat)
			}
			if kind == "folder" && km.InstallLocation != market {
				t.Errorf("a folder marketplace is read in place: %s", km.InstallLocation)
			}
			if kind == "git" && km.InstallLocation != filepath.Join(e.config, "plugins", "marketplaces", "team-tools") {
				t.Errorf("clone location %s", km.InstallLocation)
			}
			if _, _, err := store.AddMarketplace(ctx, src); err == nil || !strings.Contains(err.Error(), "already added") {
				t.Errorf("second add: %v", err)
			}
			list, err := store.Marketplaces()
			if err != nil || len(list) != 1 || list[0].Source != src {
				t.Fatalf("marketplaces %+v %v", list, err)
			}

			id, err := store.ResolveID("my-first-plugin")
			if err != nil || id != "my-first-plugin@team-tools" {
				t.Fatalf("resolve: %q %v", id, err)
			}
			rec, p, err := store.Install(ctx, id)
			if err != nil {
				t.Fatal(err)
			}
			wantPath := filepath.Join(e.config, "plugins", "cache", "team-tools", "my-first-plugin", "1.0.0")
			if rec.InstallPath != wantPath || rec.Version != "1.0.0" || p.Name != "my-first-plugin" {
				t.Errorf("installed %+v", rec)
			}
			if fi, err := os.Stat(filepath.Join(wantPath, "bin", "log-command")); err != nil || fi.Mode().Perm()&0o111 == 0 {
				t.Errorf("bin script not copied executable: %v", err)
			}
			store.Git = "false" // never reach out to GitHub from a test: the clone just fails
			_, _, err = store.Install(ctx, "remote@team-tools")
			store.Git = ""
			if err == nil || !strings.Contains(err.Error(), "cannot fetch someone/remote-plugin from GitHub") {
				t.Errorf("github source: %v", err)
			}

			// Enable: the plugin loads; the rest of the settings file is untouched.
			if err := SetPluginEnabled(settings, id, true); err != nil {
				t.Fatal(err)
			}
			got, _ := os.ReadFile(settings)
			wantOn := strings.Replace(original, "\"other@elsewhere\": false\n", "\"other@elsewhere\": false,\n    \"my-first-plugin@team-tools\": true\n", 1)
			if string(got) != wantOn {
				t.Errorf("enabled settings:\n%s", got)
			}
			o := e.opts()
			o.EnabledPlugins = map[string]bool{id: true}
			set := Load(o)
			if err := set.Err(); err != nil {
				t.Fatal(err)
			}
			if s, ok := set.Skill("my-first-plugin:hello"); !ok || !strings.HasPrefix(s.Path, wantPath) {
				t.Errorf("installed plugin's skill: %+v", s)
			}
			if ps := set.Plugins(); len(ps) != 1 || ps[0].ID != id {
				t.Errorf("plugins %+v", ps)
			}

			// Disable, then uninstall: the file is back to what it was.
			if err := SetPluginEnabled(settings, id, false); err != nil {
				t.Fatal(err)
			}
			if got, _ := os.ReadFile(settings); string(got) != strings.Replace(wantOn, id+"\": true", id+"\": false", 1) {
				t.Errorf("disabled settings:\n%s", got)
			}
			if err := store.Uninstall(id); err != nil {
				t.Fatal(err)
			}
			if removed, err := RemovePluginSetting(settings, id); err != nil || !removed {
				t.Fatalf("remove setting: %v %v", removed, err)
			}
			if got, _ := os.ReadFile(settings); string(got) != original {
				t.Errorf("settings after uninstall differ:\n%s\nwant\n%s", got, original)
			}
			if _, err := os.Stat(wantPath); !os.IsNotExist(err) {
				t.Errorf("cache copy left behind: %v", err)
			}
			if inst, _ := store.Installed(); len(inst) != 0 {
				t.Errorf("still installed: %+v", inst)
			}
			o.EnabledPlugins = map[string]bool{id: true}
			if set := Load(o); !strings.Contains(problemsText(set), "enabled in the settings but not installed") {
				t.Errorf("enabled but uninstalled: %s", problemsText(set))
			}

			if err := store.RemoveMarketplace("team-tools"); err != nil {
				t.Fatal(err)
			}
			if list, _ := store.Marketplaces(); len(list) != 0 {
				t.Errorf("marketplace not removed: %+v", list)
			}
			if kind == "git" {
				if _, err := os.Stat(km.InstallLocation); !os.IsNotExist(err) {
					t.Errorf("clone left behind")
				}
			} else if _, err := os.Stat(market); err != nil {
				t.Errorf("a folder marketplace must not be deleted: %v", err)
			}
		})
	}
}

func TestInstallFromGitPluginSource(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t)
	pluginSrc := t.TempDir()
	root := seedPlugin(t, pluginSrc)
	bare := bareRepo(t, root)
	market := t.TempDir()
	write(t, market, MarketplaceManifestPath, `{"name": "m", "plugins": [{"name": "my-first-plugin", "source": {"source": "url", "url": "file://`+bare+`"}}]}`)
	store := NewStore(e.config)
	if _, _, err := store.AddMarketplace(ctx, MarketplaceSource{Source: "directory", Path: market}); err != nil {
		t.Fatal(err)
	}
	rec, _, err := store.Install(ctx, "my-first-plugin@m")
	if err != nil {
		t.Fatal(err)
	}
	if len(rec.GitCommitSha) != 40 || rec.Version != "1.0.0" {
		t.Errorf("record %+v", rec)
	}
	if _, err := os.Stat(filepath.Join(rec.InstallPath, ".git")); !os.IsNotExist(err) {
		t.Error(".git copied into the cache")
	}
}

func TestParseMarketplaceSource(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, "mk/"+MarketplaceManifestPath, `{"name":"x","plugins":[]}`)
	cases := map[string]MarketplaceSource{
		"mk":                            {Source: "directory", Path: filepath.Join(dir, "mk")},
		"mk/" + MarketplaceManifestPath: {Source: "directory", Path: filepath.Join(dir, "mk")},
		"https://example.com/m.git":     {Source: "git", URL: "https://example.com/m.git"},
		"git@example.com:team/m.git":    {Source: "git", URL: "git@example.com:team/m.git"},
		"anthropics/claude-code":        {Source: "github", Repo: "anthropics/claude-code"},
		"owner/repo#v1":                 {Source: "github", Repo: "owner/repo", Ref: "v1"},
	}
	for in, want := range cases {
		got, err := ParseMarketplaceSource(in, dir)
		if err != nil || got != want {
			t.Errorf("%s: %+v %v", in, got, err)
		}
	}
	if _, err := ParseMarketplaceSource("not a source", dir); err == nil {
		t.Error("nonsense accepted")
	}
	// A GitHub marketplace is recorded as such but cannot be fetched here.
	store := NewStore(t.TempDir())
	store.Git = "false" // no network in tests: the clone fails at once
	_, _, err := store.AddMarketplace(context.Background(), MarketplaceSource{Source: "github", Repo: "owner/repo"})
	if err == nil || !strings.Contains(err.Error(), "marketplace owner/repo: cannot fetch it from GitHub") {
		t.Errorf("github fetch: %v", err)
	}
}
