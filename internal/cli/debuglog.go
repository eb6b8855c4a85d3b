package cli

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"
)

// debugCategories are the categories tack's debug log has: each line of
// the session's log is tagged with one (agent.Options.Logger, attribute
// "category").
var debugCategories = []string{"api", "hooks", "mcp", "permissions"}

// debugAll is the value of --debug given without categories.
const debugAll = "all"

// debugFilter is the category filter of --debug, as Claude Code writes it:
// "api,hooks" keeps those categories, "!statsig,!mcp" keeps all but those;
// "" (or "all") keeps everything. Lines of no category (warnings) are kept
// unless only some categories are asked for.
type debugFilter struct{ include, exclude []string }

func parseDebugFilter(s string) (debugFilter, []string) {
	var f debugFilter
	var unknown []string
	for _, c := range strings.Split(s, ",") {
		c = strings.ToLower(strings.TrimSpace(c))
		neg := strings.HasPrefix(c, "!")
		c = strings.TrimSpace(strings.TrimPrefix(c, "!"))
		switch {
		case c == "" || c == debugAll:
			continue
		case !slices.Contains(debugCategories, c):
			// Claude Code's own categories (statsig, 1p…) filter nothing
			// here; a word that is none may be a prompt taken for a filter.
			if !neg {
				unknown = append(unknown, c)
			}
		}
		if neg {
			f.exclude = append(f.exclude, c)
		} else {
			f.include = append(f.include, c)
		}
	}
	return f, unknown
}

func (f debugFilter) allows(category string) bool {
	if slices.Contains(f.exclude, category) {
		return false
	}
	return len(f.include) == 0 || slices.Contains(f.include, category)
}

// debugHandler writes the debug log one line a record, as Claude Code's
// debug files read: "2026-01-02T15:04:05.000Z [DEBUG] [api] message k=v".
// A handler for a category the filter leaves out is disabled, so a log
// call of that category costs one Enabled call.
type debugHandler struct {
	mu       *sync.Mutex
	w        io.Writer
	filter   debugFilter
	category string
	off      bool
	attrs    string // preformatted " k=v" pairs of WithAttrs
}

func newDebugHandler(w io.Writer, filter debugFilter) *debugHandler {
	return &debugHandler{mu: &sync.Mutex{}, w: w, filter: filter, off: !filter.allows("")}
}

func (h *debugHandler) Enabled(context.Context, slog.Level) bool { return !h.off }

func (h *debugHandler) Handle(_ context.Context, r slog.Record) error {
	var b strings.Builder
	b.WriteString(r.Time.UTC().Format("2006-01-02T15:04:05.000Z"))
	fmt.Fprintf(&b, " [%s]", r.Level)
	if h.category != "" {
		fmt.Fprintf(&b, " [%s]", h.category)
	}
	b.WriteString(" " + r.Message + h.attrs)
	r.Attrs(func(a slog.Attr) bool {
		writeAttr(&b, a)
		return true
	})
	b.WriteByte('\n')
	h.mu.Lock()
	defer h.mu.Unlock()
	_, err := io.WriteString(h.w, b.String())
	return err
}

func (h *debugHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	out := *h
	var b strings.Builder
	for _, a := range attrs {
		if a.Key == "category" {
			out.category = a.Value.String()
			out.off = !h.filter.allows(out.category)
			continue
		}
		writeAttr(&b, a)
	}
	out.attrs += b.String()
	return &out
}

func (h *debugHandler) WithGroup(string) slog.Handler { return h }

func writeAttr(b *strings.Builder, a slog.Attr) {
	v := a.Value.Resolve().String()
	if v == "" || strings.ContainsAny(v, " \t\n\"=") {
		v = fmt.Sprintf("%q", v)
	}
	fmt.Fprintf(b, " %s=%s", a.Key, v)
}

// debugLog opens the debug log the flags ask for: --debug-file's file,
// else standard error in print mode, else (the UI owns the terminal) a
// file of its own under <config dir>/debug, which "latest" links to, as
// Claude Code's are. It returns nil when no debug log is asked for, and
// the function that closes it. --debug-file implies --debug.
func (f *printFlags) debugLog(cmd *cobra.Command, stdio IO, ui bool) (*slog.Logger, func(), error) {
	if !cmd.Flags().Changed("debug") && f.debugFile == "" && !f.debugToStderr {
		return nil, func() {}, nil
	}
	filter, unknown := parseDebugFilter(f.debug)
	if len(unknown) > 0 {
		fmt.Fprintf(stdio.Err, "tack: --debug: unknown categories %s (tack's are %s)\n", strings.Join(unknown, ", "), strings.Join(debugCategories, ", "))
	}
	path := f.debugFile
	if path == "" && (!ui || f.debugToStderr) {
		return slog.New(newDebugHandler(stdio.Err, filter)), func() {}, nil
	}
	if path == "" {
		path = filepath.Join(configDir(stdio.Getenv), "debug", fmt.Sprintf("tack-%s-%d.txt", time.Now().UTC().Format("20060102T150405"), os.Getpid()))
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, nil, fmt.Errorf("debug log %s: %w", path, err)
	}
	file, err := os.OpenFile(path, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
	if err != nil {
		return nil, nil, fmt.Errorf("debug log: %w", err)
	}
	if f.debugFile == "" {
		latest := filepath.Join(filepath.Dir(path), "latest")
		_ = os.Remove(latest)
		_ = os.Symlink(path, latest)
		fmt.Fprintf(stdio.Err, "tack: debug log: %s\n", path)
	}
	return slog.New(newDebugHandler(file, filter)), func() { _ = file.Close() }, nil
}

// configDir is $CLAUDE_CONFIG_DIR, else ~/.claude.
func configDir(getenv func(string) string) string {
	if d := getenv("CLAUDE_CONFIG_DIR"); d != "" {
		return d
	}
	home := getenv("HOME")
	if home == "" {
		home, _ = os.UserHomeDir()
	}
	return filepath.Join(home, ".claude")
}
