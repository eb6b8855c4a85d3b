package llmtest

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/tackcode/tack/internal/llm"
)

// call sends body to url with the headers and returns status and body.
func call(t *testing.T, method, url, body string, header map[string]string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(raw)
}

// wholeMessage is the part of a non-streaming answer the tests check.
type wholeMessage struct {
	Type       string `json:"type"`
	Role       string `json:"role"`
	Model      string `json:"model"`
	StopReason string `json:"stop_reason"`
	Content    []struct {
		Type  string         `json:"type"`
		Text  string         `json:"text"`
		Name  string         `json:"name"`
		Input map[string]any `json:"input"`
	} `json:"content"`
	Usage struct {
		InputTokens  int `json:"input_tokens"`
		OutputTokens int `json:"output_tokens"`
	} `json:"usage"`
}

func TestPlatformsServeNonStreamingCalls(t *testing.T) {
	var mu sync.Mutex
	var refused []string
	srv := Start(t, Options{OnViolation: func(err error) { mu.Lock(); refused = append(refused, err.Error()); mu.Unlock() }, Turns: []Turn{
		{Content: []llm.Block{Text("checking"), ToolUse("Read", map[string]any{"file_path": "/x", "limit": 3})}},
		Reply(Text("fine")),
	}})
	bedrock := NewBedrock(t, srv, BedrockAuth{BearerToken: "k"})
	vertex := NewVertex(t, srv, "p", "us-east5")
	vertex.NoAuth = true
	auth := map[string]string{"Authorization": "Bearer k"}

	// Claude Code lists the inference profiles before its first call.
	if code, body := call(t, http.MethodGet, bedrock.URL()+"/inference-profiles?type=SYSTEM_DEFINED", "", auth); code != 200 || !strings.Contains(body, `"inferenceProfileSummaries"`) {
		t.Errorf("inference profiles: %d %s", code, body)
	}
	if code, _ := call(t, http.MethodGet, bedrock.URL()+"/inference-profiles", "", nil); code != http.StatusForbidden {
		t.Errorf("unauthenticated inference profiles: %d, want 403", code)
	}

	msgs := `"max_tokens":100,"messages":[{"role":"user","content":"hi"}]`
	code, body := call(t, http.MethodPost, bedrock.URL()+"/model/us.anthropic.claude-haiku-4-5-20251001-v1:0/invoke",
		`{"anthropic_version":"`+BedrockVersion+`",`+msgs+`}`, auth)
	if code != 200 {
		t.Fatalf("invoke: %d %s", code, body)
	}
	var m wholeMessage
	if err := json.Unmarshal([]byte(body), &m); err != nil {
		t.Fatalf("invoke answer is not a message: %v\n%s", err, body)
	}
	if m.Type != "message" || m.Role != "assistant" || m.Model != "us.anthropic.claude-haiku-4-5-20251001-v1:0" || m.StopReason != "tool_use" ||
		len(m.Content) != 2 || m.Content[0].Text != "checking" || m.Content[1].Name != "Read" || m.Content[1].Input["limit"] != 3.0 ||
		m.Usage.InputTokens == 0 || m.Usage.OutputTokens <= 1 {
		t.Errorf("invoke answer = %+v", m)
	}

	code, body = call(t, http.MethodPost, vertex.URL()+"/v1/projects/p/locations/us-east5/publishers/anthropic/models/claude-haiku-4-5:rawPredict",
		`{"anthropic_version":"`+VertexVersion+`",`+msgs+`}`, nil)
	m = wholeMessage{}
	if err := json.Unmarshal([]byte(body), &m); code != 200 || err != nil || m.StopReason != "end_turn" || len(m.Content) != 1 || m.Content[0].Text != "fine" {
		t.Errorf("rawPredict: %d %s", code, body)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(refused) != 1 || !strings.Contains(refused[0], "GET /inference-profiles") {
		t.Errorf("violations = %q, want only the unauthenticated listing", refused)
	}
	if n := len(srv.Requests()); n != 2 {
		t.Errorf("the Server saw %d requests, want the 2 calls", n)
	}
}
