package runtime

import (
	"cmp"
	"context"
	"errors"
	"net/http"
	"strings"

	"github.com/tackcode/tack/internal/config"
	"github.com/tackcode/tack/internal/llm"
	"github.com/tackcode/tack/internal/llm/anthropic"
	"github.com/tackcode/tack/internal/llm/transport"
	"github.com/tackcode/tack/internal/version"
)

// ErrNoCredentials is returned when no API key or token is configured.
var ErrNoCredentials = errors.New("no API key: set ANTHROPIC_API_KEY (or ANTHROPIC_AUTH_TOKEN for a bearer token), an apiKeyHelper in settings, or run tack auth login")

// connectProvider finds the credentials and makes the model provider, the
// catalogue and the small model that tools, hooks and MCP sampling use.
func (s *Session) connectProvider(ctx context.Context) error {
	s.catalog = llm.Catalogue()
	extra, err := s.connectExtraProviders(ctx)
	if err != nil {
		return err
	}
	if ok, err := s.connectPlatform(ctx, extra); ok || err != nil {
		return err
	}
	apiCfg, creds, err := apiConfig(ctx, s.cfg, s.settings, s.getenv)
	// A session whose model runs on a configured provider needs no
	// Anthropic credentials; a request to a Claude model then fails as
	// the start would have.
	if errors.Is(err, ErrNoCredentials) && (s.cfg.WithoutCredentials || extra.serves(s.askedMainModel())) {
		s.provider = extra.route(noCredentials{})
		s.small = firstNonEmpty(extra.smallModel(s, s.askedMainModel(), false), s.catalog.Resolve(s.catalog.Small, s.getenv).ID)
		return nil
	}
	if err != nil {
		return err
	}
	apiCfg.Logger = s.debugLog("api")
	if creds.Keys != nil {
		creds.Keys.Warn = func(err error) { s.notify(err.Error()) }
	}
	s.provider = extra.route(logRetries(anthropic.New(apiCfg), apiCfg.Logger))
	s.apiKeySource = creds.Source
	s.small = firstNonEmpty(extra.smallModel(s, s.askedMainModel(), true), s.catalog.Resolve(s.catalog.Small, s.getenv).ID)
	return nil
}

// cacheTTL is "1h" when ENABLE_PROMPT_CACHING_1H (or the shorter
// TACK_CACHE_TTL=1h) asks for it.
func cacheTTL(getenv func(string) string) string {
	if getenv("ENABLE_PROMPT_CACHING_1H") == "1" || strings.EqualFold(getenv("TACK_CACHE_TTL"), "1h") {
		return "1h"
	}
	return ""
}

// apiConfig is how a session started with cfg reaches the API: the
// credentials resolveCredentials finds (the helper run), with the
// endpoint, headers and retries of the environment.
func apiConfig(ctx context.Context, cfg Config, settings *config.Merged, getenv func(string) string) (anthropic.Config, Credentials, error) {
	creds, err := resolveCredentials(ctx, cfg, settings, getenv, true)
	if err != nil {
		return anthropic.Config{}, creds, err
	}
	if creds.Source == "" {
		return anthropic.Config{}, creds, ErrNoCredentials
	}
	apiCfg := anthropic.ConfigFromEnv(getenv)
	apiCfg.APIKey, apiCfg.AuthToken = creds.APIKey, creds.AuthToken
	if creds.Keys != nil {
		apiCfg.APIKey, apiCfg.Keys = "", creds.Keys
	}
	apiCfg.HTTPClient = modelClient(cfg, transport.FromEnv(getenv))
	apiCfg.UserAgent = "tack/" + version.Version
	return apiCfg, creds, nil
}

// modelClient is the client of the model requests: cfg.HTTPClient, else
// one with network's proxies and certificate authorities, its transport
// wrapped by cfg.WrapTransport when set.
func modelClient(cfg Config, network transport.Setup) *http.Client {
	c := cfg.HTTPClient
	if c == nil {
		c = network.Client()
	}
	if cfg.WrapTransport == nil {
		return c
	}
	wrapped := *c
	wrapped.Transport = cfg.WrapTransport(cmp.Or[http.RoundTripper](c.Transport, http.DefaultTransport))
	return &wrapped
}

// noCredentials is the provider of a session started without credentials
// (Config.WithoutCredentials): every request fails as the start would have.
type noCredentials struct{}

func (noCredentials) Stream(context.Context, *llm.Request, llm.Observer) (*llm.Response, error) {
	return nil, ErrNoCredentials
}
