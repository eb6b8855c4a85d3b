package fs

import (
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/tackcode/tack/internal/diff"
	"github.com/tackcode/tack/internal/tool"
)

//go:embed edit.md
var editDescription string

const editSchema = `{
  "type": "object",
  "properties": {
    "file_path": {"type": "string", "description": "Absolute path of the file to change"},
    "old_string": {"type": "string", "description": "The exact text to replace"},
    "new_string": {"type": "string", "description": "The text to put in its place (must differ from old_string)"},
    "replace_all": {"type": "boolean", "default": false, "description": "Replace every occurrence of old_string (default false)"}
  },
  "required": ["file_path", "old_string", "new_string"],
  "additionalProperties": false
}`

type editTool struct{ w atomicWriter }

type editInput struct {
	FilePath   string `json:"file_path"`
	OldString  string `json:"old_string"`
	NewString  string `json:"new_string"`
	ReplaceAll bool   `json:"replace_all"`
}

// editResult is Edit's structured result, as Claude Code reports it.
type editResult struct {
	FilePath        string      `json:"filePath"`
	OldString       string      `json:"oldString"`
	NewString       string      `json:"newString"`
	OriginalFile    string      `json:"originalFile"`
	StructuredPatch []diff.Hunk `json:"structuredPatch"`
	UserModified    bool        `json:"userModified"`
	ReplaceAll      bool        `json:"replaceAll"`
}

func (editTool) Name() string                  { return "Edit" }
func (editTool) Description() string           { return editDescription }
func (editTool) InputSchema() json.RawMessage  { return json.RawMessage(editSchema) }
func (editTool) ReadOnly(json.RawMessage) bool { return false }

func (t editTool) Run(ctx context.Context, env *tool.Env, input json.RawMessage) (tool.Result, error) {
	var in editInput
	if err := tool.Decode(t.Name(), input, &in); err != nil {
		return tool.Result{}, err
	}
	if in.OldString == in.NewString {
		return tool.Result{}, tool.BadInput(t.Name(), "No changes to make: old_string and new_string are exactly the same.")
	}
	path := env.Abs(in.FilePath)
	info, err := statFile(t.Name(), path)
	if err != nil {
		return tool.Result{}, err
	}
	result := editResult{FilePath: path, OldString: in.OldString, NewString: in.NewString, ReplaceAll: in.ReplaceAll}
	if info == nil {
		if in.OldString != "" {
			return tool.Result{}, missingFile(t.Name(), env, path)
		}
		// An empty old_string on a missing file creates it.
		if err := ctx.Err(); err != nil {
			return tool.Result{}, err
		}
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return tool.Result{}, fmt.Errorf("create parent directories of %s: %w", path, err)
		}
		if err := t.w.save(ctx, env, path, []byte(in.NewString), nil); err != nil {
			return tool.Result{}, err
		}
		result.StructuredPatch = diff.Patch("", in.NewString)
		return tool.TextResult("File created successfully at: "+path+stateNote, result), nil
	}

	if strings.EqualFold(filepath.Ext(path), ".ipynb") {
		return tool.Result{}, tool.BadInput(t.Name(), "%s is a Jupyter notebook; change its cells with NotebookEdit.", path)
	}
	if err := checkFresh(t.Name(), env, path, info); err != nil {
		return tool.Result{}, err
	}
	raw, err := loadText(ctx, env, path)
	if err != nil {
		return tool.Result{}, fmt.Errorf("read %s: %w", path, err)
	}
	original := string(raw)
	result.OriginalFile = original

	// Match on LF text so the model need not reproduce CRLF endings, and
	// write the file back with the endings it had.
	crlf := usesCRLF(original)
	text, old, repl := original, in.OldString, in.NewString
	if crlf {
		text, old, repl = toLF(text), toLF(old), toLF(repl)
	}
	var updated string
	n := 0
	switch {
	case old == "" && strings.TrimSpace(text) != "":
		return tool.Result{}, tool.BadInput(t.Name(), "%s already exists and is not empty, so an empty old_string cannot create it. Give the text to replace as old_string, or use Write to replace the whole file.", path)
	case old == "":
		updated, n = repl, 1
	default:
		n = strings.Count(text, old)
		if n == 0 {
			return tool.Result{}, tool.BadInput(t.Name(), "old_string was not found in %s. It must match the file exactly, including whitespace and indentation; Read the file again if unsure of its content.", path)
		}
		if n > 1 && !in.ReplaceAll {
			return tool.Result{}, tool.BadInput(t.Name(), "old_string occurs %d times in %s, but replace_all is false. Include more surrounding lines in old_string to pick out one occurrence, or set replace_all to true to change all %d.", n, path, n)
		}
		updated = strings.Replace(text, old, repl, -1)
	}
	out := updated
	if crlf {
		out = toCRLF(updated)
	}
	if err := ctx.Err(); err != nil {
		return tool.Result{}, err
	}
	if err := t.w.save(ctx, env, path, []byte(out), info); err != nil {
		return tool.Result{}, err
	}
	result.StructuredPatch = diff.Patch(text, updated)
	msg := "The file " + path + " has been updated successfully."
	if n > 1 {
		msg = fmt.Sprintf("The file %s has been updated successfully: %d occurrences replaced.", path, n)
	}
	return tool.TextResult(msg+stateNote, result), nil
}
