package bash

import (
	"bytes"
	"encoding/json"
	"maps"
	"os"
	"slices"
	"testing"
	"unicode/utf8"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// compatTools is Claude Code's tool list, kept beside the repository.
const compatTools = "/work/shared/compat/claude-code-tools.json"

// wire is a tool's input shape: property types and required names.
type wire struct {
	Properties map[string]string
	Required   []string
}

// expected copies claude-code-tools.json for the tools we mirror, so that
// the test runs where that file is absent; TaskOutput's shape is ours.
var expected = map[string]wire{
	"Bash": {
		Properties: map[string]string{"command": "string", "timeout": "number", "description": "string", "run_in_background": "boolean", "dangerouslyDisableSandbox": "boolean"},
		Required:   []string{"command"},
	},
	"TaskStop": {
		Properties: map[string]string{"task_id": "string", "shell_id": "string"},
		Required:   []string{},
	},
	"TaskOutput": {
		Properties: map[string]string{"task_id": "string", "block": "boolean", "timeout": "number"},
		Required:   []string{"task_id"},
	},
}

type schema struct {
	Type       string `json:"type"`
	Properties map[string]struct {
		Type        string `json:"type"`
		Description string `json:"description"`
	} `json:"properties"`
	Required             []string `json:"required"`
	AdditionalProperties *bool    `json:"additionalProperties"`
}

func TestSchemasCompileAndMatchWire(t *testing.T) {
	if b, err := os.ReadFile(compatTools); err == nil {
		var doc struct {
			Tools []struct {
				Name                 string         `json:"name"`
				Properties           map[string]any `json:"properties"`
				Required             []string       `json:"required"`
				AdditionalProperties bool           `json:"additionalProperties"`
			} `json:"tools"`
		}
		if err := json.Unmarshal(b, &doc); err != nil {
			t.Fatal(err)
		}
		seen := 0
		for _, w := range doc.Tools {
			want, ours := expected[w.Name]
			if !ours || w.Name == "TaskOutput" {
				continue
			}
			seen++
			props := map[string]string{}
			for k, v := range w.Properties {
				props[k], _ = v.(string)
			}
			if !maps.Equal(props, want.Properties) || !slices.Equal(w.Required, want.Required) || w.AdditionalProperties {
				t.Errorf("%s in %s is %+v; update this test's copy", w.Name, compatTools, w)
			}
		}
		if seen != 2 {
			t.Errorf("%s lists %d of Bash and TaskStop", compatTools, seen)
		}
	}

	for _, tl := range Tools() {
		want, ok := expected[tl.Name()]
		if !ok {
			t.Errorf("unexpected tool %s", tl.Name())
			continue
		}
		doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(tl.InputSchema()))
		if err != nil {
			t.Fatalf("%s: %v", tl.Name(), err)
		}
		c := jsonschema.NewCompiler()
		if err := c.AddResource("tack:///"+tl.Name()+".json", doc); err != nil {
			t.Fatal(err)
		}
		if _, err := c.Compile("tack:///" + tl.Name() + ".json"); err != nil {
			t.Fatalf("%s schema does not compile: %v", tl.Name(), err)
		}

		var s schema
		if err := json.Unmarshal(tl.InputSchema(), &s); err != nil {
			t.Fatal(err)
		}
		got := map[string]string{}
		for name, p := range s.Properties {
			got[name] = p.Type
			if p.Description == "" {
				t.Errorf("%s.%s has no description", tl.Name(), name)
			}
		}
		if s.Type != "object" || !maps.Equal(got, want.Properties) || !slices.Equal(s.Required, want.Required) ||
			s.AdditionalProperties == nil || *s.AdditionalProperties {
			t.Errorf("%s schema: %+v, want %+v", tl.Name(), s, want)
		}
	}
}

func TestDescriptions(t *testing.T) {
	total := 0
	for _, tl := range Tools() {
		d := tl.Description()
		n := utf8.RuneCountInString(d)
		if n == 0 || n > 1500 {
			t.Errorf("%s description is %d characters", tl.Name(), n)
		}
		total += len(d) + len(tl.InputSchema())
	}
	// The three together must leave room in a first request under 25 KB.
	if total > 5000 {
		t.Errorf("the tools take %d bytes of the request", total)
	}
}

func TestReadOnly(t *testing.T) {
	want := map[string]bool{"Bash": false, "TaskOutput": true, "TaskStop": false}
	for _, tl := range Tools() {
		if tl.ReadOnly(nil) != want[tl.Name()] {
			t.Errorf("%s ReadOnly = %v", tl.Name(), !want[tl.Name()])
		}
	}
}
