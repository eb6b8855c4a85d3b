package runner

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tackcode/tack/cmd/tack-worker/internal/gittest"
	"github.com/tackcode/tack/cmd/tack-worker/store"
	"github.com/tackcode/tack/cmd/tack-worker/task"
	"github.com/tackcode/tack/internal/llm"
	"github.com/tackcode/tack/internal/llm/llmtest"
)

// fakeClock is a limiter's clock whose sleeps move it on.
type fakeClock struct {
	mu     sync.Mutex
	t      time.Time
	sleeps []time.Duration
}

func (c *fakeClock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *fakeClock) sleep(ctx context.Context, d time.Duration) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.sleeps = append(c.sleeps, d)
	c.t = c.t.Add(d)
	return ctx.Err()
}

// A 429 one worker gets makes the other workers' requests wait its
// retry-after, and only until then.
func TestRateLimitIsSharedByTheWorkers(t *testing.T) {
	var calls atomic.Int32
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if calls.Add(1) == 1 {
			w.Header().Set("retry-after", "7")
			w.WriteHeader(http.StatusTooManyRequests)
			return
		}
		w.WriteHeader(http.StatusOK)
	}))
	defer api.Close()
	st, err := store.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	clock := &fakeClock{t: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)}
	worker := func(id string) *http.Client {
		l := newLimiter(st, id, http.DefaultTransport)
		l.now, l.sleep = clock.now, clock.sleep
		return &http.Client{Transport: l}
	}
	w1, w2 := worker("w1"), worker("w2")
	get := func(c *http.Client) int {
		t.Helper()
		resp, err := c.Get(api.URL)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if code := get(w1); code != http.StatusTooManyRequests {
		t.Fatalf("first request: %d", code)
	}
	rl, err := st.RateLimit()
	if err != nil || rl.Worker != "w1" || rl.Status != 429 || !rl.NotBefore.Equal(clock.now().Add(7*time.Second)) {
		t.Fatalf("shared rate limit after the 429: %+v, %v", rl, err)
	}
	if code := get(w2); code != http.StatusOK {
		t.Fatalf("second worker's request: %d", code)
	}
	if len(clock.sleeps) != 1 || clock.sleeps[0] != 7*time.Second {
		t.Fatalf("the second worker waited %v, want 7s once", clock.sleeps)
	}
	// The limit is over: no more waiting, for either worker.
	get(w1)
	get(w2)
	if len(clock.sleeps) != 1 {
		t.Fatalf("waits after the limit ended: %v", clock.sleeps)
	}
	// An earlier limit does not shorten a later one.
	later := rl.NotBefore.Add(time.Hour)
	if err := st.ExtendRateLimit(store.RateLimit{NotBefore: later}); err != nil {
		t.Fatal(err)
	}
	if err := st.ExtendRateLimit(store.RateLimit{NotBefore: rl.NotBefore}); err != nil {
		t.Fatal(err)
	}
	if got, _ := st.RateLimit(); !got.NotBefore.Equal(later) {
		t.Fatalf("rate limit %v, want the later %v", got.NotBefore, later)
	}
	// A wait is bounded, and ends with the request's context.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, api.URL, nil)
	if _, err := w1.Do(req); !errors.Is(err, context.Canceled) {
		t.Fatalf("request cancelled while waiting: %v", err)
	}
	if last := clock.sleeps[len(clock.sleeps)-1]; last != maxRateLimitWait {
		t.Fatalf("waited %v for a limit an hour away, want the bound %v", last, maxRateLimitWait)
	}
}

// A session's 429 reaches the store through the agent's transport, and
// the session goes on after it.
func TestSessionSharesItsRateLimit(t *testing.T) {
	dir := t.TempDir()
	url, _ := gittest.Repo(t, dir, "app", map[string]string{"README": "app\n"})
	st, err := store.Open(filepath.Join(dir, "store"))
	if err != nil {
		t.Fatal(err)
	}
	srv := llmtest.New(t, llmtest.Turn{Faults: []llmtest.Fault{{Status: 429, RetryAfter: "0"}}, Content: []llm.Block{llm.Text("done")}})
	env := map[string]string{"ANTHROPIC_API_KEY": "k", "ANTHROPIC_BASE_URL": srv.URL(), "ANTHROPIC_MODEL": ""}
	r := &Runner{Store: st, WorkRoot: filepath.Join(dir, "w1"), WorkerID: "w1", Env: env}
	before := time.Now()
	res, err := r.RunAgent(context.Background(), RunInput{RunID: "fleet-x/t1",
		Task: task.Task{ID: "t1", Repo: url, Prompt: "hi", PermissionMode: "bypassPermissions", Branch: "tack/x/t1"}})
	if err != nil || res.Text != "done" {
		t.Fatalf("run: %+v, %v", res, err)
	}
	rl, err := st.RateLimit()
	if err != nil || rl.Worker != "w1" || rl.Status != 429 || rl.NotBefore.Before(before) {
		t.Fatalf("shared rate limit after the session's 429: %+v, %v", rl, err)
	}
}
