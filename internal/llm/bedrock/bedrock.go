// Package bedrock sends tack's Messages API requests to Claude on Amazon
// Bedrock. The SDK's bedrock package does the work on the wire — the URL
// (/model/{id}/invoke-with-response-stream), the body (no model or stream,
// anthropic_version bedrock-2023-05-31, betas in the body), SigV4 signing
// and the AWS event-stream response, which it turns back into SSE — so the
// anthropic provider's stream reading, retries and errors apply unchanged.
// This package finds the region and the credentials as Claude Code does.
package bedrock

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	sdkbedrock "github.com/anthropics/anthropic-sdk-go/v2/bedrock"
	"github.com/anthropics/anthropic-sdk-go/v2/option"
	"github.com/aws/aws-sdk-go-v2/aws"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/credentials"

	"github.com/tackcode/tack/internal/llm/anthropic"
	"github.com/tackcode/tack/internal/llm/transport"
)

// APIVersion is the anthropic_version Bedrock takes in the body.
const APIVersion = "bedrock-2023-05-31"

// DefaultRegion is the region when none is configured, as in Claude Code.
const DefaultRegion = "us-east-1"

// Config is what the environment and settings say about Bedrock.
type Config struct {
	// Region is AWS_REGION or AWS_DEFAULT_REGION; "" takes the profile's
	// region, else DefaultRegion.
	Region string
	// BaseURL (ANTHROPIC_BEDROCK_BASE_URL) replaces
	// https://bedrock-runtime.{region}.amazonaws.com, for gateways.
	BaseURL string
	// Profile is AWS_PROFILE.
	Profile string
	// BearerToken is AWS_BEARER_TOKEN_BEDROCK, a Bedrock API key.
	BearerToken string
	// SkipAuth (CLAUDE_CODE_SKIP_BEDROCK_AUTH) sends requests unsigned,
	// for a gateway that signs them itself.
	SkipAuth bool
	// AccessKeyID, SecretAccessKey and SessionToken are the AWS_* variables
	// as the session sees them (the settings' env included), which the AWS
	// SDK's own lookup of the process environment would miss.
	AccessKeyID, SecretAccessKey, SessionToken string
	// Export, when set, prints credentials (the awsCredentialExport
	// setting); it replaces the AWS credential chain.
	Export func(context.Context) (aws.Credentials, error)
	// Refresh, when set, is run once when the credential chain finds
	// nothing (the awsAuthRefresh setting, e.g. `aws sso login`).
	Refresh func(context.Context) error
	// HTTPClient carries the AWS SDK's own requests (to STS, SSO, the
	// instance metadata); nil is the SDK's client, with Network applied.
	HTTPClient *http.Client
	// Network is the session's proxy and certificate setup.
	Network transport.Setup
}

// Source says where the credentials came from, for doctor, /status and
// the init message.
type Source struct {
	Region     string // the region requests are signed for
	RegionFrom string // AWS_REGION, AWS_DEFAULT_REGION, "profile x" or "default"
	Credential string // e.g. "AWS_BEARER_TOKEN_BEDROCK", "AWS profile dev"
}

// Platform returns the anthropic platform for cfg. It resolves the
// credentials once, so a missing or expired one is an error now, naming
// what to set, rather than a failure of every request.
func Platform(ctx context.Context, cfg Config) (*anthropic.Platform, Source, error) {
	var src Source
	awsCfg, err := loadConfig(ctx, cfg)
	if err != nil {
		return nil, src, fmt.Errorf("read the AWS configuration for Amazon Bedrock: %w (check AWS_PROFILE and ~/.aws/config)", err)
	}
	src.Region, src.RegionFrom = resolveRegion(cfg, awsCfg)
	awsCfg.Region = src.Region

	var sign []option.RequestOption
	switch {
	case cfg.SkipAuth:
		src.Credential = ""
		// The SDK insists on a credential; a placeholder bearer token is
		// given and taken off again once the request is built.
		awsCfg.BearerAuthTokenProvider = sdkbedrock.NewStaticBearerTokenProvider("unused")
		awsCfg.AuthSchemePreference = []string{"httpBearerAuth"}
		awsCfg.Credentials = nil
		sign = append(sign, option.WithMiddleware(func(r *http.Request, next option.MiddlewareNext) (*http.Response, error) {
			r.Header.Del("Authorization")
			return next(r)
		}))
	case cfg.BearerToken != "":
		src.Credential = "AWS_BEARER_TOKEN_BEDROCK"
		awsCfg.BearerAuthTokenProvider = sdkbedrock.NewStaticBearerTokenProvider(cfg.BearerToken)
		awsCfg.AuthSchemePreference = []string{"httpBearerAuth"}
	default:
		provider, what, err := credentialsFor(ctx, cfg, &awsCfg)
		if err != nil {
			return nil, src, err
		}
		src.Credential = what
		awsCfg.Credentials = aws.NewCredentialsCache(provider)
		awsCfg.BearerAuthTokenProvider = nil
	}

	base := cfg.BaseURL
	baseVar := "ANTHROPIC_BEDROCK_BASE_URL"
	if base == "" {
		base = "https://bedrock-runtime." + src.Region + ".amazonaws.com"
		baseVar = "AWS_REGION (requests go to " + base + ")"
	}
	opts := []option.RequestOption{
		// The SDK moves the anthropic-version header into the body, where
		// Bedrock wants its own version rather than the Messages API's.
		option.WithMiddleware(func(r *http.Request, next option.MiddlewareNext) (*http.Response, error) {
			r.Header.Set("anthropic-version", APIVersion)
			return next(r)
		}),
		sdkbedrock.WithConfig(awsCfg),
	}
	if cfg.BaseURL != "" {
		u, err := url.Parse(cfg.BaseURL)
		if err != nil || u.Scheme == "" || u.Host == "" {
			return nil, src, fmt.Errorf("ANTHROPIC_BEDROCK_BASE_URL %q is not a URL (Amazon Bedrock)", cfg.BaseURL)
		}
		prefix := strings.TrimRight(u.Path, "/")
		u.Path, u.RawPath = "", ""
		opts = append(opts, option.WithBaseURL(u.String()))
		if prefix != "" {
			// The SDK rewrites only /v1/messages: the gateway's path goes
			// on after it has (and is therefore not part of a signature).
			opts = append(opts, option.WithMiddleware(func(r *http.Request, next option.MiddlewareNext) (*http.Response, error) {
				r.URL.Path = prefix + r.URL.Path
				if r.URL.RawPath != "" {
					r.URL.RawPath = prefix + r.URL.RawPath
				}
				return next(r)
			}))
		}
	}
	opts = append(opts, sign...)
	return &anthropic.Platform{
		Name:       "Amazon Bedrock",
		BaseURL:    base,
		BaseVar:    baseVar,
		Credential: credentialWords(src.Credential),
		Region:     src.Region,
		RegionVar:  "AWS_REGION",
		Renew:      "log in again (aws sso login, or the awsAuthRefresh setting), or set fresh AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY and AWS_SESSION_TOKEN",
		Options:    opts,
	}, src, nil
}

// loadConfig reads the shared AWS configuration (profile, SSO, region).
func loadConfig(ctx context.Context, cfg Config) (aws.Config, error) {
	var fns []func(*config.LoadOptions) error
	if cfg.Profile != "" {
		fns = append(fns, config.WithSharedConfigProfile(cfg.Profile))
	}
	if cfg.HTTPClient != nil {
		fns = append(fns, config.WithHTTPClient(cfg.HTTPClient))
	} else {
		// The SDK's own buildable client, so that it can still add a CA
		// bundle of the AWS configuration (AWS_CA_BUNDLE, ca_bundle) to
		// the session's; a certificate file the setup cannot read fails
		// the model's first request, which names it.
		fns = append(fns, config.WithHTTPClient(awshttp.NewBuildableClient().WithTransportOptions(func(tr *http.Transport) {
			_ = cfg.Network.Apply(tr)
		})))
	}
	if cfg.Region != "" {
		fns = append(fns, config.WithRegion(cfg.Region))
	}
	return config.LoadDefaultConfig(ctx, fns...)
}

// resolveRegion is the region and what set it.
func resolveRegion(cfg Config, awsCfg aws.Config) (region, from string) {
	switch {
	case cfg.Region != "":
		return cfg.Region, "AWS_REGION"
	case awsCfg.Region != "":
		return awsCfg.Region, "AWS profile " + profileName(cfg)
	}
	return DefaultRegion, "default (AWS_REGION is not set)"
}

func profileName(cfg Config) string {
	if cfg.Profile == "" {
		return "default"
	}
	return cfg.Profile
}

// credentialsFor picks the credential provider: awsCredentialExport, the
// session's AWS_* variables, else the AWS SDK's chain (profile, SSO cache,
// container and instance roles). It retrieves once, so that "none found"
// is told now, running awsAuthRefresh first when that is what is missing.
func credentialsFor(ctx context.Context, cfg Config, awsCfg *aws.Config) (aws.CredentialsProvider, string, error) {
	var provider aws.CredentialsProvider
	var what string
	switch {
	case cfg.Export != nil:
		provider, what = aws.CredentialsProviderFunc(cfg.Export), "awsCredentialExport"
	case cfg.AccessKeyID != "" && cfg.SecretAccessKey != "":
		provider = credentials.NewStaticCredentialsProvider(cfg.AccessKeyID, cfg.SecretAccessKey, cfg.SessionToken)
		what = "AWS_ACCESS_KEY_ID"
	case awsCfg.Credentials != nil:
		provider, what = awsCfg.Credentials, "AWS profile "+profileName(cfg)
	default:
		return nil, "", errors.New("no AWS credentials for Amazon Bedrock: set AWS_PROFILE, AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, AWS_BEARER_TOKEN_BEDROCK, or the awsCredentialExport setting")
	}
	provider = named{provider}
	_, err := provider.Retrieve(ctx)
	if err != nil && cfg.Refresh != nil && cfg.Export == nil {
		if rerr := cfg.Refresh(ctx); rerr != nil {
			return nil, "", fmt.Errorf("awsAuthRefresh for Amazon Bedrock: %w", rerr)
		}
		fresh, lerr := loadConfig(ctx, cfg)
		if lerr == nil && fresh.Credentials != nil {
			provider = named{fresh.Credentials}
			_, err = provider.Retrieve(ctx)
		}
	}
	if err != nil {
		return nil, "", err
	}
	return provider, what, nil
}

// named makes a credential failure say what failed and what to fix, and
// marks it as one that retrying the request will not mend.
type named struct{ aws.CredentialsProvider }

func (n named) Retrieve(ctx context.Context) (aws.Credentials, error) {
	c, err := n.CredentialsProvider.Retrieve(ctx)
	if err != nil {
		return c, &CredentialError{Err: err}
	}
	return c, nil
}

// CredentialError is AWS credentials that could not be found or have
// expired.
type CredentialError struct{ Err error }

func (e *CredentialError) Error() string {
	return "Amazon Bedrock: no valid AWS credentials (" + e.Err.Error() + "): log in again (aws sso login, or the awsAuthRefresh setting), or set AWS_PROFILE, AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY or AWS_BEARER_TOKEN_BEDROCK"
}
func (e *CredentialError) Unwrap() error { return e.Err }

// NotRetryable tells the provider's retry loop that another attempt
// cannot mend this.
func (e *CredentialError) NotRetryable() bool { return true }

func credentialWords(source string) string {
	switch {
	case source == "":
		return ""
	case source == "AWS_BEARER_TOKEN_BEDROCK":
		return "the Bedrock API key (AWS_BEARER_TOKEN_BEDROCK)"
	case source == "AWS_ACCESS_KEY_ID":
		return "the AWS credentials (AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY)"
	case source == "awsCredentialExport":
		return "the AWS credentials the awsCredentialExport setting printed"
	}
	return "the AWS credentials of " + source + " (AWS_PROFILE)"
}
