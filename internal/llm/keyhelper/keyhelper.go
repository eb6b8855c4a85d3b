// Package keyhelper runs the apiKeyHelper of the settings: a shell command
// that prints an API key. As in Claude Code, its key is kept for
// CLAUDE_CODE_API_KEY_HELPER_TTL_MS (five minutes by default) and fetched
// again before the first request after that, and again at once when the
// API refuses it (a 401), so that short-lived keys from a vault or a
// gateway's sign-in keep working through a long session.
package keyhelper

import (
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"time"
)

// TTLVar is the variable that sets how long a key is kept.
const TTLVar = "CLAUDE_CODE_API_KEY_HELPER_TTL_MS"

// DefaultTTL is how long a key is kept when TTLVar is unset, as in Claude
// Code.
const DefaultTTL = 5 * time.Minute

// Timeout bounds one run: a helper that hangs must not hang the session.
const Timeout = 30 * time.Second

// TTL reads TTLVar through getenv: milliseconds, 0 for a fresh key before
// every request.
func TTL(getenv func(string) string) (time.Duration, error) {
	v := strings.TrimSpace(getenv(TTLVar))
	if v == "" {
		return DefaultTTL, nil
	}
	ms, err := strconv.ParseInt(v, 10, 64)
	if err != nil || ms < 0 {
		return 0, fmt.Errorf("%s=%q: want a number of milliseconds (0 or more)", TTLVar, v)
	}
	return time.Duration(ms) * time.Millisecond, nil
}

// Helper runs one helper command and keeps its key. It is safe for
// concurrent use: requests that need a key while the helper runs wait for
// its answer rather than starting it again.
type Helper struct {
	command string
	env     []string
	ttl     time.Duration
	// Warn, when set, hears of a helper that failed while an older key was
	// kept: the older key is used, and the failure must not go unsaid.
	Warn func(error)

	mu      sync.Mutex
	key     string
	fetched time.Time
}

// New returns a helper for command, run by /bin/sh -c with env as its
// whole environment, whose key is kept for ttl.
func New(command string, env []string, ttl time.Duration) *Helper {
	return &Helper{command: command, env: env, ttl: ttl}
}

// Command is the helper's command line.
func (h *Helper) Command() string { return h.command }

// Key is the key to send: the kept one while it is fresh, else a new one.
// When the helper fails but an older key is kept, the older key is
// returned, as Claude Code does, and the failure goes to Warn; it is
// tried again before the next request.
func (h *Helper) Key(ctx context.Context) (string, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.key != "" && time.Since(h.fetched) < h.ttl {
		return h.key, nil
	}
	key, err := h.fetchLocked(ctx)
	if err != nil && key != "" {
		if h.Warn != nil {
			h.Warn(fmt.Errorf("apiKeyHelper: %w; the previous key is used", err))
		}
		return key, nil
	}
	return key, err
}

// Refresh runs the helper again because the API refused the key refused,
// unless the kept key is already another one (a concurrent request
// refreshed it first), and returns the new key.
func (h *Helper) Refresh(ctx context.Context, refused string) (string, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.key != "" && h.key != refused {
		return h.key, nil
	}
	key, err := h.fetchLocked(ctx)
	if err != nil {
		return "", err
	}
	return key, nil
}

// fetchLocked runs the helper; on failure it returns the kept key (maybe
// "") with the error.
func (h *Helper) fetchLocked(ctx context.Context) (string, error) {
	key, err := h.run(ctx)
	if err != nil {
		return h.key, err
	}
	h.key, h.fetched = key, time.Now()
	return key, nil
}

// run runs the command and returns what it printed, trimmed: the key.
func (h *Helper) run(ctx context.Context) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, Timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "/bin/sh", "-c", h.command)
	cmd.Env = h.env
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if ctx.Err() == context.DeadlineExceeded {
		return "", fmt.Errorf("%q did not finish within %s", h.command, Timeout)
	}
	if err != nil {
		if msg := strings.TrimSpace(stderr.String()); msg != "" {
			return "", fmt.Errorf("%q failed: %w: %s", h.command, err, msg)
		}
		return "", fmt.Errorf("%q failed: %w", h.command, err)
	}
	key := strings.TrimSpace(string(out))
	if key == "" {
		return "", fmt.Errorf("%q printed no key", h.command)
	}
	return key, nil
}
