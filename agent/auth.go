package agent

import (
	"context"
	"path/filepath"

	"github.com/tackcode/tack/internal/config"
	"github.com/tackcode/tack/internal/runtime"
)

// The authentication methods of AuthStatus.Method, in the words of Claude
// Code's `auth status` (authMethod).
const (
	AuthMethodAPIKey = "api_key"
	AuthMethodToken  = "oauth_token"
	AuthMethodHelper = "api_key_helper"
	AuthMethodNone   = "none"
)

// The sources of AuthStatus.Source, in the words of Claude Code's
// apiKeySource (AuthSourceToken has none there).
const (
	AuthSourceAPIKey = runtime.SourceAPIKey
	AuthSourceToken  = runtime.SourceAuthToken
	AuthSourceHelper = runtime.SourceHelper
	AuthSourceStored = runtime.SourceStored
)

// AuthStatus says which credentials a session started with the same
// options would use, and where they come from; the secret only masked.
type AuthStatus struct {
	// LoggedIn is true when some credentials are configured.
	LoggedIn bool
	// Method is one of the AuthMethod constants.
	Method string
	// Source is one of the AuthSource constants ("/login managed key" is
	// the key `tack auth login` stored); "" when none.
	Source string
	// Origin is where Source was found: "environment", a settings file
	// with its position, the credentials file.
	Origin string
	// Masked is the key or token with all but its ends hidden; "" for a
	// helper, which is not run to tell.
	Masked string
	// Helper is the apiKeyHelper command, when Source is "apiKeyHelper".
	Helper string
	// ConfigDir holds the settings and ProjectsDir the sessions of every
	// project; CredentialsFile is where `tack auth login` stores its key.
	ConfigDir, ProjectsDir, CredentialsFile string
}

// GetAuthStatus resolves the credentials as a session in opts.Cwd would,
// without running apiKeyHelper.
func GetAuthStatus(ctx context.Context, opts Options) (AuthStatus, error) {
	cfg, err := opts.config()
	if err != nil {
		return AuthStatus{}, err
	}
	creds, err := runtime.ResolveCredentials(ctx, cfg, false)
	dir := runtime.ConfigDir(opts.Env)
	st := AuthStatus{Method: AuthMethodNone, ConfigDir: dir, ProjectsDir: filepath.Join(dir, "projects"),
		CredentialsFile: runtime.CredentialsPath(opts.Env)}
	if err != nil {
		return st, err
	}
	st.Source, st.Origin, st.Helper = creds.Source, creds.Origin, creds.Helper
	st.LoggedIn = creds.Source != ""
	switch creds.Source {
	case AuthSourceAPIKey, AuthSourceStored:
		st.Method, st.Masked = AuthMethodAPIKey, maskSecret(creds.APIKey)
	case AuthSourceToken:
		st.Method, st.Masked = AuthMethodToken, maskSecret(creds.AuthToken)
	case AuthSourceHelper:
		st.Method = AuthMethodHelper
	}
	return st, nil
}

// maskSecret keeps a key's first six and last four characters, enough to
// tell keys apart, and hides the rest; a short secret is hidden whole.
func maskSecret(s string) string {
	if len(s) < 16 {
		return "****"
	}
	return s[:6] + "…" + s[len(s)-4:]
}

// StoreAPIKey keeps key in tack's credentials file (private to the user,
// written in one step), where sessions find it when no key, token or
// helper is configured; it returns the file.
func StoreAPIKey(opts Options, key string) (string, error) {
	path := runtime.CredentialsPath(opts.Env)
	return path, config.StoreKey(path, key)
}

// RemoveStoredAPIKey deletes what StoreAPIKey kept, and says whether there
// was anything.
func RemoveStoredAPIKey(opts Options) (path string, removed bool, err error) {
	path = runtime.CredentialsPath(opts.Env)
	removed, err = config.RemoveStoredKey(path)
	return path, removed, err
}
