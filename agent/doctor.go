package agent

import (
	"context"
	"errors"

	"github.com/tackcode/tack/internal/llm"

	"github.com/tackcode/tack/internal/runtime"
)

// The facts `tack doctor` checks, each as a session started with the same
// options would meet it, without starting one.

// PingAPI resolves the credentials (running apiKeyHelper) and makes one
// cheap request to the Messages API's host with them (GET /v1/models),
// without retries; ctx bounds it. It returns the base URL it asked
// (ANTHROPIC_BASE_URL or the default) and, when the API answered with a
// refusal, its HTTP status (0 when it could not be reached, or for
// ErrNoCredentials).
func PingAPI(ctx context.Context, opts Options) (baseURL string, status int, err error) {
	cfg, err := opts.config()
	if err != nil {
		return "", 0, err
	}
	baseURL, _, err = runtime.PingAPI(ctx, cfg)
	var apiErr *llm.APIError
	if errors.As(err, &apiErr) {
		status = apiErr.Status
	}
	return baseURL, status, startError(err)
}

// SettingsFileCheck is one settings file a session would read: its scope
// ("user", "project", "local", "flag", "managed"), whether it exists, and
// its problems, each naming file:line:col.
type SettingsFileCheck struct {
	Scope  string
	Path   string
	Exists bool
	Errs   []error
}

// CheckSettingsFiles reads every settings file a session in opts.Cwd
// would read and reports each.
func CheckSettingsFiles(opts Options) ([]SettingsFileCheck, error) {
	files, err := runtime.CheckSettingsFiles(configOf(opts))
	return convert(files, func(f runtime.SettingsFile) SettingsFileCheck { return SettingsFileCheck(f) }), err
}

// SandboxCheck says whether the settings turn the sandbox on, which
// backend this machine allows ("bubblewrap", "landlock"), what it cannot
// enforce, and why none can run (Err).
type SandboxCheck struct {
	Enabled bool
	Backend string
	Gaps    string
	Err     error
}

// CheckSandbox probes the sandbox a session in opts.Cwd would have.
func CheckSandbox(opts Options) (SandboxCheck, error) {
	st, err := runtime.CheckSandbox(configOf(opts))
	return SandboxCheck(st), err
}

// CheckProvider describes the cloud platform (Bedrock, Vertex AI, Foundry)
// a session in opts.Cwd would use, in one line; ok is false when the
// Anthropic API serves it.
func CheckProvider(ctx context.Context, opts Options) (desc string, ok bool, err error) {
	cfg, err := opts.config()
	if err != nil {
		return "", false, err
	}
	info, ok, err := runtime.CheckProvider(ctx, cfg)
	if err != nil || !ok {
		return "", ok, err
	}
	return info.String(), true, nil
}

// ProviderCheck is one OpenAI-compatible provider of the settings as
// tack doctor sees it: where it is configured, its endpoint and models,
// and how GET {BaseURL}/models answered.
type ProviderCheck struct {
	Name string
	// Where names the setting ("providers.local (/home/me/.claude/settings.json)").
	Where   string
	BaseURL string
	// Credential is where the key comes from; "none" when none is sent.
	Credential string
	Models     []string
	// Status is the answer's HTTP status; 0 when there was none, and then
	// Err says why (the key could not be had, or the server not reached).
	Status int
	Err    error
}

// CheckProviders checks each provider of the settings in opts.Cwd: its
// key is resolved as a session resolves it and its server is asked for
// its models, through the session's proxies and certificates.
func CheckProviders(ctx context.Context, opts Options) ([]ProviderCheck, error) {
	cfg, err := opts.config()
	if err != nil {
		return nil, err
	}
	checks, err := runtime.CheckExtraProviders(ctx, cfg)
	return convert(checks, func(c runtime.ExtraProviderCheck) ProviderCheck { return ProviderCheck(c) }), err
}

// LanguageServerCheck is the start of one configured language server:
// Err nil when it started and answered its initialize request.
type LanguageServerCheck struct {
	Name, Command, Source string
	Err                   error
}

// CheckLanguageServers starts, then stops, each language server the
// settings and enabled plugins of opts.Cwd configure (lspServers).
func CheckLanguageServers(ctx context.Context, opts Options) ([]LanguageServerCheck, error) {
	cfg, err := opts.config()
	if err != nil {
		return nil, err
	}
	checks, err := runtime.CheckLanguageServers(ctx, cfg)
	return convert(checks, func(c runtime.LanguageServerCheck) LanguageServerCheck { return LanguageServerCheck(c) }), err
}
