package runner

import (
	"context"
	"net/http"
	"time"

	"github.com/tackcode/tack/cmd/tack-worker/store"
	"github.com/tackcode/tack/internal/llm/retry"
)

// Rate limits are the account's, not a worker's: a 429 one worker gets
// says every worker of the fleet should wait. limiter is the model
// requests' transport that makes them: before a request it waits until the
// store's shared rate limit is over, and a 429 response extends that limit
// by the response's retry-after (defaultRateLimitWait without one). The
// session's own retry of the refused request then waits as it always
// does; the other tasks, on this worker or another, wait with it instead
// of each spending its retries on the same limit.
type limiter struct {
	store  *store.Store
	worker string
	base   http.RoundTripper
	// now and sleep are the clock (tests replace them).
	now   func() time.Time
	sleep func(ctx context.Context, d time.Duration) error
}

const (
	// defaultRateLimitWait is the shared wait after a 429 without
	// retry-after.
	defaultRateLimitWait = 10 * time.Second
	// maxRateLimitWait bounds a wait, so that a time set by a worker whose
	// clock is far ahead does not stop the fleet.
	maxRateLimitWait = 5 * time.Minute
)

func newLimiter(st *store.Store, worker string, base http.RoundTripper) *limiter {
	return &limiter{store: st, worker: worker, base: base, now: time.Now, sleep: retry.Sleep}
}

func (l *limiter) RoundTrip(req *http.Request) (*http.Response, error) {
	// A store that cannot be read does not stop the request: the limit is
	// advice, the API enforces it anyway.
	if rl, err := l.store.RateLimit(); err == nil {
		if wait := rl.NotBefore.Sub(l.now()); wait > 0 {
			if err := l.sleep(req.Context(), min(wait, maxRateLimitWait)); err != nil {
				return nil, err
			}
		}
	}
	resp, err := l.base.RoundTrip(req)
	if err != nil || resp.StatusCode != http.StatusTooManyRequests {
		return resp, err
	}
	wait := retry.After(resp.Header)
	if wait < 0 {
		wait = defaultRateLimitWait
	}
	_ = l.store.ExtendRateLimit(store.RateLimit{NotBefore: l.now().Add(min(wait, maxRateLimitWait)),
		Worker: l.worker, Status: resp.StatusCode})
	return resp, nil
}
