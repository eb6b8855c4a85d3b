package web

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/tackcode/tack/internal/tool"
)

// TestSchemasMatchClaudeCode compiles every schema and compares its property
// names, types and required list with the ones Claude Code sends.
func TestSchemasMatchClaudeCode(t *testing.T) {
	want := compatTools(t)
	reg := tool.NewRegistry(Tools()...)
	for _, tl := range Tools() {
		t.Run(tl.Name(), func(t *testing.T) {
			// Validating compiles the schema with santhosh-tekuri/jsonschema.
			if err := reg.Validate(tl, json.RawMessage(`{"unexpected":1}`)); !tool.IsInputError(err) || strings.Contains(err.Error(), "schema is invalid") {
				t.Fatalf("schema does not compile or accepts an unknown property: %v", err)
			}
			if len(tl.Description()) == 0 || len(tl.Description()) > 800 {
				t.Errorf("description is %d bytes, want 1..800", len(tl.Description()))
			}
			w, ok := want[tl.Name()]
			if !ok {
				t.Skip("not in claude-code-tools.json")
			}
			var got map[string]any
			if err := json.Unmarshal(tl.InputSchema(), &got); err != nil {
				t.Fatal(err)
			}
			props, _ := got["properties"].(map[string]any)
			gotProps := map[string]string{}
			for name, p := range props {
				gotProps[name] = renderType(p.(map[string]any))
			}
			if fmt.Sprint(gotProps) != fmt.Sprint(w.Properties) {
				t.Errorf("properties\n got %v\nwant %v", gotProps, w.Properties)
			}
			var req []string
			for _, r := range asSlice(got["required"]) {
				req = append(req, r.(string))
			}
			slices.Sort(req)
			slices.Sort(w.Required)
			if !slices.Equal(req, w.Required) {
				t.Errorf("required %v, want %v", req, w.Required)
			}
			if got["additionalProperties"] != w.AdditionalProperties {
				t.Errorf("additionalProperties %v, want %v", got["additionalProperties"], w.AdditionalProperties)
			}
		})
	}
}

type compatTool struct {
	Name                 string            `json:"name"`
	Properties           map[string]string `json:"properties"`
	Required             []string          `json:"required"`
	AdditionalProperties any               `json:"additionalProperties"`
}

// compatTools reads ../shared/compat/claude-code-tools.json beside the
// repository, skipping the test where it is not laid out.
func compatTools(t *testing.T) map[string]compatTool {
	dir, _ := os.Getwd()
	for ; dir != filepath.Dir(dir); dir = filepath.Dir(dir) {
		data, err := os.ReadFile(filepath.Join(dir, "shared", "compat", "claude-code-tools.json"))
		if err != nil {
			continue
		}
		var doc struct {
			Tools []json.RawMessage `json:"tools"`
		}
		if err := json.Unmarshal(data, &doc); err != nil {
			t.Fatal(err)
		}
		out := map[string]compatTool{}
		for _, raw := range doc.Tools {
			var ct compatTool
			// Entries with nested property shapes do not concern these tools.
			if json.Unmarshal(raw, &ct) == nil {
				out[ct.Name] = ct
			}
		}
		return out
	}
	t.Skip("shared/compat/claude-code-tools.json not found")
	return nil
}

// renderType writes a property schema in the notation of claude-code-tools.json.
func renderType(p map[string]any) string {
	if alts := asSlice(p["anyOf"]); alts != nil {
		parts := make([]string, len(alts))
		for i, a := range alts {
			parts[i] = renderType(a.(map[string]any))
		}
		return "anyOf(" + strings.Join(parts, ",") + ")"
	}
	typ, _ := p["type"].(string)
	switch {
	case typ == "array":
		items, _ := p["items"].(map[string]any)
		return "array<" + renderType(items) + ">"
	case p["enum"] != nil:
		var vals []string
		for _, v := range asSlice(p["enum"]) {
			vals = append(vals, fmt.Sprintf("'%v'", v))
		}
		return typ + " enum[" + strings.Join(vals, ", ") + "]"
	}
	return typ
}

func asSlice(v any) []any {
	s, _ := v.([]any)
	return s
}
