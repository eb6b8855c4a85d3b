// Package openai is tack's provider for OpenAI-compatible Chat Completions
// endpoints (vLLM, llama.cpp's server, Ollama, LM Studio, OpenRouter,
// LiteLLM…). It translates tack's Anthropic-shaped requests into Chat
// Completions, streams the answer back as the Messages API's events (so the
// UI and stream-json see one format whatever the provider), and retries
// with the policy every provider shares (package retry).
//
// It speaks HTTP and SSE itself, with net/http: a request is one POST and
// the stream is "data:" lines, and a client library would add megabytes to
// the binary for that (see docs/providers.md for the measurements).
package openai

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/tackcode/tack/internal/llm"
	"github.com/tackcode/tack/internal/llm/retry"
)

// Capabilities are what a model can take besides text.
type Capabilities struct {
	Tools         bool // function tools and tool calls
	Images        bool // image_url content parts
	Reasoning     bool // streams reasoning_content, kept as thinking blocks
	PromptCaching bool // reports cached prompt tokens
}

// Config says how to reach one endpoint and what its models can do.
type Config struct {
	// Name is the provider's key in the settings ("local"): model names
	// are Name + "/" + the id the server knows.
	Name string
	// BaseURL is the API root, ending in /v1 for most servers: requests go
	// to BaseURL + "/chat/completions".
	BaseURL string
	// APIKey is sent as Authorization: Bearer; none when empty (local
	// servers rarely want one).
	APIKey string
	// KeySource says where the key came from, for error messages
	// ("providers.local.apiKeyEnv (LOCAL_KEY)").
	KeySource string
	// SettingsKey is where the provider is configured, for error messages
	// (`"providers"."local" in /home/me/.claude/settings.json`).
	SettingsKey string
	Headers     http.Header
	// Models are keyed by the id the server knows.
	Models map[string]Capabilities
	// MaxRetries is as in anthropic.Config: zero is the default, negative none.
	MaxRetries int
	HTTPClient *http.Client
	UserAgent  string
	Logger     *slog.Logger
}

// Provider implements llm.Provider on a Chat Completions endpoint.
type Provider struct {
	cfg        Config
	client     *http.Client
	maxRetries int
	// sleep waits between retries; replaced in tests that count delays.
	sleep func(context.Context, time.Duration) error
}

// New returns a provider for cfg. It reads nothing from the environment.
func New(cfg Config) *Provider {
	client := cfg.HTTPClient
	if client == nil {
		client = http.DefaultClient
	}
	return &Provider{cfg: cfg, client: client, maxRetries: retry.Retries(cfg.MaxRetries), sleep: retry.Sleep}
}

// Prefix is what the names of this provider's models start with.
func (p *Provider) Prefix() string { return p.cfg.Name + "/" }

// Stream sends req and returns the complete response, retrying transient
// failures (including a stream cut before its end) as whole requests.
func (p *Provider) Stream(ctx context.Context, req *llm.Request, obs llm.Observer) (*llm.Response, error) {
	model, ok := strings.CutPrefix(req.Model, p.Prefix())
	if !ok {
		return nil, fmt.Errorf("provider %q: model %q is not one of its models (%s…)", p.cfg.Name, req.Model, p.Prefix())
	}
	caps, ok := p.cfg.Models[model]
	if !ok {
		return nil, fmt.Errorf("provider %q has no model %q: add it to the \"models\" of %s", p.cfg.Name, model, p.settingsKey())
	}
	body, err := encode(req, model, caps, p.describe(model))
	if err != nil {
		return nil, err
	}
	for attempt := 0; ; attempt++ {
		resp, err := p.attempt(ctx, body, req.Model, caps, obs)
		if err == nil {
			return resp, nil
		}
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		status, retryable, after := classify(err)
		if !retryable || attempt >= p.maxRetries {
			return nil, p.explain(err, req.Model, attempt+1)
		}
		delay := retry.Backoff(attempt, after)
		if obs.Retry != nil {
			obs.Retry(llm.Retry{Attempt: attempt + 1, MaxRetries: p.maxRetries, Delay: delay, Status: status, Err: err,
				Cause: p.cause(err)})
		}
		if err := p.sleep(ctx, delay); err != nil {
			return nil, err
		}
	}
}

// describe names the model for a capability error.
func (p *Provider) describe(model string) modelRef {
	return modelRef{provider: p.cfg.Name, model: model, key: p.settingsKey()}
}

func (p *Provider) settingsKey() string {
	if p.cfg.SettingsKey != "" {
		return p.cfg.SettingsKey
	}
	return fmt.Sprintf("providers.%s", p.cfg.Name)
}

func (p *Provider) url() string {
	return strings.TrimRight(p.cfg.BaseURL, "/") + "/chat/completions"
}

// attempt makes one request and reads its stream to the end.
func (p *Provider) attempt(ctx context.Context, body []byte, model string, caps Capabilities, obs llm.Observer) (*llm.Response, error) {
	hreq, err := http.NewRequestWithContext(ctx, http.MethodPost, p.url(), bytes.NewReader(body))
	if err != nil {
		return nil, fmt.Errorf("provider %q: %w", p.cfg.Name, err)
	}
	for name, values := range p.cfg.Headers {
		for _, v := range values {
			hreq.Header.Add(name, v)
		}
	}
	hreq.Header.Set("Content-Type", "application/json")
	hreq.Header.Set("Accept", "text/event-stream")
	if p.cfg.APIKey != "" {
		hreq.Header.Set("Authorization", "Bearer "+p.cfg.APIKey)
	}
	if p.cfg.UserAgent != "" {
		hreq.Header.Set("User-Agent", p.cfg.UserAgent)
	}
	start := time.Now()
	if p.cfg.Logger != nil {
		p.cfg.Logger.Debug("API request", "provider", p.cfg.Name, "method", hreq.Method, "url", hreq.URL.Redacted())
	}
	resp, err := p.client.Do(hreq)
	if err != nil {
		if p.cfg.Logger != nil {
			p.cfg.Logger.Debug("API request failed", "provider", p.cfg.Name, "url", hreq.URL.Redacted(), "error", err)
		}
		return nil, err
	}
	defer resp.Body.Close()
	if p.cfg.Logger != nil {
		p.cfg.Logger.Debug("API response", "provider", p.cfg.Name, "url", hreq.URL.Redacted(), "status", resp.StatusCode,
			"after", time.Since(start).Round(time.Millisecond))
	}
	if resp.StatusCode >= 300 {
		return nil, httpError(resp)
	}
	acc := newAccumulator(model, caps)
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 0, 64<<10), 16<<20)
	for sc.Scan() {
		data, ok := bytes.CutPrefix(sc.Bytes(), []byte("data:"))
		if !ok {
			continue // comments (": keep-alive"), event names, blank separators
		}
		data = bytes.TrimSpace(data)
		if string(data) == "[DONE]" {
			acc.sawDone = true
			break
		}
		if len(data) == 0 {
			continue
		}
		if err := acc.add(data, obs.Event); err != nil {
			return nil, err
		}
	}
	if err := sc.Err(); err != nil {
		return nil, &streamError{err: err}
	}
	out, err := acc.finish(obs.Event)
	if err != nil {
		return nil, err
	}
	out.RequestID = resp.Header.Get("x-request-id")
	return out, nil
}

// streamError is a response that broke off or could not be read; it is
// always worth retrying.
type streamError struct{ err error }

func (e *streamError) Error() string { return "incomplete response stream: " + e.err.Error() }
func (e *streamError) Unwrap() error { return e.err }

// statusError is an HTTP error answer, with the server's retry advice.
type statusError struct {
	*llm.APIError
	after   time.Duration // negative: no advice
	noRetry bool          // x-should-retry: false
}

func (e *statusError) Unwrap() error { return e.APIError }

// httpError reads an error answer: the OpenAI form {"error":{"message",
// "type","code"}}, the {"error":"text"} some local servers send, or text.
func httpError(resp *http.Response) error {
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	e := &llm.APIError{Status: resp.StatusCode, RequestID: resp.Header.Get("x-request-id")}
	e.Type, e.Message = errorBody(body)
	if e.Message == "" {
		e.Message = http.StatusText(resp.StatusCode)
	}
	return &statusError{APIError: e, after: retry.After(resp.Header), noRetry: resp.Header.Get("x-should-retry") == "false"}
}

// errorBody reads the type and message of an error object.
func errorBody(body []byte) (typ, msg string) {
	var w struct {
		Error json.RawMessage `json:"error"`
	}
	if json.Unmarshal(body, &w) == nil && len(w.Error) > 0 {
		var obj struct {
			Message string          `json:"message"`
			Type    string          `json:"type"`
			Code    json.RawMessage `json:"code"`
		}
		if json.Unmarshal(w.Error, &obj) == nil {
			return obj.Type, obj.Message
		}
		var s string
		if json.Unmarshal(w.Error, &s) == nil {
			return "", s
		}
	}
	return "", strings.Join(strings.Fields(string(body)), " ")
}

// classify says whether err is worth retrying, with the HTTP status (0 when
// none) and the delay the server asked for (negative when it did not).
func classify(err error) (status int, retryable bool, after time.Duration) {
	var se *streamError
	if errors.As(err, &se) {
		return 0, true, -1
	}
	var st *statusError
	if errors.As(err, &st) {
		return st.Status, retry.Status(st.Status) && !st.noRetry, st.after
	}
	var apiErr *llm.APIError
	if errors.As(err, &apiErr) {
		// An error object inside a 200 stream: the server failed mid-way.
		return 0, true, -1
	}
	var capErr *CapabilityError
	if errors.As(err, &capErr) {
		return 0, false, -1
	}
	return 0, !retry.Permanent(err), -1
}
