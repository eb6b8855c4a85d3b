package tool

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
)

type fakeTool struct{ name, schema string }

func (f fakeTool) Name() string                  { return f.name }
func (f fakeTool) Description() string           { return "d" }
func (f fakeTool) InputSchema() json.RawMessage  { return json.RawMessage(f.schema) }
func (f fakeTool) ReadOnly(json.RawMessage) bool { return true }
func (f fakeTool) Run(context.Context, *Env, json.RawMessage) (Result, error) {
	return Result{}, nil
}

const readSchema = `{"type":"object","properties":{"file_path":{"type":"string"},"offset":{"type":"integer"}},"required":["file_path"],"additionalProperties":false}`

func TestRegistryOrderAndValidation(t *testing.T) {
	r := NewRegistry(fakeTool{"Write", readSchema}, fakeTool{"Bash", readSchema}, fakeTool{"Read", readSchema})
	if got := strings.Join(r.Names(), ","); got != "Bash,Read,Write" {
		t.Fatalf("order %s", got)
	}
	read, _ := r.Get("Read")
	if err := r.Validate(read, json.RawMessage(`{"file_path":"/x","offset":3}`)); err != nil {
		t.Fatalf("valid input rejected: %v", err)
	}
	for input, want := range map[string]string{
		`{"offset":3}`:                    "file_path",
		`{"file_path":"/x","offset":"x"}`: "offset",
		`{"file_path":"/x","extra":1}`:    "extra",
		`{"file_path":"/x","offset":1.5}`: "offset",
	} {
		err := r.Validate(read, json.RawMessage(input))
		if !IsInputError(err) || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: got %v, want an input error mentioning %q", input, err, want)
		}
	}
	if err := r.Validate(read, json.RawMessage(`{"file_path":`)); !IsInputError(err) {
		t.Errorf("truncated JSON: %v", err)
	}
}

func TestRegistryGroups(t *testing.T) {
	r := NewRegistry(fakeTool{"Read", readSchema}, fakeTool{"Bash", readSchema})
	r.SetGroup("mcp__b", []Tool{fakeTool{"mcp__b__z", readSchema}, fakeTool{"mcp__b__a", readSchema}})
	r.SetGroup("mcp__a", []Tool{fakeTool{"mcp__a__x", readSchema}, fakeTool{"Read", `{"type":"object"}`}})
	if got := strings.Join(r.Names(), ","); got != "Bash,Read,mcp__a__x,mcp__b__a,mcp__b__z" {
		t.Fatalf("order %s", got)
	}
	if tl, _ := r.Get("Read"); string(tl.InputSchema()) != readSchema {
		t.Error("a group shadowed a built-in")
	}
	// A changed schema is validated afresh.
	x, _ := r.Get("mcp__a__x")
	if err := r.Validate(x, json.RawMessage(`{"file_path":"/x"}`)); err != nil {
		t.Fatal(err)
	}
	r.SetGroup("mcp__a", []Tool{fakeTool{"mcp__a__x", `{"type":"object","properties":{"n":{"type":"integer"}},"required":["n"]}`}})
	x, _ = r.Get("mcp__a__x")
	if err := r.Validate(x, json.RawMessage(`{"file_path":"/x"}`)); !IsInputError(err) {
		t.Errorf("the old validator was kept: %v", err)
	}
	r.SetDeferred([]string{"mcp__a__x"})
	for _, s := range r.Specs() {
		if s.DeferLoading != (s.Name == "mcp__a__x") {
			t.Errorf("%s deferred=%v", s.Name, s.DeferLoading)
		}
	}
	r.SetGroup("mcp__b", nil)
	if _, ok := r.Get("mcp__b__a"); ok || len(r.Names()) != 3 {
		t.Errorf("group not removed: %v", r.Names())
	}
}

func TestRegistryReplace(t *testing.T) {
	r := NewRegistry(fakeTool{"Read", readSchema}, fakeTool{"Skill", readSchema})
	r.Replace(fakeTool{"Skill", `{"type":"object"}`})
	r.Replace(fakeTool{"Agent", readSchema})
	if got := strings.Join(r.Names(), ","); got != "Agent,Read,Skill" {
		t.Fatalf("names %s", got)
	}
	skill, _ := r.Get("Skill")
	// The new schema holds: its old required field is gone.
	if err := r.Validate(skill, json.RawMessage(`{}`)); err != nil {
		t.Errorf("the replaced tool kept its old schema: %v", err)
	}
}
