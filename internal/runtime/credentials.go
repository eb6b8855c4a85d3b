package runtime

import (
	"context"
	"fmt"
	"os"
	"strings"

	"github.com/tackcode/tack/internal/config"
	"github.com/tackcode/tack/internal/llm/keyhelper"
)

// The sources of credentials, in the words Claude Code reports them with
// (apiKeySource): an Agent SDK or ACP adapter reads these.
const (
	SourceAPIKey    = "ANTHROPIC_API_KEY"
	SourceAuthToken = "ANTHROPIC_AUTH_TOKEN"
	SourceHelper    = "apiKeyHelper"
	SourceStored    = "/login managed key"
)

// Credentials are what a session authenticates with, and where they were
// found. The one place that decides them is resolveCredentials; the
// session and `tack auth status` both use it.
type Credentials struct {
	// APIKey is sent as x-api-key; AuthToken, when APIKey is empty, as a
	// bearer token. Both are empty when the helper was not run.
	APIKey, AuthToken string
	// Source is one of the Source constants; "" when nothing is configured.
	Source string
	// Origin says where Source was found: "environment", a settings file
	// ("user /home/me/.claude/settings.json:3:10"), the credentials file.
	Origin string
	// Helper is the apiKeyHelper command when Source is SourceHelper.
	Helper string
	// Keys runs the helper again when its key grows stale or is refused;
	// set when the helper was run (APIKey is its first key).
	Keys *keyhelper.Helper
}

// resolveCredentials finds the credentials, first found wins: the API key,
// then the bearer token (each from the options' env, the settings' env or
// the process's, as getenv reads them), then the settings' apiKeyHelper,
// then the key `tack auth login` stored. run says whether to run the
// helper for its key; without it the helper is only named.
func resolveCredentials(ctx context.Context, cfg Config, settings *config.Merged, getenv func(string) string, run bool) (Credentials, error) {
	for _, name := range []string{SourceAPIKey, SourceAuthToken} {
		v := getenv(name)
		if v == "" {
			continue
		}
		c := Credentials{Source: name, Origin: envOrigin(name, cfg.Env, settings)}
		if name == SourceAPIKey {
			c.APIKey = v
		} else {
			c.AuthToken = v
		}
		return c, nil
	}
	if helper := strings.TrimSpace(settings.APIKeyHelper); helper != "" {
		c := Credentials{Source: SourceHelper, Helper: helper, Origin: "settings"}
		if src, ok := settings.Origin("apiKeyHelper"); ok {
			c.Origin = src.String()
		}
		if !run {
			return c, nil
		}
		ttl, err := keyhelper.TTL(getenv)
		if err != nil {
			return c, err
		}
		env := append(append(os.Environ(), settings.EnvList()...), envList(cfg.Env)...)
		keys := keyhelper.New(helper, env, ttl)
		key, err := keys.Key(ctx)
		if err != nil {
			return c, fmt.Errorf("apiKeyHelper (%s): %w", c.Origin, err)
		}
		c.APIKey, c.Keys = key, keys
		return c, nil
	}
	path := config.CredentialsPath(optionsEnv(cfg.Env))
	key, err := config.ReadStoredKey(path)
	if err != nil || key == "" {
		return Credentials{}, err
	}
	return Credentials{APIKey: key, Source: SourceStored, Origin: path}, nil
}

// envOrigin says where the variable name the session reads comes from, in
// the order its getenv looks (loadSettings).
func envOrigin(name string, env map[string]string, settings *config.Merged) string {
	if _, ok := env[name]; ok {
		return "the session's options"
	}
	if _, ok := settings.Env[name]; ok {
		if src, ok := settings.Origin("env." + name); ok {
			return "env of " + src.String()
		}
		return "settings env"
	}
	return "environment"
}

// ResolveCredentials are the credentials a session started with cfg would
// use, read from its settings as the session reads them; the helper is run
// only when run is set.
func ResolveCredentials(ctx context.Context, cfg Config, run bool) (Credentials, error) {
	pl, err := placeOf(cfg)
	if err != nil {
		return Credentials{}, err
	}
	settings, err := readSettings(cfg, pl, optionsEnv(cfg.Env))
	if err != nil {
		return Credentials{}, err
	}
	return resolveCredentials(ctx, cfg, settings, sessionGetenv(cfg, settings), run)
}

// sessionGetenv is a session's environment lookup: the options' Env, then
// the settings' env (ANTHROPIC_MODEL…), then the process's.
func sessionGetenv(cfg Config, settings *config.Merged) func(string) string {
	return func(k string) string {
		if v, ok := cfg.Env[k]; ok {
			return v
		}
		if v, ok := settings.Env[k]; ok {
			return v
		}
		return os.Getenv(k)
	}
}

// CredentialsPath is where `tack auth login` keeps its key, with env over
// the process environment locating the config dir.
func CredentialsPath(env map[string]string) string {
	return config.CredentialsPath(optionsEnv(env))
}

// ConfigDir is the config dir ($CLAUDE_CONFIG_DIR or ~/.claude), with env
// over the process environment.
func ConfigDir(env map[string]string) string {
	return config.DefaultConfigDir(optionsEnv(env))
}
