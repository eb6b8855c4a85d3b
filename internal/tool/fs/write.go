package fs

import (
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	"github.com/tackcode/tack/internal/diff"
	"github.com/tackcode/tack/internal/tool"
)

//go:embed write.md
var writeDescription string

const writeSchema = `{
  "type": "object",
  "properties": {
    "file_path": {"type": "string", "description": "Absolute path of the file to write"},
    "content": {"type": "string", "description": "The whole new content of the file"}
  },
  "required": ["file_path", "content"],
  "additionalProperties": false
}`

// stateNote tells the model it need not read back what it just wrote.
const stateNote = " (the file's current content is known to you; no need to Read it again)"

type writeTool struct{ w atomicWriter }

type writeInput struct {
	FilePath string `json:"file_path"`
	Content  string `json:"content"`
}

// writeResult is Write's structured result, as Claude Code reports it.
type writeResult struct {
	Type            string      `json:"type"` // "create" or "update"
	FilePath        string      `json:"filePath"`
	Content         string      `json:"content"`
	StructuredPatch []diff.Hunk `json:"structuredPatch"`
	OriginalFile    *string     `json:"originalFile"`
	UserModified    bool        `json:"userModified"`
}

func (writeTool) Name() string                  { return "Write" }
func (writeTool) Description() string           { return writeDescription }
func (writeTool) InputSchema() json.RawMessage  { return json.RawMessage(writeSchema) }
func (writeTool) ReadOnly(json.RawMessage) bool { return false }

func (t writeTool) Run(ctx context.Context, env *tool.Env, input json.RawMessage) (tool.Result, error) {
	var in writeInput
	if err := tool.Decode(t.Name(), input, &in); err != nil {
		return tool.Result{}, err
	}
	path := env.Abs(in.FilePath)
	info, err := statFile(t.Name(), path)
	if err != nil {
		return tool.Result{}, err
	}
	if info == nil {
		if err := ctx.Err(); err != nil {
			return tool.Result{}, err
		}
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return tool.Result{}, fmt.Errorf("create parent directories of %s: %w", path, err)
		}
		if err := t.w.save(ctx, env, path, []byte(in.Content), nil); err != nil {
			return tool.Result{}, err
		}
		return tool.TextResult("File created successfully at: "+path+stateNote, writeResult{
			Type: "create", FilePath: path, Content: in.Content, StructuredPatch: []diff.Hunk{},
		}), nil
	}

	if err := checkFresh(t.Name(), env, path, info); err != nil {
		return tool.Result{}, err
	}
	raw, err := loadText(ctx, env, path)
	if err != nil {
		return tool.Result{}, fmt.Errorf("read %s: %w", path, err)
	}
	original := string(raw)
	content := in.Content
	if usesCRLF(original) {
		content = toCRLF(content)
	}
	if err := ctx.Err(); err != nil {
		return tool.Result{}, err
	}
	if err := t.w.save(ctx, env, path, []byte(content), info); err != nil {
		return tool.Result{}, err
	}
	return tool.TextResult("The file "+path+" has been updated successfully."+stateNote, writeResult{
		Type: "update", FilePath: path, Content: in.Content,
		StructuredPatch: diff.Patch(toLF(original), toLF(content)),
		OriginalFile:    &original,
	}), nil
}
