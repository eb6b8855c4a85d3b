package runtime

import (
	"context"
	"errors"
	"os"

	"github.com/tackcode/tack/internal/config"
	"github.com/tackcode/tack/internal/llm/anthropic"
	"github.com/tackcode/tack/internal/sandbox"
)

// This file answers the questions of `tack doctor` as a session started
// with the same configuration would meet them, without starting one.

// DefaultBaseURL is where requests go when ANTHROPIC_BASE_URL is unset.
const DefaultBaseURL = "https://api.anthropic.com"

// PingAPI resolves the credentials (running apiKeyHelper) and makes one
// cheap request to the API with them, without retries; ctx bounds it. It
// returns the base URL asked and the credentials used.
func PingAPI(ctx context.Context, cfg Config) (baseURL string, creds Credentials, err error) {
	pl, err := placeOf(cfg)
	if err != nil {
		return "", creds, err
	}
	settings, err := readSettings(cfg, pl, optionsEnv(cfg.Env))
	if err != nil {
		return "", creds, err
	}
	getenv := sessionGetenv(cfg, settings)
	baseURL = firstNonEmpty(getenv("ANTHROPIC_BASE_URL"), DefaultBaseURL)
	apiCfg, creds, err := apiConfig(ctx, cfg, settings, getenv)
	if err != nil {
		return baseURL, creds, err
	}
	apiCfg.MaxRetries = -1
	return baseURL, creds, anthropic.New(apiCfg).Ping(ctx)
}

// SettingsFile is one settings file a session would read, and what
// reading it gave.
type SettingsFile struct {
	Scope  string
	Path   string
	Exists bool
	// Errs are its problems (*config.Error, with file:line:col); nil when
	// it is valid or absent.
	Errs []error
}

// CheckSettingsFiles reads the settings files a session started with cfg
// would read and says, for each, whether it is there and valid.
func CheckSettingsFiles(cfg Config) ([]SettingsFile, error) {
	pl, err := placeOf(cfg)
	if err != nil {
		return nil, err
	}
	opts, err := loadOptions(cfg, pl, optionsEnv(cfg.Env))
	if err != nil {
		return nil, err
	}
	_, loadErr := config.Load(opts)
	var out []SettingsFile
	for _, src := range opts.Files() {
		_, statErr := os.Stat(src.Path)
		out = append(out, SettingsFile{Scope: string(src.Scope), Path: src.Path, Exists: statErr == nil})
	}
	for _, e := range splitErrors(loadErr) {
		i := fileIndex(out, e)
		if i < 0 {
			out = append(out, SettingsFile{Exists: true})
			i = len(out) - 1
		}
		out[i].Errs = append(out[i].Errs, e)
	}
	return out, nil
}

// splitErrors undoes errors.Join.
func splitErrors(err error) []error {
	if err == nil {
		return nil
	}
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		var out []error
		for _, e := range j.Unwrap() {
			out = append(out, splitErrors(e)...)
		}
		return out
	}
	return []error{err}
}

// fileIndex is the index of the file err is about; -1 when none.
func fileIndex(files []SettingsFile, err error) int {
	var ce *config.Error
	if !errors.As(err, &ce) {
		return -1
	}
	for i, f := range files {
		if f.Path == ce.Source.Path {
			return i
		}
	}
	return -1
}

// SandboxStatus is whether the settings turn the sandbox on, and which
// backend this machine allows.
type SandboxStatus struct {
	Enabled bool
	Backend string
	// Gaps is what the backend cannot enforce; "" when nothing.
	Gaps string
	// Err says why no backend can run.
	Err error
}

// CheckSandbox reads the sandbox settings a session started with cfg
// would use and probes this machine's backends.
func CheckSandbox(cfg Config) (SandboxStatus, error) {
	pl, err := placeOf(cfg)
	if err != nil {
		return SandboxStatus{}, err
	}
	settings, err := readSettings(cfg, pl, optionsEnv(cfg.Env))
	if err != nil {
		return SandboxStatus{}, err
	}
	s := cfg.Sandbox
	if s == nil {
		parsed, err := sandbox.Parse(settings.Sandbox)
		if err != nil {
			return SandboxStatus{}, err
		}
		s = &parsed
	}
	st := SandboxStatus{Enabled: s.Enabled}
	st.Backend, st.Gaps, st.Err = sandbox.Available(sessionGetenv(cfg, settings))
	return st, nil
}
