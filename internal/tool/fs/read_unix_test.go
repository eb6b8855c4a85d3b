//go:build unix

package fs

import (
	"path/filepath"
	"syscall"
	"testing"
)

func TestReadRefusesFIFO(t *testing.T) {
	env, dir := newEnv(t)
	path := filepath.Join(dir, "pipe")
	if err := syscall.Mkfifo(path, 0o644); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	callErr(t, readTool{}, env, map[string]any{"file_path": path}, "not a regular file", "named pipe")
}
