package runtime

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/tackcode/tack/internal/config"
	"github.com/tackcode/tack/internal/permission"
	"github.com/tackcode/tack/internal/sandbox"
)

// buildPolicy makes the thread's permission checker and the sandbox its
// commands run in. The rules are the session's (the settings' and the
// options'); the mode and working directories are the thread's: a subagent
// starts from the session's mode unless its definition sets one, and a
// worktree subagent works only in its worktree.
func (t *thread) buildPolicy(context.Context) error {
	s := t.s
	if t.parent == nil {
		rules, err := ruleSet(s.settings, s.cfg, s.cwd)
		if err != nil {
			return err
		}
		s.rules = rules
	}
	mode, dirs, err := t.permissions()
	if err != nil {
		return err
	}
	t.checker, err = permission.NewChecker(permission.Config{Rules: s.sessionRules(), Mode: mode, Cwd: t.cwd, Dirs: dirs, Home: homeDir(s.getenv)})
	if err != nil && t.parent != nil {
		return fmt.Errorf("agent %s: %w", t.spec.agentType, err)
	} else if err != nil {
		return err
	}
	if t.parent != nil {
		if s.sandbox != nil {
			// The agent's own directories (a worktree) are the writable ones.
			t.wrap = s.sandbox.For(t.checker.Dirs)
		}
		return nil
	}
	if s.sandbox, err = newSandbox(s.cfg, s.settings, t.checker, s.getenv); err != nil {
		return err
	}
	if s.sandbox != nil { // not a nil *Sandbox in an interface
		t.wrap = s.sandbox
	}
	return nil
}

// permissions are the thread's starting mode and extra working
// directories.
func (t *thread) permissions() (permission.Mode, []string, error) {
	s, def := t.s, t.spec.def
	if t.parent != nil {
		mode := t.parent.checker.Mode()
		if def.PermissionMode != "" {
			mode = permission.Mode(def.PermissionMode)
		}
		dirs := t.parent.checker.Dirs()
		if t.worktree == nil {
			dirs = append(dirs, s.cwd)
		}
		return mode, dirs, nil
	}
	mode := s.cfg.PermissionMode
	if mode == "" && def != nil {
		mode = def.PermissionMode
	}
	m, err := permissionMode(mode, s.settings)
	dirs := append(config.Texts(s.settings.Permissions.AdditionalDirectories), s.cfg.AddDirs...)
	return m, dirs, err
}

// ruleBase is the directory a settings file's "/path" rules are relative
// to: the project holding its .claude folder, or the file's own folder.
func ruleBase(src config.Source, cwd string) string {
	if src.Path == "" || src.Path == config.FlagPath {
		return cwd
	}
	dir := filepath.Dir(src.Path)
	if filepath.Base(dir) == ".claude" {
		return filepath.Dir(dir)
	}
	return dir
}

// ruleSet gathers the permission rules of the settings and the options.
func ruleSet(m *config.Merged, cfg Config, cwd string) (permission.RuleSet, error) {
	var rs permission.RuleSet
	add := func(dst *[]permission.Rule, items []config.Item) error {
		for _, it := range items {
			r, err := permission.ParseRule(it.Text)
			if err != nil {
				return fmt.Errorf("%s: %w", it.Source, err)
			}
			r.Origin, r.Base = it.Source.String(), ruleBase(it.Source, cwd)
			*dst = append(*dst, r)
		}
		return nil
	}
	addFlag := func(dst *[]permission.Rule, texts []string, origin string) error {
		for _, t := range texts {
			r, err := permission.ParseRule(t)
			if err != nil {
				return fmt.Errorf("%s %q: %w", origin, t, err)
			}
			r.Origin, r.Base = origin, cwd
			*dst = append(*dst, r)
		}
		return nil
	}
	if err := errors.Join(
		add(&rs.Allow, m.Permissions.Allow), add(&rs.Ask, m.Permissions.Ask), add(&rs.Deny, m.Permissions.Deny),
		addFlag(&rs.Allow, cfg.AllowedTools, "--allowedTools"),
		addFlag(&rs.Deny, cfg.DisallowedTools, "--disallowedTools"),
	); err != nil {
		return rs, err
	}
	return rs, nil
}

// removedTools are the tools a deny rule without specifier names: they are
// not offered at all.
func removedTools(rs permission.RuleSet) map[string]bool {
	out := map[string]bool{}
	for _, r := range rs.Deny {
		if r.Specifier == "" {
			out[r.Tool] = true
		}
	}
	return out
}

// permissionMode picks the starting mode: the one asked for, else the
// settings' defaultMode, else default; bypass may be disabled by the
// settings.
func permissionMode(mode string, m *config.Merged) (permission.Mode, error) {
	if mode == "" {
		mode = m.Permissions.DefaultMode
	}
	if mode == "" {
		mode = string(permission.ModeDefault)
	}
	return checkMode(permission.Mode(mode), m)
}

// checkMode refuses an unknown mode, and bypassPermissions when the
// settings disable it.
func checkMode(mode permission.Mode, m *config.Merged) (permission.Mode, error) {
	if !mode.Valid() {
		return "", fmt.Errorf("unknown permission mode %q (want default, acceptEdits, plan, auto, bypassPermissions or dontAsk)", mode)
	}
	if mode == permission.ModeBypass && m != nil && m.Permissions.DisableBypassPermissionsMode {
		return "", errors.New("bypassPermissions mode is disabled by the settings (permissions.disableBypassPermissionsMode)")
	}
	return mode, nil
}

// newSandbox makes the session's sandbox from the options or the settings;
// nil when it is off. Its notice (a weaker backend, unix sockets allowed)
// and the destinations its proxy refuses go to the session's notices.
func newSandbox(cfg Config, settings *config.Merged, checker *permission.Checker, getenv func(string) string) (*sandbox.Sandbox, error) {
	s := cfg.Sandbox
	if s == nil {
		parsed, err := sandbox.Parse(settings.Sandbox)
		if err != nil {
			return nil, err
		}
		s = &parsed
	}
	return sandbox.New(*s, sandbox.Options{Writable: checker.Dirs, Getenv: getenv,
		Notify: func(msg string) { notify(cfg, msg) }})
}

// modes lets tools (ExitPlanMode) read and change a thread's mode.
type modes struct{ c *permission.Checker }

func (m modes) Mode() string { return string(m.c.Mode()) }

func (m modes) SetMode(mode string) error {
	pm, err := permission.ParseMode(mode)
	if err != nil {
		return err
	}
	return m.c.SetMode(pm)
}

// homeDir is $HOME from the session's environment.
func homeDir(getenv func(string) string) string {
	if h := getenv("HOME"); h != "" {
		return h
	}
	h, _ := os.UserHomeDir()
	return h
}
