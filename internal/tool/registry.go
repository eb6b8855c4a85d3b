package tool

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/tackcode/tack/internal/llm"
)

// Registry is the set of tools offered to the model, in a stable order
// (by name), with their input validators compiled on first use.
type Registry struct {
	tools  []Tool
	byName map[string]Tool

	mu         sync.Mutex
	validators map[string]*jsonschema.Resolved
}

// NewRegistry returns a registry of tools. A later tool with the name of an
// earlier one replaces it.
func NewRegistry(tools ...Tool) *Registry {
	r := &Registry{byName: make(map[string]Tool, len(tools)), validators: map[string]*jsonschema.Resolved{}}
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

// Validate checks input against the tool's schema. Failures are *InputError.
func (r *Registry) Validate(t Tool, input json.RawMessage) error {
	schema, err := r.validator(t)
	if err != nil {
		return &InputError{Tool: t.Name(), Err: fmt.Errorf("the tool's own schema is invalid: %w", err)}
	}
	var inst any
	if err := json.Unmarshal(orEmptyObject(input), &inst); err != nil {
		return &InputError{Tool: t.Name(), Err: fmt.Errorf("input is not valid JSON: %w", err)}
	}
	if err := schema.Validate(inst); err != nil {
		return &InputError{Tool: t.Name(), Err: errors.New(strings.TrimPrefix(err.Error(), "validating root: "))}
	}
	return nil
}

// validator compiles a tool's schema once. The validator library is the one
// the MCP SDK uses; it is cheap to link (tack's start-up time counts).
func (r *Registry) validator(t Tool) (*jsonschema.Resolved, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if s, ok := r.validators[t.Name()]; ok {
		return s, nil
	}
	var schema jsonschema.Schema
	if err := json.Unmarshal(t.InputSchema(), &schema); err != nil {
		return nil, err
	}
	resolved, err := schema.Resolve(nil)
	if err != nil {
		return nil, err
	}
	r.validators[t.Name()] = resolved
	return resolved, nil
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
