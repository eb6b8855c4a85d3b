package llmtest

import (
	"bytes"
	"crypto/hmac"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws/protocol/eventstream"
)

// The cloud platforms that serve Claude speak the Messages API in their
// own wire formats. A platform fake is a front for a Server: it checks
// the platform's URL, body and authentication, turns the request into the
// Messages API request it stands for and has the Server answer it — so the
// same script and the same request checks drive every format — then turns
// the answer into the platform's (AWS event-stream framing for Bedrock).

// BedrockAuth is what the Bedrock fake accepts: SigV4 signatures by
// AccessKeyID/SecretAccessKey for Region, or BearerToken, or (NoAuth) no
// authentication at all, as a gateway in front of Bedrock would.
type BedrockAuth struct {
	AccessKeyID, SecretAccessKey, Region string
	BearerToken                          string
	NoAuth                               bool
	// Expired makes the fake answer a correctly signed request as Bedrock
	// answers one signed with an expired session token: 403,
	// ExpiredTokenException.
	Expired bool
}

// BedrockVersion is the anthropic_version Bedrock takes in the body.
const BedrockVersion = "bedrock-2023-05-31"

// VertexVersion is the anthropic_version Vertex AI takes in the body.
const VertexVersion = "vertex-2023-10-16"

// Front is a running platform fake.
type Front struct {
	srv      *Server
	url      string
	hs       *http.Server
	mu       sync.Mutex
	tokens   map[string]bool // bearer tokens the token endpoint issued
	Captured []CapturedRequest
}

// CapturedRequest is a platform request as it came, before translation.
type CapturedRequest struct {
	Method, Path string
	Header       http.Header
	Body         []byte
}

// URL is the front's base URL.
func (f *Front) URL() string { return f.url }

// Requests returns the platform requests received so far.
func (f *Front) Requests() []CapturedRequest {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]CapturedRequest(nil), f.Captured...)
}

func startFront(t testing.TB, srv *Server, h func(*Front, http.ResponseWriter, *http.Request)) *Front {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("llmtest: listen: %v", err)
	}
	f := &Front{srv: srv, url: "http://" + ln.Addr().String(), tokens: map[string]bool{}}
	f.hs = &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { h(f, w, r) }), ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = f.hs.Serve(ln) }()
	t.Cleanup(func() { f.hs.Close() })
	return f
}

// capture reads the body and records the request.
func (f *Front) capture(r *http.Request) ([]byte, bool) {
	body, err := io.ReadAll(io.LimitReader(r.Body, maxBody+1))
	if err != nil {
		return nil, false
	}
	f.mu.Lock()
	f.Captured = append(f.Captured, CapturedRequest{Method: r.Method, Path: r.URL.EscapedPath(), Header: r.Header.Clone(), Body: body})
	f.mu.Unlock()
	return body, true
}

// reject reports a platform violation and answers it with a 400 (or
// status) as the platform would.
func (f *Front) reject(w http.ResponseWriter, r *http.Request, status int, format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	f.srv.onViolation(&Violation{Method: r.Method, Path: r.URL.Path, Request: -1, Problem: msg})
	f.srv.writeError(w, status, "llmtest: "+msg, "", true)
}

// forward has the Server answer a Messages API request with body and
// the platform request's other headers.
func (f *Front) forward(w http.ResponseWriter, r *http.Request, body []byte) {
	r2 := r.Clone(r.Context())
	r2.URL = &url.URL{Path: "/v1/messages"}
	r2.RequestURI = "/v1/messages"
	r2.Body = io.NopCloser(bytes.NewReader(body))
	r2.ContentLength = int64(len(body))
	r2.Header.Set("Anthropic-Version", apiVersion)
	if r2.Header.Get("x-api-key") == "" && !strings.HasPrefix(r2.Header.Get("Authorization"), "Bearer ") {
		r2.Header.Set("x-api-key", "platform-authenticated")
	}
	f.srv.ServeHTTP(w, r2)
}

// platformBody checks a platform body (anthropic_version, no model, and
// for Bedrock no stream) and returns the Messages API body it stands for.
func platformBody(body []byte, version, model string, stream, bedrock bool) ([]byte, []string, error) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(body, &m); err != nil {
		return nil, nil, fmt.Errorf("body is not a JSON object: %v", err)
	}
	var v string
	if err := json.Unmarshal(m["anthropic_version"], &v); err != nil || v != version {
		return nil, nil, fmt.Errorf("body anthropic_version is %s, want %q", m["anthropic_version"], version)
	}
	if _, ok := m["model"]; ok {
		return nil, nil, fmt.Errorf("body has a model: the platform takes it from the URL")
	}
	if _, ok := m["stream"]; ok && bedrock {
		return nil, nil, fmt.Errorf("body has stream: Bedrock takes it from the URL")
	}
	var betas []string
	if raw, ok := m["anthropic_beta"]; ok {
		if err := json.Unmarshal(raw, &betas); err != nil {
			return nil, nil, fmt.Errorf("anthropic_beta is not a list of strings: %s", raw)
		}
		delete(m, "anthropic_beta")
	}
	delete(m, "anthropic_version")
	m["model"], _ = json.Marshal(model)
	if bedrock {
		m["stream"], _ = json.Marshal(stream)
	}
	out, err := json.Marshal(m)
	return out, betas, err
}

var bedrockPath = regexp.MustCompile(`^/model/([^/]+)/(invoke-with-response-stream|invoke)$`)

// NewBedrock starts a fake Amazon Bedrock runtime in front of srv.
func NewBedrock(t testing.TB, srv *Server, auth BedrockAuth) *Front {
	return startFront(t, srv, func(f *Front, w http.ResponseWriter, r *http.Request) {
		body, ok := f.capture(r)
		if !ok {
			return
		}
		if r.Method == http.MethodGet && r.URL.Path == "/inference-profiles" {
			// Claude Code lists the account's inference profiles (Bedrock's
			// control plane, on the same base URL) before choosing its
			// models; the fake has none of its own to offer.
			if problem := checkBedrockAuth(r, body, auth); problem != "" {
				f.reject(w, r, http.StatusForbidden, "%s", problem)
				return
			}
			w.Header().Set("Content-Type", "application/json")
			_, _ = io.WriteString(w, `{"inferenceProfileSummaries":[]}`)
			return
		}
		m := bedrockPath.FindStringSubmatch(r.URL.Path)
		if r.Method != http.MethodPost || m == nil {
			f.reject(w, r, http.StatusNotFound, "no such Bedrock endpoint %s %s (want POST /model/{modelId}/invoke-with-response-stream)", r.Method, r.URL.Path)
			return
		}
		if problem := checkBedrockAuth(r, body, auth); problem != "" {
			f.reject(w, r, http.StatusForbidden, "%s", problem)
			return
		}
		if auth.Expired {
			w.Header().Set("Content-Type", "application/json")
			w.Header().Set("X-Amzn-Errortype", "ExpiredTokenException:http://internal.amazon.com/coral/com.amazon.coral.service/")
			w.WriteHeader(http.StatusForbidden)
			_, _ = io.WriteString(w, `{"message":"The security token included in the request is expired"}`)
			return
		}
		msgBody, betas, err := platformBody(body, BedrockVersion, m[1], true, true)
		if err != nil {
			f.reject(w, r, http.StatusBadRequest, "%v", err)
			return
		}
		r.Header.Del("Authorization")
		if len(betas) > 0 {
			r.Header.Set("Anthropic-Beta", strings.Join(betas, ","))
		}
		if m[2] == "invoke" {
			f.forwardWhole(w, r, msgBody)
			return
		}
		ew := &eventStreamWriter{w: w}
		f.forward(ew, r, msgBody)
		ew.finish()
	})
}

// checkBedrockAuth checks the request's authentication; "" when it passes.
func checkBedrockAuth(r *http.Request, body []byte, auth BedrockAuth) string {
	h := r.Header.Get("Authorization")
	switch {
	case auth.NoAuth:
		if h != "" {
			return "Authorization header sent with Bedrock auth skipped: " + strings.Fields(h)[0]
		}
		return ""
	case auth.BearerToken != "":
		if h != "Bearer "+auth.BearerToken {
			return "want Authorization: Bearer with the Bedrock API key"
		}
		return ""
	}
	return verifySigV4(r, body, auth)
}

var sigV4Auth = regexp.MustCompile(`^AWS4-HMAC-SHA256 Credential=([^/]+)/(\d{8})/([^/]+)/([^/]+)/aws4_request, ?SignedHeaders=([^,]+), ?Signature=([0-9a-f]{64})$`)

// verifySigV4 checks a SigV4 signature with the known secret.
func verifySigV4(r *http.Request, body []byte, auth BedrockAuth) string {
	m := sigV4Auth.FindStringSubmatch(r.Header.Get("Authorization"))
	if m == nil {
		return fmt.Sprintf("Authorization is not an AWS4-HMAC-SHA256 signature: %q", r.Header.Get("Authorization"))
	}
	akid, date, region, service, signed, sig := m[1], m[2], m[3], m[4], m[5], m[6]
	switch {
	case akid != auth.AccessKeyID:
		return fmt.Sprintf("signed with access key %q, want %q", akid, auth.AccessKeyID)
	case region != auth.Region:
		return fmt.Sprintf("signed for region %q, want %q", region, auth.Region)
	case service != "bedrock":
		return fmt.Sprintf("signed for service %q, want bedrock", service)
	}
	amzDate := r.Header.Get("X-Amz-Date")
	if !strings.HasPrefix(amzDate, date) {
		return fmt.Sprintf("X-Amz-Date %q does not match the credential date %s", amzDate, date)
	}
	payload := r.Header.Get("X-Amz-Content-Sha256")
	sum := sha256.Sum256(body)
	if payload == "" {
		payload = hex.EncodeToString(sum[:])
	} else if payload != hex.EncodeToString(sum[:]) {
		return "X-Amz-Content-Sha256 is not the body's hash"
	}
	var canon strings.Builder
	canon.WriteString(r.Method + "\n" + awsEscape(r.URL.EscapedPath()) + "\n" + canonicalQuery(r.URL.Query()) + "\n")
	for _, name := range strings.Split(signed, ";") {
		var v string
		switch name {
		case "host":
			v = r.Host
		case "content-length":
			v = fmt.Sprint(r.ContentLength)
		default:
			v = strings.Join(r.Header.Values(name), ",")
		}
		canon.WriteString(name + ":" + strings.Join(strings.Fields(v), " ") + "\n")
	}
	canon.WriteString("\n" + signed + "\n" + payload)
	ch := sha256.Sum256([]byte(canon.String()))
	scope := date + "/" + region + "/" + service + "/aws4_request"
	toSign := "AWS4-HMAC-SHA256\n" + amzDate + "\n" + scope + "\n" + hex.EncodeToString(ch[:])
	key := []byte("AWS4" + auth.SecretAccessKey)
	for _, part := range []string{date, region, service, "aws4_request"} {
		key = hmacSHA256(key, part)
	}
	if want := hex.EncodeToString(hmacSHA256(key, toSign)); want != sig {
		return "SigV4 signature does not verify with the secret key (canonical request:\n" + canon.String() + ")"
	}
	return ""
}

func hmacSHA256(key []byte, data string) []byte {
	h := hmac.New(sha256.New, key)
	h.Write([]byte(data))
	return h.Sum(nil)
}

// awsEscape escapes a path again, as SigV4 does for services other than S3.
func awsEscape(path string) string {
	var b strings.Builder
	for i := 0; i < len(path); i++ {
		c := path[i]
		if c == '/' || c == '-' || c == '_' || c == '.' || c == '~' || c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' {
			b.WriteByte(c)
		} else {
			fmt.Fprintf(&b, "%%%02X", c)
		}
	}
	return b.String()
}

func canonicalQuery(q url.Values) string {
	var parts []string
	for k, vs := range q {
		for _, v := range vs {
			parts = append(parts, awsEscape(k)+"="+awsEscape(v))
		}
	}
	sort.Strings(parts)
	return strings.Join(parts, "&")
}

// eventStreamWriter turns the Server's SSE answer into AWS event-stream
// messages: each event's JSON, base64, in a chunk event's {"bytes": …}.
// Error answers (status ≥ 400) pass through as JSON.
type eventStreamWriter struct {
	w       http.ResponseWriter
	status  int
	sse     bool
	pending []byte
	enc     *eventstream.Encoder
}

func (e *eventStreamWriter) Header() http.Header { return e.w.Header() }

func (e *eventStreamWriter) WriteHeader(status int) {
	e.status = status
	if status < 400 && strings.HasPrefix(e.w.Header().Get("Content-Type"), "text/event-stream") {
		e.sse = true
		e.enc = eventstream.NewEncoder()
		e.w.Header().Set("Content-Type", "application/vnd.amazon.eventstream")
		e.w.Header().Set("X-Amzn-Requestid", e.w.Header().Get("Request-Id"))
	}
	e.w.WriteHeader(status)
}

func (e *eventStreamWriter) Write(p []byte) (int, error) {
	if e.status == 0 {
		e.WriteHeader(http.StatusOK)
	}
	if !e.sse {
		return e.w.Write(p)
	}
	e.pending = append(e.pending, p...)
	for {
		i := bytes.Index(e.pending, []byte("\n\n"))
		if i < 0 {
			return len(p), nil
		}
		frame := e.pending[:i]
		e.pending = e.pending[i+2:]
		if err := e.writeEvent(frame); err != nil {
			return 0, err
		}
	}
}

func (e *eventStreamWriter) writeEvent(frame []byte) error {
	var event, data string
	for _, line := range strings.Split(string(frame), "\n") {
		if v, ok := strings.CutPrefix(line, "event: "); ok {
			event = v
		} else if v, ok := strings.CutPrefix(line, "data: "); ok {
			data += v
		}
	}
	msg := eventstream.Message{}
	if event == "error" {
		var v struct {
			Error struct{ Type, Message string } `json:"error"`
		}
		_ = json.Unmarshal([]byte(data), &v)
		msg.Headers.Set(":message-type", eventstream.StringValue("exception"))
		msg.Headers.Set(":exception-type", eventstream.StringValue(v.Error.Type))
		msg.Headers.Set(":content-type", eventstream.StringValue("application/json"))
		msg.Payload, _ = json.Marshal(map[string]string{"message": v.Error.Message})
	} else {
		msg.Headers.Set(":message-type", eventstream.StringValue("event"))
		msg.Headers.Set(":event-type", eventstream.StringValue("chunk"))
		msg.Headers.Set(":content-type", eventstream.StringValue("application/json"))
		msg.Payload, _ = json.Marshal(map[string]string{"bytes": base64.StdEncoding.EncodeToString([]byte(data))})
	}
	return e.enc.Encode(e.w, msg)
}

// Flush passes on what has been converted.
func (e *eventStreamWriter) Flush() {
	if f, ok := e.w.(http.Flusher); ok {
		f.Flush()
	}
}

// Unwrap lets the Server hijack the connection to break a stream.
func (e *eventStreamWriter) Unwrap() http.ResponseWriter { return e.w }

func (e *eventStreamWriter) finish() {}

var vertexPath = regexp.MustCompile(`^(.*)/v1/projects/([^/]+)/locations/([^/]+)/publishers/anthropic/models/([^/:]+):(streamRawPredict|rawPredict)$`)

// Vertex is a fake Vertex AI endpoint with its OAuth token endpoint.
type Vertex struct {
	*Front
	// Project and Region are what the URL must name; Region "" accepts any.
	Project, Region string
	// NoAuth accepts requests without credentials, as a gateway that
	// authenticates for the client would (CLAUDE_CODE_SKIP_VERTEX_AUTH).
	// Set it before the first request.
	NoAuth bool
}

// NewVertex starts a fake Vertex AI in front of srv. It also serves the
// OAuth token endpoint (TokenURL) that WriteServiceAccount's credentials
// point at; requests must carry a token it issued.
func NewVertex(t testing.TB, srv *Server, project, region string) *Vertex {
	v := &Vertex{Project: project, Region: region}
	v.Front = startFront(t, srv, func(f *Front, w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/token" {
			v.serveToken(w, r)
			return
		}
		body, ok := f.capture(r)
		if !ok {
			return
		}
		m := vertexPath.FindStringSubmatch(r.URL.Path)
		if r.Method != http.MethodPost || m == nil {
			f.reject(w, r, http.StatusNotFound, "no such Vertex AI endpoint %s %s (want POST /v1/projects/{p}/locations/{r}/publishers/anthropic/models/{m}:streamRawPredict)", r.Method, r.URL.Path)
			return
		}
		switch {
		case m[2] != v.Project:
			f.reject(w, r, http.StatusForbidden, "project %q, want %q", m[2], v.Project)
			return
		case v.Region != "" && m[3] != v.Region:
			f.reject(w, r, http.StatusNotFound, "Publisher model not found in region %q (the fake serves %q)", m[3], v.Region)
			return
		}
		tok, _ := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		f.mu.Lock()
		issued := f.tokens[tok]
		f.mu.Unlock()
		if !issued && !(v.NoAuth && r.Header.Get("Authorization") == "") {
			f.reject(w, r, http.StatusUnauthorized, "Authorization is not a bearer token the token endpoint issued: %q", r.Header.Get("Authorization"))
			return
		}
		msgBody, betas, err := platformBody(body, VertexVersion, m[4], true, false)
		if err != nil {
			f.reject(w, r, http.StatusBadRequest, "%v", err)
			return
		}
		if len(betas) > 0 {
			r.Header.Set("Anthropic-Beta", strings.Join(betas, ","))
		}
		r.Header.Del("Authorization")
		if m[5] == "rawPredict" {
			// The Server streams every turn; the answer is gathered.
			var mb map[string]json.RawMessage
			_ = json.Unmarshal(msgBody, &mb)
			mb["stream"] = json.RawMessage("true")
			msgBody, _ = json.Marshal(mb)
			f.forwardWhole(w, r, msgBody)
			return
		}
		f.forward(w, r, msgBody)
	})
	return v
}

// TokenURL is the fake's OAuth token endpoint.
func (v *Vertex) TokenURL() string { return v.url + "/token" }

// serveToken answers a service account's JWT-bearer grant (or a user's
// refresh-token grant) with a fresh token.
func (v *Vertex) serveToken(w http.ResponseWriter, r *http.Request) {
	if err := r.ParseForm(); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	switch r.Form.Get("grant_type") {
	case "urn:ietf:params:oauth:grant-type:jwt-bearer":
		if strings.Count(r.Form.Get("assertion"), ".") != 2 {
			http.Error(w, `{"error":"invalid_grant"}`, http.StatusBadRequest)
			return
		}
	case "refresh_token", "client_credentials":
	default:
		http.Error(w, `{"error":"unsupported_grant_type"}`, http.StatusBadRequest)
		return
	}
	tok := "ya29.fake-" + rand.Text()[:12]
	v.mu.Lock()
	v.tokens[tok] = true
	v.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{"access_token": tok, "token_type": "Bearer", "expires_in": 3600})
}

// WriteServiceAccount writes a service account key file whose token_uri
// is the fake's token endpoint, and returns its path.
func (v *Vertex) WriteServiceAccount(t testing.TB, dir, project string) string {
	t.Helper()
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	data, _ := json.MarshalIndent(map[string]string{
		"type": "service_account", "project_id": project, "private_key_id": "fake",
		"private_key":  string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der})),
		"client_email": "tack-test@" + project + ".iam.gserviceaccount.com", "client_id": "1",
		"token_uri": v.TokenURL(),
	}, "", "  ")
	p := filepath.Join(dir, "service-account.json")
	if err := os.WriteFile(p, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// NewFoundry starts a fake Microsoft Foundry resource in front of srv: the
// Messages API under /anthropic/, with the key in x-api-key (or, when
// apiKey is "", any bearer token, as Entra ID would give).
func NewFoundry(t testing.TB, srv *Server, apiKey string) *Front {
	return startFront(t, srv, func(f *Front, w http.ResponseWriter, r *http.Request) {
		body, ok := f.capture(r)
		if !ok {
			return
		}
		if r.URL.Path != "/anthropic/v1/messages" {
			f.reject(w, r, http.StatusNotFound, "no such Foundry endpoint %s %s (want POST /anthropic/v1/messages)", r.Method, r.URL.Path)
			return
		}
		if apiKey != "" && r.Header.Get("x-api-key") != apiKey {
			f.reject(w, r, http.StatusUnauthorized, "x-api-key is not the Foundry key")
			return
		}
		if apiKey == "" && !strings.HasPrefix(r.Header.Get("Authorization"), "Bearer ") {
			f.reject(w, r, http.StatusUnauthorized, "want an Entra ID bearer token")
			return
		}
		f.forward(w, r, body)
	})
}
