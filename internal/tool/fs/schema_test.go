package fs

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/tackcode/tack/internal/tool"
)

// wantSchemas is the wire shape of each tool, from claude-code-tools.json:
// property name → type (with its enum, written as that file writes it).
var wantSchemas = map[string]struct {
	props    map[string]string
	required []string
	readOnly bool
}{
	"Read": {map[string]string{
		"file_path": "string", "offset": "integer", "limit": "integer", "pages": "string", "allow_large": "boolean",
	}, []string{"file_path"}, true},
	"Write": {map[string]string{"file_path": "string", "content": "string"}, []string{"file_path", "content"}, false},
	"Edit": {map[string]string{
		"file_path": "string", "old_string": "string", "new_string": "string", "replace_all": "boolean",
	}, []string{"file_path", "old_string", "new_string"}, false},
	"NotebookEdit": {map[string]string{
		"notebook_path": "string", "cell_id": "string", "new_source": "string",
		"cell_type": "string enum['code', 'markdown']", "edit_mode": "string enum['replace', 'insert', 'delete']",
	}, []string{"notebook_path", "new_source"}, false},
}

type schemaDoc struct {
	Type                 string   `json:"type"`
	AdditionalProperties *bool    `json:"additionalProperties"`
	Required             []string `json:"required"`
	Properties           map[string]struct {
		Type string   `json:"type"`
		Enum []string `json:"enum"`
	} `json:"properties"`
}

// wireProps renders a schema's properties as claude-code-tools.json does.
func wireProps(s schemaDoc) map[string]string {
	out := map[string]string{}
	for name, p := range s.Properties {
		typ := p.Type
		if len(p.Enum) > 0 {
			typ += " enum['" + strings.Join(p.Enum, "', '") + "']"
		}
		out[name] = typ
	}
	return out
}

func TestSchemas(t *testing.T) {
	tools := Tools()
	if len(tools) != len(wantSchemas) {
		t.Fatalf("%d tools, want %d", len(tools), len(wantSchemas))
	}
	var total int
	for _, tl := range tools {
		want, ok := wantSchemas[tl.Name()]
		if !ok {
			t.Errorf("unexpected tool %q", tl.Name())
			continue
		}
		doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(tl.InputSchema()))
		if err != nil {
			t.Fatalf("%s schema is not JSON: %v", tl.Name(), err)
		}
		c := jsonschema.NewCompiler()
		url := "tack:///" + tl.Name() + ".json"
		if err := c.AddResource(url, doc); err != nil {
			t.Fatal(err)
		}
		if _, err := c.Compile(url); err != nil {
			t.Errorf("%s schema does not compile: %v", tl.Name(), err)
		}
		var s schemaDoc
		if err := json.Unmarshal(tl.InputSchema(), &s); err != nil {
			t.Fatal(err)
		}
		if s.Type != "object" || s.AdditionalProperties == nil || *s.AdditionalProperties {
			t.Errorf("%s: type %q, additionalProperties %v; want object and false", tl.Name(), s.Type, s.AdditionalProperties)
		}
		if got := wireProps(s); !reflect.DeepEqual(got, want.props) {
			t.Errorf("%s properties %v, want %v", tl.Name(), got, want.props)
		}
		if !reflect.DeepEqual(s.Required, want.required) {
			t.Errorf("%s required %v, want %v", tl.Name(), s.Required, want.required)
		}
		if got := tl.ReadOnly(nil); got != want.readOnly {
			t.Errorf("%s ReadOnly = %v", tl.Name(), got)
		}
		desc := tl.Description()
		if strings.TrimSpace(desc) == "" || len(desc) > 1200 {
			t.Errorf("%s description is %d bytes, want 1..1200", tl.Name(), len(desc))
		}
		total += len(desc) + len(tl.InputSchema())
	}
	if total > 8000 {
		t.Errorf("the file tools take %d bytes of the first request", total)
	}

	// The registry rejects what the schemas forbid.
	reg := tool.NewRegistry(tools...)
	read, _ := reg.Get("Read")
	for _, bad := range []string{`{}`, `{"file_path":"/x","extra":1}`, `{"file_path":"/x","offset":"3"}`, `{"file_path":"/x","limit":-1}`} {
		if err := reg.Validate(read, json.RawMessage(bad)); err == nil {
			t.Errorf("Read accepted %s", bad)
		}
	}
	nb, _ := reg.Get("NotebookEdit")
	if err := reg.Validate(nb, json.RawMessage(`{"notebook_path":"/x.ipynb","new_source":"","edit_mode":"append"}`)); err == nil {
		t.Error("NotebookEdit accepted an unknown edit_mode")
	}
}
