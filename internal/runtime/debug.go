package runtime

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/tackcode/tack/internal/engine"
	"github.com/tackcode/tack/internal/hook"
	"github.com/tackcode/tack/internal/llm"
	"github.com/tackcode/tack/internal/permission"
)

// The debug log (--debug) is Config.Logger at level Debug: each part of
// the session logs under a category ("api", "hooks", "mcp",
// "permissions"), an attribute the handler may filter on. Without a
// Logger nothing is logged and nothing is formatted.

// debugLog is the logger of one category; nil when the session has no
// Logger or the Logger's handler does not take debug lines of it.
func (s *Session) debugLog(category string) *slog.Logger {
	if s.cfg.Logger == nil {
		return nil
	}
	log := s.cfg.Logger.With("category", category)
	if !log.Enabled(context.Background(), slog.LevelDebug) {
		return nil
	}
	return log
}

// logRetries is provider with each retry it waits for written to log,
// beside what the caller's observer does with it; provider itself when
// log is nil.
func logRetries(provider llm.Provider, log *slog.Logger) llm.Provider {
	if log == nil {
		return provider
	}
	return retryLogger{Provider: provider, log: log}
}

type retryLogger struct {
	llm.Provider
	log *slog.Logger
}

func (p retryLogger) Stream(ctx context.Context, req *llm.Request, obs llm.Observer) (*llm.Response, error) {
	next := obs.Retry
	obs.Retry = func(r llm.Retry) {
		p.log.Debug("API retry", "attempt", r.Attempt, "max_retries", r.MaxRetries, "wait", r.Delay.Round(time.Millisecond),
			"status", r.Status, "error", r.Err)
		if next != nil {
			next(r)
		}
	}
	return p.Provider.Stream(ctx, req, obs)
}

// hookTimer logs each hook handler as it starts and ends, with its exit
// code, its outcome and how long it ran.
type hookTimer struct {
	mu      sync.Mutex
	started map[string]time.Time
}

func (h *hookTimer) log(log *slog.Logger, rec hook.Record) {
	if log == nil {
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if rec.Phase == hook.PhaseStarted {
		if h.started == nil {
			h.started = map[string]time.Time{}
		}
		h.started[rec.HookID] = time.Now()
		log.Debug("hook started", "event", rec.HookEvent, "hook", rec.HookName, "id", rec.HookID)
		return
	}
	args := []any{"event", rec.HookEvent, "hook", rec.HookName, "id", rec.HookID, "outcome", rec.Outcome}
	if rec.ExitCode != nil {
		args = append(args, "exit_code", *rec.ExitCode)
	}
	if t, ok := h.started[rec.HookID]; ok {
		args = append(args, "took", time.Since(t).Round(time.Millisecond))
		delete(h.started, rec.HookID)
	}
	log.Debug("hook ended", args...)
}

// logGate is g with each decision written to the debug log: the verdict,
// and the rule (with where it is written) or the mode that made it.
func (s *Session) logGate(g gate) engine.Gate {
	log := s.debugLog("permissions")
	if log == nil {
		return g
	}
	return loggedGate{g: g, log: log}
}

type loggedGate struct {
	g   gate
	log *slog.Logger
}

func (l loggedGate) Check(ctx context.Context, c engine.ToolCall) engine.Verdict {
	v := l.g.Check(ctx, c)
	// The checker's own decision, asked again, names the rule; the verdict
	// may differ (a hook, the sandbox or a skill spared the approval).
	d := l.g.t.checker.Check(permission.Call{Tool: c.Name, Input: c.Input, Cwd: l.g.t.env.Cwd(), ReadOnly: c.ReadOnly})
	rule := "none"
	if d.Rule != nil {
		rule = d.Rule.String()
		if d.Rule.Origin != "" {
			rule += " (" + d.Rule.Origin + ")"
		}
	}
	l.log.Debug("permission check", "tool", c.Name, "id", c.ID, "verdict", verdictName(v.Behavior),
		"rule", rule, "mode", l.g.t.checker.Mode(), "reason", firstNonEmpty(v.Message, d.Reason), "hook_decision", c.HookDecision)
	return v
}

func (l loggedGate) Ask(ctx context.Context, c engine.ToolCall, reason string) engine.Verdict {
	v := l.g.Ask(ctx, c, reason)
	l.log.Debug("permission asked", "tool", c.Name, "id", c.ID, "verdict", verdictName(v.Behavior), "unattended", v.Unattended, "message", v.Message)
	return v
}

func verdictName(b engine.Behavior) string {
	switch b {
	case engine.Allow:
		return "allow"
	case engine.Deny:
		return "deny"
	case engine.Ask:
		return "ask"
	}
	return "unknown"
}
