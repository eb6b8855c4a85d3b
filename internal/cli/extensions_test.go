package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/tackcode/tack/internal/llm"
	"github.com/tackcode/tack/internal/llm/llmtest"
)

func writeTestFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o755); err != nil {
		t.Fatal(err)
	}
}

// TestPluginDirAndAgentsFlags runs a plugin given with --plugin-dir (a
// skill, a hook, a bin/ tool and an MCP server) and an agent given with
// --agents, through the command line.
func TestPluginDirAndAgentsFlags(t *testing.T) {
	js, err := filepath.Abs(filepath.Join("..", "..", "test", "mcp", "node_modules", "@modelcontextprotocol", "server-everything", "dist", "index.js"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(js); err != nil {
		t.Fatal("test/mcp/node_modules is missing: run scripts/test (it runs `npm ci --prefix test/mcp`)")
	}
	root := filepath.Join(t.TempDir(), "my-first-plugin")
	writeTestFile(t, filepath.Join(root, ".claude-plugin", "plugin.json"), `{"name": "my-first-plugin", "description": "A greeting plugin to learn the basics", "version": "1.0.0", "author": {"name": "Your Name"}}`)
	writeTestFile(t, filepath.Join(root, "skills", "hello", "SKILL.md"), "---\ndescription: Greet the user\n---\nGreet $ARGUMENTS, then run greet.\n")
	writeTestFile(t, filepath.Join(root, "bin", "greet"), "#!/bin/sh\necho \"hello from the plugin's bin\"\n")
	writeTestFile(t, filepath.Join(root, "hooks", "hooks.json"), `{"hooks": {"PostToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "touch \"${CLAUDE_PLUGIN_ROOT}/post-tool-use\""}]}]}}`)
	writeTestFile(t, filepath.Join(root, ".mcp.json"), `{"mcpServers": {"everything": {"command": "node", "args": ["`+js+`", "stdio"]}}}`)

	srv := llmtest.Start(t, llmtest.Options{Turns: []llmtest.Turn{
		{Content: []llm.Block{llmtest.ToolUse("Bash", map[string]string{"command": "greet"})}},
		{Content: []llm.Block{llmtest.ToolUse("mcp__plugin_my-first-plugin_everything__echo", map[string]string{"message": "via plugin"})}},
		{Content: []llm.Block{llmtest.Text("greeted")}},
	}})
	t.Setenv("TACK_MCP_STARTUP_DEADLINE_MS", "60000") // node starts the server, however busy the machine
	out, errOut, code := run(t, srv, "-p", "--output-format", "stream-json", "--verbose",
		"--plugin-dir", root, "--allowedTools", "Bash(greet),mcp__plugin_my-first-plugin_everything",
		"--agents", `{"judge": {"description": "Judges code", "prompt": "You judge."}}`,
		"/my-first-plugin:hello Ada")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var init struct {
		SlashCommands []string `json:"slash_commands"`
		Agents        []string `json:"agents"`
		Plugins       []struct{ Name, Path string }
		MCPServers    []struct{ Name, Status string } `json:"mcp_servers"`
	}
	first, _, _ := strings.Cut(out, "\n")
	if err := json.Unmarshal([]byte(first), &init); err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(init.SlashCommands, "my-first-plugin:hello") || !slices.Contains(init.Agents, "judge") ||
		len(init.Plugins) != 1 || init.Plugins[0].Name != "my-first-plugin" {
		t.Errorf("init: %+v", init)
	}
	if len(init.MCPServers) != 1 || init.MCPServers[0].Name != "plugin:my-first-plugin:everything" || init.MCPServers[0].Status != "connected" {
		t.Errorf("mcp_servers %+v", init.MCPServers)
	}
	reqs := srv.Requests()
	if len(reqs) != 3 {
		t.Fatalf("%d requests", len(reqs))
	}
	if !strings.Contains(string(reqs[0].Body), "Greet Ada, then run greet.") {
		t.Error("the plugin's skill was not expanded")
	}
	if res := reqs[1].ToolResults(); len(res) != 1 || res[0].IsError || !strings.Contains(llm.TextOf(res[0].Content), "hello from the plugin's bin") {
		t.Errorf("greet: %+v", res)
	}
	if res := reqs[2].ToolResults(); len(res) != 1 || res[0].IsError || !strings.Contains(llm.TextOf(res[0].Content), "via plugin") {
		t.Errorf("the plugin's MCP server: %+v", res)
	}
	if _, err := os.Stat(filepath.Join(root, "post-tool-use")); err != nil {
		t.Error("the plugin's PostToolUse hook did not run")
	}
}

// TestBrokenDefinitionsAreReported: a skill, a command and a plugin skill
// with broken YAML frontmatter, and a skill linked to nowhere, are named
// with their file, line and column on standard error by `tack -p` and by
// `tack agents`, and the good definitions beside them are in the session.
func TestBrokenDefinitionsAreReported(t *testing.T) {
	proj, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Chdir(proj)
	t.Setenv("HOME", t.TempDir())
	t.Setenv("CLAUDE_CONFIG_DIR", t.TempDir())
	plugin := filepath.Join(t.TempDir(), "plug")
	broken := "---\ndescription: d\nmetadata:\n  tags: [a, b\n---\nx\n"
	good := "---\ndescription: loads\n---\nx\n"
	files := map[string]string{
		filepath.Join(proj, ".claude", "skills", "broken", "SKILL.md"): broken,
		filepath.Join(proj, ".claude", "commands", "broken.md"):        broken,
		filepath.Join(plugin, "skills", "broken", "SKILL.md"):          broken,
		filepath.Join(proj, ".claude", "skills", "good", "SKILL.md"):   good,
		filepath.Join(proj, ".claude", "commands", "fine.md"):          good,
		filepath.Join(plugin, "skills", "good", "SKILL.md"):            good,
		filepath.Join(plugin, ".claude-plugin", "plugin.json"):         `{"name": "plug"}`,
	}
	for p, c := range files {
		writeTestFile(t, p, c)
	}
	linked := filepath.Join(proj, ".claude", "skills", "linked")
	if err := os.Symlink(filepath.Join(proj, "gone"), linked); err != nil {
		t.Fatal(err)
	}
	want := []string{
		filepath.Join(proj, ".claude", "skills", "broken", "SKILL.md") + ":4:9: invalid YAML: sequence end token ']' not found",
		filepath.Join(proj, ".claude", "commands", "broken.md") + ":4:9: invalid YAML: sequence end token ']' not found",
		filepath.Join(plugin, "skills", "broken", "SKILL.md") + ":4:9: invalid YAML: sequence end token ']' not found",
		linked + ": cannot read: it is a symbolic link to " + filepath.Join(proj, "gone") + ", which does not exist",
	}

	srv := llmtest.Start(t, llmtest.Options{Turns: []llmtest.Turn{{Content: []llm.Block{llmtest.Text("done")}}}})
	t.Setenv("ANTHROPIC_API_KEY", "k")
	t.Setenv("ANTHROPIC_BASE_URL", srv.URL())
	var out, errOut bytes.Buffer
	code := Main(context.Background(), []string{"-p", "--output-format", "stream-json", "--verbose", "--plugin-dir", plugin, "hi"},
		IO{In: strings.NewReader(""), Out: &out, Err: &errOut})
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut.String())
	}
	for _, w := range want {
		if !strings.Contains(errOut.String(), "tack: "+w+"\n") {
			t.Errorf("tack -p: standard error lacks %q; it is:\n%s", w, errOut.String())
		}
	}
	var init struct {
		Skills []string `json:"skills"`
	}
	first, _, _ := strings.Cut(out.String(), "\n")
	if err := json.Unmarshal([]byte(first), &init); err != nil {
		t.Fatal(err)
	}
	slices.Sort(init.Skills)
	if w := []string{"fine", "good", "plug:good"}; !slices.Equal(init.Skills, w) {
		t.Errorf("skills in the session: %q, want %q", init.Skills, w)
	}

	out.Reset()
	errOut.Reset()
	if code := Main(context.Background(), []string{"agents", "--plugin-dir", plugin}, IO{In: strings.NewReader(""), Out: &out, Err: &errOut}); code != 0 {
		t.Fatalf("tack agents: exit %d: %s", code, errOut.String())
	}
	for _, w := range want {
		if !strings.Contains(errOut.String(), w+"\n") {
			t.Errorf("tack agents: standard error lacks %q; it is:\n%s", w, errOut.String())
		}
	}
}
