package extension

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/tackcode/tack/internal/hook"
	"github.com/tackcode/tack/internal/mcp/mcpconfig"
)

func TestSeedExamples(t *testing.T) {
	e := newEnv(t)
	write(t, e.project, ".claude/agents/code-reviewer.md", seedCodeReviewer)
	write(t, e.project, ".claude/commands/commit.md", seedCommit)
	write(t, e.project, ".claude/skills/summarize-changes/SKILL.md", seedSummarize)
	plugin := seedPlugin(t, t.TempDir())
	write(t, plugin, ".mcp.json", `{"mcpServers": {"greeter": {"command": "${CLAUDE_PLUGIN_ROOT}/bin/log-command", "args": ["--serve"]}}}`)
	o := e.opts()
	o.PluginDirs = []string{plugin}
	set := Load(o)
	if err := set.Err(); err != nil {
		t.Fatalf("problems: %v", err)
	}
	if txt := problemsText(set); txt != "" {
		t.Errorf("warnings: %s", txt)
	}

	a, ok := set.Agent("code-reviewer")
	if !ok {
		t.Fatal("code-reviewer not found")
	}
	if a.Description != "Reviews code for quality and best practices" || a.Model != "sonnet" {
		t.Errorf("agent = %+v", a)
	}
	if !slices.Equal(a.Tools, []string{"Read", "Glob", "Grep"}) {
		t.Errorf("tools = %q", a.Tools)
	}
	if !strings.HasPrefix(a.Prompt, "You are a code reviewer.") || strings.Contains(a.Prompt, "---") {
		t.Errorf("prompt = %q", a.Prompt)
	}
	if a.Source.Scope != ScopeProject || a.Source.Path != filepath.Join(e.project, ".claude/agents/code-reviewer.md") {
		t.Errorf("source = %v", a.Source)
	}
	for _, b := range []string{"general-purpose", "Explore", "Plan"} {
		ba, ok := set.Agent(b)
		if !ok || ba.Source.Scope != ScopeBuiltin || ba.Description == "" || ba.Prompt == "" {
			t.Errorf("built-in %s = %+v", b, ba)
		}
	}
	if ex, _ := set.Agent("Explore"); ex.Model != "haiku" || !slices.Contains(ex.DisallowedTools, "Edit") {
		t.Errorf("Explore = %+v", ex)
	}

	commit, ok := set.Skill("commit")
	if !ok {
		t.Fatal("commit not found")
	}
	if commit.Kind != KindCommand || commit.ArgumentHint != "[message]" || commit.Dir != "" {
		t.Errorf("commit = %+v", commit)
	}
	if want := []string{"Bash(git add *)", "Bash(git commit *)", "Bash(git status *)"}; !slices.Equal(commit.AllowedTools, want) {
		t.Errorf("commit allowed-tools = %q", commit.AllowedTools)
	}
	sum, ok := set.Skill("summarize-changes")
	if !ok || sum.Kind != KindSkill || !slices.Equal(sum.AllowedTools, []string{"Bash(git *)"}) {
		t.Fatalf("summarize-changes = %+v", sum)
	}
	if sum.Dir != filepath.Join(e.project, ".claude/skills/summarize-changes") || !strings.Contains(sum.Body, "!`git diff HEAD`") {
		t.Errorf("summarize-changes dir %q body %q", sum.Dir, sum.Body)
	}

	hello, ok := set.Skill("my-first-plugin:hello")
	if !ok {
		t.Fatalf("plugin skill not namespaced; skills: %v", names(set.Skills()))
	}
	if hello.Source.Scope != ScopePlugin || hello.Source.Plugin != "my-first-plugin" || hello.PluginRoot != plugin {
		t.Errorf("hello source = %+v root %q", hello.Source, hello.PluginRoot)
	}
	if _, ok := set.Skill("hello"); ok {
		t.Error("plugin skill also visible without its namespace")
	}
	ps := set.Plugins()
	if len(ps) != 1 || ps[0].Name != "my-first-plugin" || ps[0].Version != "1.0.0" || ps[0].Author.Name != "Your Name" {
		t.Fatalf("plugins = %+v", ps)
	}
	if got := set.BinDirs(); !slices.Equal(got, []string{filepath.Join(plugin, "bin")}) {
		t.Errorf("bin dirs = %v", got)
	}
	hooks := set.Hooks()[hook.PreToolUse]
	if len(hooks) != 1 || hooks[0].Matcher != "Bash" || len(hooks[0].Hooks) != 1 {
		t.Fatalf("hooks = %+v", set.Hooks())
	}
	h := hooks[0].Hooks[0]
	if h.Command != plugin+"/bin/log-command" || h.Env["CLAUDE_PLUGIN_ROOT"] != plugin || h.Source != "plugin:my-first-plugin" || h.Timeout != 10 {
		t.Errorf("hook = %+v", h)
	}
	srvs := set.MCPServers()
	if len(srvs) != 1 || srvs[0].Name != "plugin:my-first-plugin:greeter" || srvs[0].Scope != mcpconfig.PluginScope("my-first-plugin") || srvs[0].Command != plugin+"/bin/log-command" {
		t.Errorf("mcp servers = %+v", srvs)
	}
}

func names[T interface{ *Skill | *Agent }](list []T) []string {
	var out []string
	for _, x := range list {
		switch v := any(x).(type) {
		case *Skill:
			out = append(out, v.Name)
		case *Agent:
			out = append(out, v.Name)
		}
	}
	return out
}

func TestCommandNamespacesAndPrecedence(t *testing.T) {
	e := newEnv(t)
	// Skills beat commands; user (personal) beats project; subfolders namespace.
	write(t, e.project, ".claude/commands/git/commit.md", "---\ndescription: project git commit\n---\nbody")
	write(t, e.project, ".claude/commands/deploy.md", "---\ndescription: deploy command\n---\ncmd")
	write(t, e.project, ".claude/skills/deploy/SKILL.md", "---\ndescription: deploy skill\n---\nskill")
	write(t, e.config, "skills/review/SKILL.md", "---\ndescription: personal review\n---\np")
	write(t, e.project, ".claude/skills/review/SKILL.md", "---\ndescription: project review\n---\nq")
	write(t, e.project, ".claude/commands/bare.md", "# Tidy the imports\n\nSort them.")
	set := Load(e.opts())
	if err := set.Err(); err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]string{
		"git:commit": "project git commit",
		"deploy":     "deploy skill",
		"review":     "personal review",
		"bare":       "Tidy the imports",
	} {
		s, ok := set.Skill(name)
		if !ok || s.Description != want {
			t.Errorf("%s = %+v (skills %v)", name, s, names(set.Skills()))
		}
	}
	var shadowed []string
	for _, s := range set.ShadowedSkills() {
		shadowed = append(shadowed, s.Description+" < "+s.ShadowedBy.Description)
	}
	slices.Sort(shadowed)
	if want := []string{"deploy command < deploy skill", "project review < personal review"}; !slices.Equal(shadowed, want) {
		t.Errorf("shadowed = %q", shadowed)
	}
}

func TestAgentPrecedence(t *testing.T) {
	e := newEnv(t)
	agent := func(desc string) string { return "---\nname: helper\ndescription: " + desc + "\n---\nprompt " + desc }
	write(t, e.config, "agents/helper.md", agent("user"))
	write(t, e.project, ".claude/agents/helper.md", agent("project"))
	write(t, e.project, ".claude/agents/Explore.md", "---\nname: Explore\ndescription: our own explorer\n---\nx")
	plugin := seedPlugin(t, t.TempDir())
	write(t, plugin, "agents/helper.md", agent("plugin"))
	o := e.opts()
	o.PluginDirs = []string{plugin}

	set := Load(o)
	if a, _ := set.Agent("helper"); a == nil || a.Description != "project" {
		t.Errorf("project should beat user: %+v", a)
	}
	if a, _ := set.Agent("my-first-plugin:helper"); a == nil || a.Description != "plugin" {
		t.Errorf("plugin agent is namespaced: %+v", a)
	}
	if a, _ := set.Agent("Explore"); a.Description != "our own explorer" || a.ShadowedBy != nil {
		t.Errorf("project overrides a built-in: %+v", a)
	}
	sh := set.ShadowedAgents()
	var got []string
	for _, a := range sh {
		got = append(got, string(a.Source.Scope)+":"+a.Name+"<"+string(a.ShadowedBy.Source.Scope))
	}
	slices.Sort(got)
	if want := []string{"built-in:Explore<project", "user:helper<project"}; !slices.Equal(got, want) {
		t.Errorf("shadowed = %q", got)
	}

	o.AgentsJSON = `{"helper": {"description": "flag", "prompt": "from the flag", "tools": ["Read", "Bash(git *)"], "model": "opus"}}`
	set = Load(o)
	a, _ := set.Agent("helper")
	if a.Description != "flag" || a.Prompt != "from the flag" || a.Source.Scope != ScopeFlag || !slices.Equal(a.Tools, []string{"Read", "Bash(git *)"}) {
		t.Errorf("--agents should win: %+v", a)
	}

	// The built-ins are parsed once per process, but each Load gets its
	// own: the override above marked that Load's Explore alone.
	if err := os.Remove(filepath.Join(e.project, ".claude/agents/Explore.md")); err != nil {
		t.Fatal(err)
	}
	set = Load(o)
	if a, _ := set.Agent("Explore"); a == nil || a.Source.Scope != ScopeBuiltin || a.ShadowedBy != nil {
		t.Errorf("a later Load's built-in Explore: %+v", a)
	}
}

func TestProjectDirsWalkToGitRoot(t *testing.T) {
	e := newEnv(t)
	write(t, e.project, ".git/HEAD", "ref: refs/heads/main\n")
	sub := filepath.Join(e.project, "svc", "api")
	write(t, e.project, ".claude/agents/root.md", "---\nname: root-agent\ndescription: at the root\n---\nr")
	write(t, sub, ".claude/agents/near.md", "---\nname: root-agent\ndescription: nearer\n---\nn")
	o := e.opts()
	o.Cwd = sub
	set := Load(o)
	if a, _ := set.Agent("root-agent"); a == nil || a.Description != "nearer" {
		t.Errorf("nearer folder should win: %+v", a)
	}
	got := ProjectDirs(sub, e.home)
	want := []string{filepath.Join(sub, ".claude"), filepath.Join(e.project, "svc", ".claude"), filepath.Join(e.project, ".claude")}
	if !slices.Equal(got, want) {
		t.Errorf("ProjectDirs = %q", got)
	}
}

func TestSkillFields(t *testing.T) {
	e := newEnv(t)
	write(t, e.project, ".claude/skills/all/SKILL.md", `---
name: all
description: "Every field: set"
when_to_use: when testing
argument-hint: [pr-number] [priority]
arguments: [pr, priority]
allowed-tools:
  - Read
  - Bash(gh pr view *)
disable-model-invocation: true
user-invocable: false
model: claude-sonnet-4-5
effort: high
context: fork
agent: Explore
paths: "src/**/*.go, docs/*.md"
shell: bash
hooks:
  PostToolUse:
    - matcher: Edit|Write
      hooks:
        - type: command
          command: gofmt -l .
---
Body $pr
`)
	set := Load(e.opts())
	if err := set.Err(); err != nil {
		t.Fatal(err)
	}
	s, _ := set.Skill("all")
	if s == nil {
		t.Fatal("not loaded")
	}
	if s.Description != "Every field: set" || s.WhenToUse != "when testing" || s.ArgumentHint != "[pr-number] [priority]" {
		t.Errorf("text fields: %+v", s)
	}
	if !slices.Equal(s.Arguments, []string{"pr", "priority"}) || !slices.Equal(s.AllowedTools, []string{"Read", "Bash(gh pr view *)"}) {
		t.Errorf("lists: %q %q", s.Arguments, s.AllowedTools)
	}
	if !s.DisableModelInvocation || s.UserInvocable || s.Model != "claude-sonnet-4-5" || s.Effort != "high" || s.Context != "fork" || s.Agent != "Explore" || s.Shell != "bash" {
		t.Errorf("flags: %+v", s)
	}
	if !slices.Equal(s.Paths, []string{"src/**/*.go", "docs/*.md"}) {
		t.Errorf("paths = %q", s.Paths)
	}
	if h := s.Hooks[hook.PostToolUse]; len(h) != 1 || h[0].Matcher != "Edit|Write" || h[0].Hooks[0].Command != "gofmt -l ." || h[0].Hooks[0].Source != "skill:all" {
		t.Errorf("hooks = %+v", s.Hooks)
	}
	if got := s.ListingDescription(0); got != "Every field: set - when testing" {
		t.Errorf("listing = %q", got)
	}
}

// Claude Code retries a header that does not parse with its values quoted;
// so does tack, and the fields read as written.
func TestLenientFrontmatter(t *testing.T) {
	e := newEnv(t)
	write(t, e.project, ".claude/commands/fix.md", "---\ndescription: Fix an issue: read it, then patch\nargument-hint: [issue] [priority]\n---\nFix $0")
	set := Load(e.opts())
	if err := set.Err(); err != nil {
		t.Fatal(err)
	}
	s, _ := set.Skill("fix")
	if s == nil || s.Description != "Fix an issue: read it, then patch" || s.ArgumentHint != "[issue] [priority]" {
		t.Errorf("fix = %+v", s)
	}
}

// A plugin of PluginDirsWithoutMCP brings everything but its MCP servers,
// which the host runs itself.
func TestPluginDirWithoutMCP(t *testing.T) {
	e := newEnv(t)
	plugin := seedPlugin(t, t.TempDir())
	write(t, plugin, ".mcp.json", `{"mcpServers": {"greeter": {"command": "${CLAUDE_PLUGIN_ROOT}/bin/log-command"}}}`)
	o := e.opts()
	o.PluginDirsWithoutMCP = []string{plugin}
	set := Load(o)
	if err := set.Err(); err != nil {
		t.Fatalf("problems: %v", err)
	}
	if ps := set.Plugins(); len(ps) != 1 || ps[0].Name != "my-first-plugin" {
		t.Fatalf("plugins = %+v", ps)
	}
	if len(set.Hooks()[hook.PreToolUse]) != 1 {
		t.Errorf("the plugin's hooks are missing: %+v", set.Hooks())
	}
	if srvs := set.MCPServers(); len(srvs) != 0 {
		t.Errorf("mcp servers = %+v, want none", srvs)
	}
}
