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

// Registry is the set of tools offered to the model: the built-in tools,
// fixed for the session, then groups that come and go (the tools of an MCP
// server, which may join late or change its list). Tools are offered in a
// stable order: built-ins by name, then each group's tools by name. Input
// validators are compiled on first use. It is safe for concurrent use.
type Registry struct {
	mu       sync.RWMutex
	base     []Tool
	groups   map[string][]Tool
	deferred map[string]bool // sent with defer_loading: loaded on demand
	tools    []Tool          // base then groups, in offer order
	byName   map[string]Tool

	vmu        sync.Mutex
	validators map[string]*jsonschema.Resolved
}

// NewRegistry returns a registry of tools. A later tool with the name of an
// earlier one replaces it.
func NewRegistry(tools ...Tool) *Registry {
	r := &Registry{groups: map[string][]Tool{}, deferred: map[string]bool{}, validators: map[string]*jsonschema.Resolved{}}
	byName := map[string]Tool{}
	for _, t := range tools {
		byName[t.Name()] = t
	}
	for _, t := range byName {
		r.base = append(r.base, t)
	}
	sortTools(r.base)
	r.rebuild()
	return r
}

func sortTools(ts []Tool) {
	slices.SortFunc(ts, func(a, b Tool) int { return strings.Compare(a.Name(), b.Name()) })
}

// rebuild recomputes the offer order; called with mu held for writing.
func (r *Registry) rebuild() {
	tools := append([]Tool(nil), r.base...)
	byName := make(map[string]Tool, len(tools))
	for _, t := range tools {
		byName[t.Name()] = t
	}
	names := make([]string, 0, len(r.groups))
	for g := range r.groups {
		names = append(names, g)
	}
	slices.Sort(names)
	for _, g := range names {
		for _, t := range r.groups[g] {
			if _, dup := byName[t.Name()]; dup {
				continue // a built-in keeps its name
			}
			byName[t.Name()] = t
			tools = append(tools, t)
		}
	}
	r.tools, r.byName = tools, byName
}

// Replace puts t among the built-in tools in place of the one of its name,
// or adds it.
func (r *Registry) Replace(t Tool) {
	r.mu.Lock()
	r.base = slices.DeleteFunc(slices.Clone(r.base), func(b Tool) bool { return b.Name() == t.Name() })
	r.base = append(r.base, t)
	sortTools(r.base)
	r.rebuild()
	r.mu.Unlock()
	r.vmu.Lock()
	delete(r.validators, t.Name())
	r.vmu.Unlock()
}

// SetGroup replaces the tools of a group (nil or empty removes it).
func (r *Registry) SetGroup(group string, tools []Tool) {
	ts := append([]Tool(nil), tools...)
	sortTools(ts)
	r.mu.Lock()
	old := r.groups[group]
	if len(ts) == 0 {
		delete(r.groups, group)
	} else {
		r.groups[group] = ts
	}
	r.rebuild()
	r.mu.Unlock()
	// A tool may come back with another schema: forget compiled validators.
	r.vmu.Lock()
	for _, t := range old {
		delete(r.validators, t.Name())
	}
	for _, t := range ts {
		delete(r.validators, t.Name())
	}
	r.vmu.Unlock()
}

// SetDeferred marks which tools are sent with defer_loading: the API keeps
// them out of the context until a tool search references them.
func (r *Registry) SetDeferred(names []string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.deferred = make(map[string]bool, len(names))
	for _, n := range names {
		r.deferred[n] = true
	}
}

// Deferred reports whether the tool is sent with defer_loading.
func (r *Registry) Deferred(name string) bool {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return r.deferred[name]
}

// Get returns the tool called name.
func (r *Registry) Get(name string) (Tool, bool) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	t, ok := r.byName[name]
	return t, ok
}

// Tools returns the tools in offer order.
func (r *Registry) Tools() []Tool {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return r.tools
}

// Names returns the tool names in offer order.
func (r *Registry) Names() []string {
	tools := r.Tools()
	names := make([]string, len(tools))
	for i, t := range tools {
		names[i] = t.Name()
	}
	return names
}

// Specs returns the tools as the API's tools array.
func (r *Registry) Specs() []llm.ToolSpec {
	r.mu.RLock()
	defer r.mu.RUnlock()
	specs := make([]llm.ToolSpec, len(r.tools))
	for i, t := range r.tools {
		specs[i] = llm.ToolSpec{Name: t.Name(), Description: t.Description(), InputSchema: t.InputSchema(), DeferLoading: r.deferred[t.Name()]}
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
	r.vmu.Lock()
	defer r.vmu.Unlock()
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
