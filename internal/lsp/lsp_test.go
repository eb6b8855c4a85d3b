package lsp

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/powernap/pkg/lsp/protocol"

	"github.com/tackcode/tack/internal/testbin"
)

func writeFiles(t *testing.T, root string, files map[string]string) {
	t.Helper()
	for name, body := range files {
		p := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

const mainGo = `package main

import "example.com/m/greet"

func main() {
	run()
}

func run() {
	println(greet.Hello("x"))
}
`

const greetGo = `package greet

// Hello greets.
func Hello(name string) string {
	return "hello " + name
}

type Greeter struct{ Name string }
`

func goModule(t *testing.T) (string, *Manager) {
	t.Helper()
	bin := testbin.Gopls(t)
	root := t.TempDir()
	writeFiles(t, root, map[string]string{
		"go.mod":         "module example.com/m\n\ngo 1.22\n",
		"main.go":        mainGo,
		"greet/greet.go": greetGo,
	})
	cfgs, err := ParseServers([]byte(`{"go": {"command": "`+bin+`", "extensionToLanguage": {".go": "go"}, "maxRestarts": 2}}`), "settings.json")
	if err != nil {
		t.Fatal(err)
	}
	var notes []string
	m := NewManager(root, cfgs, func(s string) { notes = append(notes, s) })
	t.Cleanup(m.Close)
	return root, m
}

func run(t *testing.T, m *Manager, op, path string, line, char int) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	out, err := m.Run(ctx, op, path, line, char)
	if err != nil {
		t.Fatalf("%s: %v", op, err)
	}
	return out
}

func TestGopls(t *testing.T) {
	_, m := goModule(t)
	if got := m.Statuses()[0].State; got != "not started" {
		t.Fatalf("state before any file = %q", got)
	}
	// main.go line 10 `println(greet.Hello("x"))`: Hello at character 16.
	if got := run(t, m, "goToDefinition", "main.go", 10, 16); got != "greet/greet.go:4:6" {
		t.Errorf("definition = %q", got)
	}
	refs := run(t, m, "findReferences", "greet/greet.go", 4, 6)
	if !strings.Contains(refs, "main.go:10:16") || !strings.Contains(refs, "greet/greet.go:4:6") {
		t.Errorf("references = %q", refs)
	}
	if got := run(t, m, "hover", "main.go", 10, 16); !strings.Contains(got, "func greet.Hello(name string) string") {
		t.Errorf("hover = %q", got)
	}
	syms := run(t, m, "documentSymbol", "greet/greet.go", 1, 1)
	if !strings.Contains(syms, "function Hello at line 4") || !strings.Contains(syms, "struct Greeter at line 8") ||
		!strings.Contains(syms, "  field Name") {
		t.Errorf("symbols = %q", syms)
	}
	if got := run(t, m, "incomingCalls", "main.go", 9, 6); !strings.Contains(got, "function main at main.go:5:6") {
		t.Errorf("incoming calls of run = %q", got)
	}
	if got := run(t, m, "outgoingCalls", "main.go", 9, 6); !strings.Contains(got, "Hello at greet/greet.go:4:6") {
		t.Errorf("outgoing calls of run = %q", got)
	}
	if got := run(t, m, "workspaceSymbol", "main.go", 10, 16); !strings.Contains(got, "Hello at greet/greet.go:4:6") {
		t.Errorf("workspace symbols = %q", got)
	}
	if got := m.Statuses()[0].State; got != "running" {
		t.Errorf("state = %q", got)
	}
}

func TestGoplsDiagnosticsAfterEdit(t *testing.T) {
	root, m := goModule(t)
	ctx := context.Background()
	p := filepath.Join(root, "main.go")
	if out, err := m.FileChanged(ctx, p, 60*time.Second); err != nil || out != "" {
		t.Fatalf("clean file: %q %v", out, err)
	}
	if err := os.WriteFile(p, []byte(strings.Replace(mainGo, `greet.Hello("x")`, `greet.Hello(42)`, 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := m.FileChanged(ctx, p, 60*time.Second)
	if err != nil || !strings.Contains(out, "main.go:10:") || !strings.Contains(out, "error") {
		t.Fatalf("after type error: %q %v", out, err)
	}
	if err := os.WriteFile(p, []byte(mainGo), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := m.FileChanged(ctx, p, 60*time.Second); err != nil || out != "" {
		t.Fatalf("after fix: %q %v", out, err)
	}
	if d := m.Diagnostics(p); len(d) != 0 {
		t.Errorf("diagnostics left after fix: %v", d)
	}
}

// A file open in the server that a command changed on disk (the model's
// Bash, not tack's edit tools) is sent again: the type error the command
// wrote shows in the server's diagnostics.
func TestGoplsSeesWhatBashChanged(t *testing.T) {
	root, m := goModule(t)
	ctx := context.Background()
	p := filepath.Join(root, "main.go")
	if out, err := m.FileChanged(ctx, p, 60*time.Second); err != nil || out != "" {
		t.Fatalf("clean file: %q %v", out, err)
	}
	if err := os.WriteFile(p, []byte(strings.Replace(mainGo, `greet.Hello("x")`, `greet.Hello(42)`, 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	m.ResyncOpen(ctx)
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		d := m.Diagnostics(p)
		if len(d) > 0 && d[0].Severity == protocol.SeverityError && d[0].Range.Start.Line == 9 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no type error on line 10 after the file changed on disk: %+v", d)
		}
	}
}

func TestGoplsRestartAfterKill(t *testing.T) {
	_, m := goModule(t)
	run(t, m, "hover", "main.go", 10, 16)
	m.mu.Lock()
	c := m.servers["go"].client
	m.mu.Unlock()
	if err := c.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	<-c.done
	if got := run(t, m, "goToDefinition", "main.go", 10, 16); got != "greet/greet.go:4:6" {
		t.Errorf("definition after restart = %q", got)
	}
	st := m.Statuses()[0]
	if st.State != "running" || st.Restarts != 1 {
		t.Errorf("status after restart = %+v", st)
	}
}

func TestRestartLimit(t *testing.T) {
	root := t.TempDir()
	writeFiles(t, root, map[string]string{"a.txt": "x"})
	// `true` exits at once: every start fails, and after the limit the
	// server is reported failed without another attempt.
	truePath, err := exec.LookPath("true")
	if err != nil {
		t.Fatal(err)
	}
	cfgs, err := ParseServers([]byte(`{"t": {"command": "`+truePath+`", "extensionToLanguage": {".txt": "plaintext"}, "maxRestarts": 1}}`), "x.json")
	if err != nil {
		t.Fatal(err)
	}
	m := NewManager(root, cfgs, nil)
	defer m.Close()
	ctx := context.Background()
	for i := 0; i < 3; i++ {
		if _, err := m.Run(ctx, "hover", "a.txt", 1, 1); err == nil {
			t.Fatal("a server that exits answered")
		}
	}
	if st := m.Statuses()[0]; !strings.HasPrefix(st.State, "failed") || st.Restarts != 1 {
		t.Errorf("status = %+v", st)
	}
}

func TestParseServersErrors(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"{\n \"go\": {\n  \"command\": 5}}", "p.json:3: lsp server \"go\""},
		{"{\n \"go\": {\"extensionToLanguage\": {\".go\": \"go\"}}}", "p.json:2: lsp server \"go\": command is required"},
		{"{\n \"go\": {\"command\": \"gopls\"}}", "extensionToLanguage is required"},
		{"{\n\n \"go\": ", "p.json:3: lspServers"},
	} {
		_, err := ParseServers([]byte(tc.in), "p.json")
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: error %v, want %q", tc.in, err, tc.want)
		}
	}
	cfgs, err := ParseServers([]byte(`{"py": {"command": "pyright-langserver", "args": ["--stdio"], "extensionToLanguage": {".py": "python"}, "restartOnCrash": false}}`), "p.json")
	if err != nil || len(cfgs) != 1 || cfgs[0].Name != "py" || cfgs[0].restartLimit() != 0 || cfgs[0].Args[0] != "--stdio" {
		t.Fatalf("%+v %v", cfgs, err)
	}
}

// pyright is the second language: test/lsp's npm package, which
// scripts/test installs.
func pyright(t *testing.T) string {
	t.Helper()
	p, err := filepath.Abs(filepath.Join("..", "..", "test", "lsp", "node_modules", ".bin", "pyright-langserver"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(p); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("pyright missing at %s (scripts/test installs test/lsp): %v", p, err)
		}
		t.Skipf("pyright missing at %s; run scripts/test", p)
	}
	return p
}

// A second language server, pyright on a small Python project: a
// definition in another module, and a type error reported after a change,
// gone after the fix.
func TestPyrightDefinitionAndDiagnostics(t *testing.T) {
	bin := pyright(t)
	root := t.TempDir()
	app := "from util import double\n\n\ndef main() -> int:\n    return double(2)\n"
	writeFiles(t, root, map[string]string{
		"util.py": "def double(n: int) -> int:\n    return 2 * n\n",
		"app.py":  app,
	})
	cfgs, err := ParseServers([]byte(`{"pyright": {"command": "`+bin+`", "args": ["--stdio"], "extensionToLanguage": {".py": "python"}}}`), "settings.json")
	if err != nil {
		t.Fatal(err)
	}
	m := NewManager(root, cfgs, func(string) {})
	t.Cleanup(m.Close)
	if got := run(t, m, "goToDefinition", "app.py", 5, 12); got != "util.py:1:5" {
		t.Errorf("definition of double = %q, want util.py:1:5", got)
	}
	ctx := context.Background()
	p := filepath.Join(root, "app.py")
	if err := os.WriteFile(p, []byte(strings.Replace(app, "double(2)", `double("two")`, 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := m.FileChanged(ctx, p, 60*time.Second)
	if err != nil || !strings.Contains(out, "app.py:5:") || !strings.Contains(out, "error") {
		t.Fatalf("after the type error: %q %v", out, err)
	}
	if err := os.WriteFile(p, []byte(app), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := m.FileChanged(ctx, p, 60*time.Second); err != nil || strings.Contains(out, "error") {
		t.Fatalf("after the fix: %q %v", out, err)
	}
}
