package runtime

import (
	"context"
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
	opts, err := config.SessionLoad(cwd, cfg.Settings, cfg.SettingSources, cfg.Untrusted, getenv, permission.CheckRule)
	if err != nil {
		return nil, err
	}
	return config.Load(opts)
}

// optionalTexts keeps the difference between an unset list (nil: no
// restriction) and an empty one.
func optionalTexts(items []config.Item) []string {
	if items == nil {
		return nil
	}
	return config.Texts(items)
}
