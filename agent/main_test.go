package agent_test

import (
	"os"
	"testing"

	"github.com/tackcode/tack/internal/mcp/oauth/oauthtest"
)

// TestMain lets the test binary be the browser an MCP OAuth login opens.
func TestMain(m *testing.M) {
	oauthtest.HelperMain()
	os.Exit(m.Run())
}
