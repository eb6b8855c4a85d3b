package config

// SessionLoad are the options a session reads its settings with, in the
// working directory cwd: the managed file of TACK_MANAGED_SETTINGS or the
// platform's path, the user's of CLAUDE_CONFIG_DIR or ~/.claude (getenv
// reads those; never a settings file's env), flagSettings as --settings
// gives it, the sources --setting-sources lists (nil: all of them), and
// validate checking every permission rule and hook "if" filter. Everything
// that reads settings as a session would — the session, `tack config` —
// loads them with these options.
func SessionLoad(cwd, flagSettings string, sources []string, untrusted bool, getenv func(string) string, validate func(rule string) error) (LoadOptions, error) {
	scopes, err := SourceList(sources)
	if err != nil {
		return LoadOptions{}, err
	}
	managed := getenv("TACK_MANAGED_SETTINGS")
	if managed == "" {
		managed = DefaultManagedPath()
	}
	return LoadOptions{
		ConfigDir:    DefaultConfigDir(getenv),
		ProjectDir:   cwd,
		Cwd:          cwd,
		ManagedPath:  managed,
		FlagSettings: flagSettings,
		Sources:      scopes,
		ValidateRule: validate,
		ValidateIf:   validate,
		Untrusted:    untrusted,
	}, nil
}

// SourceList parses the values of --setting-sources (each a comma list, as
// ParseSources reads it) into the scopes to read; nil means all of them,
// an empty non-nil list none.
func SourceList(list []string) ([]Scope, error) {
	if list == nil {
		return nil, nil
	}
	sources := []Scope{}
	for _, s := range list {
		parsed, err := ParseSources(s)
		if err != nil {
			return nil, err
		}
		sources = append(sources, parsed...)
	}
	return sources, nil
}
