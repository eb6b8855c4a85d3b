package main

import (
	"log/slog"

	"go.temporal.io/sdk/log"
)

// logAdapter gives the SDK's logger interface to l (nil: the SDK's own
// default logger).
func logAdapter(l *slog.Logger) log.Logger {
	if l == nil {
		return log.NewStructuredLogger(slog.New(slog.NewTextHandler(discard{}, nil)))
	}
	return log.NewStructuredLogger(l)
}

type discard struct{}

func (discard) Write(p []byte) (int, error) { return len(p), nil }
