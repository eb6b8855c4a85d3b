package runtime

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"sort"
	"strings"

	"github.com/tackcode/tack/internal/config"
	"github.com/tackcode/tack/internal/llm"
	"github.com/tackcode/tack/internal/llm/anthropic"
	"github.com/tackcode/tack/internal/llm/keyhelper"
	"github.com/tackcode/tack/internal/llm/openai"
	"github.com/tackcode/tack/internal/llm/transport"
	"github.com/tackcode/tack/internal/version"
)

// The "providers" of the settings add model endpoints besides the Anthropic
// API; their models are named "<provider>/<model id>" (--model
// local/qwen3-coder). A session holds one llm.Provider: a router that
// sends each request to the provider its model's name starts with, and
// every other request to the Anthropic API. Since the choice is made per
// request, the main thread, a subagent (frontmatter model:) and the small
// model can each run on another provider, and the engine, retries, usage
// and cost go through one seam whatever the provider.

// extraProviders are the session's configured providers, by name.
type extraProviders map[string]*openai.Provider

// connectExtraProviders makes a provider for each entry of the settings'
// "providers" and adds their models to the catalogue.
func (s *Session) connectExtraProviders(ctx context.Context) (extraProviders, error) {
	if len(s.settings.Providers) == 0 {
		return nil, nil
	}
	names := make([]string, 0, len(s.settings.Providers))
	for name := range s.settings.Providers {
		names = append(names, name)
	}
	sort.Strings(names)
	out := extraProviders{}
	s.extraInfo = map[string]ProviderInfo{}
	var models []llm.Model
	// The same proxies and certificate authorities as the Anthropic API's.
	client := modelClient(s.cfg, transport.FromEnv(s.getenv))
	for _, name := range names {
		pc := s.settings.Providers[name]
		where := fmt.Sprintf("providers.%s (%s)", name, pc.Source)
		key, keySource, err := s.providerKey(ctx, pc, where)
		if err != nil {
			return nil, err
		}
		caps := map[string]openai.Capabilities{}
		for id, m := range pc.Models {
			caps[id] = openai.Capabilities{Tools: m.Tools, Images: m.Images, Reasoning: m.Reasoning, PromptCaching: m.PromptCaching}
			cacheRead := m.InputPrice
			if m.CacheReadPrice != nil {
				cacheRead = *m.CacheReadPrice
			}
			models = append(models, llm.Model{ID: name + "/" + id, DisplayName: name + "/" + id,
				ContextWindow: m.ContextWindow, MaxOutput: m.MaxOutputTokens,
				Price: llm.Price{Input: m.InputPrice, Output: m.OutputPrice, CacheRead: cacheRead}})
		}
		headers := map[string][]string{}
		for k, v := range pc.Headers {
			headers[k] = []string{v}
		}
		s.extraInfo[name] = ProviderInfo{ID: "openai", Name: "providers." + name, BaseURL: pc.BaseURL, Credential: firstNonEmpty(keySource, "none")}
		out[name] = openai.New(openai.Config{
			Name: name, BaseURL: pc.BaseURL, APIKey: key, KeySource: keySource, SettingsKey: where,
			Headers: headers, Models: caps, HTTPClient: client, UserAgent: "tack/" + version.Version,
			Logger: s.debugLog("api"), MaxRetries: anthropic.ConfigFromEnv(s.getenv).MaxRetries,
		})
	}
	sort.Slice(models, func(i, j int) bool { return models[i].ID < models[j].ID })
	catalog, err := s.catalog.With(models)
	if err != nil {
		return nil, fmt.Errorf("providers: %w", err)
	}
	s.catalog = catalog
	return out, nil
}

// providerKey is a provider's key and where it came from: written in the
// settings, read from the variable apiKeyEnv names, or printed by
// apiKeyHelper (run once, at the start).
func (s *Session) providerKey(ctx context.Context, pc config.Provider, where string) (key, source string, err error) {
	switch {
	case pc.APIKey != "":
		return pc.APIKey, where + " apiKey", nil
	case pc.APIKeyEnv != "":
		key = s.getenv(pc.APIKeyEnv)
		if key == "" {
			return "", "", fmt.Errorf("%s: apiKeyEnv names %s, which is not set: set it to the provider's key", where, pc.APIKeyEnv)
		}
		return key, fmt.Sprintf("%s apiKeyEnv (%s)", where, pc.APIKeyEnv), nil
	case pc.APIKeyHelper != "":
		env := append(append(os.Environ(), s.settings.EnvList()...), envList(s.cfg.Env)...)
		key, err = keyhelper.New(pc.APIKeyHelper, env, 0).Key(ctx)
		if err != nil {
			return "", "", fmt.Errorf("%s: apiKeyHelper: %w", where, err)
		}
		return key, where + " apiKeyHelper", nil
	}
	return "", "", nil
}

// serves reports whether model names one of the providers' models.
func (e extraProviders) serves(model string) bool {
	name, _, ok := strings.Cut(model, "/")
	return ok && e[name] != nil
}

// route is the session's provider: requests for the providers' models go
// to them, the rest to anthropic.
func (e extraProviders) route(anthropic llm.Provider) llm.Provider {
	if len(e) == 0 {
		return anthropic
	}
	return providerRouter{anthropic: anthropic, byName: e}
}

type providerRouter struct {
	anthropic llm.Provider
	byName    extraProviders
}

func (r providerRouter) Stream(ctx context.Context, req *llm.Request, obs llm.Observer) (*llm.Response, error) {
	if name, _, ok := strings.Cut(req.Model, "/"); ok {
		if p := r.byName[name]; p != nil {
			return p.Stream(ctx, req, obs)
		}
	}
	return r.anthropic.Stream(ctx, req, obs)
}

// smallModel is the model of side requests: ANTHROPIC_SMALL_FAST_MODEL,
// else the settings' smallModel, else main when it runs on a provider and
// the Anthropic API has no credentials, else "" (the catalogue's).
func (e extraProviders) smallModel(s *Session, main string, anthropicReachable bool) string {
	if v := firstNonEmpty(s.getenv("ANTHROPIC_SMALL_FAST_MODEL"), s.settings.SmallModel); v != "" {
		return v
	}
	if !anthropicReachable && e.serves(main) {
		return main
	}
	return ""
}

// askedMainModel is the main model this launch names, before any resume.
func (s *Session) askedMainModel() string {
	return firstNonEmpty(s.cfg.Model, s.getenv("ANTHROPIC_MODEL"), s.settings.Model)
}

// ExtraProviderCheck is one provider of the settings as tack doctor sees
// it: its configuration, and how its server answered GET {BaseURL}/models.
type ExtraProviderCheck struct {
	Name, Where, BaseURL string
	// Credential is where the key comes from; "none" when none is sent.
	Credential string
	Models     []string
	// Status is the answer's HTTP status; 0 when there was none (Err says
	// why: the key could not be had, or the server could not be reached).
	Status int
	Err    error
}

// settingsOnly is a session of cfg's folder that has read its settings and
// nothing more, for the checks of tack doctor.
func settingsOnly(cfg Config) (*Session, error) {
	pl, err := placeOf(cfg)
	if err != nil {
		return nil, err
	}
	settings, err := readSettings(cfg, pl, optionsEnv(cfg.Env))
	if err != nil {
		return nil, err
	}
	return &Session{cfg: cfg, settings: settings, cwd: pl.cwd, root: pl.root, getenv: sessionGetenv(cfg, settings)}, nil
}

// CheckExtraProviders checks each provider of the settings: its key is
// resolved as a session resolves it, and its server is asked for its
// models, with the session's proxies and certificates.
func CheckExtraProviders(ctx context.Context, cfg Config) ([]ExtraProviderCheck, error) {
	s, err := settingsOnly(cfg)
	if err != nil {
		return nil, err
	}
	settings := s.settings
	client := cmp.Or(cfg.HTTPClient, transport.FromEnv(s.getenv).Client())
	names := make([]string, 0, len(settings.Providers))
	for name := range settings.Providers {
		names = append(names, name)
	}
	sort.Strings(names)
	var out []ExtraProviderCheck
	for _, name := range names {
		pc := settings.Providers[name]
		c := ExtraProviderCheck{Name: name, Where: fmt.Sprintf("providers.%s (%s)", name, pc.Source), BaseURL: pc.BaseURL}
		for id := range pc.Models {
			c.Models = append(c.Models, name+"/"+id)
		}
		sort.Strings(c.Models)
		key, src, err := s.providerKey(ctx, pc, c.Where)
		c.Credential = firstNonEmpty(strings.TrimPrefix(src, c.Where+" "), "none")
		if err != nil {
			c.Err = err
			out = append(out, c)
			continue
		}
		c.Status, c.Err = pingModels(ctx, client, pc, key)
		out = append(out, c)
	}
	return out, nil
}

// pingModels asks a Chat Completions server for its models.
func pingModels(ctx context.Context, client *http.Client, pc config.Provider, key string) (int, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, strings.TrimSuffix(pc.BaseURL, "/")+"/models", nil)
	if err != nil {
		return 0, err
	}
	for k, v := range pc.Headers {
		req.Header.Set(k, v)
	}
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	req.Header.Set("User-Agent", "tack/"+version.Version)
	resp, err := client.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20))
	return resp.StatusCode, nil
}
