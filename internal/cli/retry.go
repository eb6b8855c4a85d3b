package cli

import (
	"fmt"
	"io"
	"time"

	"github.com/tackcode/tack/agent"
)

// reportRetry writes to w, when m says a request is retried, why and when.
func reportRetry(w io.Writer, m agent.Message) {
	sys, ok := m.(*agent.SystemMessage)
	if !ok || sys.Subtype != agent.SubtypeAPIRetry {
		return
	}
	cause := sys.Cause
	if cause == "" {
		cause = "API error (" + sys.Error + ")"
	}
	wait := time.Duration(sys.RetryDelayMS) * time.Millisecond
	fmt.Fprintf(w, "tack: %s; retrying in %.1f s (attempt %d of %d)\n", cause, wait.Seconds(), sys.Attempt, sys.MaxRetries)
}
