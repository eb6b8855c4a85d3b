// Package lsptool is the LSP tool: the model's questions to the session's
// language servers.
package lsptool

import (
	"context"
	_ "embed"
	"encoding/json"
	"path/filepath"
	"slices"

	"github.com/tackcode/tack/internal/lsp"
	"github.com/tackcode/tack/internal/tool"
)

// Name is the tool's name, as Claude Code calls it.
const Name = "LSP"

//go:embed lsp.md
var description string

const schema = `{"type":"object","properties":{` +
	`"operation":{"type":"string","enum":["goToDefinition","findReferences","hover","documentSymbol","workspaceSymbol","goToImplementation","prepareCallHierarchy","incomingCalls","outgoingCalls"],"description":"What to ask the language server"},` +
	`"filePath":{"type":"string","description":"The file, absolute or relative to the working directory"},` +
	`"line":{"type":"integer","minimum":1,"description":"1-based line"},` +
	`"character":{"type":"integer","minimum":1,"description":"1-based character in the line"}},` +
	`"required":["operation","filePath","line","character"],"additionalProperties":false}`

type lspTool struct{ m *lsp.Manager }

// New returns the LSP tool over the session's servers.
func New(m *lsp.Manager) tool.Tool { return lspTool{m} }

func (lspTool) Name() string                  { return Name }
func (lspTool) Description() string           { return description }
func (lspTool) InputSchema() json.RawMessage  { return json.RawMessage(schema) }
func (lspTool) ReadOnly(json.RawMessage) bool { return true }

type input struct {
	Operation string `json:"operation"`
	FilePath  string `json:"filePath"`
	Line      int    `json:"line"`
	Character int    `json:"character"`
}

func (t lspTool) Run(ctx context.Context, env *tool.Env, raw json.RawMessage) (tool.Result, error) {
	var in input
	if err := json.Unmarshal(raw, &in); err != nil {
		return tool.Result{}, tool.BadInput(Name, "invalid input: %v", err)
	}
	if !slices.Contains(lsp.Operations, in.Operation) {
		return tool.Result{}, tool.BadInput(Name, "unknown operation %q", in.Operation)
	}
	path := in.FilePath
	if !filepath.IsAbs(path) {
		base := env.ProjectDir
		if env.Shell != nil {
			base = env.Shell.Cwd()
		}
		path = filepath.Join(base, path)
	}
	if !t.m.Owns(path) {
		return tool.Result{}, tool.BadInput(Name, "no language server is configured for %s", in.FilePath)
	}
	out, err := t.m.Run(ctx, in.Operation, path, in.Line, in.Character)
	if err != nil {
		return tool.Result{}, err
	}
	return tool.TextResult(out, map[string]any{"operation": in.Operation, "filePath": in.FilePath, "result": out}), nil
}
