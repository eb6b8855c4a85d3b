package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/tackcode/tack/internal/llm/llmtest"
)

// TestProjectConfigRootFlag: --project-config-root, as the Agent SDK's
// projectConfigRoot passes it, makes the named checkout's settings, hooks,
// .mcp.json and skills the session's, CLAUDE_PROJECT_DIR naming it and
// trust checked on it, while the tools run in the working directory (a
// worktree whose own .claude/ is ignored).
func TestProjectConfigRootFlag(t *testing.T) {
	e := newEnv(t,
		llmtest.Reply(llmtest.ToolUse("Bash", map[string]string{"command": "touch by-worktree-rule"})),
		llmtest.Reply(llmtest.ToolUse("Bash", map[string]string{"command": "mkdir by-root-rule"})),
		llmtest.Reply(llmtest.Text("done")),
	)
	root, log := t.TempDir(), t.TempDir()
	e.settings("settings.json", `{"hooks": {"SessionStart": [{"hooks": [{"type": "command", "command": "touch `+filepath.Join(log, "worktree-hook")+`"}]}]}}`)
	e.settings("settings.local.json", `{"permissions": {"allow": ["Bash(touch *)"]}, "enableAllProjectMcpServers": true}`)
	e.write(".mcp.json", `{"mcpServers": {"worktree-server": {"command": "true"}}}`)
	e.write(".claude/skills/worktree-skill/SKILL.md", "---\ndescription: the worktree's\n---\nWorktree.\n")
	for name, content := range map[string]string{
		".claude/settings.json": `{
  "permissions": {"deny": ["Bash(touch *)"], "allow": ["Bash(mkdir *)"]},
  "hooks": {"SessionStart": [{"hooks": [{"type": "command", "command": "printf %s \"$CLAUDE_PROJECT_DIR $PWD\" > ` + filepath.Join(log, "root-hook") + `"}]}]},
  "enableAllProjectMcpServers": true
}`,
		".mcp.json":                          `{"mcpServers": {"root-server": {"command": "true"}}}`,
		".claude/skills/root-skill/SKILL.md": "---\ndescription: the root's\n---\nRoot.\n",
	} {
		p := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// The root's allow rule is a project grant: it holds once the root,
	// and only the root, is trusted.
	if _, stderr := e.run("trust", root); e.status != 0 {
		t.Fatalf("tack trust %s: exit %d: %s", root, e.status, stderr)
	}

	out, stderr := e.run("-p", "go", "--output-format", "stream-json", "--verbose", "--project-config-root", root)
	if e.status != 0 {
		t.Fatalf("exit %d: %s", e.status, stderr)
	}
	if strings.Contains(stderr, "not acted on") {
		t.Errorf("stderr still warns of the flag: %s", stderr)
	}
	msgs := lines(t, out)
	init := msgs[0]
	names := func(key string) []string {
		var out []string
		list, _ := init[key].([]any)
		for _, v := range list {
			if m, ok := v.(map[string]any); ok {
				v = m["name"]
			}
			s, _ := v.(string)
			out = append(out, s)
		}
		return out
	}
	if servers := names("mcp_servers"); !slices.Contains(servers, "root-server") || slices.Contains(servers, "worktree-server") {
		t.Errorf("mcp_servers %v: want root-server, not worktree-server", servers)
	}
	if skills := names("skills"); !slices.Contains(skills, "root-skill") || slices.Contains(skills, "worktree-skill") {
		t.Errorf("skills %v: want root-skill, not worktree-skill", skills)
	}
	in := func(dir, name string) bool { _, err := os.Stat(filepath.Join(dir, name)); return err == nil }
	if in(e.dir, "by-worktree-rule") {
		t.Error("the worktree's allow rule let `touch` run past the root's deny rule")
	}
	if !in(e.dir, "by-root-rule") || in(root, "by-root-rule") {
		t.Errorf("mkdir by the root's rule: in the working directory %v, in the root %v; want true, false", in(e.dir, "by-root-rule"), in(root, "by-root-rule"))
	}
	if in(log, "worktree-hook") {
		t.Error("the worktree's SessionStart hook ran")
	}
	got, err := os.ReadFile(filepath.Join(log, "root-hook"))
	if err != nil {
		t.Fatalf("the root's SessionStart hook did not run: %v", err)
	}
	if real, _ := filepath.EvalSymlinks(root); string(got) != real+" "+real {
		t.Errorf("CLAUDE_PROJECT_DIR and the hook's working directory = %q, want %q twice", got, real)
	}
}

// TestProjectConfigRootFlagRelative: a relative --project-config-root is
// refused with an error naming the flag, before any request.
func TestProjectConfigRootFlagRelative(t *testing.T) {
	e := newEnv(t, llmtest.Reply(llmtest.Text("never")))
	_, stderr := e.run("-p", "go", "--project-config-root", "../checkout")
	if e.status != 1 || !strings.Contains(stderr, `--project-config-root "../checkout" must be an absolute path`) {
		t.Errorf("exit %d, stderr %q: want 1 and the flag named", e.status, stderr)
	}
	if n := len(e.srv.Requests()); n != 0 {
		t.Errorf("%d model requests, want none", n)
	}
}
