package tui

import (
	"fmt"
	"time"

	"github.com/tackcode/tack/agent"
)

// retryNotice says that a request failed and is tried again: why, when,
// and which attempt out of how many.
func retryNotice(msg *agent.SystemMessage) string {
	cause := msg.Cause
	if cause == "" {
		cause = "API error (" + msg.Error + ")"
	}
	wait := time.Duration(msg.RetryDelayMS) * time.Millisecond
	return fmt.Sprintf("%s · retrying in %.1f s (attempt %d of %d)", cause, wait.Seconds(), msg.Attempt, msg.MaxRetries)
}
