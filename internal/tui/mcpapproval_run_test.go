package tui

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tackcode/tack/agent"
	"github.com/tackcode/tack/internal/llm/llmtest"
)

// mcpProject is a trusted folder whose .mcp.json has servers alpha and
// beta, and the options a session there starts with.
func mcpProject(t *testing.T) (dir, home string, opts agent.Options) {
	t.Helper()
	dir, home = t.TempDir(), t.TempDir()
	mcpJSON := `{"mcpServers": {"alpha": {"command": "alpha-server", "args": ["--stdio"]}, "beta": {"command": "beta-server"}}}`
	if err := os.WriteFile(filepath.Join(dir, ".mcp.json"), []byte(mcpJSON), 0o644); err != nil {
		t.Fatal(err)
	}
	opts = agent.Options{Cwd: dir, Env: map[string]string{"HOME": home, "CLAUDE_CONFIG_DIR": filepath.Join(home, ".claude")}}
	return dir, home, opts
}

// claudeJSON is the text of the file the answers are recorded in.
func claudeJSON(t *testing.T, opts agent.Options) string {
	t.Helper()
	ws, err := agent.CheckWorkspace(opts)
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(ws.ConfigFile)
	if err != nil {
		t.Fatal(err)
	}
	return strings.Join(strings.Fields(string(data)), "")
}

// TestMCPServersOfTheProjectAreApprovedInADialog: each server of .mcp.json
// nobody decided on is put to the user before the session starts, and the
// answer is recorded as `tack mcp approve` records it.
func TestMCPServersOfTheProjectAreApprovedInADialog(t *testing.T) {
	dir, home, opts := mcpProject(t)
	r := startRunIn(t, llmtest.New(t), dir, "", true, home)
	r.out.waitFor(t, "New MCP server found in .mcp.json: alpha")
	r.out.waitFor(t, "alpha-server --stdio")
	r.out.waitFor(t, "3. Continue without using this MCP server")
	r.typeKeys("2")
	r.out.waitFor(t, "✓ Approved MCP server alpha")
	r.out.waitFor(t, "New MCP server found in .mcp.json: beta")
	r.typeKeys("\x1b") // Esc: continue without it
	r.out.waitFor(t, "✗ Not using MCP server beta")
	r.out.waitFor(t, "Type a prompt")
	r.quit()
	got := claudeJSON(t, opts)
	for _, want := range []string{`"enabledMcpjsonServers":["alpha"]`, `"disabledMcpjsonServers":["beta"]`} {
		if !strings.Contains(got, want) {
			t.Errorf("~/.claude.json lacks %s:\n%s", want, got)
		}
	}
	if pending, err := agent.PendingMCPServers(opts); err != nil || len(pending) != 0 {
		t.Errorf("still pending after the answers: %v %v", pending, err)
	}
}

func TestMCPApprovalOfAllFutureServers(t *testing.T) {
	dir, home, opts := mcpProject(t)
	r := startRunIn(t, llmtest.New(t), dir, "", true, home)
	r.out.waitFor(t, "New MCP server found in .mcp.json: alpha")
	r.typeKeys("1")
	r.out.waitFor(t, "✓ Approved every MCP server of this project's .mcp.json")
	r.out.waitFor(t, "Type a prompt")
	r.quit()
	if strings.Contains(r.out.text(), "found in .mcp.json: beta") {
		t.Error("beta was asked about after all future servers were approved")
	}
	if got := claudeJSON(t, opts); !strings.Contains(got, `"enableAllProjectMcpServers":true`) {
		t.Errorf("~/.claude.json lacks enableAllProjectMcpServers:\n%s", got)
	}
}
