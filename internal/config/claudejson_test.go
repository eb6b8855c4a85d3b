package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tackcode/tack/internal/jsontree"
)

func TestClaudeJSONPath(t *testing.T) {
	home := t.TempDir()
	getenv := func(m map[string]string) func(string) string { return func(k string) string { return m[k] } }
	if p, _ := ClaudeJSONPath(getenv(map[string]string{"HOME": home})); p != filepath.Join(home, ".claude.json") {
		t.Errorf("default %s", p)
	}
	dir := t.TempDir()
	if p, _ := ClaudeJSONPath(getenv(map[string]string{"HOME": home, "CLAUDE_CONFIG_DIR": dir})); p != filepath.Join(dir, ".claude.json") {
		t.Errorf("CLAUDE_CONFIG_DIR %s", p)
	}
	os.WriteFile(filepath.Join(dir, ".config.json"), []byte("{}"), 0o600)
	if p, _ := ClaudeJSONPath(getenv(map[string]string{"HOME": home, "CLAUDE_CONFIG_DIR": dir})); p != filepath.Join(dir, ".config.json") {
		t.Errorf("legacy %s", p)
	}
}

func TestLockIsClaudeCodes(t *testing.T) {
	path := filepath.Join(t.TempDir(), ".claude.json")
	lock := path + ".lock"
	// Held by a live Claude Code: the edit waits, then gives up.
	if err := os.Mkdir(lock, 0o700); err != nil {
		t.Fatal(err)
	}
	if _, err := lockFile(path, 50*time.Millisecond); err == nil || !strings.Contains(err.Error(), "is locked by another program") {
		t.Errorf("fresh lock: %v", err)
	}
	// Left behind by a dead one: taken over, and released after the edit.
	old := time.Now().Add(-time.Minute)
	os.Chtimes(lock, old, old)
	err := EditClaudeJSON(path, func(e *jsontree.Editor) (bool, error) { return true, e.Set([]string{"k"}, []byte("1")) })
	if err != nil {
		t.Fatalf("stale lock: %v", err)
	}
	if _, err := os.Stat(lock); !os.IsNotExist(err) {
		t.Errorf("lock not released: %v", err)
	}
	if info, err := os.Stat(path); err != nil || info.Mode().Perm() != 0o600 {
		t.Errorf("a new ~/.claude.json is private: %v %v", info.Mode(), err)
	}
}

func TestEditRefusesAFileChangedMeanwhile(t *testing.T) {
	path := filepath.Join(t.TempDir(), ".claude.json")
	os.WriteFile(path, []byte(`{"numStartups": 1}`), 0o600)
	err := EditClaudeJSON(path, func(e *jsontree.Editor) (bool, error) {
		// Claude Code writes the file without the lock (its fallback path)
		// while tack is editing it.
		os.WriteFile(path, []byte(`{"numStartups": 2}`), 0o600)
		return true, e.Set([]string{"mcpServers", "u"}, []byte(`{"command": "u"}`))
	})
	if err == nil || !strings.Contains(err.Error(), "changed while tack was editing it; nothing written") {
		t.Errorf("%v", err)
	}
	if got, _ := os.ReadFile(path); string(got) != `{"numStartups": 2}` {
		t.Errorf("the other writer's change was lost: %s", got)
	}
}

// TestReadJSONFileStandIn: an empty directory where a configuration file
// would be (the sandbox's stand-in for a missing .mcp.json) is no file; a
// directory with something in it is an error.
func TestReadJSONFileStandIn(t *testing.T) {
	dir := t.TempDir()
	standIn := filepath.Join(dir, ".mcp.json")
	if err := os.Mkdir(standIn, 0o555); err != nil {
		t.Fatal(err)
	}
	if src, exists, err := ReadJSONFile(standIn, 1<<20); src != nil || exists || err != nil {
		t.Errorf("empty directory: %q %v %v, want no file", src, exists, err)
	}
	full := filepath.Join(dir, "full")
	if err := os.MkdirAll(filepath.Join(full, "x"), 0o755); err != nil {
		t.Fatal(err)
	}
	if _, exists, err := ReadJSONFile(full, 1<<20); !exists || err == nil {
		t.Errorf("directory with entries: exists %v, err %v, want an error", exists, err)
	}
}
