package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tackcode/tack/internal/llm"
	"github.com/tackcode/tack/internal/llm/llmtest"
	"github.com/tackcode/tack/internal/testbin"
)

// lspEnv is a Go module whose user settings run gopls through a wrapper
// that notes each start in the returned marker file.
func lspEnv(t *testing.T, turns ...llmtest.Turn) (*env, string) {
	e := newEnv(t, turns...)
	e.write("go.mod", "module example.com/calc\n\ngo 1.22\n")
	e.write("main.go", "package main\n\nfunc add(a, b int) int { return a + b }\n\nfunc main() {\n\tn := add(1, 2)\n\t_ = n\n}\n")
	marker := filepath.Join(t.TempDir(), "starts")
	wrapper := filepath.Join(t.TempDir(), "gopls.sh")
	script := "#!/bin/sh\necho $$ >> '" + marker + "'\nexec '" + testbin.Gopls(t) + "' \"$@\"\n"
	if err := os.WriteFile(wrapper, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	settings, _ := json.Marshal(map[string]any{"lspServers": map[string]any{"gopls": map[string]any{
		"command": wrapper, "args": []string{"serve"}, "extensionToLanguage": map[string]string{".go": "go"},
		"env": map[string]string{"GOPROXY": "off", "GOTOOLCHAIN": "local", "GOFLAGS": "-mod=mod"}}}})
	if err := os.MkdirAll(filepath.Join(e.home, ".claude"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(e.home, ".claude", "settings.json"), settings, 0o644); err != nil {
		t.Fatal(err)
	}
	return e, marker
}

// toolResultText is the text of the tool results the request sends last.
func toolResultText(r *llmtest.Request) string {
	var b strings.Builder
	for _, blk := range r.Messages[len(r.Messages)-1].Content {
		if blk.Type == llm.TypeToolResult {
			for _, c := range blk.Content {
				b.WriteString(c.Text)
			}
		}
	}
	return b.String()
}

// The model's Edit introduces a type error: the Edit's result carries
// gopls's diagnostic, so the next Edit fixes it in the same turn, and its
// result carries no error.
func TestEditResultCarriesTheLanguageServersDiagnostics(t *testing.T) {
	e, marker := lspEnv(t)
	file := filepath.Join(e.dir, "main.go")
	e.srv.Append(
		llmtest.Reply(llmtest.ToolUse("Read", map[string]any{"file_path": file})),
		llmtest.Reply(llmtest.ToolUse("Edit", map[string]any{"file_path": file, "old_string": "n := add(1, 2)", "new_string": "var n string = add(1, 2)"})),
		llmtest.Reply(llmtest.ToolUse("Edit", map[string]any{"file_path": file, "old_string": "var n string = add(1, 2)", "new_string": "var n int = add(1, 2)"})),
		llmtest.Reply(llmtest.Text("fixed")),
	)
	out, errOut := e.run("-p", "make n a string", "--dangerously-skip-permissions")
	if e.status != 0 || strings.TrimSpace(out) != "fixed" {
		t.Fatalf("exit %d\n%s\n%s", e.status, out, errOut)
	}
	reqs := e.srv.Requests()
	if len(reqs) != 4 {
		t.Fatalf("%d requests, want 4", len(reqs))
	}
	broken, fixed := toolResultText(&reqs[2]), toolResultText(&reqs[3])
	t.Logf("the breaking Edit's result:\n%s", broken)
	if !strings.Contains(broken, "cannot use add(1, 2)") || !strings.Contains(broken, "main.go") {
		t.Errorf("the breaking Edit's result lacks gopls's type error:\n%s", broken)
	}
	if strings.Contains(fixed, "cannot use") {
		t.Errorf("the fixing Edit's result still reports the error:\n%s", fixed)
	}
	if starts, _ := os.ReadFile(marker); len(strings.Fields(string(starts))) != 1 {
		t.Errorf("gopls started %q times, want once", starts)
	}
}

// A session that touches no Go file starts no language server, even in a
// Go module with one configured.
func TestSayHiStartsNoLanguageServer(t *testing.T) {
	e, marker := lspEnv(t, llmtest.Reply(llmtest.Text("hi")))
	out, errOut := e.run("-p", "say hi")
	if e.status != 0 || strings.TrimSpace(out) != "hi" {
		t.Fatalf("exit %d\n%s\n%s", e.status, out, errOut)
	}
	if _, err := os.Stat(marker); !os.IsNotExist(err) {
		t.Errorf("a language server was started (%v)", err)
	}
	// The LSP tool is offered, since a server is configured.
	if !strings.Contains(string(e.srv.Requests()[0].Body), `"name":"LSP"`) {
		t.Errorf("the LSP tool is not offered")
	}
}

// Reading a Go file starts gopls, in the background: it is running before
// the model asks about the file or edits it. The Bash call waits (bounded)
// for the wrapper's note of the start and prints it.
func TestReadStartsTheLanguageServer(t *testing.T) {
	e, marker := lspEnv(t)
	wait := "for i in $(seq 1 200); do [ -s '" + marker + "' ] && break; sleep 0.05; done; cat '" + marker + "'"
	e.srv.Append(
		llmtest.Reply(llmtest.ToolUse("Read", map[string]any{"file_path": filepath.Join(e.dir, "main.go")})),
		llmtest.Reply(llmtest.ToolUse("Bash", map[string]any{"command": wait})),
		llmtest.Reply(llmtest.Text("done")),
	)
	out, errOut := e.run("-p", "read main.go", "--dangerously-skip-permissions")
	if e.status != 0 || strings.TrimSpace(out) != "done" {
		t.Fatalf("exit %d\n%s\n%s", e.status, out, errOut)
	}
	reqs := e.srv.Requests()
	if len(reqs) != 3 {
		t.Fatalf("%d requests, want 3", len(reqs))
	}
	if read := toolResultText(&reqs[1]); !strings.Contains(read, "func add(a, b int) int") {
		t.Errorf("the Read's result %q", read)
	}
	starts, _ := os.ReadFile(marker)
	if len(strings.Fields(string(starts))) != 1 || !strings.Contains(toolResultText(&reqs[2]), strings.TrimSpace(string(starts))) {
		t.Errorf("gopls started %q times, and Bash saw %q: want one start, before the Bash call", starts, toolResultText(&reqs[2]))
	}
}

// The LSP tool is read-only: in the default permission mode, on a file of
// the working directory, it runs without asking (in -p an ask would be a
// refusal), as Read does.
func TestLSPNeedsNoApproval(t *testing.T) {
	e, _ := lspEnv(t)
	e.srv.Append(
		llmtest.Reply(llmtest.ToolUse("LSP", map[string]any{"operation": "goToDefinition", "filePath": "main.go", "line": 6, "character": 7})),
		llmtest.Reply(llmtest.Text("done")),
	)
	out, errOut := e.run("-p", "where is add")
	if e.status != 0 || strings.TrimSpace(out) != "done" {
		t.Fatalf("exit %d\n%s\n%s", e.status, out, errOut)
	}
	reqs := e.srv.Requests()
	if got := toolResultText(&reqs[len(reqs)-1]); !strings.Contains(got, "main.go:3:6") {
		t.Errorf("LSP result %q: want the definition, not a request for permission", got)
	}
}

// gopls killed mid-session (by the model's own Bash call) is started again,
// and the next LSP call answers.
func TestKilledLanguageServerRestarts(t *testing.T) {
	e, marker := lspEnv(t)
	file := filepath.Join(e.dir, "main.go")
	def := map[string]any{"operation": "goToDefinition", "filePath": file, "line": 6, "character": 7}
	e.srv.Append(
		llmtest.Reply(llmtest.ToolUse("LSP", def)),
		llmtest.Reply(llmtest.ToolUse("Bash", map[string]any{"command": "kill -9 $(head -1 '" + marker + "') && sleep 0.5"})),
		llmtest.Reply(llmtest.ToolUse("LSP", def)),
		llmtest.Reply(llmtest.Text("done")),
	)
	out, errOut := e.run("-p", "where is add", "--dangerously-skip-permissions")
	if e.status != 0 || strings.TrimSpace(out) != "done" {
		t.Fatalf("exit %d\n%s\n%s", e.status, out, errOut)
	}
	reqs := e.srv.Requests()
	if len(reqs) != 4 {
		t.Fatalf("%d requests, want 4", len(reqs))
	}
	before, after := toolResultText(&reqs[1]), toolResultText(&reqs[3])
	t.Logf("goToDefinition: %s", after)
	if !strings.Contains(before, "main.go:3") || !strings.Contains(after, "main.go:3") {
		t.Errorf("definition before the kill %q, after %q: want main.go:3 both times", before, after)
	}
	if starts, _ := os.ReadFile(marker); len(strings.Fields(string(starts))) != 2 {
		t.Errorf("gopls started %q, want twice (once again after the kill)", starts)
	}
}
