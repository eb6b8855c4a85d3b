package extension

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// A corpus of broken definitions: each is reported with its file, line and
// what is wrong, and everything else still loads.
func TestBrokenCorpus(t *testing.T) {
	e := newEnv(t)
	plugins := t.TempDir()
	good := seedPlugin(t, plugins)

	type tc struct {
		root, rel, content string
		line               int
		want               string // in the message
	}
	cases := []tc{
		{e.project, ".claude/agents/bad-yaml.md", "---\nname: bad-yaml\ndescription: ok\nhooks:\n  PreToolUse:\n   - matcher: Bash\n  - stray\n---\nx\n", 7, "invalid YAML"},
		{e.project, ".claude/agents/no-desc.md", "---\nname: no-desc\ntools: Read\n---\nx\n", 2, `missing "description"`},
		{e.project, ".claude/agents/no-name.md", "---\ndescription: nameless\n---\nx\n", 2, `missing "name"`},
		{e.project, ".claude/agents/bad-model.md", "---\nname: bad-model\ndescription: d\nmodel: sonet\n---\nx\n", 4, `unknown model "sonet" (did you mean "sonnet"?)`},
		{e.project, ".claude/agents/bad-tools.md", "---\nname: bad-tools\ndescription: d\ntools: Read, Grepp\n---\nx\n", 4, `unknown tool "Grepp" (did you mean "Grep"?)`},
		{e.project, ".claude/agents/bad-tools-list.md", "---\nname: bad-tools-list\ndescription: d\ntools:\n  - Read\n  - Bash(git *\n---\nx\n", 6, `is not a tool name or permission rule`},
		{e.project, ".claude/agents/bad-mode.md", "---\nname: bad-mode\ndescription: d\npermissionMode: yolo\n---\nx\n", 4, `unknown permission mode "yolo"`},
		{e.project, ".claude/agents/bad-event.md", "---\nname: bad-event\ndescription: d\nhooks:\n  PreTooluse:\n    - hooks: [{type: command, command: x}]\n---\nx\n", 5, `unknown hook event "PreTooluse" (did you mean "PreToolUse"?)`},
		{e.project, ".claude/agents/bad-hook.md", "---\nname: bad-hook\ndescription: d\nhooks:\n  Stop:\n    - hooks:\n        - type: command\n          timeout: 5\n---\nx\n", 7, `missing command (required for type "command")`},
		{e.project, ".claude/agents/flat-hook.md", "---\nname: flat-hook\ndescription: d\nhooks:\n  Stop:\n    - type: command\n      command: x\n---\nx\n", 6, `handlers go in a nested list`},
		{e.project, ".claude/agents/unclosed.md", "---\nname: unclosed\ndescription: d\n", 1, "never closed"},
		{e.project, ".claude/skills/no-desc/SKILL.md", "---\nname: no-desc\n---\nDo it.\n", 2, `missing "description"`},
		{e.project, ".claude/skills/bad-context/SKILL.md", "---\ndescription: d\ncontext: forked\n---\nx\n", 3, `unknown context "forked"`},
		{e.project, ".claude/skills/bad-allowed/SKILL.md", "---\ndescription: d\nallowed-tools: Bash(git *) Shell(ls)\n---\nx\n", 3, `unknown tool "Shell"`},
		{e.project, ".claude/commands/bad-bool.md", "---\ndescription: d\ndisable-model-invocation: maybe\n---\nx\n", 3, `expected true or false, got "maybe"`},
		{plugins, "broken-json/.claude-plugin/plugin.json", "{\n  \"name\": \"broken-json\",\n  \"version\": \"1.0.0\",\n}\n", 3, "invalid JSON: trailing comma"},
		{plugins, "nameless/.claude-plugin/plugin.json", "{\n  \"description\": \"no name\"\n}\n", 1, `missing "name"`},
		{plugins, "bad-author/.claude-plugin/plugin.json", "{\n  \"name\": \"bad-author\",\n  \"author\": 42\n}\n", 3, `expected an object`},
		{plugins, "bad-hooks/hooks/hooks.json", "{\n  \"hooks\": {\n    \"PreToolUse\": [\n      {\"matcher\": \"(\", \"hooks\": [{\"type\": \"command\", \"command\": \"x\"}]}\n    ]\n  }\n}\n", 4, "not a tool name, a '|' list of names or a valid regular expression"},
	}
	write(t, plugins, "bad-hooks/.claude-plugin/plugin.json", `{"name": "bad-hooks"}`)
	write(t, plugins, "bad-hooks/skills/still/SKILL.md", "---\ndescription: still loads\n---\nok\n")
	write(t, plugins, "no-manifest/skills/x/SKILL.md", "---\ndescription: d\n---\nx\n")
	// Good definitions beside the broken ones.
	write(t, e.project, ".claude/agents/code-reviewer.md", seedCodeReviewer)
	write(t, e.project, ".claude/commands/commit.md", seedCommit)
	for _, c := range cases {
		write(t, c.root, c.rel, c.content)
	}
	o := e.opts()
	o.PluginDirs = []string{good, filepath.Join(plugins, "broken-json"), filepath.Join(plugins, "nameless"),
		filepath.Join(plugins, "bad-author"), filepath.Join(plugins, "bad-hooks"), filepath.Join(plugins, "no-manifest")}
	o.AgentsJSON = `{"flagged": {"description": "d", "prompt": "p", "model": "gpt"}}`
	set := Load(o)

	probs := set.Problems()
	for _, c := range cases {
		path := filepath.Join(c.root, c.rel)
		prefix := fmt.Sprintf("%s:%d:", path, c.line)
		found := false
		for _, p := range probs {
			if strings.HasPrefix(p.Error(), prefix) && strings.Contains(p.Error(), c.want) {
				found = true
			}
		}
		if !found {
			t.Errorf("%s: want a problem at %s containing %q; got:\n%s", c.rel, prefix, c.want, problemsText(set))
		}
	}
	want := []string{
		`--agents:1:`, `unknown model "gpt"`,
		filepath.Join(plugins, "no-manifest", ManifestPath) + `: not a plugin`,
	}
	txt := problemsText(set)
	for _, w := range want {
		if !strings.Contains(txt, w) {
			t.Errorf("missing %q in:\n%s", w, txt)
		}
	}
	// Everything else loads.
	if _, ok := set.Agent("code-reviewer"); !ok {
		t.Error("code-reviewer did not load")
	}
	if _, ok := set.Skill("commit"); !ok {
		t.Error("commit did not load")
	}
	if _, ok := set.Skill("my-first-plugin:hello"); !ok {
		t.Error("the good plugin did not load")
	}
	if _, ok := set.Skill("bad-hooks:still"); !ok {
		t.Error("a plugin with a broken hooks file should still load its skills")
	}
	for _, bad := range []string{"bad-yaml", "no-desc", "bad-model", "bad-tools", "bad-event", "bad-hook", "flagged"} {
		if _, ok := set.Agent(bad); ok {
			t.Errorf("broken agent %s loaded", bad)
		}
	}
	if n := len(set.Plugins()); n != 2 {
		t.Errorf("%d plugins loaded, want my-first-plugin and bad-hooks", n)
	}
	if set.Err() == nil {
		t.Error("Err() is nil")
	}
}

func TestWarningsDoNotStopLoading(t *testing.T) {
	e := newEnv(t)
	write(t, e.project, ".claude/agents/typo.md", "---\nname: typo\ndescription: d\ntool: Read\n---\nx\n")
	write(t, e.project, ".claude/skills/long/SKILL.md", "---\ndescription: "+strings.Repeat("x", MaxDescription+1)+"\n---\nx\n")
	set := Load(e.opts())
	if set.Err() != nil {
		t.Fatalf("warnings counted as errors: %v", set.Err())
	}
	txt := problemsText(set)
	if !strings.Contains(txt, `typo.md:4:1: warning: tool: unknown field, ignored (did you mean "tools"?)`) || !strings.Contains(txt, "over the 1536") {
		t.Errorf("warnings:\n%s", txt)
	}
	if s, _ := set.Skill("long"); s == nil || len([]rune(s.ListingDescription(0))) != MaxDescription {
		t.Error("long description should load, cut in listings")
	}
}

// TestUnreadableDefinitionsAreReported: every skill, command and agent file
// that cannot be read is reported, at its line and column when the
// problem is inside it, and the definitions beside it load. Broken YAML
// in each kind of definition, in a project and in a plugin; symbolic
// links to nothing, which were skipped without a word; folders nested
// past the bound.
func TestUnreadableDefinitionsAreReported(t *testing.T) {
	e := newEnv(t)
	proj := filepath.Join(e.project, ".claude")
	plugin := filepath.Join(t.TempDir(), "plug")
	write(t, plugin, ManifestPath, `{"name": "plug"}`)
	// Not mended by quoting the plain top-level values, as Claude Code's
	// second try does.
	badYAML := "---\ndescription: d\nmetadata:\n  tags: [a, b\n---\nx\n"
	for _, f := range []struct{ root, rel, content string }{
		{proj, "skills/flow/SKILL.md", badYAML},
		{proj, "skills/dup/SKILL.md", "---\ndescription: d\nmodel: sonnet\ndescription: e\n---\nx\n"},
		{proj, "skills/crlf/SKILL.md", "\xef\xbb\xbf---\r\ndescription: \"open\r\n---\r\nx\r\n"},
		{proj, "commands/git/flow.md", badYAML},
		{proj, "agents/flow.md", "---\nname: flow\n" + badYAML[4:]},
		{plugin, "skills/flow/SKILL.md", badYAML},
		{plugin, "commands/flow.md", badYAML},
		{proj, "skills/good/SKILL.md", "---\ndescription: loads\n---\nx\n"},
		{proj, "commands/good.md", "---\ndescription: loads\n---\nx\n"},
		{plugin, "skills/good/SKILL.md", "---\ndescription: loads\n---\nx\n"},
		{proj, "commands/a/b/c/d/e/f/g/h/i/deep.md", "---\ndescription: d\n---\nx\n"},
	} {
		write(t, f.root, f.rel, f.content)
	}
	nowhere := filepath.Join(t.TempDir(), "gone")
	for _, l := range []string{
		filepath.Join(proj, "skills", "linked"), // a skill folder
		filepath.Join(proj, "commands", "linked.md"),
		filepath.Join(proj, "agents", "linked.md"),
		filepath.Join(plugin, "skills", "linked"),
	} {
		if err := os.Symlink(nowhere, l); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.MkdirAll(filepath.Join(proj, "skills", "file-linked"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(nowhere, filepath.Join(proj, "skills", "file-linked", "SKILL.md")); err != nil {
		t.Fatal(err)
	}

	o := e.opts()
	o.PluginDirs = []string{plugin}
	set := Load(o)
	link := ": cannot read: it is a symbolic link to " + nowhere + ", which does not exist"
	want := []string{
		filepath.Join(proj, "skills/flow/SKILL.md") + ":4:9: invalid YAML: sequence end token ']' not found",
		filepath.Join(proj, "skills/dup/SKILL.md") + `:4:1: invalid YAML: mapping key "description" already defined at [2:1]`,
		filepath.Join(proj, "skills/crlf/SKILL.md") + ":2:14: invalid YAML: could not find end character of double-quoted text",
		filepath.Join(proj, "commands/git/flow.md") + ":4:9: invalid YAML: sequence end token ']' not found",
		filepath.Join(proj, "agents/flow.md") + ":5:9: invalid YAML: sequence end token ']' not found",
		filepath.Join(plugin, "skills/flow/SKILL.md") + ":4:9: invalid YAML: sequence end token ']' not found",
		filepath.Join(plugin, "commands/flow.md") + ":4:9: invalid YAML: sequence end token ']' not found",
		filepath.Join(proj, "skills", "linked") + link,
		filepath.Join(proj, "skills", "file-linked", "SKILL.md") + link,
		filepath.Join(proj, "commands", "linked.md") + link,
		filepath.Join(proj, "agents", "linked.md") + link,
		filepath.Join(plugin, "skills", "linked") + link,
		filepath.Join(proj, "commands/a/b/c/d/e/f/g/h/i") + ": not read: more than 8 folders deep (a symbolic link loop?)",
	}
	got := strings.Split(strings.TrimSpace(problemsText(set)), "\n")
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("problems:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	var loaded []string
	for _, s := range append(set.Skills(), set.ShadowedSkills()...) {
		loaded = append(loaded, string(s.Kind)+" "+s.Name)
	}
	slices.Sort(loaded)
	// The project's good command is shadowed by its good skill.
	if w := []string{"command good", "skill good", "skill plug:good"}; !slices.Equal(loaded, w) {
		t.Errorf("loaded %q, want %q", loaded, w)
	}
}
