package tui

import (
	"testing"

	"github.com/tackcode/tack/agent"
	"github.com/tackcode/tack/internal/llm/llmtest"
)

// TestStatusNamesTheProvider: /status says which provider, endpoint,
// region and credential the session's requests use, on the Anthropic API
// and on a cloud platform selected by Claude Code's variables.
func TestStatusNamesTheProvider(t *testing.T) {
	t.Run("anthropic", func(t *testing.T) {
		srv := llmtest.New(t, llmtest.Reply(llmtest.Text("Hello there.")))
		r := startRun(t, srv, t.TempDir(), "hi")
		r.out.waitFor(t, "Hello there.")
		r.typeKeys("/status\r")
		r.out.waitFor(t, "Provider: Anthropic API")
		r.out.waitFor(t, "Endpoint: "+srv.URL())
		r.out.waitFor(t, "Credentials: ANTHROPIC_API_KEY")
		r.quit()
	})
	t.Run("bedrock", func(t *testing.T) {
		srv := llmtest.New(t, llmtest.Reply(llmtest.Text("Hello from Bedrock.")))
		front := llmtest.NewBedrock(t, srv, llmtest.BedrockAuth{AccessKeyID: "AKIDTEST", SecretAccessKey: "secret", Region: "eu-west-1"})
		r := startRunIn(t, srv, t.TempDir(), "hi", true, "", func(o *agent.Options) {
			for k, v := range map[string]string{
				"CLAUDE_CODE_USE_BEDROCK": "1", "ANTHROPIC_BEDROCK_BASE_URL": front.URL(), "AWS_EC2_METADATA_DISABLED": "true",
				"ANTHROPIC_API_KEY": "", "AWS_REGION": "eu-west-1", "AWS_ACCESS_KEY_ID": "AKIDTEST", "AWS_SECRET_ACCESS_KEY": "secret",
			} {
				o.Env[k] = v
			}
		})
		r.out.waitFor(t, "Hello from Bedrock.")
		r.typeKeys("/status\r")
		r.out.waitFor(t, "Provider: Amazon Bedrock")
		r.out.waitFor(t, "Endpoint: "+front.URL())
		r.out.waitFor(t, "Region: eu-west-1 (from AWS_REGION)")
		r.out.waitFor(t, "Credentials: AWS")
		if n := len(front.Requests()); n != 1 {
			t.Errorf("the Bedrock fake saw %d requests, want 1", n)
		}
		r.quit()
	})
}

// TestLSPListsTheServers: /lsp lists the session's language servers with
// their state, and says so when there are none.
func TestLSPListsTheServers(t *testing.T) {
	t.Run("configured", func(t *testing.T) {
		srv := llmtest.New(t, llmtest.Reply(llmtest.Text("Hello there.")))
		r := startRunIn(t, srv, t.TempDir(), "hi", true, "", func(o *agent.Options) {
			o.Settings = `{"lspServers": {"gopls": {"command": "gopls", "args": ["serve"], "extensionToLanguage": {".go": "go"}}}}`
		})
		r.out.waitFor(t, "Hello there.")
		r.typeKeys("/lsp\r")
		r.out.waitFor(t, "gopls: not started · .go · gopls")
		r.quit()
	})
	t.Run("none", func(t *testing.T) {
		srv := llmtest.New(t, llmtest.Reply(llmtest.Text("Hello there.")))
		r := startRun(t, srv, t.TempDir(), "hi")
		r.out.waitFor(t, "Hello there.")
		r.typeKeys("/lsp\r")
		r.out.waitFor(t, "No language servers are configured")
		r.quit()
	})
}
