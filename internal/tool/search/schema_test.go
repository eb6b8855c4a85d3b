package search

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/tackcode/tack/internal/tool"
)

// claudeCodeSchemas are Glob's and Grep's properties and required lists as
// recorded in shared/compat/claude-code-tools.json, used where that file
// is not laid out beside the repository.
var claudeCodeSchemas = map[string]compatTool{
	"Glob": {Name: "Glob", Properties: map[string]string{"pattern": "string", "path": "string"}, Required: []string{"pattern"}, AdditionalProperties: false},
	"Grep": {Name: "Grep", Properties: map[string]string{
		"pattern": "string", "path": "string", "glob": "string",
		"output_mode": "string enum['content', 'files_with_matches', 'count']",
		"-B":          "number", "-A": "number", "-C": "number", "context": "number",
		"-n": "boolean", "-i": "boolean", "-o": "boolean", "type": "string",
		"head_limit": "number", "offset": "number", "multiline": "boolean",
	}, Required: []string{"pattern"}, AdditionalProperties: false},
}

type compatTool struct {
	Name                 string            `json:"name"`
	Properties           map[string]string `json:"properties"`
	Required             []string          `json:"required"`
	AdditionalProperties any               `json:"additionalProperties"`
}

func TestSchemas(t *testing.T) {
	want := compatSchemas(t)
	tools := Tools()
	if len(tools) != 2 || tools[0].Name() != "Glob" || tools[1].Name() != "Grep" {
		t.Fatalf("Tools() = %v", tools)
	}
	for _, tl := range tools {
		t.Run(tl.Name(), func(t *testing.T) {
			doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(tl.InputSchema()))
			if err != nil {
				t.Fatal(err)
			}
			c := jsonschema.NewCompiler()
			if err := c.AddResource("tack:///"+tl.Name()+".json", doc); err != nil {
				t.Fatal(err)
			}
			if _, err := c.Compile("tack:///" + tl.Name() + ".json"); err != nil {
				t.Fatalf("schema does not compile: %v", err)
			}
			if n := len(tl.Description()); n == 0 || n > 1000 {
				t.Errorf("description is %d bytes, want 1..1000", n)
			}
			if !tl.ReadOnly(nil) {
				t.Error("not read-only")
			}

			var got struct {
				Type                 string                    `json:"type"`
				Properties           map[string]map[string]any `json:"properties"`
				Required             []string                  `json:"required"`
				AdditionalProperties any                       `json:"additionalProperties"`
			}
			if err := json.Unmarshal(tl.InputSchema(), &got); err != nil {
				t.Fatal(err)
			}
			w := want[tl.Name()]
			gotProps := map[string]string{}
			for name, p := range got.Properties {
				gotProps[name] = renderType(p)
			}
			if got.Type != "object" || fmt.Sprint(gotProps) != fmt.Sprint(w.Properties) {
				t.Errorf("properties\n got %v\nwant %v", gotProps, w.Properties)
			}
			slices.Sort(got.Required)
			slices.Sort(w.Required)
			if !slices.Equal(got.Required, w.Required) || got.AdditionalProperties != w.AdditionalProperties {
				t.Errorf("required %v additionalProperties %v, want %v %v", got.Required, got.AdditionalProperties, w.Required, w.AdditionalProperties)
			}

			reg := tool.NewRegistry(tl)
			if err := reg.Validate(tl, json.RawMessage(`{"pattern":"x","bogus":1}`)); !tool.IsInputError(err) {
				t.Errorf("unknown property accepted: %v", err)
			}
			if err := reg.Validate(tl, json.RawMessage(`{}`)); !tool.IsInputError(err) {
				t.Errorf("missing pattern accepted: %v", err)
			}
		})
	}
}

// compatSchemas reads shared/compat/claude-code-tools.json from a parent
// directory if it is there, and falls back on the recorded copy.
func compatSchemas(t *testing.T) map[string]compatTool {
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
			if json.Unmarshal(raw, &ct) == nil && (ct.Name == "Glob" || ct.Name == "Grep") {
				out[ct.Name] = ct
			}
		}
		if len(out) == 2 {
			return out
		}
	}
	return claudeCodeSchemas
}

// renderType writes a property schema in the notation of
// claude-code-tools.json.
func renderType(p map[string]any) string {
	typ, _ := p["type"].(string)
	enum, _ := p["enum"].([]any)
	if enum == nil {
		return typ
	}
	vals := make([]string, len(enum))
	for i, v := range enum {
		vals[i] = fmt.Sprintf("'%v'", v)
	}
	return typ + " enum[" + strings.Join(vals, ", ") + "]"
}
