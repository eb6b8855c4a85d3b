package lsp

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/charmbracelet/x/powernap/pkg/lsp/protocol"
)

// A null where the spec has a list fails initialize on a strictly typed
// server, and the library's struct capabilities go out even when empty.
func TestInitializeCapabilitiesHaveNoNull(t *testing.T) {
	data, err := json.Marshal(initializeParams(ServerConfig{}, t.TempDir()))
	if err != nil {
		t.Fatal(err)
	}
	var params struct {
		Capabilities any `json:"capabilities"`
	}
	if err := json.Unmarshal(data, &params); err != nil {
		t.Fatal(err)
	}
	var walk func(path string, v any)
	walk = func(path string, v any) {
		switch v := v.(type) {
		case nil:
			t.Errorf("%s is null in %s", path, data)
		case map[string]any:
			for k, e := range v {
				walk(path+"."+k, e)
			}
		case []any:
			for _, e := range v {
				walk(path+"[]", e)
			}
		}
	}
	walk("capabilities", params.Capabilities)
}

// The answers the spec allows, in each of their shapes, come out in tack's
// compact form; the servers of the other tests each use only one shape.
func TestAnswerShapes(t *testing.T) {
	root := filepath.Join(t.TempDir(), "a project")
	m := NewManager(root, nil, nil)
	uri := string(protocol.URIFromPath(filepath.Join(root, "pkg", "f.go")))
	if !strings.Contains(uri, "%20") {
		t.Fatalf("uri %q: the space is not escaped", uri)
	}
	loc := `{"uri": "` + uri + `", "range": {"start": {"line": 2, "character": 5}, "end": {"line": 2, "character": 9}}}`
	link := `{"targetUri": "` + uri + `", "targetRange": {"start": {"line": 1, "character": 0}, "end": {"line": 4, "character": 1}},
		"targetSelectionRange": {"start": {"line": 2, "character": 5}, "end": {"line": 2, "character": 9}}}`
	for _, tc := range []struct{ answer, want string }{
		{loc, "pkg/f.go:3:6"},
		{"[" + loc + "," + loc + "]", "pkg/f.go:3:6\npkg/f.go:3:6"},
		{"[" + link + "]", "pkg/f.go:3:6"},
		{"[]", "No locations found."},
		{"null", "No locations found."},
	} {
		var res protocol.Or_Result_textDocument_definition
		if err := json.Unmarshal([]byte(tc.answer), &res); err != nil {
			t.Errorf("definition %s: %v", tc.answer, err)
			continue
		}
		if got := m.formatLocations(definitionLocations(res.Value)); got != tc.want {
			t.Errorf("definition %s = %q, want %q", tc.answer, got, tc.want)
		}
	}

	for _, tc := range []struct{ answer, want string }{
		{`{"contents": {"kind": "markdown", "value": " func F() "}}`, "func F()"},
		{`{"contents": "func F()"}`, "func F()"},
		{`{"contents": {"language": "go", "value": "func F()"}}`, "func F()"},
		{`{"contents": ["func F()", {"language": "go", "value": "F does."}, ""]}`, "func F()\nF does."},
	} {
		var h hover
		if err := json.Unmarshal([]byte(tc.answer), &h); err != nil {
			t.Errorf("hover %s: %v", tc.answer, err)
			continue
		}
		if got := hoverText(h.Contents); got != tc.want {
			t.Errorf("hover %s = %q, want %q", tc.answer, got, tc.want)
		}
	}

	var flat protocol.Or_Result_textDocument_documentSymbol
	if err := json.Unmarshal([]byte(`[{"name": "F", "kind": 12, "location": `+loc+`, "containerName": "pkg"}]`), &flat); err != nil {
		t.Fatal(err)
	}
	syms, ok := flat.Value.([]protocol.SymbolInformation)
	if !ok {
		t.Fatalf("flat document symbols decoded as %T", flat.Value)
	}
	var b strings.Builder
	m.writeSymbol(&b, syms[0].Kind, syms[0].Name, syms[0].Location)
	if got := b.String(); got != "function F at pkg/f.go:3:6\n" {
		t.Errorf("flat document symbol = %q", got)
	}

	var ws protocol.Or_Result_workspace_symbol
	if err := json.Unmarshal([]byte(`[{"name": "T", "kind": 23, "location": {"uri": "`+uri+`"}, "data": 1}]`), &ws); err != nil {
		t.Fatal(err)
	}
	wsyms, ok := ws.Value.([]protocol.WorkspaceSymbol)
	if !ok {
		t.Fatalf("workspace symbols decoded as %T", ws.Value)
	}
	b.Reset()
	m.writeSymbol(&b, wsyms[0].Kind, wsyms[0].Name, wsyms[0].GetLocation())
	if got := b.String(); got != "struct T at pkg/f.go:1:1\n" {
		t.Errorf("workspace symbol = %q", got)
	}
}
