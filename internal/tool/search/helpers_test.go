package search

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/tackcode/tack/internal/llm"
	"github.com/tackcode/tack/internal/tool"
)

// writeTree creates files (slash-separated paths relative to dir) with the
// given contents. Their modification times increase in the order of keys
// given in order, if any, one minute apart, oldest first.
func writeTree(t *testing.T, dir string, files map[string]string, order ...string) {
	t.Helper()
	for name, content := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	base := time.Now().Add(-time.Hour)
	for i, name := range order {
		setMtime(t, filepath.Join(dir, filepath.FromSlash(name)), base.Add(time.Duration(i)*time.Minute))
	}
}

func setMtime(t *testing.T, path string, when time.Time) {
	t.Helper()
	if err := os.Chtimes(path, when, when); err != nil {
		t.Fatal(err)
	}
}

// call runs a tool with input as JSON, validated by the registry first as
// the engine does.
func call(t *testing.T, tl tool.Tool, env *tool.Env, input map[string]any) (string, any, error) {
	t.Helper()
	raw, err := json.Marshal(input)
	if err != nil {
		t.Fatal(err)
	}
	if err := tool.NewRegistry(tl).Validate(tl, raw); err != nil {
		return "", nil, err
	}
	res, err := tl.Run(context.Background(), env, raw)
	if err != nil {
		return "", nil, err
	}
	return llm.TextOf(res.Content), res.Structured, nil
}

// mustCall is call for calls that must succeed.
func mustCall(t *testing.T, tl tool.Tool, env *tool.Env, input map[string]any) (string, any) {
	t.Helper()
	text, structured, err := call(t, tl, env, input)
	if err != nil {
		t.Fatalf("%s %v: %v", tl.Name(), input, err)
	}
	return text, structured
}

// contextCancelled returns a context that is already cancelled.
func contextCancelled(t *testing.T) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	return ctx, cancel
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	raw, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return raw
}
