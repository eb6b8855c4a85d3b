package skill

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tackcode/tack/internal/extension"
	"github.com/tackcode/tack/internal/permission"
)

func TestSubstitute(t *testing.T) {
	vars := Vars{SessionID: "sess-1", SkillDir: "/skills/x", Effort: "high", PluginRoot: "/p"}
	cases := []struct {
		body, args string
		names      []string
		want       string
	}{
		{"commit with the message: $ARGUMENTS", "fix typo", nil, "commit with the message: fix typo"},
		{"first $0, second $ARGUMENTS[1], all $ARGUMENTS", `"a b" c`, nil, "first a b, second c, all \"a b\" c"},
		{"missing $5 and $ARGUMENTS[7] stay", "x", nil, "missing $5 and $ARGUMENTS[7] stay\n\nARGUMENTS: x"},
		{"no placeholder", "some args", nil, "no placeholder\n\nARGUMENTS: some args"},
		{"no placeholder, no args", "", nil, "no placeholder, no args"},
		{"review PR $pr at $priority ($pr_title)", "42 high", []string{"pr", "priority"}, "review PR 42 at high ($pr_title)"},
		{"$file_name vs $file", "a.go b.go", []string{"file", "file_name"}, "b.go vs a.go"},
		{`literal \$ARGUMENTS and $ARGUMENTS`, "v", nil, "literal $ARGUMENTS and v"},
		{"${CLAUDE_SESSION_ID} ${CLAUDE_SKILL_DIR}/run.sh ${CLAUDE_EFFORT} ${CLAUDE_PLUGIN_ROOT} ${HOME}", "", nil, "sess-1 /skills/x/run.sh high /p ${HOME}"},
		{"cost $5.00 and $1x", "a", nil, "cost $5.00 and $1x\n\nARGUMENTS: a"},
		{"args hold placeholders: $0", "$1 $ARGUMENTS", nil, "args hold placeholders: $1"},
	}
	for _, c := range cases {
		if got := Substitute(c.body, c.args, c.names, vars); got != c.want {
			t.Errorf("Substitute(%q, %q) =\n%q\nwant\n%q", c.body, c.args, got, c.want)
		}
	}
}

func TestSplitArgs(t *testing.T) {
	cases := map[string][]string{
		`a b  c`:            {"a", "b", "c"},
		`"a b" 'c d' e\ f`:  {"a b", "c d", "e f"},
		`say "it's \"ok\""`: {"say", `it's "ok"`},
		`unbalanced "quote`: {"unbalanced", `"quote`},
		``:                  nil,
	}
	for in, want := range cases {
		got := SplitArgs(in)
		if fmt.Sprint(got) != fmt.Sprint(want) || len(got) != len(want) {
			t.Errorf("SplitArgs(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestFindInjections(t *testing.T) {
	body := "a !`date` b\n!`git diff HEAD`\nnot!`this` `!nor this`\n```!\ngit status\ngit log -1\n```\n```!\nnever closed"
	got := findInjections(text{s: body})
	var cmds []string
	for _, in := range got {
		cmds = append(cmds, in.command)
	}
	want := []string{"date", "git diff HEAD", "git status\ngit log -1"}
	if fmt.Sprint(cmds) != fmt.Sprint(want) {
		t.Errorf("commands %q, want %q", cmds, want)
	}
	// A marker that came from an argument is not an injection.
	tx := substitute("run: $ARGUMENTS", "!`rm -rf /`", nil, Vars{})
	if in := findInjections(tx); len(in) != 0 {
		t.Errorf("argument became an injection: %+v", in)
	}
}

// seed is the seed's summarize-changes skill, verbatim.
const seed = "---\nname: summarize-changes\ndescription: Summarizes uncommitted changes and flags risks. Use when the user asks what changed, wants a commit message, or wants to review their diff.\nallowed-tools: Bash(git *)\n---\n## Current changes\n!`git diff HEAD`\n\n## Instructions\nSummarize the diff in 2-3 bullets, then list risks (missing tests,\nhardcoded values, error handling). If empty, say so.\n"

const commit = "---\ndescription: Stage and commit current changes with a one-line message\nargument-hint: [message]\nallowed-tools: Bash(git add *) Bash(git commit *) Bash(git status *)\n---\nRun `git status`, stage all changes, and commit them with the message: $ARGUMENTS\n"

func gitRepo(t *testing.T) string {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not installed")
	}
	dir := t.TempDir()
	run := func(args ...string) {
		cmd := exec.Command("git", append([]string{"-c", "user.name=t", "-c", "user.email=t@e.x", "-c", "commit.gpgsign=false"}, args...)...)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v %s", args, err, out)
		}
	}
	run("init", "-q")
	os.WriteFile(filepath.Join(dir, "main.go"), []byte("package main\n"), 0o644)
	run("add", ".")
	run("commit", "-q", "-m", "init")
	os.WriteFile(filepath.Join(dir, "main.go"), []byte("package main\n\nfunc main() {}\n"), 0o644)
	return dir
}

// load writes the seed skill and command into a project and loads them.
func load(t *testing.T, dir string) []*extension.Skill {
	t.Helper()
	for rel, content := range map[string]string{
		".claude/skills/summarize-changes/SKILL.md": seed,
		".claude/commands/commit.md":                commit,
		".claude/commands/secret.md":                "---\ndescription: hidden\nuser-invocable: false\n---\nx",
	} {
		p := filepath.Join(dir, rel)
		os.MkdirAll(filepath.Dir(p), 0o755)
		os.WriteFile(p, []byte(content), 0o644)
	}
	home := t.TempDir()
	set := extension.Load(extension.Options{Cwd: dir, ConfigDir: filepath.Join(home, ".claude"), Home: home, ManagedDir: filepath.Join(home, "m"),
		Getenv: func(string) string { return "" }})
	if err := set.Err(); err != nil {
		t.Fatal(err)
	}
	return set.Skills()
}

func TestInjectionRunsGitDiffWhenAllowedToolsAllow(t *testing.T) {
	dir := gitRepo(t)
	skills := load(t, dir)
	// A session check that allows nothing by itself: only the skill's
	// allowed-tools (Bash(git *)) can let git diff HEAD through.
	ask := func(string) error { return fmt.Errorf("no rule: %w", ErrNeedsApproval) }
	rt := New(Options{Skills: skills, Cwd: dir, Run: ShellRunner(dir, nil), Check: ask, SessionID: "s"})
	inv, err := rt.Invoke(context.Background(), "summarize-changes", "")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(inv.Content, "+func main() {}") || strings.Contains(inv.Content, "!`git diff HEAD`") {
		t.Errorf("diff not injected:\n%s", inv.Content)
	}
	if !strings.HasPrefix(inv.Content, "Base directory for this skill: "+filepath.Join(dir, ".claude/skills/summarize-changes")) {
		t.Errorf("no base directory line:\n%s", inv.Content)
	}
	if len(inv.Ran) != 1 || inv.Ran[0] != "git diff HEAD" || len(inv.Refused) != 0 {
		t.Errorf("ran %q refused %q", inv.Ran, inv.Refused)
	}
	if fmt.Sprint(inv.AllowedTools) != "[Bash(git *)]" {
		t.Errorf("allowed tools %q", inv.AllowedTools)
	}
}

func TestInjectionDeniedIsNeverRun(t *testing.T) {
	dir := gitRepo(t)
	skills := load(t, dir)
	ran := 0
	run := func(ctx context.Context, cmd string) (string, error) { ran++; return "SHOULD NOT APPEAR", nil }
	// A deny rule wins over the skill's allowed-tools.
	checker, err := permission.NewChecker(permission.Config{Cwd: dir, Rules: permission.RuleSet{Deny: []permission.Rule{permission.MustParseRule("Bash(git diff *)")}}})
	if err != nil {
		t.Fatal(err)
	}
	rt := New(Options{Skills: skills, Cwd: dir, Run: run, Check: CheckerFunc(checker)})
	inv, err := rt.Invoke(context.Background(), "summarize-changes", "")
	if err != nil {
		t.Fatal(err)
	}
	if ran != 0 || strings.Contains(inv.Content, "SHOULD NOT APPEAR") {
		t.Fatalf("denied command ran:\n%s", inv.Content)
	}
	if !strings.Contains(inv.Content, "[tack did not run `git diff HEAD`:") || len(inv.Refused) != 1 {
		t.Errorf("no note:\n%s", inv.Content)
	}

	// Without allowed-tools, a command the session would ask about is not run.
	skills = append(skills, &extension.Skill{Name: "plain", Kind: extension.KindCommand, Body: "!`git diff HEAD`", UserInvocable: true})
	rt = New(Options{Skills: skills, Cwd: dir, Run: run, Check: func(string) error { return fmt.Errorf("asks: %w", ErrNeedsApproval) }})
	inv, _ = rt.Invoke(context.Background(), "plain", "")
	if ran != 0 || !strings.Contains(inv.Content, "[tack did not run `git diff HEAD`: asks: needs approval]") {
		t.Errorf("content %q ran %d", inv.Content, ran)
	}
	// allowed-tools that do not cover the command do not let it through.
	skills = append(skills, &extension.Skill{Name: "narrow", Kind: extension.KindCommand, Body: "!`git push`", AllowedTools: []string{"Bash(git status *)"}})
	rt = New(Options{Skills: skills, Cwd: dir, Run: run, Check: func(string) error { return fmt.Errorf("asks: %w", ErrNeedsApproval) }})
	inv, _ = rt.Invoke(context.Background(), "narrow", "")
	if ran != 0 || !strings.Contains(inv.Content, "not allowed by the skill's allowed-tools (Bash(git status *))") {
		t.Errorf("content %q", inv.Content)
	}
}

// An untrusted skill's injections never run, even where every rule allows
// them; the others still do.
func TestUntrustedInjectionsNeverRun(t *testing.T) {
	var ran []string
	run := func(ctx context.Context, cmd string) (string, error) {
		ran = append(ran, cmd)
		return "ran " + cmd, nil
	}
	theirs := &extension.Skill{Name: "theirs", Kind: extension.KindCommand, Body: "a !`touch canary` b", Source: extension.Source{Scope: extension.ScopeProject}}
	mine := &extension.Skill{Name: "mine", Kind: extension.KindCommand, Body: "!`date`", Source: extension.Source{Scope: extension.ScopeUser}}
	rt := New(Options{Skills: []*extension.Skill{theirs, mine}, Run: run, Check: func(string) error { return nil },
		Untrusted: func(sk *extension.Skill) string {
			if sk.Source.Scope == extension.ScopeProject {
				return "the folder is not trusted"
			}
			return ""
		}})
	inv, err := rt.Invoke(context.Background(), "theirs", "")
	if err != nil {
		t.Fatal(err)
	}
	if want := "a [tack did not run `touch canary`: the folder is not trusted] b"; inv.Content != want || len(ran) != 0 {
		t.Errorf("content %q, ran %q; want %q", inv.Content, ran, want)
	}
	if len(inv.Refused) != 1 || inv.Refused[0] != "touch canary: the folder is not trusted" {
		t.Errorf("refused %q", inv.Refused)
	}
	if inv, _ := rt.Invoke(context.Background(), "mine", ""); inv.Content != "ran date" {
		t.Errorf("a trusted skill's injection: %q", inv.Content)
	}
}

func TestInjectionFailureKeepsOutput(t *testing.T) {
	sk := &extension.Skill{Name: "f", Kind: extension.KindCommand, Body: "before\n```!\necho partial; exit 3\n```\nafter"}
	dir := t.TempDir()
	rt := New(Options{Skills: []*extension.Skill{sk}, Cwd: dir, Run: ShellRunner(dir, nil), Check: func(string) error { return nil }})
	inv, err := rt.Invoke(context.Background(), "f", "")
	if err != nil {
		t.Fatal(err)
	}
	want := "before\npartial\n[`echo partial; exit 3` failed: exit code 3]\nafter"
	if inv.Content != want {
		t.Errorf("got %q want %q", inv.Content, want)
	}
}

func TestExpand(t *testing.T) {
	dir := t.TempDir()
	skills := load(t, dir)
	skills = append(skills, &extension.Skill{Name: "my-first-plugin:hello", Kind: extension.KindSkill, Body: "Say hello to $ARGUMENTS.", UserInvocable: true})
	rt := New(Options{Skills: skills, Cwd: dir})
	ctx := context.Background()
	content, sk, ok, err := rt.Expand(ctx, "/commit fix typo")
	if err != nil || !ok || sk.Name != "commit" {
		t.Fatalf("ok=%v err=%v", ok, err)
	}
	if content != "Run `git status`, stage all changes, and commit them with the message: fix typo" {
		t.Errorf("content %q", content)
	}
	if content, _, ok, _ := rt.Expand(ctx, "/my-first-plugin:hello  Ada Lovelace"); !ok || content != "Say hello to Ada Lovelace." {
		t.Errorf("plugin command: %v %q", ok, content)
	}
	for _, p := range []string{"/nope args", "/secret", "commit fix", "/", "/usr/bin/env is a path"} {
		if _, _, ok, err := rt.Expand(ctx, p); ok || err != nil {
			t.Errorf("%q expanded (ok=%v err=%v)", p, ok, err)
		}
	}
}

func TestRetained(t *testing.T) {
	big := strings.Repeat("x", 30_000) // 7500 tokens
	invs := []Invocation{
		{Name: "a", Content: "old a", Seq: 1},
		{Name: "b", Content: big, Seq: 2},
		{Name: "a", Content: "new a", Seq: 3},
	}
	got := Retained(invs)
	if len(got) != 2 || got[0].Name != "b" || got[1].Name != "a" || got[1].Content != "new a" {
		t.Fatalf("got %+v", names(got))
	}
	if Tokens(got[0].Content) > RetainedTokensEach || !strings.HasSuffix(got[0].Content, truncationNote) {
		t.Errorf("b not cut to %d tokens: %d", RetainedTokensEach, Tokens(got[0].Content))
	}
	// Seven big skills: the total budget keeps the newest five.
	invs = nil
	for i := range 7 {
		invs = append(invs, Invocation{Name: fmt.Sprint("s", i), Content: big, Seq: i})
	}
	got = Retained(invs)
	total := 0
	for _, in := range got {
		total += Tokens(in.Content)
	}
	if total > RetainedTokensTotal || len(got) != 5 || got[0].Name != "s2" || got[4].Name != "s6" {
		t.Errorf("kept %v (%d tokens)", names(got), total)
	}
}

func names(invs []Invocation) []string {
	var out []string
	for _, in := range invs {
		out = append(out, in.Name)
	}
	return out
}

func TestCheckerFunc(t *testing.T) {
	dir := t.TempDir()
	c, _ := permission.NewChecker(permission.Config{Cwd: dir, Rules: permission.RuleSet{
		Allow: []permission.Rule{permission.MustParseRule("Bash(make test)")},
		Deny:  []permission.Rule{permission.MustParseRule("Bash(rm *)")},
	}})
	check := CheckerFunc(c)
	if err := check("make test"); err != nil {
		t.Errorf("allowed: %v", err)
	}
	if err := check("curl example.com"); !errors.Is(err, ErrNeedsApproval) {
		t.Errorf("ask: %v", err)
	}
	if err := check("rm -rf x"); err == nil || errors.Is(err, ErrNeedsApproval) {
		t.Errorf("deny: %v", err)
	}
}

func TestResetReplacesTheSkills(t *testing.T) {
	rt := New(Options{Skills: []*extension.Skill{{Name: "deploy", Description: "Ship", UserInvocable: true}}})
	rt.Reset([]*extension.Skill{{Name: "rollback", Description: "Undo", UserInvocable: true}})
	if _, ok := rt.Skill("deploy"); ok {
		t.Error("the removed skill is still there")
	}
	if got := rt.Skills(); len(got) != 1 || got[0].Name != "rollback" {
		t.Errorf("skills %v", got)
	}
	if _, _, ok, _ := rt.Expand(t.Context(), "/rollback now"); !ok {
		t.Error("the new skill does not expand")
	}
}
