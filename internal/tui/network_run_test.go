package tui

import (
	"net"
	"testing"

	"github.com/tackcode/tack/agent"
	"github.com/tackcode/tack/internal/llm/llmtest"
)

// TestUnreachableAPIInTheUI: with the API's port closed, the UI says it
// retries and why, then ends the prompt with one line naming the cause.
func TestUnreachableAPIInTheUI(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	url := "http://" + l.Addr().String()
	l.Close()
	r := startRunIn(t, llmtest.New(t), t.TempDir(), "hello", true, "", func(o *agent.Options) {
		o.Env["ANTHROPIC_BASE_URL"] = url
		o.Env["CLAUDE_CODE_MAX_RETRIES"] = "1"
	})
	r.out.waitFor(t, "API unreachable at "+url+": connection refused · retrying in ")
	r.out.waitFor(t, "(attempt 1 of 1)")
	r.out.waitFor(t, "✗ API unreachable at "+url+": connection refused (2 attempts). Check ANTHROPIC_BASE_URL and that a server is listening there.")
	r.quit()
}
