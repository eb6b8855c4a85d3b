package fs

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tackcode/tack/internal/llm"
)

// buffers are an editor's unsaved text, by path.
type buffers map[string]string

func (b buffers) ReadTextFile(_ context.Context, path string) (string, error) {
	if text, ok := b[path]; ok {
		return text, nil
	}
	data, err := os.ReadFile(path)
	return string(data), err
}

func (b buffers) WriteTextFile(_ context.Context, path, content string) error {
	b[path] = content
	return nil
}

func TestFileToolsUseTheHostsTextFiles(t *testing.T) {
	env, dir := newEnv(t)
	path := filepath.Join(dir, "a.go")
	if err := os.WriteFile(path, []byte("package disk\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	editor := buffers{path: "package buffer\n"}
	env.TextFiles = editor

	res := mustCall(t, readTool{}, env, map[string]any{"file_path": path})
	if text := llm.TextOf(res.Content); !strings.Contains(text, "package buffer") || strings.Contains(text, "disk") {
		t.Errorf("Read gave %q, want the buffer", text)
	}
	mustCall(t, editTool{}, env, map[string]any{"file_path": path, "old_string": "buffer", "new_string": "edited"})
	if editor[path] != "package edited\n" {
		t.Errorf("buffer after Edit: %q", editor[path])
	}
	created := filepath.Join(dir, "sub", "new.go")
	mustCall(t, writeTool{}, env, map[string]any{"file_path": created, "content": "package fresh\n"})
	if editor[created] != "package fresh\n" {
		t.Errorf("buffer after Write: %q", editor[created])
	}
	if b, _ := os.ReadFile(path); string(b) != "package disk\n" {
		t.Errorf("the disk changed: %q", b)
	}
	if _, err := os.Stat(created); !os.IsNotExist(err) {
		t.Errorf("Write went to the disk too: %v", err)
	}
}
