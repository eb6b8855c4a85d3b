package runtime

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/tackcode/tack/internal/config"
	"github.com/tackcode/tack/internal/extension"
	"github.com/tackcode/tack/internal/mcp/mcpconfig"
	"github.com/tackcode/tack/internal/permission"
)

// Workspace trust. A folder can bring code that tack would run for the
// user: hooks and env in .claude/settings.json, MCP servers in .mcp.json,
// shell commands in skills… Until the user trusts the folder, an
// interactive surface asks first, and a session that runs without that
// trust (Config.Untrusted) leaves the folder's code off. Trust is recorded
// where Claude Code records it, so that a folder trusted in one is trusted
// in the other.

// Workspace is a folder as workspace trust sees it.
type Workspace struct {
	// Dir is the folder trust is recorded for: the root of the git
	// repository holding the working directory (or the project root that
	// stands for it, Config.ProjectConfigRoot), else that directory itself
	// (symbolic links resolved).
	Dir string
	// Trusted reports whether the user trusts the folder; TrustedBy is the
	// folder whose record says so: Dir, the working directory or — for a
	// folder that brings no code of its own — a folder above it.
	Trusted   bool
	TrustedBy string
	// Brings lists what the folder brings that an untrusted session leaves
	// off, one line each ("hooks, env (.claude/settings.json)", "MCP
	// servers (.mcp.json)"). It is found by reading files, never by running
	// anything. Empty for a folder that brings nothing.
	Brings []string
	// ConfigFile is the file trust is recorded in: ~/.claude.json, or
	// $CLAUDE_CONFIG_DIR/.claude.json.
	ConfigFile string
}

// CheckWorkspace reports whether the user trusts the folder a session with
// cfg would take its project scope from (cfg.Cwd, or the
// cfg.ProjectConfigRoot that stands for it; HOME and CLAUDE_CONFIG_DIR from cfg.Env or the
// environment, never from a settings file), and what the folder brings. It
// runs nothing. A malformed settings file of the folder, or a malformed
// ~/.claude.json, is an error naming its file, line and column.
func CheckWorkspace(cfg Config) (Workspace, error) {
	pl, err := placeOf(cfg)
	if err != nil {
		return Workspace{}, err
	}
	cwd := pl.root
	getenv := optionsEnv(cfg.Env)
	distrusted := cfg
	distrusted.Untrusted = true
	settings, err := readSettings(distrusted, pl, getenv)
	if err != nil {
		return Workspace{}, err
	}
	ws, err := inspectFolder(cfg, cwd, getenv, settings.Ignored)
	if err != nil {
		return ws, err
	}
	if ws.ConfigFile, err = config.ClaudeJSONPath(getenv); err != nil {
		return ws, err
	}
	if ws.TrustedBy, err = config.TrustedBy(ws.ConfigFile, cwd, len(ws.Brings) > 0); err != nil {
		return ws, err
	}
	ws.Trusted = ws.TrustedBy != ""
	return ws, nil
}

// inspectFolder fills in the folder's Dir and Brings, without reading the
// trust record.
func inspectFolder(cfg Config, cwd string, getenv func(string) string, ignored []config.Item) (Workspace, error) {
	dir, err := config.TrustKey(cwd)
	if err != nil {
		return Workspace{}, err
	}
	return Workspace{Dir: dir, Brings: folderCode(cfg, cwd, homeDir(getenv), ignored)}, nil
}

// TrustWorkspace records that the user trusts the folder a session with
// cfg would run in (Workspace.Dir), as Claude Code's "Yes, proceed" does:
// projects[Dir].hasTrustDialogAccepted in ~/.claude.json becomes true,
// every other byte of the file kept. It returns the folder as now trusted.
func TrustWorkspace(cfg Config) (Workspace, error) {
	ws, err := CheckWorkspace(cfg)
	if err != nil {
		return ws, err
	}
	if err := config.Trust(ws.ConfigFile, ws.Dir); err != nil {
		return ws, err
	}
	ws.Trusted, ws.TrustedBy = true, ws.Dir
	return ws, nil
}

// UntrustedWorkspaceError is what New returns when the settings set
// requireWorkspaceTrust, the folder is not trusted, and the session was not
// started with Config.Untrusted.
type UntrustedWorkspaceError struct {
	// Dir is the folder (Workspace.Dir).
	Dir string
	// Setting is where requireWorkspaceTrust is set: "managed
	// /etc/claude-code/managed-settings.json:2:3".
	Setting string
}

func (e *UntrustedWorkspaceError) Error() string {
	return fmt.Sprintf("%s is not a trusted folder, and requireWorkspaceTrust (%s) forbids running in one: trust it first with `tack trust %s`",
		e.Dir, e.Setting, e.Dir)
}

// folderCode lists what the folder cwd brings that an untrusted session
// leaves off: the settings keys left out (ignored), the project's MCP
// servers, and the skills, commands and agents whose commands, hooks and
// servers would run. Only files are looked at.
func folderCode(cfg Config, cwd, home string, ignored []config.Item) []string {
	var out []string
	byFile := map[string][]string{}
	var files []string
	for _, it := range ignored {
		if _, seen := byFile[it.Source.Path]; !seen {
			files = append(files, it.Source.Path)
		}
		byFile[it.Source.Path] = append(byFile[it.Source.Path], it.Text)
	}
	for _, f := range files {
		out = append(out, fmt.Sprintf("%s (%s)", strings.Join(byFile[f], ", "), relTo(cwd, f)))
	}
	if scopes, err := config.SourceList(cfg.SettingSources); err == nil && (scopes == nil || slices.Contains(scopes, config.ScopeProject)) {
		mcpJSON := mcpconfig.Files{ProjectDir: cwd}.MCPJSON()
		if info, err := os.Stat(mcpJSON); err == nil && info.Size() > 0 {
			out = append(out, fmt.Sprintf("MCP servers (%s)", relTo(cwd, mcpJSON)))
		}
		var dirs []string
		for _, d := range extension.ProjectDirs(cwd, home) {
			for _, kind := range []string{"skills", "commands", "agents"} {
				if info, err := os.Stat(filepath.Join(d, kind)); err == nil && info.IsDir() {
					dirs = append(dirs, relTo(cwd, filepath.Join(d, kind)))
				}
			}
		}
		if len(dirs) > 0 {
			out = append(out, fmt.Sprintf("the shell commands, hooks and MCP servers of skills, commands and agents (%s)", strings.Join(dirs, ", ")))
		}
	}
	return out
}

// relTo is path relative to dir when it is inside it.
func relTo(dir, path string) string {
	if rel, err := filepath.Rel(dir, path); err == nil && !strings.HasPrefix(rel, "..") {
		return rel
	}
	return path
}

// workspaceTrust is a session's decision about the folder's own code,
// taken once by the trust step from Config.Untrusted (and, for
// requireWorkspaceTrust, the trust record); every step that loads
// project-scoped code asks it. What is off: the project's and local
// settings but for the rules that only restrict, the project's .mcp.json
// servers, and the commands, hooks, allowed-tools, inline MCP servers and
// permission modes of the project's skills, commands and agents.
type workspaceTrust struct {
	untrusted bool
	// brings is what is off, for the notice; dir the folder.
	brings []string
	dir    string
}

// decideTrust takes the session's trust decision, once, and tells the user
// what it leaves off. The settings were loaded with Config.Untrusted; a
// session that is not untrusted is refused when they require trust and the
// folder is not trusted.
func (s *Session) decideTrust(context.Context) error {
	trust, err := trustOf(s.cfg, s.root, s.settings)
	if err != nil {
		return err
	}
	s.trust = trust
	s.notify(trust.notice())
	if !s.cfg.Untrusted {
		for _, msg := range withholdWidening(s.cfg, s.root, s.settings) {
			s.notify(msg)
		}
	}
	return nil
}

// withholdWidening takes out of a session's settings what the project's
// shared settings file (.claude/settings.json, which comes with a clone)
// would grant beyond what the user decided — its permissions.allow rules,
// its additionalDirectories and a bypassPermissions defaultMode — when the
// folder's trust is only implied (print mode, the SDKs) and not recorded.
// Claude Code does the same: a cloned repository cannot approve its own
// commands. Its hooks and the rest still apply, as they do there. The local
// settings file is the user's own and keeps its grants. It returns one
// notice per kind withheld.
func withholdWidening(cfg Config, cwd string, m *config.Merged) []string {
	fromProject := func(src config.Source) bool { return src.Scope == config.ScopeProject }
	allow := slices.ContainsFunc(m.Permissions.Allow, func(it config.Item) bool { return fromProject(it.Source) })
	dirs := slices.ContainsFunc(m.Permissions.AdditionalDirectories, func(it config.Item) bool { return fromProject(it.Source) })
	modeSrc, _ := m.Origin("permissions.defaultMode")
	bypass := m.Permissions.DefaultMode == string(permission.ModeBypass) && fromProject(modeSrc)
	if !allow && !dirs && !bypass {
		return nil // nothing to withhold: the trust record is not even read
	}
	getenv := optionsEnv(cfg.Env)
	file, err := config.ClaudeJSONPath(getenv)
	if err != nil {
		return []string{fmt.Sprintf("the project's permission grants are withheld: %v", err)}
	}
	if by, err := config.TrustedBy(file, cwd, true); err == nil && by != "" {
		return nil
	}
	dir, _ := config.TrustKey(cwd)
	why := fmt.Sprintf("this workspace has not been trusted. Run tack here once and accept the trust dialog, or run `tack trust %s`.", dir)
	var out []string
	drop := func(items *[]config.Item, key string) {
		var kept []config.Item
		byFile := map[string]int{}
		var files []string
		for _, it := range *items {
			if !fromProject(it.Source) {
				kept = append(kept, it)
				continue
			}
			if byFile[it.Source.Path] == 0 {
				files = append(files, it.Source.Path)
			}
			byFile[it.Source.Path]++
		}
		*items = kept
		for _, f := range files {
			out = append(out, fmt.Sprintf("Ignoring %s from %s: %s", countEntries(byFile[f], key), relTo(cwd, f), why))
		}
	}
	drop(&m.Permissions.Allow, "permissions.allow")
	drop(&m.Permissions.AdditionalDirectories, "permissions.additionalDirectories")
	if bypass {
		m.Permissions.DefaultMode = ""
		out = append(out, fmt.Sprintf("Ignoring permissions.defaultMode %q from %s: %s", permission.ModeBypass, relTo(cwd, modeSrc.Path), why))
	}
	return out
}

// countEntries is "1 key entry" or "n key entries".
func countEntries(n int, key string) string {
	if n == 1 {
		return "1 " + key + " entry"
	}
	return fmt.Sprintf("%d %s entries", n, key)
}

// trustOf is the trust decision for the project root of a session with
// cfg.
func trustOf(cfg Config, root string, settings *config.Merged) (workspaceTrust, error) {
	if cfg.Untrusted {
		ws, err := inspectFolder(cfg, root, optionsEnv(cfg.Env), settings.Ignored)
		if err != nil {
			return workspaceTrust{}, err
		}
		return workspaceTrust{untrusted: true, brings: ws.Brings, dir: ws.Dir}, nil
	}
	if !settings.RequireWorkspaceTrust {
		return workspaceTrust{}, nil // trust is implied, as in Claude Code's print mode
	}
	ws, err := CheckWorkspace(cfg)
	if err != nil {
		return workspaceTrust{}, err
	}
	if !ws.Trusted {
		src, _ := settings.Origin("requireWorkspaceTrust")
		return workspaceTrust{}, &UntrustedWorkspaceError{Dir: ws.Dir, Setting: src.String()}
	}
	return workspaceTrust{}, nil
}

// notice is the one message that tells the user what is off and how to
// turn it on; "" when nothing is.
func (w workspaceTrust) notice() string {
	if !w.untrusted || len(w.brings) == 0 {
		return ""
	}
	return fmt.Sprintf("%s is not a trusted folder, so what it brings is off: %s. Its CLAUDE.md, skills, commands and agents still load as text. "+
		"To turn the rest on, trust the folder (answer yes when tack asks, or run `tack trust %s`) and start again.",
		w.dir, strings.Join(w.brings, "; "), w.dir)
}

// untrustedReason is why the folder's own code does not run.
const untrustedReason = "the folder is not trusted"

// mcpScopes are the MCP configuration scopes read: without trust, not the
// project's .mcp.json (nil: all).
func (w workspaceTrust) mcpScopes() []mcpconfig.Scope {
	if !w.untrusted {
		return nil
	}
	return []mcpconfig.Scope{mcpconfig.ScopeLocal, mcpconfig.ScopeUser}
}

// skills are the session's skills and commands: without trust, the
// project's lose their hooks and allowed-tools (their injections are
// refused by skillGuard).
func (w workspaceTrust) skills(all []*extension.Skill) []*extension.Skill {
	if !w.untrusted {
		return all
	}
	out := make([]*extension.Skill, len(all))
	for i, sk := range all {
		if sk.Source.Scope == extension.ScopeProject {
			c := *sk
			c.Hooks, c.AllowedTools = nil, nil
			sk = &c
		}
		out[i] = sk
	}
	return out
}

// skillGuard refuses the injections of the project's skills without trust
// (skill.Options.Untrusted); nil with trust.
func (w workspaceTrust) skillGuard() func(*extension.Skill) string {
	if !w.untrusted {
		return nil
	}
	return func(sk *extension.Skill) string {
		if sk.Source.Scope == extension.ScopeProject {
			return untrustedReason
		}
		return ""
	}
}

// agent is a subagent definition as the session may use it: without
// trust, a project agent keeps its prompt, tools and model but loses its
// hooks, its inline MCP servers and its permission mode.
func (w workspaceTrust) agent(a *extension.Agent, d AgentDef) AgentDef {
	if !w.untrusted || a.Source.Scope != extension.ScopeProject {
		return d
	}
	d.Hooks, d.MCPDefs, d.PermissionMode = nil, nil, ""
	d.MCPServers = slices.Clone(a.MCPServerNames)
	return d
}
