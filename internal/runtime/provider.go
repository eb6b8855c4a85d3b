package runtime

import (
	"context"
	"errors"
	"strings"

	"github.com/tackcode/tack/internal/llm"
	"github.com/tackcode/tack/internal/llm/anthropic"
	"github.com/tackcode/tack/internal/version"
)

// ErrNoCredentials is returned when no API key or token is configured.
var ErrNoCredentials = errors.New("no API key: set ANTHROPIC_API_KEY (or ANTHROPIC_AUTH_TOKEN for a bearer token)")

// connectProvider finds the credentials and makes the model provider, the
// catalogue and the small model that tools, hooks and MCP sampling use.
func (s *Session) connectProvider(context.Context) error {
	apiCfg := anthropic.ConfigFromEnv(s.getenv)
	s.catalog = llm.Catalogue()
	if !apiCfg.HasCredentials() && !s.cfg.WithoutCredentials {
		return ErrNoCredentials
	}
	if !apiCfg.HasCredentials() {
		s.provider = noCredentials{}
		s.small = s.catalog.Resolve(s.catalog.Small, s.getenv).ID
		return nil
	}
	apiCfg.HTTPClient = s.cfg.HTTPClient
	apiCfg.UserAgent = "tack/" + version.Version
	apiCfg.Logger = s.debugLog("api")
	s.provider = logRetries(anthropic.New(apiCfg), apiCfg.Logger)
	s.apiKeySource = "ANTHROPIC_API_KEY"
	if apiCfg.APIKey == "" {
		s.apiKeySource = "ANTHROPIC_AUTH_TOKEN"
	}
	s.small = s.getenv("ANTHROPIC_SMALL_FAST_MODEL")
	if s.small == "" {
		s.small = s.catalog.Resolve(s.catalog.Small, s.getenv).ID
	}
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

// noCredentials is the provider of a session started without credentials
// (Config.WithoutCredentials): every request fails as the start would have.
type noCredentials struct{}

func (noCredentials) Stream(context.Context, *llm.Request, llm.Observer) (*llm.Response, error) {
	return nil, ErrNoCredentials
}
