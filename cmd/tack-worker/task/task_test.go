package task

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func load(t *testing.T, name, content string) (*Fleet, error) {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return Load(path)
}

// A YAML fleet file: repos become tasks, defaults fill what tasks leave
// empty, branches default to tack/FLEET/ID, and json_schema is a YAML
// mapping like any other field.
func TestLoadYAML(t *testing.T) {
	f, err := load(t, "deps.yaml", `
defaults:
  prompt: bump
  permission_mode: acceptEdits
  json_schema:
    type: object
    properties:
      ok: {type: boolean}
repos:
  - https://example.com/acme/api.git
tasks:
  - id: docs
    repo: /srv/docs
    prompt: fix links
    patch_only: true
`)
	if err != nil {
		t.Fatal(err)
	}
	if f.Name != "deps" || len(f.Tasks) != 2 {
		t.Fatalf("fleet %+v", f)
	}
	api, docs := f.Tasks[1], f.Tasks[0]
	if api.ID != "api-1" || api.Prompt != "bump" || api.Branch != "tack/deps/api-1" || api.PermissionMode != "acceptEdits" {
		t.Fatalf("task of repos: %+v", api)
	}
	if docs.Prompt != "fix links" || !docs.PatchOnly || docs.Branch != "tack/deps/docs" {
		t.Fatalf("task: %+v", docs)
	}
	var schema map[string]any
	if err := json.Unmarshal(docs.JSONSchema, &schema); err != nil || schema["type"] != "object" {
		t.Fatalf("json_schema from YAML: %s, %v", docs.JSONSchema, err)
	}
}

func TestLoadRefusesBadFleets(t *testing.T) {
	for _, c := range []struct{ name, file, want string }{
		{"x.json", `{"tasks": [{"repo": "r", "prompt": "p", "colour": "red"}]}`, "unknown field"},
		{"x.yaml", "tasks:\n  - repo: r\n    prompt: p\n    colour: red\n", "unknown field"},
		{"x.json", `{"tasks": [{"id": "a", "repo": "r", "prompt": "p"}, {"id": "a", "repo": "r", "prompt": "p"}]}`, "id used twice"},
		{"x.json", `{"tasks": [{"id": "a b", "repo": "r", "prompt": "p"}]}`, "id:"},
		{"x.json", `{"tasks": [{"prompt": "p"}]}`, "no repo"},
		{"x.json", `{"tasks": [{"repo": "r"}]}`, "no prompt"},
		{"x.json", `{}`, "no tasks"},
		{"x.json", `{"name": "a/b", "tasks": [{"repo": "r", "prompt": "p"}]}`, "name"},
	} {
		if _, err := load(t, c.name, c.file); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s %s: %v, want an error with %q", c.name, c.file, err, c.want)
		}
	}
}
