package config

import "testing"

func TestProvidersParseAndMerge(t *testing.T) {
	e := newEnv(t)
	e.write(ScopeUser, `{"smallModel": "local/small", "providers": {
		"local": {"type": "openai", "baseURL": "http://127.0.0.1:8080/v1", "apiKeyEnv": "LOCAL_KEY", "headers": {"X-Team": "a"},
			"models": {"qwen3-coder": {"contextWindow": 131072, "maxOutputTokens": 16384, "inputPrice": 0.2, "outputPrice": 0.8,
				"cacheReadPrice": 0.05, "images": true, "reasoning": true, "promptCaching": true},
				"small": {"contextWindow": 8192, "tools": false}}},
		"router": {"type": "openai", "baseURL": "https://openrouter.example/api/v1", "apiKey": "sk-user", "models": {"a": {"contextWindow": 1000}}}}}`)
	// A later scope replaces a provider of the same name whole.
	e.write(ScopeProject, `{"providers": {"router": {"type": "openai", "baseURL": "https://other.example/v1", "models": {"b": {"contextWindow": 2000}}}}}`)
	m := e.load(nil)
	local, router := m.Providers["local"], m.Providers["router"]
	q, small := local.Models["qwen3-coder"], local.Models["small"]
	if local.BaseURL != "http://127.0.0.1:8080/v1" || local.APIKeyEnv != "LOCAL_KEY" || local.Headers["X-Team"] != "a" || local.Source.Line != 2 {
		t.Errorf("local %+v", local)
	}
	if q.ContextWindow != 131072 || q.MaxOutputTokens != 16384 || q.InputPrice != 0.2 || q.OutputPrice != 0.8 ||
		q.CacheReadPrice == nil || *q.CacheReadPrice != 0.05 || !q.Tools || !q.Images || !q.Reasoning || !q.PromptCaching {
		t.Errorf("qwen3-coder %+v", q)
	}
	if small.Tools || small.Images || small.MaxOutputTokens != DefaultMaxOutputTokens || small.CacheReadPrice != nil {
		t.Errorf("small %+v: want tools off and the defaults", small)
	}
	if router.BaseURL != "https://other.example/v1" || router.APIKey != "" || len(router.Models) != 1 || router.Models["b"].ContextWindow != 2000 {
		t.Errorf("router %+v: want the project's entry whole", router)
	}
	if m.SmallModel != "local/small" {
		t.Errorf("smallModel %q", m.SmallModel)
	}
}

func TestProviderErrorsNamePlaceAndKey(t *testing.T) {
	for _, c := range []struct {
		name, file, key, msg string
	}{
		{"unknown type", `{"providers": {"x": {"type": ‸"grpc", "baseURL": "http://h/v1", "models": {"m": {"contextWindow": 1}}}}}`,
			"providers.x.type", `unknown provider type "grpc"`},
		{"url without scheme", `{"providers": {"x": {"type": "openai", "baseURL": ‸"127.0.0.1:8080", "models": {"m": {"contextWindow": 1}}}}}`,
			"providers.x.baseURL", "is not an http:// or https:// URL"},
		{"no base URL", `{"providers": {"x": ‸{"type": "openai", "models": {"m": {"contextWindow": 1}}}}}`,
			"providers.x.baseURL", "is missing"},
		{"no models", `{"providers": {"x": ‸{"type": "openai", "baseURL": "http://h/v1"}}}`,
			"providers.x.models", "is missing"},
		{"two keys", `{"providers": {"x": {"type": "openai", "baseURL": "http://h/v1", "apiKey": "k", ‸"apiKeyEnv": "K", "models": {"m": {"contextWindow": 1}}}}}`,
			"providers.x.apiKeyEnv", "give one of apiKey, apiKeyEnv and apiKeyHelper"},
		{"no context window", `{"providers": {"x": {"type": "openai", "baseURL": "http://h/v1", "models": {"m": ‸{"inputPrice": 1}}}}}`,
			"providers.x.models.m.contextWindow", "is missing or 0"},
		{"misspelt capability", `{"providers": {"x": {"type": "openai", "baseURL": "http://h/v1", "models": {"m": {"contextWindow": 1, ‸"image": true}}}}}`,
			"providers.x.models.m.image", `did you mean "images"?`},
		{"negative price", `{"providers": {"x": {"type": "openai", "baseURL": "http://h/v1", "models": {"m": {"contextWindow": 1, "outputPrice": ‸-1}}}}}`,
			"providers.x.models.m.outputPrice", "expected a price ≥ 0"},
		{"string capability", `{"providers": {"x": {"type": "openai", "baseURL": "http://h/v1", "models": {"m": {"contextWindow": 1, "tools": ‸"yes"}}}}}`,
			"providers.x.models.m.tools", "expected true or false"},
		{"slash in name", `{"providers": {‸"a/b": {"type": "openai", "baseURL": "http://h/v1", "models": {"m": {"contextWindow": 1}}}}}`,
			"providers.a/b", "a provider's name is letters"},
		{"reserved name", `{"providers": {‸"anthropic": {"type": "openai", "baseURL": "http://h/v1", "models": {"m": {"contextWindow": 1}}}}}`,
			"providers.anthropic", "reserved for the Anthropic API"},
	} {
		t.Run(c.name, func(t *testing.T) {
			e := newEnv(t)
			text, line, col := markedPosition(t, c.file)
			path := e.write(ScopeUser, text)
			m, err := Load(e.opts())
			checkOneError(t, m, err, Source{Scope: ScopeUser, Path: path, Line: line, Col: col}, c.key, c.msg)
		})
	}
}
