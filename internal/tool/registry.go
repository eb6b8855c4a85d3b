package tool

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"golang.org/x/text/language"
	"golang.org/x/text/message"

	"github.com/tackcode/tack/internal/llm"
)

// Registry is the set of tools offered to the model, in a stable order
// (by name), with their input validators compiled on first use.
type Registry struct {
	tools  []Tool
	byName map[string]Tool

	mu         sync.Mutex
	validators map[string]*jsonschema.Schema
}

// NewRegistry returns a registry of tools. A later tool with the name of an
// earlier one replaces it.
func NewRegistry(tools ...Tool) *Registry {
	r := &Registry{byName: make(map[string]Tool, len(tools)), validators: map[string]*jsonschema.Schema{}}
	for _, t := range tools {
		r.byName[t.Name()] = t
	}
	for _, t := range r.byName {
		r.tools = append(r.tools, t)
	}
	slices.SortFunc(r.tools, func(a, b Tool) int { return strings.Compare(a.Name(), b.Name()) })
	return r
}

// Get returns the tool called name.
func (r *Registry) Get(name string) (Tool, bool) {
	t, ok := r.byName[name]
	return t, ok
}

// Tools returns the tools in offer order.
func (r *Registry) Tools() []Tool { return r.tools }

// Names returns the tool names in offer order.
func (r *Registry) Names() []string {
	names := make([]string, len(r.tools))
	for i, t := range r.tools {
		names[i] = t.Name()
	}
	return names
}

// Specs returns the tools as the API's tools array.
func (r *Registry) Specs() []llm.ToolSpec {
	specs := make([]llm.ToolSpec, len(r.tools))
	for i, t := range r.tools {
		specs[i] = llm.ToolSpec{Name: t.Name(), Description: t.Description(), InputSchema: t.InputSchema()}
	}
	return specs
}

// Validate checks input against the tool's schema. Failures are *InputError
// with a message that names every problem.
func (r *Registry) Validate(t Tool, input json.RawMessage) error {
	schema, err := r.validator(t)
	if err != nil {
		return &InputError{Tool: t.Name(), Err: fmt.Errorf("the tool's own schema is invalid: %w", err)}
	}
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(orEmptyObject(input)))
	if err != nil {
		return &InputError{Tool: t.Name(), Err: fmt.Errorf("input is not valid JSON: %w", err)}
	}
	if err := schema.Validate(inst); err != nil {
		var ve *jsonschema.ValidationError
		if errors.As(err, &ve) {
			return &InputError{Tool: t.Name(), Err: errors.New(describeValidation(ve))}
		}
		return &InputError{Tool: t.Name(), Err: err}
	}
	return nil
}

func (r *Registry) validator(t Tool) (*jsonschema.Schema, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if s, ok := r.validators[t.Name()]; ok {
		return s, nil
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(t.InputSchema()))
	if err != nil {
		return nil, err
	}
	c := jsonschema.NewCompiler()
	url := "tack:///tools/" + t.Name() + ".json"
	if err := c.AddResource(url, doc); err != nil {
		return nil, err
	}
	s, err := c.Compile(url)
	if err != nil {
		return nil, err
	}
	r.validators[t.Name()] = s
	return s, nil
}

// describeValidation flattens a validation error tree into one line per leaf:
// "missing property 'file_path'", "at /offset: got string, want integer".
func describeValidation(ve *jsonschema.ValidationError) string {
	p := message.NewPrinter(language.English)
	var lines []string
	var walk func(*jsonschema.ValidationError)
	walk = func(e *jsonschema.ValidationError) {
		if len(e.Causes) == 0 {
			msg := e.ErrorKind.LocalizedString(p)
			if loc := "/" + strings.Join(e.InstanceLocation, "/"); loc != "/" {
				msg = "at " + loc + ": " + msg
			}
			lines = append(lines, msg)
			return
		}
		for _, c := range e.Causes {
			walk(c)
		}
	}
	walk(ve)
	return strings.Join(lines, "; ")
}

func orEmptyObject(b json.RawMessage) []byte {
	if len(bytes.TrimSpace(b)) == 0 {
		return []byte("{}")
	}
	return b
}

// Decode unmarshals validated input into dst.
func Decode(name string, input json.RawMessage, dst any) error {
	if err := json.Unmarshal(orEmptyObject(input), dst); err != nil {
		return &InputError{Tool: name, Err: fmt.Errorf("input does not decode: %w", err)}
	}
	return nil
}
