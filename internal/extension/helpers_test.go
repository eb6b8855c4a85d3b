package extension

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// write creates root/rel with content (and its folders).
func write(t *testing.T, root, rel, content string) string {
	t.Helper()
	p := filepath.Join(root, rel)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// env is a fake environment: HOME and CLAUDE_CONFIG_DIR under a temp dir.
type env struct {
	home, config, project string
}

func newEnv(t *testing.T) env {
	t.Helper()
	d := t.TempDir()
	e := env{home: filepath.Join(d, "home"), config: filepath.Join(d, "home", ".claude"), project: filepath.Join(d, "repo")}
	for _, p := range []string{e.config, e.project} {
		if err := os.MkdirAll(p, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return e
}

func (e env) opts() Options {
	return Options{
		Cwd: e.project, ConfigDir: e.config, Home: e.home, ManagedDir: filepath.Join(e.home, "no-managed"),
		Getenv: func(k string) string {
			switch k {
			case "HOME":
				return e.home
			case "CLAUDE_CONFIG_DIR":
				return e.config
			}
			return ""
		},
	}
}

// problemsText renders every problem, one a line.
func problemsText(s *Set) string {
	var b strings.Builder
	for _, p := range s.Problems() {
		b.WriteString(p.Error())
		b.WriteByte('\n')
	}
	return b.String()
}

// The seed examples, verbatim.
const (
	seedCodeReviewer = `---
name: code-reviewer
description: Reviews code for quality and best practices
tools: Read, Glob, Grep
model: sonnet
---

You are a code reviewer. When invoked, analyze the code and provide
specific, actionable feedback on quality, security, and best practices.
`
	seedCommit = `---
description: Stage and commit current changes with a one-line message
argument-hint: [message]
allowed-tools: Bash(git add *) Bash(git commit *) Bash(git status *)
---
Run ` + "`git status`" + `, stage all changes, and commit them with the message: $ARGUMENTS
`
	seedSummarize = `---
name: summarize-changes
description: Summarizes uncommitted changes and flags risks. Use when the user asks what changed, wants a commit message, or wants to review their diff.
allowed-tools: Bash(git *)
---
## Current changes
!` + "`git diff HEAD`" + `

## Instructions
Summarize the diff in 2-3 bullets, then list risks (missing tests,
hardcoded values, error handling). If empty, say so.
`
	seedPluginJSON = `{
  "name": "my-first-plugin",
  "description": "A greeting plugin to learn the basics",
  "version": "1.0.0",
  "author": { "name": "Your Name" }
}
`
	helloSkill = `---
description: Greet the user by name
argument-hint: [name]
---
Say hello to $ARGUMENTS warmly.
`
	helloHooks = `{
  "description": "Log every Bash command",
  "hooks": {
    "PreToolUse": [
      {
        "matcher": "Bash",
        "hooks": [
          {"type": "command", "command": "${CLAUDE_PLUGIN_ROOT}/bin/log-command", "timeout": 10}
        ]
      }
    ]
  }
}
`
)

// seedPlugin lays my-first-plugin out under dir and returns its root.
func seedPlugin(t *testing.T, dir string) string {
	t.Helper()
	root := filepath.Join(dir, "my-first-plugin")
	write(t, root, ".claude-plugin/plugin.json", seedPluginJSON)
	write(t, root, "skills/hello/SKILL.md", helloSkill)
	write(t, root, "hooks/hooks.json", helloHooks)
	p := write(t, root, "bin/log-command", "#!/bin/sh\necho logged\n")
	if err := os.Chmod(p, 0o755); err != nil {
		t.Fatal(err)
	}
	return root
}
