package agent_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/tackcode/tack/agent"
	"github.com/tackcode/tack/internal/llm/llmtest"
)

// worktreeAndRoot lays out a worktree and the trusted checkout it is a
// worktree of, each with its own project configuration: the worktree's
// allows `touch` and has a hook, the root's denies `touch`, allows `mkdir`
// and has another hook, which writes CLAUDE_PROJECT_DIR and its working
// directory to log/root-hook.
// Each brings an MCP server, a skill and a command of its own name.
type worktreeAndRoot struct {
	cwd, root, log, configDir string
}

func newWorktreeAndRoot(t *testing.T) worktreeAndRoot {
	t.Helper()
	p := worktreeAndRoot{cwd: t.TempDir(), root: t.TempDir(), log: t.TempDir(), configDir: t.TempDir()}
	// The worktree's allow rule is in its local file, whose grants need
	// no trust: read, it would let `touch` run.
	writeFile(t, filepath.Join(p.cwd, ".claude", "settings.json"), `{
  "hooks": {"SessionStart": [{"hooks": [{"type": "command", "command": "touch `+filepath.Join(p.log, "worktree-hook")+`"}]}]},
  "enableAllProjectMcpServers": true
}`)
	writeFile(t, filepath.Join(p.cwd, ".claude", "settings.local.json"), `{"permissions": {"allow": ["Bash(touch *)"]}}`)
	writeFile(t, filepath.Join(p.cwd, ".mcp.json"), `{"mcpServers": {"worktree-server": {"command": "true"}}}`)
	writeFile(t, filepath.Join(p.cwd, ".claude", "skills", "worktree-skill", "SKILL.md"), "---\ndescription: the worktree's\n---\nWorktree.\n")
	writeFile(t, filepath.Join(p.cwd, ".claude", "commands", "worktree-cmd.md"), "---\ndescription: the worktree's\n---\nWorktree.\n")

	writeFile(t, filepath.Join(p.root, ".claude", "settings.json"), `{
  "permissions": {"deny": ["Bash(touch *)"], "allow": ["Bash(mkdir *)"]},
  "hooks": {"SessionStart": [{"hooks": [{"type": "command", "command": "printf %s \"$CLAUDE_PROJECT_DIR $PWD\" > `+filepath.Join(p.log, "root-hook")+`"}]}]},
  "enableAllProjectMcpServers": true
}`)
	// Local-scope servers are keyed by folder in ~/.claude.json.
	writeFile(t, filepath.Join(p.configDir, ".claude.json"), `{"projects": {
  "`+p.cwd+`": {"mcpServers": {"local-worktree": {"command": "true"}}},
  "`+p.root+`": {"mcpServers": {"local-root": {"command": "true"}}}
}}`)
	writeFile(t, filepath.Join(p.root, ".mcp.json"), `{"mcpServers": {"root-server": {"command": "true"}}}`)
	writeFile(t, filepath.Join(p.root, ".claude", "skills", "root-skill", "SKILL.md"), "---\ndescription: the root's\n---\nRoot.\n")
	writeFile(t, filepath.Join(p.root, ".claude", "commands", "root-cmd.md"), "---\ndescription: the root's\n---\nRoot.\n")
	return p
}

func (p worktreeAndRoot) options(srv *llmtest.Server) agent.Options {
	return agent.Options{Cwd: p.cwd, ProjectConfigRoot: p.root, Env: map[string]string{"ANTHROPIC_API_KEY": "k", "ANTHROPIC_BASE_URL": srv.URL(),
		"CLAUDE_CONFIG_DIR": p.configDir, "TACK_MANAGED_SETTINGS": filepath.Join(p.configDir, "no-managed.json")}}
}

func exists(path string) bool { _, err := os.Stat(path); return err == nil }

// TestProjectConfigRoot: with ProjectConfigRoot, the project scope is the
// root's — its rules, hooks, .mcp.json, skills and commands, with
// CLAUDE_PROJECT_DIR naming it and trust checked on it — and none of the
// worktree's, while the tools work in the worktree.
func TestProjectConfigRoot(t *testing.T) {
	p := newWorktreeAndRoot(t)
	turns := []llmtest.Turn{
		llmtest.Reply(llmtest.ToolUse("Bash", map[string]string{"command": "touch by-worktree-rule"})),
		llmtest.Reply(llmtest.ToolUse("Bash", map[string]string{"command": "mkdir by-root-rule"})),
		llmtest.Reply(llmtest.Text("done")),
	}
	srv := llmtest.Start(t, llmtest.Options{Turns: turns, ByConversation: true})
	opts := p.options(srv)
	// Only the root is trusted: its allow rule (a project grant) holds
	// only if trust is checked on it.
	ws, err := agent.TrustWorkspace(opts)
	if err != nil {
		t.Fatal(err)
	}
	root, _ := filepath.EvalSymlinks(p.root)
	if ws.Dir != root {
		t.Errorf("trust recorded for %s, want the root %s", ws.Dir, root)
	}
	msgs := collect(t, context.Background(), "go", opts)
	init := msgs[0].(*agent.SystemMessage).Init

	if exists(filepath.Join(p.cwd, "by-worktree-rule")) {
		t.Error("the worktree's allow rule let `touch` run past the root's deny rule")
	}
	if !exists(filepath.Join(p.cwd, "by-root-rule")) || exists(filepath.Join(p.root, "by-root-rule")) {
		t.Errorf("mkdir by the root's (trusted) rule: in the worktree %v, in the root %v; want true, false",
			exists(filepath.Join(p.cwd, "by-root-rule")), exists(filepath.Join(p.root, "by-root-rule")))
	}
	if exists(filepath.Join(p.log, "worktree-hook")) {
		t.Error("the worktree's SessionStart hook ran")
	}
	got, err := os.ReadFile(filepath.Join(p.log, "root-hook"))
	if err != nil {
		t.Fatalf("the root's SessionStart hook did not run: %v", err)
	}
	// The hook runs in the root too, where the paths its settings name
	// are, as Claude Code runs it.
	if want := root + " " + root; string(got) != want {
		t.Errorf("CLAUDE_PROJECT_DIR and working directory of the root's hook = %q, want %q", got, want)
	}
	var servers []string
	for _, s := range init.MCPServers {
		servers = append(servers, s.Name)
	}
	// .mcp.json is the root's; the local scope stays the working
	// directory's, as in Claude Code.
	if !slices.Contains(servers, "root-server") || slices.Contains(servers, "worktree-server") ||
		!slices.Contains(servers, "local-worktree") || slices.Contains(servers, "local-root") {
		t.Errorf("MCP servers %v: want root-server and local-worktree, not worktree-server or local-root", servers)
	}
	for _, list := range [][]string{init.Skills, init.SlashCommands} {
		if !slices.Contains(list, "root-skill") || slices.Contains(list, "worktree-skill") {
			t.Errorf("skills %v: want root-skill and not worktree-skill", list)
		}
	}
	if !slices.Contains(init.SlashCommands, "root-cmd") || slices.Contains(init.SlashCommands, "worktree-cmd") {
		t.Errorf("commands %v: want root-cmd and not worktree-cmd", init.SlashCommands)
	}
	if cwd, _ := filepath.EvalSymlinks(p.cwd); init.Cwd != p.cwd && init.Cwd != cwd {
		t.Errorf("init cwd %s, want the worktree %s", init.Cwd, p.cwd)
	}
}

// TestWithoutProjectConfigRoot is the same layout without the option: the
// worktree's configuration is what runs, so the test above tells the two
// apart.
func TestWithoutProjectConfigRoot(t *testing.T) {
	p := newWorktreeAndRoot(t)
	turns := []llmtest.Turn{
		llmtest.Reply(llmtest.ToolUse("Bash", map[string]string{"command": "touch by-worktree-rule"})),
		llmtest.Reply(llmtest.Text("done")),
	}
	srv := llmtest.Start(t, llmtest.Options{Turns: turns, ByConversation: true})
	opts := p.options(srv)
	opts.ProjectConfigRoot = ""
	msgs := collect(t, context.Background(), "go", opts)
	init := msgs[0].(*agent.SystemMessage).Init
	if !exists(filepath.Join(p.cwd, "by-worktree-rule")) || !exists(filepath.Join(p.log, "worktree-hook")) || exists(filepath.Join(p.log, "root-hook")) {
		t.Errorf("without a root: worktree rule ran %v, worktree hook ran %v, root hook ran %v; want true, true, false",
			exists(filepath.Join(p.cwd, "by-worktree-rule")), exists(filepath.Join(p.log, "worktree-hook")), exists(filepath.Join(p.log, "root-hook")))
	}
	if !slices.Contains(init.Skills, "worktree-skill") || slices.Contains(init.Skills, "root-skill") {
		t.Errorf("skills %v: want the worktree's", init.Skills)
	}
}

// TestProjectConfigRootRefused: a relative root, or one that is not a
// directory, fails the session before anything runs, naming the option.
func TestProjectConfigRootRefused(t *testing.T) {
	p := newWorktreeAndRoot(t)
	srv := llmtest.Start(t, llmtest.Options{Turns: []llmtest.Turn{llmtest.Reply(llmtest.Text("never"))}})
	file := filepath.Join(p.root, ".mcp.json")
	for root, want := range map[string]string{
		"../checkout":                        `--project-config-root "../checkout" must be an absolute path`,
		file:                                 "--project-config-root " + file + " is not a directory",
		filepath.Join(p.root, "no-such-dir"): "--project-config-root: ",
	} {
		opts := p.options(srv)
		opts.ProjectConfigRoot = root
		var got error
		for _, err := range agent.Query(context.Background(), "go", opts) {
			if err != nil {
				got = err
				break
			}
		}
		if got == nil || !strings.Contains(got.Error(), want) {
			t.Errorf("root %q: error %v, want one with %q", root, got, want)
		}
		if _, err := agent.CheckWorkspace(opts); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("root %q: CheckWorkspace error %v, want one with %q", root, err, want)
		}
	}
	if n := len(srv.Requests()); n != 0 {
		t.Errorf("%d model requests, want none", n)
	}
	if exists(filepath.Join(p.log, "worktree-hook")) || exists(filepath.Join(p.log, "root-hook")) {
		t.Error("a hook ran in a refused session")
	}
}
