package oauth

import (
	"os"
	"testing"

	"github.com/tackcode/tack/internal/mcp/oauth/oauthtest"
)

// TestMain lets the test binary be the browser the flows open.
func TestMain(m *testing.M) {
	oauthtest.HelperMain()
	os.Exit(m.Run())
}
