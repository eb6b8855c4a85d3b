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
	err := r.Validate(read, json.RawMessage(`{"offset":"x","extra":1}`))
	if !IsInputError(err) {
		t.Fatalf("want input error, got %v", err)
	}
	for _, want := range []string{"missing property 'file_path'", "/offset", "extra"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not mention %q", err, want)
		}
	}
	if err := r.Validate(read, json.RawMessage(`{"file_path":`)); !IsInputError(err) {
		t.Errorf("truncated JSON: %v", err)
	}
}
