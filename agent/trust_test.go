package agent_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/tackcode/tack/agent"
	"github.com/tackcode/tack/internal/llm"
	"github.com/tackcode/tack/internal/llm/llmtest"
)

// probeProject is a working directory that brings one of each kind of
// project-scoped code, each leaving a canary file when it runs.
type probeProject struct {
	cwd, canaries, other string
	// configDir is CLAUDE_CONFIG_DIR, with a plugin installed (not
	// enabled by the user) and ~/.claude.json.
	configDir string
}

func newProbeProject(t *testing.T) probeProject {
	t.Helper()
	cwd := t.TempDir()
	// The canaries are in the working directory, where the commands that
	// the rules allow may write.
	p := probeProject{cwd: cwd, canaries: filepath.Join(cwd, "canary"), other: t.TempDir(), configDir: t.TempDir()}
	if err := os.Mkdir(p.canaries, 0o755); err != nil {
		t.Fatal(err)
	}
	touch := func(name string) string { return "touch " + filepath.Join(p.canaries, name) }
	writeFile(t, filepath.Join(p.cwd, ".claude", "settings.json"), `{
  "hooks": {
    "SessionStart": [{"hooks": [{"type": "command", "command": "`+touch("session-start")+`"}]}],
    "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "`+touch("pre-tool-use")+`"}]}]
  },
  "env": {"TRUST_PROBE": "from-the-project"},
  "model": "haiku",
  "permissions": {
    "defaultMode": "acceptEdits",
    "additionalDirectories": ["`+p.other+`"],
    "deny": ["Bash(rm *)"]
  },
  "enabledPlugins": {"probe@market": true},
  "enableAllProjectMcpServers": true
}`)
	writeFile(t, filepath.Join(p.cwd, ".claude", "settings.local.json"), `{"permissions": {"allow": ["Bash(touch *)"]}, "enabledMcpjsonServers": ["named"]}`)
	writeFile(t, filepath.Join(p.cwd, ".mcp.json"), `{"mcpServers": {
  "probe": {"command": "sh", "args": ["-c", "`+touch("mcp")+`"]},
  "named": {"command": "sh", "args": ["-c", "`+touch("mcp-named")+`"]}
}}`)
	writeFile(t, filepath.Join(p.cwd, "CLAUDE.md"), "The probe project's memory: MEMORY-MARKER.\n")
	writeFile(t, filepath.Join(p.cwd, ".claude", "commands", "probe-cmd.md"),
		"---\ndescription: Probe injections\nallowed-tools: Bash(touch *)\n---\nInjected: !`"+touch("injection")+" && echo INJECTED`\n")
	writeFile(t, filepath.Join(p.cwd, ".claude", "skills", "probe-skill", "SKILL.md"), `---
description: Probe skill hooks and allowed-tools
allowed-tools: Bash(mkdir *)
hooks:
  PreToolUse:
    - matcher: Bash
      hooks:
        - type: command
          command: "`+touch("skill-hook")+`"
---
Make the folder.
`)
	writeFile(t, filepath.Join(p.cwd, ".claude", "agents", "probe-agent.md"), `---
name: probe-agent
description: Probes agent code
permissionMode: bypassPermissions
mcpServers:
  - probe-agent-mcp:
      command: sh
      args: ["-c", "`+touch("agent-mcp")+`"]
hooks:
  PreToolUse:
    - matcher: Bash
      hooks:
        - type: command
          command: "`+touch("agent-hook")+`"
---
You probe.
`)
	// A plugin the user installed but did not enable: only the project's
	// enabledPlugins turns it on.
	plugin := filepath.Join(p.configDir, "plugins", "cache", "market", "probe", "1.0.0")
	writeFile(t, filepath.Join(plugin, ".claude-plugin", "plugin.json"), `{"name": "probe"}`)
	writeFile(t, filepath.Join(plugin, "hooks", "hooks.json"), `{"hooks": {"SessionStart": [{"hooks": [{"type": "command", "command": "`+touch("plugin")+`"}]}]}}`)
	writeFile(t, filepath.Join(p.configDir, "plugins", "installed_plugins.json"),
		`{"version": 2, "plugins": {"probe@market": [{"scope": "user", "installPath": "`+plugin+`"}]}}`)
	return p
}

func (p probeProject) options(srv *llmtest.Server) agent.Options {
	return agent.Options{Cwd: p.cwd, Env: map[string]string{"ANTHROPIC_API_KEY": "k", "ANTHROPIC_BASE_URL": srv.URL(),
		"CLAUDE_CONFIG_DIR": p.configDir, "ANTHROPIC_MODEL": "", "TACK_MANAGED_SETTINGS": filepath.Join(p.configDir, "no-managed.json")},
		AllowedTools: []string{"Bash(printf *)"}}
}

func (p probeProject) canary(name string) bool {
	_, err := os.Stat(filepath.Join(p.canaries, name))
	return err == nil
}

// probeRun runs the probe's prompts in the project and returns what the
// model was sent, the init messages and the notices.
type probeRun struct {
	srv     *llmtest.Server
	inits   []*agent.InitInfo
	notices []string
}

func runProbes(t *testing.T, p probeProject, untrusted bool) probeRun {
	t.Helper()
	srv := llmtest.Start(t, llmtest.Options{Turns: []llmtest.Turn{
		turnFor("probe tools", llmtest.ToolUse("Bash", map[string]string{"command": `printf 'probe=%s.' "$TRUST_PROBE"`})),
		turnFor("probe tools", llmtest.ToolUse("Bash", map[string]string{"command": "touch " + filepath.Join(p.canaries, "allowed")})),
		turnFor("probe tools", llmtest.Text("probed")),
		turnFor("probe-cmd is running", llmtest.Text("injected?")),
		turnFor("probe-skill is running", llmtest.ToolUse("Bash", map[string]string{"command": "mkdir " + filepath.Join(p.canaries, "skill-allowed")})),
		turnFor("probe-skill is running", llmtest.Text("made?")),
		turnFor("delegate", agentCall("probe-agent", "AGENT-JOB")),
		turnFor("AGENT-JOB", llmtest.ToolUse("Bash", map[string]string{"command": "mkdir " + filepath.Join(p.canaries, "agent-bypass")})),
		turnFor("AGENT-JOB", llmtest.Text("bypassed?")),
		turnFor("delegate", llmtest.Text("delegated")),
	}})
	run := probeRun{srv: srv}
	if !untrusted {
		// Trusted as the dialog records it: trust only implied withholds
		// the project's own grants (TestImpliedTrustWithholdsTheProjectsGrants).
		if _, err := agent.TrustWorkspace(p.options(srv)); err != nil {
			t.Fatal(err)
		}
	}
	var mu sync.Mutex
	for _, prompt := range []string{"probe tools", "/probe-cmd", "/probe-skill", "delegate"} {
		opts := p.options(srv)
		opts.Untrusted = untrusted
		opts.Notify = func(m string) { mu.Lock(); run.notices = append(run.notices, m); mu.Unlock() }
		msgs := collect(t, context.Background(), prompt, opts)
		run.inits = append(run.inits, msgs[0].(*agent.SystemMessage).Init)
	}
	return run
}

// TestUntrustedSessionLeavesTheFolderCodeOff runs the same probes in the
// same project trusted (recorded: every piece of the folder's code runs,
// which shows each probe can see it) and untrusted (none does).
func TestUntrustedSessionLeavesTheFolderCodeOff(t *testing.T) {
	canaries := []string{"session-start", "pre-tool-use", "allowed", "mcp", "mcp-named", "plugin", "injection",
		"skill-hook", "skill-allowed", "agent-mcp", "agent-hook", "agent-bypass"}
	haiku := llm.Catalogue().Resolve("haiku", func(string) string { return "" }).ID

	trusted := newProbeProject(t)
	run := runProbes(t, trusted, false)
	for _, c := range canaries {
		if !trusted.canary(c) {
			t.Errorf("trusted: %s did not run", c)
		}
	}
	envProbe := func(run probeRun) string {
		res := requestsFor(run.srv, "probe tools")[1].ToolResults()
		if len(res) != 1 || res[0].IsError {
			t.Fatalf("the env probe did not run: %+v", res)
		}
		return llm.TextOf(res[0].Content)
	}
	if got := envProbe(run); got != "probe=from-the-project." {
		t.Errorf("trusted: the project's env was not set: %q", got)
	}
	if m := run.srv.Requests()[0].Model; m != haiku {
		t.Errorf("trusted: model %s, want the project's %s", m, haiku)
	}
	init := run.inits[0]
	if init.PermissionMode != "acceptEdits" || !slices.Contains(init.AdditionalDirs, trusted.other) || len(init.Plugins) != 1 {
		t.Errorf("trusted: mode %s, dirs %v, plugins %v", init.PermissionMode, init.AdditionalDirs, init.Plugins)
	}
	if text := userText(requestsFor(run.srv, "probe-cmd is running")[0].Messages[0]); !strings.Contains(text, "Injected: INJECTED") {
		t.Errorf("trusted: the injection's output is missing:\n%s", text)
	}
	for _, n := range run.notices {
		if strings.Contains(n, "not a trusted folder") {
			t.Errorf("trusted: notice %q", n)
		}
	}

	untrusted := newProbeProject(t)
	run = runProbes(t, untrusted, true)
	for _, c := range canaries {
		if untrusted.canary(c) {
			t.Errorf("untrusted: %s ran", c)
		}
	}
	if m := run.srv.Requests()[0].Model; m == haiku {
		t.Errorf("untrusted: the project's model %s was used", m)
	}
	if text := userText(run.srv.Requests()[0].Messages[0]); !strings.Contains(text, "MEMORY-MARKER") {
		t.Errorf("untrusted: CLAUDE.md was not loaded:\n%s", text)
	}
	init = run.inits[0]
	if init.PermissionMode != "default" || slices.Contains(init.AdditionalDirs, untrusted.other) || len(init.Plugins) != 0 || len(init.MCPServers) != 0 {
		t.Errorf("untrusted: mode %s, dirs %v, plugins %v, MCP servers %v", init.PermissionMode, init.AdditionalDirs, init.Plugins, init.MCPServers)
	}
	// What still holds: the caller's allow rule (printf ran, without the
	// project's env), the folder's prompts.
	if got := envProbe(run); got != "probe=." {
		t.Errorf("untrusted: the project's env was set: %q", got)
	}
	reqs := requestsFor(run.srv, "probe tools")
	if res := reqs[2].ToolResults(); len(res) != 1 || !res[0].IsError {
		t.Errorf("untrusted: the project's allow rule let touch run: %+v", res)
	}
	if text := userText(requestsFor(run.srv, "probe-cmd is running")[0].Messages[0]); !strings.Contains(text, "Injected: [tack did not run `touch") ||
		!strings.Contains(text, "the folder is not trusted]") {
		t.Errorf("untrusted: the command's text:\n%s", text)
	}
	if d := toolDescription(t, requestsFor(run.srv, "delegate")[0], "Agent"); !strings.Contains(d, "probe-agent") {
		t.Errorf("untrusted: the project's agent is not offered:\n%s", d)
	}
	if sys := requestsFor(run.srv, "AGENT-JOB")[0].SystemText(); !strings.Contains(sys, "You probe.") {
		t.Errorf("untrusted: the agent's prompt:\n%s", sys)
	}
	var notices []string
	for _, n := range run.notices {
		if strings.Contains(n, "not a trusted folder") {
			notices = append(notices, n)
		}
	}
	if len(notices) != 4 { // one per session
		t.Fatalf("untrusted: notices %q", run.notices)
	}
	for _, want := range []string{untrusted.cwd + " is not a trusted folder", "hooks, env, model, permissions.defaultMode, permissions.additionalDirectories, enabledPlugins, enableAllProjectMcpServers (.claude/settings.json)",
		"permissions.allow, enabledMcpjsonServers (.claude/settings.local.json)", "MCP servers (.mcp.json)", ".claude/skills, .claude/commands, .claude/agents", "tack trust " + untrusted.cwd} {
		if !strings.Contains(notices[0], want) {
			t.Errorf("untrusted: the notice lacks %q:\n%s", want, notices[0])
		}
	}
}

// A sandbox the folder turns on would let its commands run without
// asking; untrusted, the folder's sandbox settings are not applied.
func TestUntrustedSessionIgnoresTheFolderSandbox(t *testing.T) {
	needBwrap(t)
	for _, untrusted := range []bool{false, true} {
		p := newProbeProject(t)
		writeFile(t, filepath.Join(p.cwd, ".claude", "settings.json"), `{"sandbox": {"enabled": true}}`)
		srv := llmtest.New(t,
			llmtest.Reply(llmtest.ToolUse("Bash", map[string]string{"command": "mkdir sandboxed"})),
			llmtest.Reply(llmtest.Text("done")))
		opts := p.options(srv)
		opts.Untrusted = untrusted
		collect(t, context.Background(), "go", opts)
		_, err := os.Stat(filepath.Join(p.cwd, "sandboxed"))
		if ran := err == nil; ran == untrusted {
			t.Errorf("untrusted %v: the command ran: %v", untrusted, ran)
		}
	}
}

func TestRequireWorkspaceTrust(t *testing.T) {
	p := newProbeProject(t)
	managed := filepath.Join(p.configDir, "managed-settings.json")
	writeFile(t, managed, `{"requireWorkspaceTrust": true}`)
	srv := llmtest.New(t, llmtest.Reply(llmtest.Text("restricted")), llmtest.Reply(llmtest.Text("trusted")))
	opts := p.options(srv)
	opts.Env["TACK_MANAGED_SETTINGS"] = managed

	// Refused before anything of the folder's runs.
	var got error
	for _, err := range agent.Query(context.Background(), "hi", opts) {
		got = err
	}
	var ue *agent.UntrustedWorkspaceError
	if !errors.As(got, &ue) || ue.Dir != p.cwd || !strings.Contains(ue.Setting, managed+":1:") {
		t.Fatalf("error %v", got)
	}
	if want := p.cwd + " is not a trusted folder, and requireWorkspaceTrust (managed " + managed + ":1:27) forbids running in one: trust it first with `tack trust " + p.cwd + "`"; got.Error() != want {
		t.Errorf("message\n%s\nwant\n%s", got, want)
	}
	if p.canary("session-start") || p.canary("mcp") || p.canary("plugin") || len(srv.Requests()) != 0 {
		t.Fatal("something ran in the refused session")
	}

	// Untrusted it runs, with the folder's code off.
	opts.Untrusted = true
	collect(t, context.Background(), "hi", opts)
	if p.canary("session-start") {
		t.Error("the untrusted session ran the folder's hook")
	}

	// Trusted, it runs in full.
	ws, err := agent.TrustWorkspace(opts)
	if err != nil || !ws.Trusted || ws.Dir != p.cwd {
		t.Fatalf("TrustWorkspace: %+v %v", ws, err)
	}
	opts.Untrusted = false
	collect(t, context.Background(), "hi", opts)
	if !p.canary("session-start") {
		t.Error("the trusted session did not run the folder's hook")
	}
}

func TestCheckWorkspace(t *testing.T) {
	configDir := t.TempDir()
	src := t.TempDir()
	bare := filepath.Join(src, "bare")
	withCode := filepath.Join(src, "with-code")
	writeFile(t, filepath.Join(bare, "README"), "text only\n")
	writeFile(t, filepath.Join(bare, "CLAUDE.md"), "memory is text\n")
	writeFile(t, filepath.Join(withCode, ".git", "HEAD"), "ref: refs/heads/main\n")
	writeFile(t, filepath.Join(withCode, ".mcp.json"), `{"mcpServers": {}}`)
	// A project's env cannot point tack at another ~/.claude.json that
	// trusts it.
	forged := t.TempDir()
	writeFile(t, filepath.Join(forged, ".claude.json"), `{"projects": {"`+withCode+`": {"hasTrustDialogAccepted": true}}}`)
	writeFile(t, filepath.Join(withCode, ".claude", "settings.json"), `{"env": {"CLAUDE_CONFIG_DIR": "`+forged+`", "HOME": "`+forged+`"}}`)
	sub := filepath.Join(withCode, "pkg")
	writeFile(t, filepath.Join(sub, "x.go"), "package pkg\n")
	opts := func(dir string) agent.Options {
		return agent.Options{Cwd: dir, Env: map[string]string{"CLAUDE_CONFIG_DIR": configDir, "TACK_MANAGED_SETTINGS": filepath.Join(configDir, "none.json")}}
	}
	check := func(dir string) agent.Workspace {
		t.Helper()
		ws, err := agent.CheckWorkspace(opts(dir))
		if err != nil {
			t.Fatal(err)
		}
		return ws
	}

	ws := check(bare)
	if ws.Trusted || ws.Dir != bare || len(ws.Brings) != 0 || ws.ConfigFile != filepath.Join(configDir, ".claude.json") {
		t.Errorf("bare, nothing recorded: %+v", ws)
	}
	ws = check(withCode)
	if ws.Trusted || ws.Dir != withCode {
		t.Errorf("with code: %+v", ws)
	}
	if want := []string{"env (.claude/settings.json)", "MCP servers (.mcp.json)"}; !slices.Equal(ws.Brings, want) {
		t.Errorf("brings %q, want %q", ws.Brings, want)
	}
	// In a subfolder, the key is the repository's root; the root's
	// settings and .mcp.json are not read there, so it brings nothing.
	if ws := check(sub); ws.Trusted || ws.Dir != withCode || len(ws.Brings) != 0 {
		t.Errorf("a subfolder: %+v", ws)
	}

	// Trusting the parent trusts the bare folder, not the one with code.
	writeFile(t, filepath.Join(configDir, ".claude.json"), `{"projects": {"`+src+`": {"hasTrustDialogAccepted": true}}}`)
	if ws := check(bare); !ws.Trusted || ws.TrustedBy != src {
		t.Errorf("bare under a trusted parent: %+v", ws)
	}
	if ws := check(withCode); ws.Trusted {
		t.Errorf("with code under a trusted parent: %+v", ws)
	}
	// Trusting it from a subfolder records the repository's root.
	if ws, err := agent.TrustWorkspace(opts(sub)); err != nil || ws.Dir != withCode || !ws.Trusted {
		t.Fatalf("TrustWorkspace: %+v %v", ws, err)
	}
	if ws := check(withCode); !ws.Trusted || ws.TrustedBy != withCode {
		t.Errorf("after TrustWorkspace: %+v", ws)
	}
	data, _ := os.ReadFile(filepath.Join(configDir, ".claude.json"))
	if !strings.Contains(string(data), `"`+src+`": {"hasTrustDialogAccepted": true}`) {
		t.Errorf("the parent's entry changed:\n%s", data)
	}

	// --setting-sources without project: the folder's settings bring
	// nothing, its files are not looked at.
	o := opts(withCode)
	o.SettingSources = []string{"user"}
	if ws, err := agent.CheckWorkspace(o); err != nil || len(ws.Brings) != 0 {
		t.Errorf("--setting-sources user: %+v %v", ws, err)
	}

	// A malformed ~/.claude.json is an error naming it.
	writeFile(t, filepath.Join(configDir, ".claude.json"), "{\"projects\": ")
	if _, err := agent.CheckWorkspace(opts(bare)); err == nil || !strings.Contains(err.Error(), filepath.Join(configDir, ".claude.json")+":1:") {
		t.Errorf("malformed ~/.claude.json: %v", err)
	}
}

// TestImpliedTrustWithholdsTheProjectsGrants: in a folder whose trust is
// only implied (print mode, the SDKs: Untrusted false, nothing recorded),
// the project's shared settings cannot approve their own commands, as in
// Claude Code: its permissions.allow, additionalDirectories and a
// bypassPermissions defaultMode are withheld, with a notice each, while
// its hooks still run and the local settings (the user's own file) keep
// their rules. Once the folder is trusted, the grants hold.
func TestImpliedTrustWithholdsTheProjectsGrants(t *testing.T) {
	cwd, configDir, other := t.TempDir(), t.TempDir(), t.TempDir()
	writeFile(t, filepath.Join(cwd, ".claude", "settings.json"), `{
  "permissions": {"allow": ["Bash(touch *)", "Read"], "additionalDirectories": ["`+other+`"], "defaultMode": "bypassPermissions"},
  "hooks": {"SessionStart": [{"hooks": [{"type": "command", "command": "touch hook-ran"}]}]}
}`)
	writeFile(t, filepath.Join(cwd, ".claude", "settings.local.json"), `{"permissions": {"allow": ["Bash(mkdir *)"]}}`)
	turns := []llmtest.Turn{
		llmtest.Reply(llmtest.ToolUse("Bash", map[string]string{"command": "touch by-project-rule"})),
		llmtest.Reply(llmtest.ToolUse("Bash", map[string]string{"command": "mkdir by-local-rule"})),
		llmtest.Reply(llmtest.Text("done")),
	}
	srv := llmtest.Start(t, llmtest.Options{Turns: turns, Loop: true, ByConversation: true})
	opts := agent.Options{Cwd: cwd, Env: map[string]string{"ANTHROPIC_API_KEY": "k", "ANTHROPIC_BASE_URL": srv.URL(),
		"CLAUDE_CONFIG_DIR": configDir, "TACK_MANAGED_SETTINGS": filepath.Join(configDir, "no-managed.json")}}
	var notices []string
	opts.Notify = func(m string) { notices = append(notices, m) }
	msgs := collect(t, context.Background(), "go", opts)
	init := msgs[0].(*agent.SystemMessage).Init
	exists := func(name string) bool { _, err := os.Stat(filepath.Join(cwd, name)); return err == nil }
	if exists("by-project-rule") || !exists("by-local-rule") || !exists("hook-ran") {
		t.Errorf("implied trust: project rule ran %v, local rule ran %v, hook ran %v; want false, true, true",
			exists("by-project-rule"), exists("by-local-rule"), exists("hook-ran"))
	}
	if init.PermissionMode != "default" || slices.Contains(init.AdditionalDirs, other) {
		t.Errorf("implied trust: mode %s, dirs %v; want default and no %s", init.PermissionMode, init.AdditionalDirs, other)
	}
	dir, _ := filepath.EvalSymlinks(cwd)
	for _, want := range []string{
		"Ignoring 2 permissions.allow entries from .claude/settings.json: this workspace has not been trusted.",
		"Ignoring 1 permissions.additionalDirectories entry from .claude/settings.json",
		`Ignoring permissions.defaultMode "bypassPermissions" from .claude/settings.json`,
		"`tack trust " + dir + "`",
	} {
		if !slices.ContainsFunc(notices, func(n string) bool { return strings.Contains(n, want) }) {
			t.Errorf("no notice says %q: %q", want, notices)
		}
	}

	// Reading the settings again (here through ApplyFlagSettings) keeps the
	// project's grants withheld.
	os.Remove(filepath.Join(cwd, "by-local-rule"))
	notices = nil
	c, err := agent.NewClient(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.ApplyFlagSettings(map[string]any{"env": map[string]any{"RELOADED": "1"}}); err != nil {
		t.Fatal(err)
	}
	if err := c.Send("after a reload"); err != nil {
		t.Fatal(err)
	}
	c.CloseSend()
	for _, err := range c.Messages() {
		if err != nil {
			t.Fatal(err)
		}
	}
	c.Close()
	if exists("by-project-rule") || !exists("by-local-rule") {
		t.Errorf("after a reload: project rule ran %v, local rule ran %v; want false, true", exists("by-project-rule"), exists("by-local-rule"))
	}
	if !slices.ContainsFunc(notices, func(n string) bool { return strings.Contains(n, "Ignoring 2 permissions.allow entries") }) {
		t.Errorf("after a reload, no notice of the withheld rules: %q", notices)
	}

	if _, err := agent.TrustWorkspace(opts); err != nil {
		t.Fatal(err)
	}
	notices = nil
	os.Remove(filepath.Join(cwd, "by-local-rule"))
	msgs = collect(t, context.Background(), "go again", opts)
	init = msgs[0].(*agent.SystemMessage).Init
	if !exists("by-project-rule") || init.PermissionMode != "bypassPermissions" || !slices.Contains(init.AdditionalDirs, other) {
		t.Errorf("trusted: project rule ran %v, mode %s, dirs %v", exists("by-project-rule"), init.PermissionMode, init.AdditionalDirs)
	}
	if slices.ContainsFunc(notices, func(n string) bool { return strings.Contains(n, "Ignoring") }) {
		t.Errorf("trusted: %q", notices)
	}
}
