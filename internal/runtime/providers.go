package runtime

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"

	"github.com/tackcode/tack/internal/config"
	"github.com/tackcode/tack/internal/llm"
	"github.com/tackcode/tack/internal/llm/anthropic"
	"github.com/tackcode/tack/internal/llm/bedrock"
	"github.com/tackcode/tack/internal/llm/foundry"
	"github.com/tackcode/tack/internal/llm/keyhelper"
	"github.com/tackcode/tack/internal/llm/transport"
	"github.com/tackcode/tack/internal/llm/vertex"
	"github.com/tackcode/tack/internal/version"
)

// This file chooses the cloud platform that serves the model, when a
// CLAUDE_CODE_USE_* variable asks for one, with the variables Claude Code
// reads. Each platform is the Messages API provider with its platform
// options (internal/llm/bedrock, vertex, foundry), so retries, the
// fallback model, usage and cost work the same on all of them.

// ProviderInfo says which provider serves the session and how: for
// doctor, /status and the init message.
type ProviderInfo struct {
	// ID is Claude Code's apiProvider value: firstParty, bedrock, vertex, foundry.
	ID string
	// Name is the provider in words ("Amazon Bedrock").
	Name string
	// BaseURL is where requests go.
	BaseURL string
	// Region and RegionFrom: where the model runs and what said so; "" for
	// providers without regions.
	Region, RegionFrom string
	// Project is the Vertex AI project, with ProjectFrom.
	Project, ProjectFrom string
	// Credential names the credential's source ("AWS profile dev",
	// "ANTHROPIC_API_KEY"); "none" when authentication is skipped.
	Credential string
	// ModelID turns a catalogue model id into the provider's; nil is the
	// identity.
	ModelID func(string) string
}

// platformVars are the CLAUDE_CODE_USE_* variables, in the order Claude
// Code checks them.
var platformVars = []struct{ id, env string }{
	{llm.PlatformBedrock, "CLAUDE_CODE_USE_BEDROCK"},
	{llm.PlatformVertex, "CLAUDE_CODE_USE_VERTEX"},
	{"foundry", "CLAUDE_CODE_USE_FOUNDRY"},
}

// selectedPlatform is the platform a CLAUDE_CODE_USE_* variable selects;
// "" for the Anthropic API.
func selectedPlatform(getenv func(string) string) string {
	for _, p := range platformVars {
		if truthy(getenv(p.env)) {
			return p.id
		}
	}
	return ""
}

// connectPlatform makes the session's provider when a cloud platform is
// selected; ok is false when none is.
func (s *Session) connectPlatform(ctx context.Context, extra extraProviders) (ok bool, err error) {
	apiCfg, info, ok, err := platformConfig(ctx, s.cfg, s.settings, s.getenv, s.catalog)
	if !ok || err != nil {
		return ok, err
	}
	apiCfg.Logger = s.debugLog("api")
	s.provider = extra.route(logRetries(withModelIDs(anthropic.New(apiCfg), info.ModelID), apiCfg.Logger))
	s.providerInfo = info
	s.apiKeySource = "none"
	s.small = firstNonEmpty(extra.smallModel(s, s.askedMainModel(), true), s.catalog.Resolve(s.catalog.Small, s.getenv).ID)
	return true, nil
}

// platformConfig is the provider configuration of the selected platform;
// ok is false when none is selected.
func platformConfig(ctx context.Context, cfg Config, settings *config.Merged, getenv func(string) string, catalog *llm.Catalog) (anthropic.Config, ProviderInfo, bool, error) {
	id := selectedPlatform(getenv)
	if id == "" {
		return anthropic.Config{}, ProviderInfo{}, false, nil
	}
	apiCfg := anthropic.ConfigFromEnv(getenv)
	apiCfg.APIKey, apiCfg.AuthToken, apiCfg.BaseURL = "", "", ""
	// The model requests go through the same proxies and certificate
	// authorities as the Anthropic API's, and so do the platforms' own
	// credential requests (see bedrockPlatform for AWS's).
	network := transport.FromEnv(getenv)
	apiCfg.HTTPClient = modelClient(cfg, network)
	apiCfg.UserAgent = "tack/" + version.Version
	var info ProviderInfo
	var err error
	switch id {
	case llm.PlatformBedrock:
		apiCfg.Platform, info, err = bedrockPlatform(ctx, cfg, settings, getenv, catalog, network)
	case llm.PlatformVertex:
		cfg.HTTPClient = apiCfg.HTTPClient
		apiCfg.Platform, info, err = vertexPlatform(ctx, cfg, getenv, catalog)
	default:
		cfg.HTTPClient = apiCfg.HTTPClient
		apiCfg.Platform, info, err = foundryPlatform(ctx, cfg, getenv)
	}
	if err != nil {
		return apiCfg, info, true, err
	}
	info.Name, info.BaseURL = apiCfg.Platform.Name, apiCfg.Platform.BaseURL
	return apiCfg, info, true, nil
}

func bedrockPlatform(ctx context.Context, cfg Config, settings *config.Merged, getenv func(string) string, catalog *llm.Catalog, network transport.Setup) (*anthropic.Platform, ProviderInfo, error) {
	bc := bedrock.Config{
		Region:          firstNonEmpty(getenv("AWS_REGION"), getenv("AWS_DEFAULT_REGION")),
		BaseURL:         getenv("ANTHROPIC_BEDROCK_BASE_URL"),
		Profile:         getenv("AWS_PROFILE"),
		BearerToken:     getenv("AWS_BEARER_TOKEN_BEDROCK"),
		SkipAuth:        truthy(getenv("CLAUDE_CODE_SKIP_BEDROCK_AUTH")),
		AccessKeyID:     getenv("AWS_ACCESS_KEY_ID"),
		SecretAccessKey: getenv("AWS_SECRET_ACCESS_KEY"),
		SessionToken:    getenv("AWS_SESSION_TOKEN"),
		HTTPClient:      cfg.HTTPClient,
		Network:         network,
	}
	env := append(settings.EnvList(), envList(cfg.Env)...)
	if cmd := settingString(settings, "awsCredentialExport"); cmd != "" {
		bc.Export = func(ctx context.Context) (aws.Credentials, error) { return exportAWSCredentials(ctx, cmd, env) }
	}
	if cmd := settingString(settings, "awsAuthRefresh"); cmd != "" {
		bc.Refresh = func(ctx context.Context) error {
			_, err := runSettingCommand(ctx, "awsAuthRefresh", cmd, env)
			return err
		}
	}
	p, src, err := bedrock.Platform(ctx, bc)
	info := ProviderInfo{ID: llm.PlatformBedrock, Region: src.Region, RegionFrom: src.RegionFrom, Credential: firstNonEmpty(src.Credential, "none")}
	if err != nil {
		return nil, info, err
	}
	geo := firstNonEmpty(getenv("ANTHROPIC_BEDROCK_REGION_PREFIX"), llm.BedrockGeo(src.Region))
	info.ModelID = func(id string) string {
		if m, ok := firstParty(catalog, id); ok {
			return llm.BedrockRegionID(m.PlatformID(llm.PlatformBedrock), geo)
		}
		return id
	}
	return p, info, nil
}

// vertexRegionVars are the variables that give one model family its own
// Vertex AI region, by model id prefix, as Claude Code names them.
var vertexRegionVars = [][2]string{
	{"claude-3-5-haiku", "VERTEX_REGION_CLAUDE_3_5_HAIKU"},
	{"claude-3-5-sonnet", "VERTEX_REGION_CLAUDE_3_5_SONNET"},
	{"claude-3-7-sonnet", "VERTEX_REGION_CLAUDE_3_7_SONNET"},
	{"claude-haiku-4-5", "VERTEX_REGION_CLAUDE_HAIKU_4_5"},
	{"claude-haiku-5-5", "VERTEX_REGION_CLAUDE_HAIKU_5_5"},
	{"claude-sonnet-4-5", "VERTEX_REGION_CLAUDE_4_5_SONNET"},
	{"claude-sonnet-4-6", "VERTEX_REGION_CLAUDE_4_6_SONNET"},
	{"claude-sonnet-5-5", "VERTEX_REGION_CLAUDE_5_5_SONNET"},
	{"claude-sonnet-4", "VERTEX_REGION_CLAUDE_4_0_SONNET"},
	{"claude-sonnet-5", "VERTEX_REGION_CLAUDE_5_SONNET"},
	{"claude-opus-4-1", "VERTEX_REGION_CLAUDE_4_1_OPUS"},
	{"claude-opus-4-5", "VERTEX_REGION_CLAUDE_4_5_OPUS"},
	{"claude-opus-4-6", "VERTEX_REGION_CLAUDE_4_6_OPUS"},
	{"claude-opus-4-7", "VERTEX_REGION_CLAUDE_4_7_OPUS"},
	{"claude-opus-4-8", "VERTEX_REGION_CLAUDE_4_8_OPUS"},
	{"claude-opus-5-5", "VERTEX_REGION_CLAUDE_5_5_OPUS"},
	{"claude-opus-4", "VERTEX_REGION_CLAUDE_4_0_OPUS"},
	{"claude-opus-5", "VERTEX_REGION_CLAUDE_5_OPUS"},
	{"claude-fable-5-1", "VERTEX_REGION_CLAUDE_FABLE_5_1"},
	{"claude-fable-5-2", "VERTEX_REGION_CLAUDE_FABLE_5_2"},
	{"claude-fable-5", "VERTEX_REGION_CLAUDE_FABLE_5"},
}

func vertexPlatform(ctx context.Context, cfg Config, getenv func(string) string, catalog *llm.Catalog) (*anthropic.Platform, ProviderInfo, error) {
	vc := vertex.Config{
		ProjectID:       getenv("ANTHROPIC_VERTEX_PROJECT_ID"),
		Region:          strings.TrimSpace(getenv("CLOUD_ML_REGION")),
		BaseURL:         getenv("ANTHROPIC_VERTEX_BASE_URL"),
		CredentialsFile: getenv("GOOGLE_APPLICATION_CREDENTIALS"),
		SkipAuth:        truthy(getenv("CLAUDE_CODE_SKIP_VERTEX_AUTH")),
		HTTPClient:      cfg.HTTPClient,
		ModelRegion: func(model string) (string, string) {
			// The first (most specific) prefix of the table that matches.
			for _, rv := range vertexRegionVars {
				if strings.HasPrefix(model, rv[0]) {
					return strings.TrimSpace(getenv(rv[1])), rv[1]
				}
			}
			return "", ""
		},
	}
	p, src, err := vertex.Platform(ctx, vc)
	info := ProviderInfo{ID: llm.PlatformVertex, Region: src.Region, RegionFrom: src.RegionFrom,
		Project: src.Project, ProjectFrom: src.ProjectFrom, Credential: firstNonEmpty(src.Credential, "none")}
	if err != nil {
		return nil, info, err
	}
	info.ModelID = func(id string) string {
		if m, ok := firstParty(catalog, id); ok {
			return m.PlatformID(llm.PlatformVertex)
		}
		return id
	}
	return p, info, nil
}

func foundryPlatform(ctx context.Context, cfg Config, getenv func(string) string) (*anthropic.Platform, ProviderInfo, error) {
	fc := foundry.Config{
		Resource:     getenv("ANTHROPIC_FOUNDRY_RESOURCE"),
		BaseURL:      getenv("ANTHROPIC_FOUNDRY_BASE_URL"),
		APIKey:       getenv("ANTHROPIC_FOUNDRY_API_KEY"),
		TenantID:     getenv("AZURE_TENANT_ID"),
		ClientID:     getenv("AZURE_CLIENT_ID"),
		ClientSecret: getenv("AZURE_CLIENT_SECRET"),
		Authority:    getenv("AZURE_AUTHORITY_HOST"),
		SkipAuth:     truthy(getenv("CLAUDE_CODE_SKIP_FOUNDRY_AUTH")),
		HTTPClient:   cfg.HTTPClient,
	}
	p, src, err := foundry.Platform(ctx, fc)
	return p, ProviderInfo{ID: "foundry", Credential: firstNonEmpty(src.Credential, "none")}, err
}

// firstParty is the catalogue model of id when id is a first-party id
// (an alias resolved, or a dated form) rather than a platform's own.
func firstParty(catalog *llm.Catalog, id string) (llm.Model, bool) {
	if llm.FirstPartyID(id) != id {
		return llm.Model{}, false
	}
	m := catalog.Resolve(id, func(string) string { return "" })
	return m, m.Known
}

// withModelIDs sends each request with the provider's id of its model.
func withModelIDs(p llm.Provider, modelID func(string) string) llm.Provider {
	if modelID == nil {
		return p
	}
	return modelIDs{p, modelID}
}

type modelIDs struct {
	llm.Provider
	id func(string) string
}

func (m modelIDs) Stream(ctx context.Context, req *llm.Request, obs llm.Observer) (*llm.Response, error) {
	r := *req
	r.Model = m.id(req.Model)
	return m.Provider.Stream(ctx, &r, obs)
}

// settingString is a string setting tack keeps unparsed (awsAuthRefresh…).
func settingString(settings *config.Merged, key string) string {
	raw, ok := settings.Unknown[key]
	if !ok {
		return ""
	}
	var s string
	if json.Unmarshal(raw, &s) != nil {
		return ""
	}
	return strings.TrimSpace(s)
}

// exportAWSCredentials runs awsCredentialExport, which prints JSON in the
// form of `aws sts get-session-token`: {"Credentials": {"AccessKeyId": …}}.
func exportAWSCredentials(ctx context.Context, cmd string, env []string) (aws.Credentials, error) {
	out, err := runSettingCommand(ctx, "awsCredentialExport", cmd, env)
	if err != nil {
		return aws.Credentials{}, err
	}
	var v struct {
		Credentials struct {
			AccessKeyID     string `json:"AccessKeyId"`
			SecretAccessKey string
			SessionToken    string
			Expiration      string
		}
	}
	if err := json.Unmarshal(out, &v); err != nil {
		return aws.Credentials{}, fmt.Errorf("awsCredentialExport %q: output is not JSON credentials: %w", cmd, err)
	}
	c := v.Credentials
	if c.AccessKeyID == "" || c.SecretAccessKey == "" {
		return aws.Credentials{}, fmt.Errorf("awsCredentialExport %q: output lacks Credentials.AccessKeyId or Credentials.SecretAccessKey", cmd)
	}
	creds := aws.Credentials{AccessKeyID: c.AccessKeyID, SecretAccessKey: c.SecretAccessKey, SessionToken: c.SessionToken, Source: "awsCredentialExport"}
	if t, err := time.Parse(time.RFC3339, c.Expiration); err == nil {
		creds.CanExpire, creds.Expires = true, t
	}
	return creds, nil
}

// runSettingCommand runs a command a setting names, in a shell, and returns
// what it printed.
func runSettingCommand(ctx context.Context, setting, command string, env []string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, keyhelper.Timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "/bin/sh", "-c", command)
	cmd.Env = append(os.Environ(), env...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		if msg := strings.TrimSpace(stderr.String()); msg != "" {
			return nil, fmt.Errorf("%s %q failed: %w: %s", setting, command, err, msg)
		}
		return nil, fmt.Errorf("%s %q failed: %w", setting, command, err)
	}
	return out, nil
}

// CheckProvider is the cloud platform a session started with cfg would
// use, set up as the session sets it up (credentials resolved, no request
// sent); ok is false when the Anthropic API serves it.
func CheckProvider(ctx context.Context, cfg Config) (info ProviderInfo, ok bool, err error) {
	pl, err := placeOf(cfg)
	if err != nil {
		return info, false, err
	}
	settings, err := readSettings(cfg, pl, optionsEnv(cfg.Env))
	if err != nil {
		return info, false, err
	}
	_, info, ok, err = platformConfig(ctx, cfg, settings, sessionGetenv(cfg, settings), llm.Catalogue())
	return info, ok, err
}

// String is the provider in one line: where, in which region, with what.
func (p ProviderInfo) String() string {
	var b strings.Builder
	b.WriteString(p.Name + " at " + p.BaseURL)
	if p.Region != "" {
		fmt.Fprintf(&b, ", region %s (%s)", p.Region, p.RegionFrom)
	}
	if p.Project != "" {
		fmt.Fprintf(&b, ", project %s (%s)", p.Project, p.ProjectFrom)
	}
	fmt.Fprintf(&b, ", credentials: %s", p.Credential)
	if p.ModelID != nil {
		cat := llm.Catalogue()
		fmt.Fprintf(&b, ", default model %s", p.ModelID(cat.Resolve("", nil).ID))
	}
	return b.String()
}
