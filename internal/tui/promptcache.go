package tui

import (
	"math"
	"time"

	"github.com/tackcode/tack/agent"
)

// The prompt cache as the main thread's requests saw it: the status line's
// prompt_cache object, with Claude Code's meaning. Each request is judged
// against the one before it: a request that read from the cache much less
// than the two share was a miss, unless a drop was expected (the
// conversation was compacted, the model changed) and it came within the
// cache's lifetime.

// cacheMissFloor and cacheHitShare decide a miss: at least this many
// tokens of the shared prefix were not read from the cache, and what was
// read is under this share of it.
const (
	cacheMissFloor = 2000
	cacheHitShare  = 0.95
)

// cacheRequest is one request's use of the cache.
type cacheRequest struct {
	at                   time.Time
	ttl                  string // "5m" or "1h"
	input, read, written int64
}

func (r cacheRequest) total() int64 { return r.input + r.read + r.written }
func (r cacheRequest) cached() bool { return r.read+r.written > 0 }

// promptCache tallies the main thread's requests.
type promptCache struct {
	last          *cacheRequest
	lastMessageID string // the API message last recorded: one per request
	requests      int
	misses        int
	expected      int   // rebuilds that were expected
	read, written int64 // over the session
	input         int64
	missRewritten int64 // tokens written again after misses
	lastMissAt    time.Time
	dropExpected  bool
}

// statusPromptCache is the status line's prompt_cache object.
type statusPromptCache struct {
	Warm                bool           `json:"warm"`
	CachingObserved     bool           `json:"caching_observed"`
	TTL                 string         `json:"ttl"`
	ExpiresAt           *int64         `json:"expires_at"`
	Requests            int            `json:"requests"`
	Misses              int            `json:"misses"`
	ExpectedRebuilds    int            `json:"expected_rebuilds"`
	HitRatio            *float64       `json:"hit_ratio"`
	CacheWriteTokens    int64          `json:"cache_write_tokens"`
	MissRecacheTokens   int64          `json:"miss_recache_tokens"`
	LastMissAt          *int64         `json:"last_miss_at"`
	LastMissCause       any            `json:"last_miss_cause"`
	MissCauses          map[string]int `json:"miss_causes"`
	RecacheTokensIfCold *int64         `json:"recache_tokens_if_cold"`
}

// ttlDuration is how long a TTL keeps an entry.
func ttlDuration(ttl string) time.Duration {
	if ttl == "1h" {
		return time.Hour
	}
	return 5 * time.Minute
}

// observe records the request behind an assistant message of the main
// thread; the other messages of the same API message add nothing.
func (c *promptCache) observe(msg *agent.AssistantMessage, at time.Time) {
	u := msg.Message.Usage
	if u.InputTokens+u.CacheReadInputTokens+u.CacheCreationInputTokens == 0 {
		return
	}
	if id := msg.Message.ID; id != "" {
		if id == c.lastMessageID {
			return
		}
		c.lastMessageID = id
	}
	r := cacheRequest{at: at, ttl: "5m", input: u.InputTokens, read: u.CacheReadInputTokens, written: u.CacheCreationInputTokens}
	switch cc := u.CacheCreation; {
	case cc != nil && cc.Ephemeral1h > 0:
		r.ttl = "1h"
	case cc != nil && cc.Ephemeral5m > 0:
	case r.written == 0 && c.last != nil:
		// Nothing written: the entries read keep the lifetime they had.
		r.ttl = c.last.ttl
	}
	c.record(r)
}

// record counts a request by how it used the cache.
func (c *promptCache) record(r cacheRequest) {
	prev := c.last
	expected := c.dropExpected && prev != nil && r.at.Sub(prev.at) < ttlDuration(prev.ttl)
	c.dropExpected = false
	switch {
	case prev == nil, !c.cachedSoFar() && !r.cached(), !prev.cached() && r.cached():
		// A first request, a session with no caching, or the first
		// write: nothing to miss yet.
	default:
		shared := min(prev.total(), r.total())
		if float64(r.read) < cacheHitShare*float64(shared) && shared-r.read >= cacheMissFloor {
			if expected {
				c.expected++
			} else {
				c.misses++
				c.missRewritten += r.written
				c.lastMissAt = r.at
			}
		}
	}
	c.requests++
	c.read += r.read
	c.written += r.written
	c.input += r.input
	c.last = &r
}

func (c *promptCache) cachedSoFar() bool { return c.read+c.written > 0 }

// expectDrop says the next request will not find the cache as the last one
// left it (a compaction rewrote the conversation, the model changed).
func (c *promptCache) expectDrop() {
	if c.last != nil {
		c.dropExpected = true
	}
}

// status is the prompt_cache object at now; nil before the first request,
// when Claude Code leaves the key out. tack does not attribute misses to a
// cause: last_miss_cause is null and miss_causes empty.
func (c *promptCache) status(now time.Time) *statusPromptCache {
	if c.last == nil {
		return nil
	}
	last := *c.last
	out := &statusPromptCache{
		CachingObserved:   c.cachedSoFar(),
		TTL:               last.ttl,
		Requests:          c.requests,
		Misses:            c.misses,
		ExpectedRebuilds:  c.expected,
		CacheWriteTokens:  c.written,
		MissRecacheTokens: c.missRewritten,
		MissCauses:        map[string]int{},
	}
	if total := c.read + c.written + c.input; total > 0 {
		ratio := float64(c.read) / float64(total)
		out.HitRatio = &ratio
	}
	if last.cached() {
		expires := last.at.Add(ttlDuration(last.ttl))
		secs := int64(math.Ceil(float64(expires.UnixMilli()) / 1000))
		out.ExpiresAt = &secs
		out.Warm = now.Before(expires)
	}
	if !c.lastMissAt.IsZero() {
		secs := c.lastMissAt.Unix()
		out.LastMissAt = &secs
	}
	if !c.dropExpected {
		n := last.total()
		out.RecacheTokensIfCold = &n
	}
	return out
}
