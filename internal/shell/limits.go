package shell

import (
	"strconv"
	"time"
)

// Defaults for Limits, overridable through the environment.
const (
	DefaultTimeout    = 2 * time.Minute
	DefaultMaxTimeout = 10 * time.Minute
	DefaultMaxOutput  = 30_000
)

// Limits bound what one command may take and keep.
type Limits struct {
	// DefaultTimeout applies when a command asks for none.
	DefaultTimeout time.Duration
	// MaxTimeout caps any requested timeout.
	MaxTimeout time.Duration
	// MaxOutput is how many bytes (about as many characters) of each of
	// stdout and stderr are kept: the first half and the last half, with
	// what lies between them cut.
	MaxOutput int
}

// LimitsFromEnv returns the default limits, overridden by
// BASH_DEFAULT_TIMEOUT_MS, BASH_MAX_TIMEOUT_MS and BASH_MAX_OUTPUT_LENGTH
// when env sets them to positive integers. The maximum timeout is never
// below the default one.
func LimitsFromEnv(env []string) Limits {
	l := Limits{DefaultTimeout: DefaultTimeout, MaxTimeout: DefaultMaxTimeout, MaxOutput: DefaultMaxOutput}
	if ms, ok := positiveInt(lookup(env, "BASH_DEFAULT_TIMEOUT_MS")); ok {
		l.DefaultTimeout = time.Duration(ms) * time.Millisecond
	}
	if ms, ok := positiveInt(lookup(env, "BASH_MAX_TIMEOUT_MS")); ok {
		l.MaxTimeout = time.Duration(ms) * time.Millisecond
	}
	if n, ok := positiveInt(lookup(env, "BASH_MAX_OUTPUT_LENGTH")); ok {
		l.MaxOutput = n
	}
	return l.merge(Limits{})
}

// Timeout returns the timeout a command asking for d runs with: the default
// when d is zero or negative, at most MaxTimeout.
func (l Limits) Timeout(d time.Duration) time.Duration {
	if d <= 0 {
		d = l.DefaultTimeout
	}
	return min(d, l.MaxTimeout)
}

// merge returns l with the non-zero fields of o, keeping MaxTimeout at least
// DefaultTimeout.
func (l Limits) merge(o Limits) Limits {
	if o.DefaultTimeout > 0 {
		l.DefaultTimeout = o.DefaultTimeout
	}
	if o.MaxTimeout > 0 {
		l.MaxTimeout = o.MaxTimeout
	}
	if o.MaxOutput > 0 {
		l.MaxOutput = o.MaxOutput
	}
	l.MaxTimeout = max(l.MaxTimeout, l.DefaultTimeout)
	return l
}

func positiveInt(s string) (int, bool) {
	n, err := strconv.Atoi(s)
	return n, err == nil && n > 0
}
