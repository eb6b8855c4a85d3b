package agent_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/tackcode/tack/agent"
)

func TestPendingMCPServersAndTheirDecision(t *testing.T) {
	dir, home := t.TempDir(), t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, ".mcp.json"), []byte(`{"mcpServers": {"web": {"type": "http", "url": "https://mcp.example/mcp"}, "db": {"command": "db-server", "args": ["-v"]}}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	opts := agent.Options{Cwd: dir, Env: map[string]string{"HOME": home, "CLAUDE_CONFIG_DIR": filepath.Join(home, ".claude")}}
	pending, err := agent.PendingMCPServers(opts)
	if err != nil || len(pending) != 2 {
		t.Fatalf("pending %+v %v", pending, err)
	}
	launch := map[string]string{}
	for _, p := range pending {
		launch[p.Name] = p.Launch
	}
	if launch["db"] != "db-server -v" || launch["web"] != "https://mcp.example/mcp" {
		t.Errorf("launch %v", launch)
	}
	untrusted := opts
	untrusted.Untrusted = true
	if p, err := agent.PendingMCPServers(untrusted); err != nil || len(p) != 0 {
		t.Errorf("an untrusted folder's servers never start, so none waits: %v %v", p, err)
	}
	if err := agent.DecideMCPServer(opts, "db", false); err != nil {
		t.Fatal(err)
	}
	if p, err := agent.PendingMCPServers(opts); err != nil || len(p) != 1 || p[0].Name != "web" {
		t.Errorf("after refusing db: %+v %v", p, err)
	}
	if err := agent.ApproveAllMCPServers(opts); err != nil {
		t.Fatal(err)
	}
	if p, err := agent.PendingMCPServers(opts); err != nil || len(p) != 0 {
		t.Errorf("after approving all: %+v %v", p, err)
	}
}
