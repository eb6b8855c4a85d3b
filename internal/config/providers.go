package config

import (
	"fmt"
	"net/url"
	"strconv"

	"github.com/tackcode/tack/internal/jsontree"
	"github.com/tackcode/tack/internal/lazyregexp"
	"github.com/tackcode/tack/internal/spell"
)

// Provider is one entry of "providers": a model endpoint other than the
// Anthropic API, whose models are named "<name>/<model id>".
type Provider struct {
	Name string
	// Type is the wire format; "openai" (Chat Completions) is the only one.
	Type    string
	BaseURL string
	// The key, if any: written out, the name of a variable holding it, or
	// a command printing it. At most one is set.
	APIKey, APIKeyEnv, APIKeyHelper string
	Headers                         map[string]string
	// Models are keyed by the id the server knows.
	Models map[string]ProviderModel
	// Source is where the entry is written.
	Source Source
}

// ProviderModel is what tack must know of a provider's model: its limits,
// its price (USD per million tokens) and what it can take.
type ProviderModel struct {
	ContextWindow   int
	MaxOutputTokens int
	InputPrice      float64
	OutputPrice     float64
	// CacheReadPrice is the price of cached prompt tokens; the input
	// price when unset.
	CacheReadPrice *float64
	Tools          bool // true unless set to false
	Images         bool
	Reasoning      bool
	PromptCaching  bool
}

// DefaultMaxOutputTokens is a provider model's output limit when its
// entry gives none.
const DefaultMaxOutputTokens = 8192

var (
	providerKeys      = []string{"type", "baseURL", "apiKey", "apiKeyEnv", "apiKeyHelper", "headers", "models"}
	providerModelKeys = []string{"contextWindow", "maxOutputTokens", "inputPrice", "outputPrice", "cacheReadPrice",
		"tools", "images", "reasoning", "promptCaching"}
	providerName = lazyregexp.New(`^[A-Za-z0-9][A-Za-z0-9_.-]*$`)
)

// providers reads the "providers" object.
func (d *document) providers(n *jsontree.Node) *Error {
	const path = "providers"
	if err := d.object(n, path, nil); err != nil {
		return err
	}
	for _, m := range n.Members {
		key := join(path, m.Key)
		if !providerName().MatchString(m.Key) {
			return d.fail(m.KeyOff, key, "a provider's name is letters, digits, '.', '_' and '-' (it is the part before the '/' of its model names)", nil)
		}
		if m.Key == "anthropic" || m.Key == "claude" {
			return d.fail(m.KeyOff, key, fmt.Sprintf("%q is reserved for the Anthropic API; name the provider otherwise", m.Key), nil)
		}
		p, err := d.provider(m.Value, key)
		if err != nil {
			return err
		}
		p.Name, p.Source = m.Key, d.at(m.KeyOff)
		if d.settings.Providers == nil {
			d.settings.Providers = map[string]Provider{}
		}
		d.settings.Providers[m.Key] = p
		d.origins[key] = d.at(m.KeyOff)
	}
	return nil
}

func (d *document) provider(n *jsontree.Node, path string) (Provider, *Error) {
	var p Provider
	if err := d.object(n, path, providerKeys); err != nil {
		return p, err
	}
	var models *jsontree.Node
	keys := 0
	for _, m := range n.Members {
		k, v := join(path, m.Key), m.Value
		var err *Error
		switch m.Key {
		case "type":
			if p.Type, err = d.str(v, k); err == nil && p.Type != "openai" {
				err = d.fail(v.Off, k, fmt.Sprintf("unknown provider type %q (want \"openai\": an OpenAI-compatible Chat Completions endpoint)", p.Type), nil)
			}
		case "baseURL":
			if p.BaseURL, err = d.str(v, k); err == nil {
				if u, perr := url.Parse(p.BaseURL); perr != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
					err = d.fail(v.Off, k, fmt.Sprintf("%q is not an http:// or https:// URL (e.g. \"http://127.0.0.1:8080/v1\")", p.BaseURL), nil)
				}
			}
		case "apiKey":
			p.APIKey, err = d.str(v, k)
			keys++
		case "apiKeyEnv":
			p.APIKeyEnv, err = d.str(v, k)
			keys++
		case "apiKeyHelper":
			p.APIKeyHelper, err = d.str(v, k)
			keys++
		case "headers":
			p.Headers, err = d.stringMap(v, k)
		case "models":
			models = v
			err = d.object(v, k, nil)
		default:
			d.unknownKey(m, path, providerKeys)
		}
		if err != nil {
			return p, err
		}
		if keys > 1 {
			return p, d.fail(m.KeyOff, k, "give one of apiKey, apiKeyEnv and apiKeyHelper", nil)
		}
	}
	switch {
	case p.Type == "":
		return p, d.fail(n.Off, join(path, "type"), `is missing (want "openai")`, nil)
	case p.BaseURL == "":
		return p, d.fail(n.Off, join(path, "baseURL"), `is missing (the API root, e.g. "http://127.0.0.1:8080/v1")`, nil)
	case models == nil || len(models.Members) == 0:
		return p, d.fail(n.Off, join(path, "models"), `is missing: list the models, e.g. "models": {"qwen3-coder": {"contextWindow": 131072}}`, nil)
	}
	p.Models = make(map[string]ProviderModel, len(models.Members))
	for _, m := range models.Members {
		k := join(join(path, "models"), m.Key)
		if m.Key == "" {
			return p, d.fail(m.KeyOff, k, "a model id must not be empty", nil)
		}
		pm, err := d.providerModel(m.Value, k)
		if err != nil {
			return p, err
		}
		p.Models[m.Key] = pm
	}
	return p, nil
}

func (d *document) providerModel(n *jsontree.Node, path string) (ProviderModel, *Error) {
	pm := ProviderModel{Tools: true, MaxOutputTokens: DefaultMaxOutputTokens}
	if err := d.object(n, path, providerModelKeys); err != nil {
		return pm, err
	}
	for _, m := range n.Members {
		k, v := join(path, m.Key), m.Value
		var err *Error
		switch m.Key {
		case "contextWindow":
			pm.ContextWindow, err = d.nonNegativeInt(v, k)
		case "maxOutputTokens":
			pm.MaxOutputTokens, err = d.nonNegativeInt(v, k)
		case "inputPrice":
			pm.InputPrice, err = d.price(v, k)
		case "outputPrice":
			pm.OutputPrice, err = d.price(v, k)
		case "cacheReadPrice":
			var f float64
			if f, err = d.price(v, k); err == nil {
				pm.CacheReadPrice = &f
			}
		case "tools":
			pm.Tools, err = d.boolean(v, k)
		case "images":
			pm.Images, err = d.boolean(v, k)
		case "reasoning":
			pm.Reasoning, err = d.boolean(v, k)
		case "promptCaching":
			pm.PromptCaching, err = d.boolean(v, k)
		default:
			if s := spell.Suggest(m.Key, providerModelKeys); s != "" {
				return pm, d.fail(m.KeyOff, k, fmt.Sprintf("unknown key (did you mean %q?)", s), nil)
			}
			return pm, d.fail(m.KeyOff, k, "unknown key (want "+orList(providerModelKeys)+")", nil)
		}
		if err != nil {
			return pm, err
		}
	}
	if pm.ContextWindow <= 0 {
		return pm, d.fail(n.Off, join(path, "contextWindow"), "is missing or 0: give the model's context window in tokens", nil)
	}
	if pm.MaxOutputTokens <= 0 {
		return pm, d.fail(n.Off, join(path, "maxOutputTokens"), "must be > 0", nil)
	}
	return pm, nil
}

// price reads a price in USD per million tokens: a number ≥ 0.
func (d *document) price(n *jsontree.Node, path string) (float64, *Error) {
	if n.Kind != jsontree.Number {
		return 0, d.typeError(n, path, "a number (USD per million tokens)")
	}
	f, err := strconv.ParseFloat(n.Str, 64)
	if err != nil || f < 0 {
		return 0, d.fail(n.Off, path, fmt.Sprintf("expected a price ≥ 0 in USD per million tokens, got %s", n.Str), nil)
	}
	return f, nil
}
