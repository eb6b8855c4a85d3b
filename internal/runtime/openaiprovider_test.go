package runtime

import (
	"context"
	"testing"

	"github.com/tackcode/tack/internal/config"
	"github.com/tackcode/tack/internal/llm"
	"github.com/tackcode/tack/internal/llm/openai"
)

type namedProvider string

func (n namedProvider) Stream(context.Context, *llm.Request, llm.Observer) (*llm.Response, error) {
	return &llm.Response{ID: string(n)}, nil
}

func TestSmallModelPrecedence(t *testing.T) {
	extra := extraProviders{"local": openai.New(openai.Config{Name: "local"})}
	env := map[string]string{}
	s := &Session{getenv: func(k string) string { return env[k] }, settings: &config.Merged{}}
	if got := extra.smallModel(s, "local/qwen", true); got != "" {
		t.Errorf("with Anthropic credentials the small model is the catalogue's, got %q", got)
	}
	if got := extra.smallModel(s, "local/qwen", false); got != "local/qwen" {
		t.Errorf("without Anthropic credentials the small model is the main model on its provider, got %q", got)
	}
	if got := extra.smallModel(s, "claude-opus-4-7", false); got != "" {
		t.Errorf("a Claude main model does not become the small model, got %q", got)
	}
	s.settings.SmallModel = "local/tiny"
	if got := extra.smallModel(s, "local/qwen", false); got != "local/tiny" {
		t.Errorf("the smallModel setting: got %q", got)
	}
	env["ANTHROPIC_SMALL_FAST_MODEL"] = "local/env"
	if got := extra.smallModel(s, "local/qwen", false); got != "local/env" {
		t.Errorf("ANTHROPIC_SMALL_FAST_MODEL: got %q", got)
	}
}

func TestRouterDispatchesOnTheProviderName(t *testing.T) {
	r := providerRouter{anthropic: namedProvider("anthropic"), byName: extraProviders{"local": nil}}
	for model, want := range map[string]string{
		"claude-opus-4-7": "anthropic",
		"arn:aws:bedrock:us-east-1:1:application-inference-profile/abc": "anthropic",
		"other/qwen": "anthropic", // no such provider: the Anthropic API refuses it by name
	} {
		resp, err := r.Stream(context.Background(), &llm.Request{Model: model}, llm.Observer{})
		if err != nil || resp.ID != want {
			t.Errorf("%s went to %v (%v), want %s", model, resp, err, want)
		}
	}
}
