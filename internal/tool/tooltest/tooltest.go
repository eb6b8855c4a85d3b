// Package tooltest checks tools the way the API and Claude Code's users see
// them: every input schema is a valid JSON Schema (checked against the
// metaschema), closed to unknown properties, and — for the tools Claude Code
// also has — uses the same property names, types and required fields, so
// hooks and permission rules written for Claude Code match tack's tools.
//
// claude-code-tools.json is a copy of shared/compat/claude-code-tools.json,
// kept here so the check runs wherever the repository is cloned.
package tooltest

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/tackcode/tack/internal/tool"
)

//go:embed claude-code-tools.json
var claudeCodeTools []byte

// Shape is a tool's input as claude-code-tools.json writes it.
type Shape struct {
	Name                 string
	Properties           map[string]string // property name → type notation
	Required             []string
	AdditionalProperties bool
}

// ClaudeCode returns the shapes of Claude Code's tools, by name.
func ClaudeCode() (map[string]Shape, error) {
	var doc struct {
		Tools []struct {
			Name                 string                     `json:"name"`
			Properties           map[string]json.RawMessage `json:"properties"`
			Required             []string                   `json:"required"`
			AdditionalProperties bool                       `json:"additionalProperties"`
		} `json:"tools"`
	}
	if err := json.Unmarshal(claudeCodeTools, &doc); err != nil {
		return nil, fmt.Errorf("claude-code-tools.json: %w", err)
	}
	out := make(map[string]Shape, len(doc.Tools))
	for _, t := range doc.Tools {
		s := Shape{Name: t.Name, Properties: map[string]string{}, Required: t.Required, AdditionalProperties: t.AdditionalProperties}
		for name, raw := range t.Properties {
			var notation string
			if json.Unmarshal(raw, &notation) != nil {
				notation = "object" // a nested shape, written out in full
			}
			s.Properties[name] = notation
		}
		out[t.Name] = s
	}
	return out, nil
}

// Check runs every check on tools and reports failures on t.
func Check(t *testing.T, tools []tool.Tool) {
	t.Helper()
	want, err := ClaudeCode()
	if err != nil {
		t.Fatal(err)
	}
	for _, tl := range tools {
		for _, p := range Problems(tl, want) {
			t.Errorf("%s: %s", tl.Name(), p)
		}
	}
}

// Problems lists what is wrong with tl's schema and description, comparing
// with want when it has the tool.
func Problems(tl tool.Tool, want map[string]Shape) []string {
	if err := CompileSchema(tl.InputSchema()); err != nil {
		return []string{"input schema: " + err.Error()}
	}
	got, err := ShapeOf(tl)
	if err != nil {
		return []string{err.Error()}
	}
	var out []string
	if got.AdditionalProperties {
		out = append(out, "schema accepts unknown properties: set additionalProperties false")
	}
	if strings.TrimSpace(tl.Description()) == "" {
		out = append(out, "no description")
	}
	w, ok := want[tl.Name()]
	if !ok {
		return out // a tool of tack's own
	}
	for _, name := range sortedKeys(w.Properties) {
		typ := w.Properties[name]
		if g, ok := got.Properties[name]; !ok {
			out = append(out, fmt.Sprintf("property %q is missing", name))
		} else if g != typ && typ != "object" && typ != "?" {
			out = append(out, fmt.Sprintf("property %q is %s, Claude Code's is %s", name, g, typ))
		}
	}
	for _, name := range sortedKeys(got.Properties) {
		if _, ok := w.Properties[name]; !ok {
			out = append(out, fmt.Sprintf("property %q is not in Claude Code's %s", name, tl.Name()))
		}
	}
	if !slices.Equal(sorted(got.Required), sorted(w.Required)) {
		out = append(out, fmt.Sprintf("required %v, Claude Code's %v", got.Required, w.Required))
	}
	return out
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// CompileSchema checks schema against the JSON Schema metaschema and that it
// describes an object.
func CompileSchema(schema json.RawMessage) error {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(schema))
	if err != nil {
		return fmt.Errorf("not JSON: %w", err)
	}
	c := jsonschema.NewCompiler()
	c.AssertFormat()
	if err := c.AddResource("schema.json", doc); err != nil {
		return err
	}
	if _, err := c.Compile("schema.json"); err != nil {
		return err
	}
	var top struct {
		Type string `json:"type"`
	}
	if err := json.Unmarshal(schema, &top); err != nil || top.Type != "object" {
		return fmt.Errorf("type is %q, want object", top.Type)
	}
	return nil
}

// ShapeOf renders a tool's schema in the notation of claude-code-tools.json.
func ShapeOf(tl tool.Tool) (Shape, error) {
	var s struct {
		Properties           map[string]map[string]any `json:"properties"`
		Required             []string                  `json:"required"`
		AdditionalProperties *bool                     `json:"additionalProperties"`
	}
	if err := json.Unmarshal(tl.InputSchema(), &s); err != nil {
		return Shape{}, err
	}
	out := Shape{Name: tl.Name(), Properties: map[string]string{}, Required: s.Required,
		AdditionalProperties: s.AdditionalProperties == nil || *s.AdditionalProperties}
	for name, p := range s.Properties {
		out.Properties[name] = notation(p)
	}
	return out, nil
}

// notation writes a property schema as claude-code-tools.json does:
// "string", "string enum['a', 'b']", "array<string>", "anyOf(…,…)".
func notation(p map[string]any) string {
	if alts, ok := p["anyOf"].([]any); ok {
		parts := make([]string, len(alts))
		for i, a := range alts {
			m, _ := a.(map[string]any)
			parts[i] = notation(m)
		}
		return "anyOf(" + strings.Join(parts, ",") + ")"
	}
	typ, _ := p["type"].(string)
	if typ == "array" {
		items, _ := p["items"].(map[string]any)
		return "array<" + notation(items) + ">"
	}
	if vals, ok := p["enum"].([]any); ok {
		q := make([]string, len(vals))
		for i, v := range vals {
			q[i] = fmt.Sprintf("'%v'", v)
		}
		return typ + " enum[" + strings.Join(q, ", ") + "]"
	}
	return typ
}

func sorted(s []string) []string {
	s = slices.Clone(s)
	slices.Sort(s)
	return s
}
