package lazyregexp

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func TestNewCompilesOnceOnFirstUse(t *testing.T) {
	re := New(`^a(b+)$`)
	first := re()
	if m := first.FindStringSubmatch("abbb"); len(m) != 2 || m[1] != "bbb" {
		t.Fatalf("FindStringSubmatch = %q", m)
	}
	if re() != first {
		t.Fatal("a second call compiled the expression again")
	}
}

func TestInvalidExpressionPanicsOnUse(t *testing.T) {
	re := New(`(`) // not compiled yet: declaring it must not panic
	defer func() {
		if recover() == nil {
			t.Fatal("an invalid expression did not panic on first use")
		}
	}()
	re()
}

// TestNoPackageOfTackCompilesARegexpAtInit holds every package linked into
// the tack binary to the rule this package exists for: no regular
// expression compiled by a package-level declaration.
func TestNoPackageOfTackCompilesARegexpAtInit(t *testing.T) {
	cmd := exec.Command("go", "list", "-deps", "-f", "{{if not .Standard}}{{.ImportPath}} {{.Dir}}{{range .GoFiles}} {{.}}{{end}}{{end}}", "github.com/tackcode/tack/cmd/tack")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	checked := 0
	for line := range strings.Lines(string(out)) {
		fields := strings.Fields(line)
		if len(fields) < 3 || !strings.HasPrefix(fields[0], "github.com/tackcode/tack/") {
			continue
		}
		for _, name := range fields[2:] {
			path := filepath.Join(fields[1], name)
			for _, at := range compilesAtInit(t, path) {
				t.Errorf("%s: a regexp is compiled at start-up; declare it with lazyregexp.New", at)
			}
			checked++
		}
	}
	if checked < 100 {
		t.Fatalf("checked only %d files of tack's packages", checked)
	}
}

// compilesAtInit lists the positions in the file at path where a
// package-level var's value calls the regexp package's compile functions
// outside a function literal.
func compilesAtInit(t *testing.T, path string) []token.Position {
	t.Helper()
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, path, nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	local := ""
	for _, imp := range f.Imports {
		if imp.Path.Value == `"regexp"` {
			local = "regexp"
			if imp.Name != nil {
				local = imp.Name.Name
			}
		}
	}
	if local == "" {
		return nil
	}
	var at []token.Position
	for _, d := range f.Decls {
		gd, ok := d.(*ast.GenDecl)
		if !ok || gd.Tok != token.VAR {
			continue
		}
		ast.Inspect(gd, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.FuncLit:
				return false // runs when called, not at init
			case *ast.SelectorExpr:
				if id, ok := n.X.(*ast.Ident); ok && id.Name == local && strings.Contains(n.Sel.Name, "Compile") {
					at = append(at, fset.Position(n.Pos()))
				}
			}
			return true
		})
	}
	return at
}
