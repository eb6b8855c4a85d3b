package main

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/tackcode/tack/internal/llm"
	"github.com/tackcode/tack/internal/llm/llmtest"
)

// hookSources are the places a hook can come from, each with a canary its
// PreToolUse hook touches.
var hookSources = []string{"settings", "plugin", "skill", "agent", "managed", "managed-skill"}

// TestHookGuardsHoldForEveryHookFromFiles runs one session whose hooks come
// from every place — the project settings, a plugin, a skill, an agent, the
// managed settings, a skill of the administrator's directory — under each
// hook guard, and checks by their canaries which hooks ran: disableAllHooks
// stops every hook from files (all but the managed ones when it is not set
// by the administrator), allowManagedHooksOnly keeps only the managed ones,
// and a notice names the hooks that were kept from running.
func TestHookGuardsHoldForEveryHookFromFiles(t *testing.T) {
	managedOnly := []string{"managed", "managed-skill"}
	for _, c := range []struct {
		name            string
		project, admin  string // settings keys added to the project's and the managed settings
		ran             []string
		noticeOfSkipped bool
	}{
		{name: "no guard", ran: hookSources},
		{name: "disableAllHooks in the project", project: `"disableAllHooks": true,`, ran: managedOnly, noticeOfSkipped: true},
		{name: "disableAllHooks in the managed settings", admin: `"disableAllHooks": true,`, ran: nil, noticeOfSkipped: true},
		{name: "allowManagedHooksOnly", admin: `"allowManagedHooksOnly": true,`, ran: managedOnly, noticeOfSkipped: true},
	} {
		t.Run(c.name, func(t *testing.T) {
			canaries := t.TempDir()
			hook := func(source string) string {
				return fmt.Sprintf(`{"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "touch %s"}]}]}`,
					filepath.Join(canaries, source))
			}
			frontmatterHook := func(source string) string {
				return "hooks:\n  PreToolUse:\n    - matcher: Bash\n      hooks:\n        - type: command\n          command: touch " + filepath.Join(canaries, source) + "\n"
			}
			e := newEnv(t,
				llmtest.Turn{When: llmtest.FirstUserContains("run everything"), Content: []llm.Block{llmtest.ToolUse("Skill", map[string]string{"skill": "deploy"})}},
				llmtest.Turn{When: llmtest.FirstUserContains("run everything"), Content: []llm.Block{llmtest.ToolUse("Skill", map[string]string{"skill": "audit"})}},
				llmtest.Turn{When: llmtest.FirstUserContains("run everything"), Content: []llm.Block{llmtest.ToolUse("Bash", map[string]string{"command": "echo main"})}},
				llmtest.Turn{When: llmtest.FirstUserContains("run everything"), Content: []llm.Block{llmtest.ToolUse("Agent",
					map[string]any{"subagent_type": "guarded", "description": "a task", "prompt": "CHILD-JOB"})}},
				llmtest.Turn{When: llmtest.FirstUserContains("CHILD-JOB"), Content: []llm.Block{llmtest.ToolUse("Bash", map[string]string{"command": "echo child"})}},
				llmtest.Turn{When: llmtest.FirstUserContains("CHILD-JOB"), Content: []llm.Block{llmtest.Text("child done")}},
				llmtest.Turn{When: llmtest.FirstUserContains("run everything"), Content: []llm.Block{llmtest.Text("finished")}})
			e.settings("settings.json", `{`+c.project+` "hooks": `+hook("settings")+`}`)
			e.write(".claude/skills/deploy/SKILL.md", "---\ndescription: Deploys\n"+frontmatterHook("skill")+"---\nDEPLOY.\n")
			e.write(".claude/agents/guarded.md", "---\nname: guarded\ndescription: Guarded\ntools: Bash\n"+frontmatterHook("agent")+"---\nYou are guarded.\n")
			plugin := filepath.Join(t.TempDir(), "canary-plugin")
			writeAll(t, map[string]string{
				filepath.Join(plugin, ".claude-plugin", "plugin.json"): `{"name": "canary-plugin", "description": "hooks", "version": "1.0.0"}`,
				filepath.Join(plugin, "hooks", "hooks.json"):           `{"hooks": ` + hook("plugin") + `}`,
			})
			admin := t.TempDir()
			writeAll(t, map[string]string{
				filepath.Join(admin, "managed-settings.json"):                  `{` + c.admin + ` "hooks": ` + hook("managed") + `}`,
				filepath.Join(admin, ".claude", "skills", "audit", "SKILL.md"): "---\ndescription: Audits\n" + frontmatterHook("managed-skill") + "---\nAUDIT.\n",
			})
			e.extra = []string{"TACK_MANAGED_SETTINGS=" + filepath.Join(admin, "managed-settings.json"), "TACK_MANAGED_DIR=" + admin}

			_, errOut := e.run("-p", "run everything", "--plugin-dir", plugin, "--allowedTools", "Bash(echo *)")
			if e.status != 0 {
				t.Fatalf("exit %d: %s", e.status, errOut)
			}
			if n := len(e.srv.Requests()); n != 7 {
				t.Fatalf("%d requests, want the 7 scripted: %s", n, errOut)
			}
			var ran []string
			for _, src := range hookSources {
				if _, err := os.Stat(filepath.Join(canaries, src)); err == nil {
					ran = append(ran, src)
				}
			}
			if !slices.Equal(ran, c.ran) {
				t.Errorf("the hooks of %v ran, want those of %v", ran, c.ran)
			}
			for _, skipped := range []string{"plugin:canary-plugin", "skill:deploy", "agent:guarded"} {
				if got := strings.Contains(errOut, skipped); got != c.noticeOfSkipped {
					t.Errorf("notice of %s: %v, want %v; stderr:\n%s", skipped, got, c.noticeOfSkipped, errOut)
				}
			}
		})
	}
}

func writeAll(t *testing.T, files map[string]string) {
	t.Helper()
	for path, content := range files {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
