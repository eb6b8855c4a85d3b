// Package vertex sends tack's Messages API requests to Claude on Google
// Vertex AI: POST {base}/projects/{p}/locations/{r}/publishers/anthropic/
// models/{model}:streamRawPredict, with the model moved from the body to
// the path and anthropic_version vertex-2023-10-16 in the body; the answer
// is the Messages API's SSE, so the anthropic provider reads it as usual.
//
// The SDK's own vertex package is not used: it pulls in Google's API client
// and gRPC (tens of megabytes). A request needs only a bearer token, which
// golang.org/x/oauth2/google gets from the application default credentials.
package vertex

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"

	"github.com/anthropics/anthropic-sdk-go/v2/option"
	"golang.org/x/oauth2"
	"golang.org/x/oauth2/google"

	"github.com/tackcode/tack/internal/llm/anthropic"
)

// APIVersion is the anthropic_version Vertex AI takes in the body.
const APIVersion = "vertex-2023-10-16"

// DefaultRegion is the region when CLOUD_ML_REGION is unset, as in Claude Code.
const DefaultRegion = "us-east5"

// Scope is the OAuth scope the token is asked for.
const Scope = "https://www.googleapis.com/auth/cloud-platform"

// Config is what the environment says about Vertex AI.
type Config struct {
	// ProjectID is ANTHROPIC_VERTEX_PROJECT_ID; "" takes the credentials'
	// project, where they name one.
	ProjectID string
	// Region is CLOUD_ML_REGION ("" is DefaultRegion); ModelRegion, when
	// set, gives the region of one model (VERTEX_REGION_CLAUDE_*).
	Region      string
	ModelRegion func(model string) (region, variable string)
	// BaseURL (ANTHROPIC_VERTEX_BASE_URL) replaces the regional endpoint
	// https://{region}-aiplatform.googleapis.com/v1.
	BaseURL string
	// CredentialsFile is GOOGLE_APPLICATION_CREDENTIALS as the session sees
	// it; "" looks where Google's libraries look (gcloud's login, the
	// metadata server).
	CredentialsFile string
	// SkipAuth (CLAUDE_CODE_SKIP_VERTEX_AUTH) sends no token, for gateways.
	SkipAuth   bool
	HTTPClient *http.Client
}

// Source is where the project, region and token come from.
type Source struct {
	Project, ProjectFrom string
	Region, RegionFrom   string
	Credential           string // "GOOGLE_APPLICATION_CREDENTIALS (path)", "application default credentials", ""
}

// Platform returns the anthropic platform for cfg. The token source is made
// (and the credentials file read) now, so a missing file or project is an
// error naming the variable; the first token is fetched with the first
// request.
func Platform(ctx context.Context, cfg Config) (*anthropic.Platform, Source, error) {
	src := Source{Region: cfg.Region, RegionFrom: "CLOUD_ML_REGION", Project: cfg.ProjectID, ProjectFrom: "ANTHROPIC_VERTEX_PROJECT_ID"}
	if src.Region == "" {
		src.Region, src.RegionFrom = DefaultRegion, "default (CLOUD_ML_REGION is not set)"
	}
	var tokens oauth2.TokenSource
	if !cfg.SkipAuth {
		tctx := ctx
		if cfg.HTTPClient != nil {
			tctx = context.WithValue(ctx, oauth2.HTTPClient, cfg.HTTPClient)
		}
		// The token source keeps the context for its refreshes: one that
		// lives as long as the session, not this call.
		tctx = context.WithoutCancel(tctx)
		creds, what, err := findCredentials(tctx, cfg.CredentialsFile)
		if err != nil {
			return nil, src, err
		}
		src.Credential = what
		tokens = oauth2.ReuseTokenSource(nil, creds.TokenSource)
		if src.Project == "" && creds.ProjectID != "" {
			src.Project, src.ProjectFrom = creds.ProjectID, "the credentials' project_id"
		}
	}
	if src.Project == "" {
		return nil, src, errors.New("no Google Vertex AI project: set ANTHROPIC_VERTEX_PROJECT_ID to the Google Cloud project that has Claude enabled")
	}
	base := cfg.BaseURL
	baseVar := "ANTHROPIC_VERTEX_BASE_URL"
	if base == "" {
		base, baseVar = Endpoint(src.Region), "CLOUD_ML_REGION (requests go to "+Endpoint(src.Region)+")"
	}
	baseU, err := url.Parse(strings.TrimRight(base, "/"))
	if err != nil || baseU.Scheme == "" || baseU.Host == "" {
		return nil, src, fmt.Errorf("ANTHROPIC_VERTEX_BASE_URL %q is not a URL (Google Vertex AI)", cfg.BaseURL)
	}
	mw := &middleware{base: baseU, project: src.Project, region: src.Region, modelRegion: cfg.ModelRegion, tokens: tokens}
	return &anthropic.Platform{
		Name:       "Google Vertex AI",
		BaseURL:    base,
		BaseVar:    baseVar,
		Credential: credentialWords(src.Credential),
		Region:     src.Region,
		RegionVar:  "CLOUD_ML_REGION or VERTEX_REGION_CLAUDE_*",
		Renew:      "run gcloud auth application-default login, or point GOOGLE_APPLICATION_CREDENTIALS at a valid key",
		Options:    []option.RequestOption{option.WithMiddleware(mw.handle)},
	}, src, nil
}

// Endpoint is the Vertex AI endpoint of a region, as Claude Code builds it.
func Endpoint(region string) string {
	switch region {
	case "global":
		return "https://aiplatform.googleapis.com/v1"
	case "us", "eu":
		return "https://aiplatform." + region + ".rep.googleapis.com/v1"
	}
	return "https://" + region + "-aiplatform.googleapis.com/v1"
}

// findCredentials reads the credentials file, or Google's default places.
func findCredentials(ctx context.Context, file string) (*google.Credentials, string, error) {
	if file != "" {
		data, err := os.ReadFile(file)
		if err != nil {
			return nil, "", fmt.Errorf("read GOOGLE_APPLICATION_CREDENTIALS for Google Vertex AI: %w", err)
		}
		// The file is the user's own choice, but its type is still checked:
		// an arbitrary credential configuration can point token exchange anywhere.
		var head struct {
			Type google.CredentialsType `json:"type"`
		}
		if err := json.Unmarshal(data, &head); err != nil {
			return nil, "", fmt.Errorf("GOOGLE_APPLICATION_CREDENTIALS %s (Google Vertex AI): %w", file, err)
		}
		switch head.Type {
		case google.ServiceAccount, google.AuthorizedUser, google.ExternalAccount,
			google.ExternalAccountAuthorizedUser, google.ImpersonatedServiceAccount:
		default:
			return nil, "", fmt.Errorf("GOOGLE_APPLICATION_CREDENTIALS %s (Google Vertex AI): credential type %q is not one tack accepts", file, head.Type)
		}
		creds, err := google.CredentialsFromJSONWithTypeAndParams(ctx, data, head.Type, google.CredentialsParams{Scopes: []string{Scope}})
		if err != nil {
			return nil, "", fmt.Errorf("GOOGLE_APPLICATION_CREDENTIALS %s (Google Vertex AI): %w", file, err)
		}
		return creds, "GOOGLE_APPLICATION_CREDENTIALS " + file, nil
	}
	creds, err := google.FindDefaultCredentials(ctx, Scope)
	if err != nil {
		return nil, "", fmt.Errorf("no Google credentials for Vertex AI (%w): run gcloud auth application-default login or set GOOGLE_APPLICATION_CREDENTIALS", err)
	}
	return creds, "application default credentials", nil
}

// middleware turns a Messages API request into a Vertex AI one.
type middleware struct {
	base            *url.URL
	project, region string
	modelRegion     func(string) (string, string)
	tokens          oauth2.TokenSource // nil: no token (SkipAuth)
}

func (m *middleware) handle(r *http.Request, next option.MiddlewareNext) (*http.Response, error) {
	if r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, "/v1/messages") && r.Body != nil {
		body, err := io.ReadAll(r.Body)
		r.Body.Close()
		if err != nil {
			return nil, fmt.Errorf("read request body: %w", err)
		}
		model, stream, body, err := rewriteBody(body)
		if err != nil {
			return nil, err
		}
		region := m.region
		if m.modelRegion != nil {
			if reg, _ := m.modelRegion(model); reg != "" {
				region = reg
			}
		}
		method := "rawPredict"
		if stream {
			method = "streamRawPredict"
		}
		u := *m.base
		tail := "/projects/" + url.PathEscape(m.project) + "/locations/" + url.PathEscape(region) +
			"/publishers/anthropic/models/" + url.PathEscape(model) + ":" + method
		u.Path = m.base.Path + tail
		u.RawPath = ""
		r.URL = &u
		r.Host = u.Host
		r.Body = io.NopCloser(bytes.NewReader(body))
		r.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(body)), nil }
		r.ContentLength = int64(len(body))
		r.Header.Del("anthropic-version") // the body carries it
	}
	if m.tokens != nil {
		tok, err := m.tokens.Token()
		if err != nil {
			return nil, &CredentialError{Err: err}
		}
		r.Header.Set("Authorization", "Bearer "+tok.AccessToken)
	}
	return next(r)
}

// rewriteBody takes the model out of a Messages API body and puts the
// Vertex AI version in; the rest of the bytes stay as they are (the cached
// prefix depends on them).
func rewriteBody(body []byte) (model string, stream bool, out []byte, err error) {
	var head struct {
		Model  string `json:"model"`
		Stream bool   `json:"stream"`
	}
	if err := json.Unmarshal(body, &head); err != nil {
		return "", false, nil, fmt.Errorf("vertex request body: %w", err)
	}
	if head.Model == "" {
		return "", false, nil, errors.New("vertex request has no model")
	}
	// tack's bodies start with {"model":"…", — the model goes, the
	// version takes its place.
	prefix := []byte(`{"model":`)
	if !bytes.HasPrefix(body, prefix) {
		return "", false, nil, errors.New(`vertex request body does not start with "model"`)
	}
	end := stringEnd(body, len(prefix))
	if end < 0 {
		return "", false, nil, errors.New("vertex request body: unterminated model")
	}
	rest := body[end:]
	out = make([]byte, 0, len(body)+16)
	out = append(out, `{"anthropic_version":"`+APIVersion+`"`...)
	out = append(out, rest...)
	return head.Model, head.Stream, out, nil
}

// stringEnd is the index just past the JSON string that starts at i; -1
// when there is none.
func stringEnd(b []byte, i int) int {
	if i >= len(b) || b[i] != '"' {
		return -1
	}
	for j := i + 1; j < len(b); j++ {
		switch b[j] {
		case '\\':
			j++
		case '"':
			return j + 1
		}
	}
	return -1
}

// CredentialError is a Google token that could not be had.
type CredentialError struct{ Err error }

func (e *CredentialError) Error() string {
	return "Google Vertex AI: no access token (" + e.Err.Error() + "): check GOOGLE_APPLICATION_CREDENTIALS or run gcloud auth application-default login"
}
func (e *CredentialError) Unwrap() error { return e.Err }

// NotRetryable is true when the token endpoint refused the credentials;
// a failure to reach it may mend.
func (e *CredentialError) NotRetryable() bool {
	var re *oauth2.RetrieveError
	return errors.As(e.Err, &re)
}

func credentialWords(source string) string {
	if source == "" {
		return ""
	}
	return "the Google credentials (" + source + ")"
}
