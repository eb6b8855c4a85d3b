package web

import (
	"sync"
	"time"

	"github.com/tackcode/tack/internal/tool"
)

// pageCache keeps fetched pages for a while, so that reading a long page in
// parts, or asking a second question of it, does not fetch it again.
// It is safe for concurrent use.
type pageCache struct {
	mu      sync.Mutex
	entries map[string]cachedPage
	size    int // content bytes held
}

type cachedPage struct {
	page    page
	expires time.Time
}

// cacheKey keys the session's pageCache in tool.Env state.
type cacheKey struct{}

func sessionCache(env *tool.Env) *pageCache {
	return env.State(cacheKey{}, func() any { return &pageCache{entries: map[string]cachedPage{}} }).(*pageCache)
}

// get returns the page cached for key if it has not expired at now.
func (c *pageCache) get(key string, now time.Time) (page, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.entries[key]
	if !ok || !now.Before(e.expires) {
		return page{}, false
	}
	return e.page, true
}

// put caches p under key until expires, first dropping expired pages and
// then those closest to expiry until the cache holds at most limit bytes.
func (c *pageCache) put(key string, p page, now, expires time.Time, limit int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.drop(key)
	if len(p.content) > limit {
		return
	}
	for k, e := range c.entries {
		if !now.Before(e.expires) {
			c.drop(k)
		}
	}
	for c.size+len(p.content) > limit {
		var oldest string
		for k, e := range c.entries {
			if oldest == "" || e.expires.Before(c.entries[oldest].expires) {
				oldest = k
			}
		}
		c.drop(oldest)
	}
	c.entries[key] = cachedPage{page: p, expires: expires}
	c.size += len(p.content)
}

func (c *pageCache) drop(key string) {
	if e, ok := c.entries[key]; ok {
		c.size -= len(e.page.content)
		delete(c.entries, key)
	}
}
