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
