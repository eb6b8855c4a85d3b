// Package anthropic is tack's Messages API provider, built on the official
// SDK (github.com/anthropics/anthropic-sdk-go/v2). The SDK does transport,
// authentication and SSE decoding; this package sends tack's own request bytes
// (so the cached prefix never moves), assembles the streamed response, and
// owns the retry policy, because a stream that breaks mid-way must be retried
// as a whole request — something the SDK's own retries cannot do.
package anthropic

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"time"

	sdk "github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/option"
	"github.com/anthropics/anthropic-sdk-go/v2/packages/ssestream"

	"github.com/tackcode/tack/internal/llm"
	"github.com/tackcode/tack/internal/llm/retry"
)

// Config says how to reach the API.
type Config struct {
	APIKey    string // sent as x-api-key
	AuthToken string // sent as Authorization: Bearer, when APIKey is empty
	BaseURL   string // default https://api.anthropic.com
	// Keys, when set, supplies the key of each request (apiKeyHelper) in
	// place of APIKey and AuthToken.
	Keys    KeySource
	Headers http.Header // extra headers on every request
	// MaxRetries bounds retries of one request (429, 5xx, 529, broken
	// streams, connection errors). Zero means DefaultMaxRetries; negative
	// means none.
	MaxRetries int
	// HTTPClient replaces the default transport (tests, proxies).
	HTTPClient *http.Client
	// UserAgent is appended to the SDK's user agent.
	UserAgent string
	// Logger, when set, gets a debug line for each HTTP request (never a
	// header: they carry the key).
	Logger *slog.Logger
	// Platform, when set, sends the requests to a cloud platform that
	// serves Claude (Bedrock, Vertex AI, Foundry) instead of the Anthropic
	// API: APIKey and AuthToken are then not sent.
	Platform *Platform
}

// Platform adapts the provider to a cloud platform. The platform's own
// package (internal/llm/bedrock, vertex, foundry) builds it.
type Platform struct {
	// Name is the platform in words, for errors ("Amazon Bedrock").
	Name string
	// BaseURL is where requests go; BaseVar the variable that sets it.
	BaseURL, BaseVar string
	// Credential is the credential sent, in words that name where it comes
	// from ("AWS credentials (profile dev)"); "" when none is sent.
	Credential string
	// Region is where the model runs, and RegionVar the variable to change
	// it; both "" where the platform has no regions.
	Region, RegionVar string
	// Renew says how the user renews an expired credential ("aws sso
	// login, or the awsAuthRefresh setting"); "" when it does not expire.
	Renew string
	// Options are SDK options that rewrite each request for the platform
	// (URL, body, signature). They run after every other option, closest
	// to the wire, so that nothing changes a request once it is signed.
	Options []option.RequestOption
}

// KeySource supplies a key per request: Key the current one, Refresh a
// new one after the API refused the key given (a 401).
type KeySource interface {
	Key(ctx context.Context) (string, error)
	Refresh(ctx context.Context, refused string) (string, error)
}

// APIVersion is the anthropic-version header tack sends.
const APIVersion = "2023-06-01"

// DefaultMaxRetries is how often a failing request is retried by default.
const DefaultMaxRetries = retry.DefaultMaxRetries

// ConfigFromEnv reads ANTHROPIC_API_KEY, ANTHROPIC_AUTH_TOKEN,
// ANTHROPIC_BASE_URL, ANTHROPIC_CUSTOM_HEADERS ("Name: value" per line) and
// CLAUDE_CODE_MAX_RETRIES.
func ConfigFromEnv(getenv func(string) string) Config {
	c := Config{
		APIKey:    getenv("ANTHROPIC_API_KEY"),
		AuthToken: getenv("ANTHROPIC_AUTH_TOKEN"),
		BaseURL:   getenv("ANTHROPIC_BASE_URL"),
		Headers:   ParseHeaders(getenv("ANTHROPIC_CUSTOM_HEADERS")),
	}
	if n, err := strconv.Atoi(getenv("CLAUDE_CODE_MAX_RETRIES")); err == nil {
		c.MaxRetries = n
		if n == 0 {
			c.MaxRetries = -1
		}
	}
	return c
}

// ParseHeaders reads "Name: value" lines; lines without a colon are ignored.
func ParseHeaders(s string) http.Header {
	h := http.Header{}
	for _, line := range strings.Split(s, "\n") {
		name, value, ok := strings.Cut(line, ":")
		if !ok || strings.TrimSpace(name) == "" {
			continue
		}
		h.Add(strings.TrimSpace(name), strings.TrimSpace(value))
	}
	return h
}

// HasCredentials reports whether the config can authenticate.
func (c Config) HasCredentials() bool { return c.APIKey != "" || c.AuthToken != "" || c.Keys != nil }

// Provider implements llm.Provider on the Messages API.
type Provider struct {
	client     sdk.Client
	keys       KeySource
	maxRetries int
	// platform are the platform's options, given to each request last
	// (after sized), so that they see and may rewrite its final body.
	platform []option.RequestOption
	endpoint endpoint // where requests go, to explain their failures
	// sleep waits between retries; replaced in tests that count delays.
	sleep func(context.Context, time.Duration) error
}

// New returns a provider for cfg. It reads nothing from the environment.
func New(cfg Config) *Provider {
	opts := []option.RequestOption{
		option.WithoutEnvironmentDefaults(),
		option.WithMaxRetries(0), // retries are ours: see Stream
		// The request bodies tack writes are in the 2023-06-01 form that
		// Claude Code also sends; the SDK would otherwise send its own newer
		// version, whose semantics tack's bodies were not written for.
		option.WithHeader("anthropic-version", APIVersion),
	}
	if cfg.BaseURL != "" {
		opts = append(opts, option.WithBaseURL(cfg.BaseURL))
	}
	switch {
	case cfg.Platform != nil:
		// The platform's options authenticate.
	case cfg.Keys != nil: // per request: see keyHeaders
	case cfg.APIKey != "":
		// Sent as x-api-key, as the API documents and Claude Code does
		// (the SDK's WithAPIKey sends a bearer token, which gateways that
		// expect x-api-key reject).
		opts = append(opts, option.WithHeader("x-api-key", cfg.APIKey))
	case cfg.AuthToken != "":
		opts = append(opts, option.WithAuthToken(cfg.AuthToken))
	}
	if cfg.HTTPClient != nil {
		opts = append(opts, option.WithHTTPClient(cfg.HTTPClient))
	}
	for name, values := range cfg.Headers {
		for _, v := range values {
			opts = append(opts, option.WithHeaderAdd(name, v))
		}
	}
	if cfg.UserAgent != "" {
		opts = append(opts, option.WithHeader("User-Agent", cfg.UserAgent))
	}
	if cfg.Logger != nil {
		opts = append(opts, option.WithMiddleware(logRequests(cfg.Logger)))
	}
	retries := retry.Retries(cfg.MaxRetries)
	ep := endpoint{baseURL: cfg.BaseURL, platform: cfg.Platform}
	switch {
	case cfg.Platform != nil:
		ep.baseURL = cfg.Platform.BaseURL
	case cfg.Keys != nil:
		ep.auth = "helper"
	case cfg.APIKey != "":
		ep.auth = "key"
	case cfg.AuthToken != "":
		ep.auth = "token"
	}
	pr := &Provider{client: sdk.NewClient(opts...), keys: cfg.Keys, maxRetries: retries, endpoint: ep, sleep: sleepCtx}
	if cfg.Platform != nil {
		pr.platform = cfg.Platform.Options
	}
	return pr
}

// Stream sends req and returns the complete response, retrying transient
// failures (including a stream cut before message_stop) as whole requests.
func (p *Provider) Stream(ctx context.Context, req *llm.Request, obs llm.Observer) (*llm.Response, error) {
	body, err := req.Encode()
	if err != nil {
		return nil, fmt.Errorf("encode request: %w", err)
	}
	var opts []option.RequestOption
	if len(req.Betas) > 0 {
		opts = append(opts, option.WithHeader("anthropic-beta", strings.Join(req.Betas, ",")))
	}
	refreshed := false // the key was replaced after a 401 once already
	for attempt := 0; ; attempt++ {
		key, keyOpts, err := p.keyHeaders(ctx)
		if err != nil {
			return nil, err
		}
		resp, err := p.attempt(ctx, body, append(keyOpts, opts...), obs)
		if err == nil {
			return resp, nil
		}
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		status, retryable, after := classify(err)
		if status == http.StatusUnauthorized && p.keys != nil && !refreshed {
			// The helper's key may have expired: ask for a new one and try
			// again at once, as Claude Code does.
			refreshed = true
			if _, err := p.keys.Refresh(ctx, key); err != nil {
				return nil, &keyError{err: err}
			}
			attempt--
			continue
		}
		if !retryable || attempt >= p.maxRetries {
			return nil, p.endpoint.explain(err, req.Model, attempt+1)
		}
		delay := backoff(attempt, after)
		if obs.Retry != nil {
			obs.Retry(llm.Retry{Attempt: attempt + 1, MaxRetries: p.maxRetries, Delay: delay, Status: status, Err: err,
				Cause: p.endpoint.retryCause(err, req.Model)})
		}
		if err := p.sleep(ctx, delay); err != nil {
			return nil, err
		}
	}
}

// keyHeaders are the headers of the key source's current key, sent as
// x-api-key and as a bearer token as Claude Code sends a helper's key;
// none without a key source.
func (p *Provider) keyHeaders(ctx context.Context) (string, []option.RequestOption, error) {
	if p.keys == nil {
		return "", nil, nil
	}
	key, err := p.keys.Key(ctx)
	if err != nil {
		return "", nil, &keyError{err: err}
	}
	return key, []option.RequestOption{option.WithHeader("x-api-key", key), option.WithHeader("Authorization", "Bearer "+key)}, nil
}

// keyError is a key source that gave no key: the helper failed.
type keyError struct{ err error }

func (e *keyError) Error() string { return "apiKeyHelper: " + e.err.Error() }
func (e *keyError) Unwrap() error { return e.err }

// attempt makes one request and reads its stream to the end. The body goes
// out as tack encoded it: the SDK's typed path would decode it into its
// params, encode it again and patch in "stream", three passes over a body
// that grows with the session. It goes segment by segment, from where the
// encode cache holds the history, never joined into one buffer. Events are
// taken as raw JSON for the same reason; the accumulator parses each once.
func (p *Provider) attempt(ctx context.Context, body *llm.EncodedBody, opts []option.RequestOption, obs llm.Observer) (*llm.Response, error) {
	var httpResp *http.Response
	opts = append(opts, option.WithRequestBody("application/json", body.Reader()), option.WithMiddleware(sized(body)))
	opts = append(opts, p.platform...)
	err := p.client.Post(ctx, "v1/messages", nil, &httpResp, opts...)
	stream := ssestream.NewStream[json.RawMessage](ssestream.NewDecoder(httpResp), err)
	defer stream.Close()

	var acc accumulator
	for stream.Next() {
		se, err := acc.add(stream.Current())
		if err != nil {
			return nil, &streamError{err: err}
		}
		if obs.Event != nil {
			obs.Event(se)
		}
		if acc.done {
			break
		}
	}
	if err := stream.Err(); err != nil {
		return nil, convertError(err)
	}
	if !acc.done {
		return nil, &streamError{err: errors.New("stream ended before message_stop")}
	}
	if httpResp != nil {
		acc.resp.RequestID = httpResp.Header.Get("request-id")
	}
	return acc.finish()
}

// sized gives the HTTP request its body's length, so it goes with a
// Content-Length rather than chunked as a reader of unknown size would, and
// a way to read it again from the start, so the transport can resend it on
// a fresh connection when a kept-alive one turns out closed.
func sized(body *llm.EncodedBody) option.Middleware {
	return func(req *http.Request, next option.MiddlewareNext) (*http.Response, error) {
		req.ContentLength = int64(body.Len())
		req.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(body.Reader()), nil }
		return next(req)
	}
}

// streamError is a response that broke off or could not be read; it is
// always worth retrying.
type streamError struct{ err error }

func (e *streamError) Error() string { return "incomplete response stream: " + e.err.Error() }
func (e *streamError) Unwrap() error { return e.err }

// retryAfterError carries the server's retry-after advice with an API error.
type retryAfterError struct {
	*llm.APIError
	after       time.Duration // negative: the server gave no advice
	shouldRetry *bool
}

func (e *retryAfterError) Unwrap() error { return e.APIError }

// convertError turns an SDK error into an *llm.APIError where it is one.
func convertError(err error) error {
	var apiErr *sdk.Error
	if errors.As(err, &apiErr) {
		status := apiErr.StatusCode
		if status < 300 {
			status = 0 // an error event inside a successful stream
		}
		e := &llm.APIError{
			Status:    status,
			Type:      string(apiErr.Type()),
			Message:   apiErr.Message,
			RequestID: apiErr.RequestID,
		}
		if e.Message == "" {
			e.Message = strings.TrimSpace(apiErr.RawJSON())
		}
		if e.Message == "" {
			e.Message = http.StatusText(apiErr.StatusCode)
		}
		r := &retryAfterError{APIError: e, after: -1}
		if apiErr.Response != nil {
			r.after = retryAfter(apiErr.Response.Header)
			switch apiErr.Response.Header.Get("x-should-retry") {
			case "true":
				t := true
				r.shouldRetry = &t
			case "false":
				f := false
				r.shouldRetry = &f
			}
		}
		return r
	}
	return err
}

// classify says whether err is worth retrying, with the HTTP status (0 when
// none) and the delay the server asked for (negative when it did not).
func classify(err error) (status int, retryable bool, after time.Duration) {
	var se *streamError
	if errors.As(err, &se) {
		return 0, true, -1
	}
	var ra *retryAfterError
	if errors.As(err, &ra) {
		if ra.shouldRetry != nil {
			return ra.Status, *ra.shouldRetry, ra.after
		}
		switch {
		case ra.Status == 0: // an error event inside a 200 stream
			return 0, ra.Type == "overloaded_error" || ra.Type == "api_error" || ra.Type == "rate_limit_error", ra.after
		case retry.Status(ra.Status):
			return ra.Status, true, ra.after
		}
		return ra.Status, false, -1
	}
	// No HTTP response at all: a connection error, worth another attempt
	// unless it is one that cannot mend.
	return 0, !retry.Permanent(err), -1
}

// The retry policy is shared with the other providers (package retry).
func retryAfter(h http.Header) time.Duration                 { return retry.After(h) }
func backoff(attempt int, after time.Duration) time.Duration { return retry.Backoff(attempt, after) }
func sleepCtx(ctx context.Context, d time.Duration) error    { return retry.Sleep(ctx, d) }

const (
	maxDelay      = retry.MaxDelay
	maxRetryAfter = retry.MaxRetryAfter
)
