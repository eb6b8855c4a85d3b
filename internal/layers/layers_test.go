package layers

import (
	"bytes"
	"encoding/json"
	"go/parser"
	"go/token"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

const module = "github.com/tackcode/tack/"

// leaves are the small shared packages any package may import: they import
// no tack package but other leaves.
var leaves = []string{
	"internal/atomicfile", "internal/diff", "internal/gitroot", "internal/jsontree", "internal/jsonx", "internal/lazyregexp", "internal/spell", "internal/version",
}

// only lists, for the packages it names, the only tack packages they may
// import besides the leaves.
var only = map[string][]string{
	// main sets the process's heap budget, builds the command line and
	// exits with its code.
	"cmd/tack": {"internal/cli", "internal/startheap"},
	// The surfaces are written against the public SDK, as an outside
	// program would be, and their own helpers.
	"internal/cli":          {"agent", "internal/acp", "internal/cli/cmdio", "internal/cli/configcmd", "internal/sdkproto", "internal/tui"},
	"internal/tui":          {"agent", "internal/tui/markdown"},
	"internal/tui/markdown": {},
	"internal/sdkproto":     {"agent"},
	"internal/acp":          {"agent"},
	"internal/cli/cmdio":    {},
	// The configuration commands (tack mcp, plugin, agents, config) start
	// no session: they read and edit the files sessions read, through
	// those files' packages, and check or serve MCP servers. They never
	// reach the runtime, the engine or the transcripts.
	"internal/cli/configcmd": {
		"agent", "internal/cli/cmdio",
		"internal/config", "internal/extension", "internal/mcp", "internal/mcp/mcpconfig", "internal/mcp/serve",
		"internal/permission", "internal/llm", "internal/tool", "internal/tool/builtin", "internal/shell",
	},
	// The core leaves: everything else builds on them.
	"internal/llm":        {},
	"internal/shell":      {},
	"internal/shellcmd":   {},
	"internal/permission": {"internal/shellcmd"},
	"internal/config":     {},
	"internal/watch":      {},
}

// importedOnlyBy lists, for the packages it names, the only packages of
// internal/, agent and cmd/ that may import them: nothing below imports a
// layer above it.
var importedOnlyBy = map[string][]string{
	"internal/cli":           {"cmd/tack"},
	"internal/tui":           {"internal/cli"},
	"internal/sdkproto":      {"internal/cli"},
	"internal/acp":           {"internal/cli"},
	"internal/cli/configcmd": {"internal/cli"},
	"internal/cli/cmdio":     {"internal/cli", "internal/cli/configcmd"},
	"agent":                  {"internal/cli", "internal/cli/configcmd", "internal/tui", "internal/sdkproto", "internal/acp"},
	"internal/runtime":       {"agent"},
	"internal/engine":        {"internal/runtime"},
	// The hook and MCP OAuth tests' helpers are for tests only
	// (testImports).
	"internal/hook/hooktest":       {},
	"internal/mcp/oauth/oauthtest": {},
}

// exempt are the trees the rules leave alone: benchmarks and interop tests
// are programs that measure or drive tack from outside.
var exempt = []string{"bench/", "test/"}

// testImports are what any test may import besides its package's own
// rules: the scripted fake Messages API with the llm types of what it
// records and replies, the builders of test binaries and tools, and the
// logging hooks whose payloads are checked against the hook schemas, and
// the OAuth servers and browser of MCP sign-in tests, and the proxy and
// certificate authority of the network tests.
var testImports = []string{"internal/llm/llmtest", "internal/llm", "internal/testbin", "internal/tool/tooltest", "internal/hook/hooktest",
	"internal/mcp/oauth/oauthtest", "internal/llm/transport/transporttest"}

// testFiles are the test files (a file, or every test of a folder: "dir/")
// that may import more, and why.
var testFiles = map[string][]string{
	// The SDK's contract tests hold its types equal to those of the
	// layers below, so they import them.
	"agent/messages_test.go": {"internal/protocol"},
	"agent/contract_test.go": {"internal/hook", "internal/mcp", "internal/runtime", "internal/sandbox", "internal/session"},
	// The binary's end-to-end tests read the transcripts it wrote and the
	// hook payloads it sent.
	"cmd/tack/": {"internal/session", "internal/hook"},
	// The configuration commands' tests run them as users do, through
	// the root command.
	"internal/cli/configcmd/plugin_test.go": {"internal/cli"},
}

type pkg struct {
	ImportPath   string
	Dir          string
	Imports      []string
	TestGoFiles  []string
	XTestGoFiles []string
}

func TestImportRules(t *testing.T) {
	cmd := exec.Command("go", "list", "-json=ImportPath,Dir,Imports,TestGoFiles,XTestGoFiles", module+"...")
	cmd.Dir = filepath.Join("..", "..")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, stderr.Bytes())
	}
	var pkgs []pkg
	for dec := json.NewDecoder(bytes.NewReader(out)); dec.More(); {
		var p pkg
		if err := dec.Decode(&p); err != nil {
			t.Fatal(err)
		}
		pkgs = append(pkgs, p)
	}
	seen := map[string]bool{}
	for _, p := range pkgs {
		name := strings.TrimPrefix(p.ImportPath, module)
		seen[name] = true
		if slices.ContainsFunc(exempt, func(e string) bool { return strings.HasPrefix(name, e) }) {
			continue
		}
		for _, imp := range tackImports(p.Imports) {
			if why := forbidden(name, imp); why != "" {
				t.Errorf("%s imports %s: %s", name, imp, why)
			}
		}
		for _, file := range append(slices.Clone(p.TestGoFiles), p.XTestGoFiles...) {
			rel := name + "/" + file
			for _, imp := range tackImports(fileImports(t, filepath.Join(p.Dir, file))) {
				if imp == name || slices.Contains(testImports, imp) || slices.Contains(testFiles[rel], imp) || slices.Contains(testFiles[name+"/"], imp) {
					continue
				}
				if why := forbidden(name, imp); why != "" {
					t.Errorf("%s imports %s: %s", rel, imp, why)
				}
			}
		}
	}
	// A rule about a package that no longer exists protects nothing.
	for _, names := range []map[string][]string{only, importedOnlyBy} {
		for name := range names {
			if !seen[name] {
				t.Errorf("the rules name %s, which is not a package of the module", name)
			}
		}
	}
	for _, name := range leaves {
		if !seen[name] {
			t.Errorf("the leaf %s is not a package of the module", name)
		}
	}
}

// forbidden says why name may not import imp, or "".
func forbidden(name, imp string) string {
	if slices.Contains(leaves, name) && !slices.Contains(leaves, imp) {
		return "a shared leaf imports only other leaves"
	}
	if allowed, ok := only[name]; ok && !slices.Contains(allowed, imp) && !slices.Contains(leaves, imp) {
		return "it may import only " + strings.Join(append(slices.Clone(allowed), "the leaves"), ", ")
	}
	if importers, ok := importedOnlyBy[imp]; ok && !slices.Contains(importers, name) {
		return "only " + strings.Join(importers, ", ") + " may import it"
	}
	return ""
}

// tackImports are the module's packages among imports, relative to it.
func tackImports(imports []string) []string {
	var out []string
	for _, imp := range imports {
		if strings.HasPrefix(imp, module) {
			out = append(out, strings.TrimPrefix(imp, module))
		}
	}
	return out
}

func fileImports(t *testing.T, path string) []string {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.ImportsOnly)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, s := range f.Imports {
		p, _ := strconv.Unquote(s.Path.Value)
		out = append(out, p)
	}
	return out
}
