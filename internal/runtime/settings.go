package runtime

import (
	"context"
	"io"
	"os"

	"github.com/tackcode/tack/internal/config"
	"github.com/tackcode/tack/internal/permission"
)

// loadSettings reads the settings files, reports their warnings, and makes
// the session's environment lookup: the options' Env, then the settings'
// env (ANTHROPIC_MODEL…), then the process's.
func (s *Session) loadSettings(context.Context) error {
	settings, err := readSettings(s.cfg, s.cwd, optionsEnv(s.cfg.Env))
	if err != nil {
		return err
	}
	for _, w := range settings.Warnings {
		s.notify("settings: " + w.Error())
	}
	s.settings = settings
	s.getenv = func(k string) string {
		if v, ok := s.cfg.Env[k]; ok {
			return v
		}
		if v, ok := settings.Env[k]; ok {
			return v
		}
		return os.Getenv(k)
	}
	return nil
}

// readSettings reads the settings files for cwd, checking every permission
// rule and hook filter with the permission grammar.
func readSettings(cfg Config, cwd string, getenv func(string) string) (*config.Merged, error) {
	sources, err := settingScopes(cfg.SettingSources)
	if err != nil {
		return nil, err
	}
	managed := getenv("TACK_MANAGED_SETTINGS")
	if managed == "" {
		managed = config.DefaultManagedPath()
	}
	validate := func(rule string) error {
		_, err := permission.ParseRule(rule)
		return err
	}
	return config.Load(config.LoadOptions{
		ConfigDir:    config.DefaultConfigDir(getenv),
		ProjectDir:   cwd,
		Cwd:          cwd,
		ManagedPath:  managed,
		FlagSettings: cfg.Settings,
		Sources:      sources,
		ValidateRule: validate,
		ValidateIf:   validate,
		Untrusted:    cfg.Untrusted,
	})
}

// settingScopes are the settings sources a launch limits reading to; nil
// means all of them.
func settingScopes(list []string) ([]config.Scope, error) {
	if list == nil {
		return nil, nil
	}
	sources := []config.Scope{}
	for _, s := range list {
		parsed, err := config.ParseSources(s)
		if err != nil {
			return nil, err
		}
		sources = append(sources, parsed...)
	}
	return sources, nil
}

// optionalTexts keeps the difference between an unset list (nil: no
// restriction) and an empty one.
func optionalTexts(items []config.Item) []string {
	if items == nil {
		return nil
	}
	return config.Texts(items)
}

// ExplainSettings writes the settings a session with cfg would run under:
// the files read, each value with the file it came from, and warnings. A
// malformed settings file is an error naming its file, line and column.
func ExplainSettings(w io.Writer, cfg Config) error {
	cwd, err := workingDir(cfg.Cwd)
	if err != nil {
		return err
	}
	m, err := readSettings(cfg, cwd, optionsEnv(cfg.Env))
	if err != nil {
		return err
	}
	return m.Render(w)
}
