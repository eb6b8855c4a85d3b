package sdk

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/tackcode/tack/internal/llm/llmtest"
)

// controlOutput is what control.mjs prints.
type controlOutput struct {
	TaskID       string `json:"taskId"`
	ContextUsage struct {
		Categories []struct {
			ID, Kind string
			Tokens   int
		} `json:"categories"`
		TotalTokens  int    `json:"totalTokens"`
		RawMaxTokens int    `json:"rawMaxTokens"`
		Model        string `json:"model"`
		Skills       struct {
			SkillFrontmatter []struct{ Name string } `json:"skillFrontmatter"`
		} `json:"skills"`
	} `json:"contextUsage"`
	Title    string `json:"title"`
	Settings struct {
		Effective map[string]any   `json:"effective"`
		Sources   []map[string]any `json:"sources"`
	} `json:"settings"`
	SetServers struct {
		Added  []string          `json:"added"`
		Errors map[string]string `json:"errors"`
	} `json:"setServers"`
	StatusOff, StatusOn []map[string]any
	Reloaded            struct {
		Commands []struct{ Name string } `json:"commands"`
	} `json:"reloaded"`
	UnknownStop string   `json:"unknownStop"`
	Error       string   `json:"error"`
	Stderr      []string `json:"stderr"`
}

// TestSDKControlMethods calls, through the real Agent SDK, the Query
// methods that send tack the control requests reaching into a session.
func TestSDKControlMethods(t *testing.T) {
	mcpScript, err := filepath.Abs(filepath.Join("..", "mcp", "node_modules", "@modelcontextprotocol", "server-everything", "dist", "index.js"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(mcpScript); err != nil {
		t.Fatal("test/mcp/node_modules is missing: run scripts/test")
	}
	srv := llmtest.New(t,
		llmtest.Reply(llmtest.ToolUse("Bash", map[string]any{"command": "echo $$ > pid; exec sleep 600", "run_in_background": true})),
		llmtest.Reply(llmtest.Text("started")),
		llmtest.Reply(llmtest.ToolUse("session_title", map[string]string{"title": "Login redirect loop"})))
	cwd := workDir(t)
	if err := os.MkdirAll(filepath.Join(cwd, ".claude", "skills", "deploy"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(cwd, ".claude", "skills", "deploy", "SKILL.md"), []byte("---\ndescription: Ship it\n---\nShip.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var out controlOutput
	runScript(t, srv, &out, []string{"MCP_TIMEOUT=30000", "IS_SANDBOX=1"}, "control.mjs", tackBin, cwd, mcpScript)
	if out.Error != "" {
		t.Fatalf("a call threw: %s\ntack's stderr: %s", out.Error, strings.Join(out.Stderr, ""))
	}

	cu := out.ContextUsage
	if cu.Model == "" || cu.RawMaxTokens <= 0 || cu.TotalTokens <= 0 || len(cu.Skills.SkillFrontmatter) != 1 || cu.Skills.SkillFrontmatter[0].Name != "deploy" {
		t.Errorf("getContextUsage: %+v", cu)
	}
	if out.Title != "Login redirect loop" {
		t.Errorf("generateSessionTitle: %q", out.Title)
	}
	if reqs := srv.Requests(); len(reqs) != 3 || !strings.Contains(reqs[2].Model, "haiku") {
		t.Errorf("the title request: %d requests", len(reqs))
	}
	if allow := out.Settings.Effective["permissions"].(map[string]any)["allow"].([]any); !slices.Contains(allow, any("Bash(touch *)")) {
		t.Errorf("getSettings after applyFlagSettings: %v", out.Settings.Effective)
	}
	if !slices.Equal(out.SetServers.Added, []string{"everything"}) || len(out.SetServers.Errors) != 0 {
		t.Errorf("setMcpServers: %+v", out.SetServers)
	}
	if len(out.StatusOff) != 1 || out.StatusOff[0]["status"] != "disabled" || len(out.StatusOn) != 1 || out.StatusOn[0]["status"] != "connected" {
		t.Errorf("toggleMcpServer: off %v, on %v", out.StatusOff, out.StatusOn)
	}
	var names []string
	for _, c := range out.Reloaded.Commands {
		names = append(names, c.Name)
	}
	if !slices.Contains(names, "rollback") || !slices.Contains(names, "deploy") {
		t.Errorf("reloadPlugins commands %v", names)
	}
	b, err := os.ReadFile(filepath.Join(cwd, "pid"))
	if err != nil {
		t.Fatal(err)
	}
	var pid int
	if _, err := fmt.Sscan(strings.TrimSpace(string(b)), &pid); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
		t.Errorf("the background command (pid %d) after stopTask: %v", pid, err)
	}
	if !strings.Contains(out.UnknownStop, "no such task") {
		t.Errorf("stopTask of an unknown id: %q", out.UnknownStop)
	}
}
