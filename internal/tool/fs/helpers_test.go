package fs

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tackcode/tack/internal/jsonx"
	"github.com/tackcode/tack/internal/llm"
	"github.com/tackcode/tack/internal/shell"
	"github.com/tackcode/tack/internal/tool"
)

func newEnv(t *testing.T) (*tool.Env, string) {
	t.Helper()
	dir := t.TempDir()
	return &tool.Env{ProjectDir: dir, Shell: shell.New(dir, nil), Files: tool.NewFileState(), ScratchDir: t.TempDir()}, dir
}

// call validates input against the tool's schema, as the registry does
// before any call, then runs the tool.
func call(t *testing.T, tl tool.Tool, env *tool.Env, input map[string]any) (tool.Result, error) {
	t.Helper()
	raw, err := json.Marshal(input)
	if err != nil {
		t.Fatal(err)
	}
	if err := tool.NewRegistry(tl).Validate(tl, raw); err != nil {
		t.Fatalf("%s input %s rejected by schema: %v", tl.Name(), raw, err)
	}
	return tl.Run(context.Background(), env, raw)
}

// mustCall is call for calls expected to succeed.
func mustCall(t *testing.T, tl tool.Tool, env *tool.Env, input map[string]any) tool.Result {
	t.Helper()
	res, err := call(t, tl, env, input)
	if err != nil {
		t.Fatalf("%s %v: %v", tl.Name(), input, err)
	}
	return res
}

// callErr is call for calls expected to fail with a message containing
// every one of want.
func callErr(t *testing.T, tl tool.Tool, env *tool.Env, input map[string]any, want ...string) error {
	t.Helper()
	_, err := call(t, tl, env, input)
	if err == nil {
		t.Fatalf("%s %v succeeded, want an error", tl.Name(), input)
	}
	for _, w := range want {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("%s error %q does not mention %q", tl.Name(), err, w)
		}
	}
	return err
}

func textOf(r tool.Result) string { return llm.TextOf(r.Content) }

func structured(t *testing.T, r tool.Result) string {
	t.Helper()
	b, err := jsonx.Marshal(r.Structured)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func writeFile(t *testing.T, path, content string, mode os.FileMode) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), mode); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, mode); err != nil { // WriteFile's mode is cut by the umask
		t.Fatal(err)
	}
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// readIt reads path with the Read tool so that the writing tools accept it.
func readIt(t *testing.T, env *tool.Env, path string) {
	t.Helper()
	mustCall(t, readTool{}, env, map[string]any{"file_path": path})
}

// touch changes path's modification time without changing its content.
func touch(t *testing.T, path string) {
	t.Helper()
	future := time.Now().Add(time.Hour)
	if err := os.Chtimes(path, future, future); err != nil {
		t.Fatal(err)
	}
}

// noTempFiles fails if a temporary file of the atomic writer is left in dir.
func noTempFiles(t *testing.T, dir string) {
	t.Helper()
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if strings.Contains(d.Name(), ".tack-") {
			t.Errorf("temporary file left behind: %s", p)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

var errInjected = errors.New("injected failure")

// failingWriter fails every write just before the rename.
func failingWriter() atomicWriter {
	return atomicWriter{beforeRename: func() error { return errInjected }}
}

func isInputError(t *testing.T, err error) {
	t.Helper()
	if !tool.IsInputError(err) {
		t.Errorf("error %q is not an input error (tool_use_error)", err)
	}
}
