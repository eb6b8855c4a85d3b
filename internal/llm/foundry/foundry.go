// Package foundry sends tack's requests to Claude on Microsoft Foundry,
// which serves the Messages API itself under
// https://{resource}.services.ai.azure.com/anthropic/. The SDK's foundry
// package sets the endpoint and the credential (x-api-key, or an Entra ID
// bearer token); the Entra ID token comes from the client-credentials flow
// of golang.org/x/oauth2, not from azidentity, which tack would otherwise
// carry whole for one token request.
package foundry

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"

	sdkfoundry "github.com/anthropics/anthropic-sdk-go/v2/foundry"
	"github.com/anthropics/anthropic-sdk-go/v2/option"
	"golang.org/x/oauth2"
	"golang.org/x/oauth2/clientcredentials"

	"github.com/tackcode/tack/internal/llm/anthropic"
)

// DefaultAuthority is Entra ID's login host (AZURE_AUTHORITY_HOST replaces it).
const DefaultAuthority = "https://login.microsoftonline.com"

// Config is what the environment says about Foundry.
type Config struct {
	// Resource is ANTHROPIC_FOUNDRY_RESOURCE; BaseURL
	// (ANTHROPIC_FOUNDRY_BASE_URL) replaces the URL made from it.
	Resource, BaseURL string
	// APIKey is ANTHROPIC_FOUNDRY_API_KEY, sent as x-api-key.
	APIKey string
	// TenantID, ClientID and ClientSecret (AZURE_TENANT_ID, AZURE_CLIENT_ID,
	// AZURE_CLIENT_SECRET) get an Entra ID token when there is no key;
	// Authority is AZURE_AUTHORITY_HOST.
	TenantID, ClientID, ClientSecret, Authority string
	// SkipAuth (CLAUDE_CODE_SKIP_FOUNDRY_AUTH) sends no credential.
	SkipAuth   bool
	HTTPClient *http.Client
}

// Source is where requests go and what authenticates them.
type Source struct {
	BaseURL, BaseFrom string
	Credential        string // ANTHROPIC_FOUNDRY_API_KEY, "Entra ID (AZURE_CLIENT_ID …)" or ""
}

// Platform returns the anthropic platform for cfg.
func Platform(ctx context.Context, cfg Config) (*anthropic.Platform, Source, error) {
	var src Source
	switch {
	case cfg.BaseURL != "" && cfg.Resource != "":
		return nil, src, errors.New("set ANTHROPIC_FOUNDRY_RESOURCE or ANTHROPIC_FOUNDRY_BASE_URL for Microsoft Foundry, not both")
	case cfg.BaseURL != "":
		src.BaseURL, src.BaseFrom = cfg.BaseURL, "ANTHROPIC_FOUNDRY_BASE_URL"
	case cfg.Resource != "":
		src.BaseURL, src.BaseFrom = "https://"+cfg.Resource+".services.ai.azure.com/anthropic/", "ANTHROPIC_FOUNDRY_RESOURCE"
	default:
		return nil, src, errors.New("no Microsoft Foundry endpoint: set ANTHROPIC_FOUNDRY_RESOURCE (the resource name in https://{resource}.services.ai.azure.com) or ANTHROPIC_FOUNDRY_BASE_URL")
	}
	sc := sdkfoundry.ClientConfig{BaseURL: src.BaseURL}
	var extra []option.RequestOption
	switch {
	case cfg.SkipAuth:
		// The SDK requires a credential: a placeholder key, taken off once
		// the request is built.
		sc.APIKey = "unused"
		extra = append(extra, option.WithMiddleware(func(r *http.Request, next option.MiddlewareNext) (*http.Response, error) {
			r.Header.Del("X-Api-Key")
			return next(r)
		}))
	case cfg.APIKey != "":
		sc.APIKey, src.Credential = cfg.APIKey, "ANTHROPIC_FOUNDRY_API_KEY"
	case cfg.ClientID != "" && cfg.ClientSecret != "" && cfg.TenantID != "":
		tokens := entraTokens(ctx, cfg)
		sc.AzureADTokenProvider = func(context.Context) (string, error) {
			tok, err := tokens.Token()
			if err != nil {
				return "", &CredentialError{Err: err}
			}
			return tok.AccessToken, nil
		}
		src.Credential = "Entra ID (AZURE_CLIENT_ID, AZURE_TENANT_ID, AZURE_CLIENT_SECRET)"
	default:
		return nil, src, errors.New("no Microsoft Foundry credentials: set ANTHROPIC_FOUNDRY_API_KEY, or AZURE_TENANT_ID, AZURE_CLIENT_ID and AZURE_CLIENT_SECRET for Entra ID (or CLAUDE_CODE_SKIP_FOUNDRY_AUTH=1 behind a gateway that authenticates)")
	}
	client, err := sdkfoundry.NewClient(sc)
	if err != nil {
		return nil, src, fmt.Errorf("set up the Microsoft Foundry client: %w", err)
	}
	cred := ""
	if src.Credential != "" {
		cred = "the credential of " + src.Credential
	}
	return &anthropic.Platform{
		Name:       "Microsoft Foundry",
		BaseURL:    strings.TrimRight(src.BaseURL, "/"),
		BaseVar:    src.BaseFrom,
		Credential: cred,
		Options:    append(client.Options, extra...),
	}, src, nil
}

// entraTokens is a cached client-credentials token source for Foundry's scope.
func entraTokens(ctx context.Context, cfg Config) oauth2.TokenSource {
	authority := strings.TrimRight(cfg.Authority, "/")
	if authority == "" {
		authority = DefaultAuthority
	}
	cc := clientcredentials.Config{
		ClientID:     cfg.ClientID,
		ClientSecret: cfg.ClientSecret,
		TokenURL:     authority + "/" + cfg.TenantID + "/oauth2/v2.0/token",
		Scopes:       []string{sdkfoundry.EntraIDScope},
		AuthStyle:    oauth2.AuthStyleInParams,
	}
	ctx = context.WithoutCancel(ctx)
	if cfg.HTTPClient != nil {
		ctx = context.WithValue(ctx, oauth2.HTTPClient, cfg.HTTPClient)
	}
	return cc.TokenSource(ctx)
}

// CredentialError is an Entra ID token that could not be had.
type CredentialError struct{ Err error }

func (e *CredentialError) Error() string {
	return "Microsoft Foundry: no Entra ID token (" + e.Err.Error() + "): check AZURE_TENANT_ID, AZURE_CLIENT_ID and AZURE_CLIENT_SECRET"
}
func (e *CredentialError) Unwrap() error { return e.Err }

// NotRetryable is true when Entra ID refused the client's credentials.
func (e *CredentialError) NotRetryable() bool {
	var re *oauth2.RetrieveError
	return errors.As(e.Err, &re)
}
