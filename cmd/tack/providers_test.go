package main

// End-to-end tests of the cloud platforms: tack selected by Claude Code's
// CLAUDE_CODE_USE_* variables, against the fakes of each wire format.

import (
	"encoding/json"
	"net/url"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tackcode/tack/internal/llm"
	"github.com/tackcode/tack/internal/llm/llmtest"
)

// platformSession is a turn that is first refused with a 429, then makes
// two tool calls at once, then a final answer: a tool round trip, parallel
// calls and a retry through the provider's own loop.
func platformSession(e *env) {
	e.write("a.txt", "alpha\n")
	e.write("b.txt", "beta\n")
	e.srv.Append(
		llmtest.Turn{Faults: []llmtest.Fault{{Status: 429, RetryAfter: "0"}}, Content: []llm.Block{
			llmtest.ToolUse("Read", map[string]any{"file_path": filepath.Join(e.dir, "a.txt")}),
			llmtest.ToolUse("Read", map[string]any{"file_path": filepath.Join(e.dir, "b.txt")}),
		}},
		llmtest.Reply(llmtest.Text("read both files")),
	)
}

// checkPlatformRun runs the session and checks its result and what the
// fake served: the retry, both tool results sent back, a cost.
func checkPlatformRun(t *testing.T, e *env) {
	t.Helper()
	out, errOut := e.run("-p", "read a.txt and b.txt", "--output-format", "json", "--allowedTools", "Read")
	if e.status != 0 {
		t.Fatalf("exit %d\nstdout: %s\nstderr: %s", e.status, out, errOut)
	}
	var res struct {
		Result       string  `json:"result"`
		IsError      bool    `json:"is_error"`
		TotalCostUSD float64 `json:"total_cost_usd"`
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("result does not parse: %v\n%s", err, out)
	}
	if res.IsError || res.Result != "read both files" {
		t.Errorf("result = %+v", res)
	}
	if res.TotalCostUSD <= 0 {
		t.Errorf("total_cost_usd = %v, want the price of the usage", res.TotalCostUSD)
	}
	reqs := e.srv.Requests()
	if len(reqs) != 3 || reqs[0].Fault == nil || reqs[0].Fault.Status != 429 {
		t.Fatalf("want a 429, its retry and the follow-up; got %d requests", len(reqs))
	}
	var results []string
	for _, b := range reqs[2].Messages[len(reqs[2].Messages)-1].Content {
		if b.Type == llm.TypeToolResult {
			raw, _ := json.Marshal(b.Content)
			results = append(results, string(raw))
		}
	}
	if len(results) != 2 || !strings.Contains(results[0], "alpha") || !strings.Contains(results[1], "beta") {
		t.Errorf("tool results sent back = %q", results)
	}
}

func awsEnv(front *llmtest.Front) []string {
	return []string{
		"CLAUDE_CODE_USE_BEDROCK=1",
		"ANTHROPIC_BEDROCK_BASE_URL=" + front.URL(),
		"AWS_EC2_METADATA_DISABLED=true",
		"ANTHROPIC_API_KEY=",
	}
}

func TestBedrockSignedSession(t *testing.T) {
	e := newEnv(t)
	front := llmtest.NewBedrock(t, e.srv, llmtest.BedrockAuth{AccessKeyID: "AKIDTEST", SecretAccessKey: "secret/key", Region: "eu-west-1"})
	e.extra = append(awsEnv(front), "AWS_REGION=eu-west-1", "AWS_ACCESS_KEY_ID=AKIDTEST", "AWS_SECRET_ACCESS_KEY=secret/key")
	platformSession(e)
	checkPlatformRun(t, e)
	got := front.Requests()
	if len(got) != 3 {
		t.Fatalf("Bedrock fake saw %d requests, want 3", len(got))
	}
	// The default model on Bedrock is its inference profile for the
	// region's geography.
	if want := "/model/eu.anthropic.claude-opus-5-5/invoke-with-response-stream"; got[0].Path != want {
		t.Errorf("path = %s, want %s", got[0].Path, want)
	}
	if a := got[0].Header.Get("Authorization"); !strings.HasPrefix(a, "AWS4-HMAC-SHA256 Credential=AKIDTEST/") || !strings.Contains(a, "/eu-west-1/bedrock/aws4_request") {
		t.Errorf("Authorization = %q", a)
	}
}

func TestBedrockAPIKeyAndModelID(t *testing.T) {
	e := newEnv(t, llmtest.Reply(llmtest.Text("hi")))
	front := llmtest.NewBedrock(t, e.srv, llmtest.BedrockAuth{BearerToken: "bedrock-api-key"})
	e.extra = append(awsEnv(front), "AWS_BEARER_TOKEN_BEDROCK=bedrock-api-key",
		"ANTHROPIC_MODEL=us.anthropic.claude-sonnet-4-5-20250929-v1:0")
	out, errOut := e.run("-p", "say hi", "--output-format", "json")
	if e.status != 0 {
		t.Fatalf("exit %d\n%s\n%s", e.status, out, errOut)
	}
	if !strings.Contains(out, `"total_cost_usd":0.0`) || strings.Contains(out, `"total_cost_usd":0,`) {
		t.Errorf("want a cost priced as Sonnet 4.5: %s", out)
	}
	// An explicit Bedrock id goes as given (its ":" escaped or not).
	if got, _ := url.PathUnescape(front.Requests()[0].Path); got != "/model/us.anthropic.claude-sonnet-4-5-20250929-v1:0/invoke-with-response-stream" {
		t.Errorf("path = %s", got)
	}
}

func TestBedrockSkipAuthGateway(t *testing.T) {
	e := newEnv(t, llmtest.Reply(llmtest.Text("hi")))
	front := llmtest.NewBedrock(t, e.srv, llmtest.BedrockAuth{NoAuth: true})
	e.extra = append(awsEnv(front), "CLAUDE_CODE_SKIP_BEDROCK_AUTH=1")
	out, errOut := e.run("-p", "say hi")
	if e.status != 0 || strings.TrimSpace(out) != "hi" {
		t.Fatalf("exit %d\n%s\n%s", e.status, out, errOut)
	}
}

func TestBedrockRegionWithoutModelIsOneClearError(t *testing.T) {
	// The fake's refusal is the point here, not a violation to fail on.
	e := &env{t: t, srv: llmtest.Start(t, llmtest.Options{OnViolation: func(error) {}}), dir: t.TempDir(), home: t.TempDir()}
	front := llmtest.NewBedrock(t, e.srv, llmtest.BedrockAuth{AccessKeyID: "AKIDTEST", SecretAccessKey: "s", Region: "us-west-2"})
	// Signed for another region than the fake's: it answers 403.
	e.extra = append(awsEnv(front), "AWS_REGION=ap-south-1", "AWS_ACCESS_KEY_ID=AKIDTEST", "AWS_SECRET_ACCESS_KEY=s")
	_, errOut := e.run("-p", "say hi")
	if e.status == 0 {
		t.Fatal("want a failure")
	}
	for _, want := range []string{"Amazon Bedrock denied access", "apac.anthropic.claude-opus-5-5", "region ap-south-1 (AWS_REGION)"} {
		if !strings.Contains(errOut, want) {
			t.Errorf("stderr lacks %q:\n%s", want, errOut)
		}
	}
}

// A session token Bedrock calls expired is one error that says so and how
// to renew it, not a retry loop or a bare 403.
func TestBedrockExpiredTokenSaysHowToRenew(t *testing.T) {
	e := newEnv(t)
	front := llmtest.NewBedrock(t, e.srv, llmtest.BedrockAuth{AccessKeyID: "AKIDTEST", SecretAccessKey: "s", Region: "us-west-2", Expired: true})
	e.extra = append(awsEnv(front), "AWS_REGION=us-west-2", "AWS_ACCESS_KEY_ID=AKIDTEST", "AWS_SECRET_ACCESS_KEY=s", "AWS_SESSION_TOKEN=old")
	_, errOut := e.run("-p", "say hi")
	if e.status == 0 {
		t.Fatal("want a failure")
	}
	for _, want := range []string{"Amazon Bedrock says the AWS credentials (AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY) have expired",
		"The security token included in the request is expired", "aws sso login", "awsAuthRefresh", "AWS_SESSION_TOKEN"} {
		if !strings.Contains(errOut, want) {
			t.Errorf("stderr lacks %q:\n%s", want, errOut)
		}
	}
	if n := len(front.Requests()); n != 1 {
		t.Errorf("%d requests to Bedrock, want 1 (an expired credential is not retried)", n)
	}
}

func TestVertexSession(t *testing.T) {
	e := newEnv(t)
	v := llmtest.NewVertex(t, e.srv, "my-project", "europe-west1")
	creds := v.WriteServiceAccount(t, e.home, "my-project")
	e.extra = []string{"CLAUDE_CODE_USE_VERTEX=1", "ANTHROPIC_VERTEX_BASE_URL=" + v.URL() + "/v1",
		"CLOUD_ML_REGION=europe-west1", "GOOGLE_APPLICATION_CREDENTIALS=" + creds, "ANTHROPIC_API_KEY="}
	platformSession(e)
	checkPlatformRun(t, e)
	got := v.Requests()
	if want := "/v1/projects/my-project/locations/europe-west1/publishers/anthropic/models/claude-opus-5-5:streamRawPredict"; len(got) == 0 || got[0].Path != want {
		t.Errorf("requests = %+v, want path %s", got, want)
	}
}

func TestVertexPerModelRegion(t *testing.T) {
	e := newEnv(t, llmtest.Reply(llmtest.Text("hi")))
	v := llmtest.NewVertex(t, e.srv, "p1", "us-east5")
	creds := v.WriteServiceAccount(t, e.home, "p1")
	e.extra = []string{"CLAUDE_CODE_USE_VERTEX=1", "ANTHROPIC_VERTEX_BASE_URL=" + v.URL() + "/v1",
		"CLOUD_ML_REGION=global", "VERTEX_REGION_CLAUDE_4_5_SONNET=us-east5",
		"GOOGLE_APPLICATION_CREDENTIALS=" + creds, "ANTHROPIC_API_KEY="}
	out, errOut := e.run("-p", "say hi", "--model", "claude-sonnet-4-5")
	if e.status != 0 || strings.TrimSpace(out) != "hi" {
		t.Fatalf("exit %d\n%s\n%s", e.status, out, errOut)
	}
	if got := v.Requests()[0].Path; !strings.HasSuffix(got, "/locations/us-east5/publishers/anthropic/models/claude-sonnet-4-5@20250929:streamRawPredict") {
		t.Errorf("path = %s", got)
	}
}

func TestVertexWithoutProjectNamesTheVariable(t *testing.T) {
	e := newEnv(t)
	e.extra = []string{"CLAUDE_CODE_USE_VERTEX=1", "CLAUDE_CODE_SKIP_VERTEX_AUTH=1", "ANTHROPIC_API_KEY="}
	_, errOut := e.run("-p", "say hi")
	if e.status == 0 || !strings.Contains(errOut, "no Google Vertex AI project: set ANTHROPIC_VERTEX_PROJECT_ID") {
		t.Errorf("exit %d, stderr:\n%s", e.status, errOut)
	}
}

func TestFoundrySession(t *testing.T) {
	e := newEnv(t)
	f := llmtest.NewFoundry(t, e.srv, "foundry-key")
	e.extra = []string{"CLAUDE_CODE_USE_FOUNDRY=1", "ANTHROPIC_FOUNDRY_BASE_URL=" + f.URL() + "/anthropic/",
		"ANTHROPIC_FOUNDRY_API_KEY=foundry-key", "ANTHROPIC_API_KEY="}
	platformSession(e)
	checkPlatformRun(t, e)
	if got := f.Requests(); len(got) != 3 || got[0].Header.Get("x-api-key") != "foundry-key" {
		t.Errorf("Foundry fake saw %d requests", len(got))
	}
}

func TestFoundryWithoutCredentialsNamesTheVariables(t *testing.T) {
	e := newEnv(t)
	e.extra = []string{"CLAUDE_CODE_USE_FOUNDRY=1", "ANTHROPIC_FOUNDRY_RESOURCE=my-res", "ANTHROPIC_API_KEY="}
	_, errOut := e.run("-p", "say hi")
	if e.status == 0 || !strings.Contains(errOut, "no Microsoft Foundry credentials: set ANTHROPIC_FOUNDRY_API_KEY") {
		t.Errorf("exit %d, stderr:\n%s", e.status, errOut)
	}
}

func TestDoctorNamesThePlatform(t *testing.T) {
	e := newEnv(t)
	e.extra = []string{"CLAUDE_CODE_USE_VERTEX=1", "CLAUDE_CODE_SKIP_VERTEX_AUTH=1", "ANTHROPIC_VERTEX_PROJECT_ID=proj-7",
		"CLOUD_ML_REGION=europe-west4", "ANTHROPIC_API_KEY="}
	out, errOut := e.run("doctor")
	for _, want := range []string{"provider: Google Vertex AI at https://europe-west4-aiplatform.googleapis.com/v1", "region europe-west4 (CLOUD_ML_REGION)", "project proj-7 (ANTHROPIC_VERTEX_PROJECT_ID)", "credentials: none"} {
		if !strings.Contains(out, want) {
			t.Errorf("doctor lacks %q:\n%s\n%s", want, out, errOut)
		}
	}
}
