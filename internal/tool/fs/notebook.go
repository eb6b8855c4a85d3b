package fs

import (
	"bytes"
	"context"
	"crypto/rand"
	_ "embed"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/tackcode/tack/internal/diff"
	"github.com/tackcode/tack/internal/jsonx"
	"github.com/tackcode/tack/internal/tool"
)

//go:embed notebook_edit.md
var notebookEditDescription string

const notebookEditSchema = `{
  "type": "object",
  "properties": {
    "notebook_path": {"type": "string", "description": "Absolute path of the .ipynb file"},
    "cell_id": {"type": "string", "description": "The cell's id, or cell-N for the cell at 0-based index N. Insert puts the new cell after it (at the start when omitted)"},
    "new_source": {"type": "string", "description": "The new source of the cell"},
    "cell_type": {"type": "string", "enum": ["code", "markdown"], "description": "Cell type; required for insert"},
    "edit_mode": {"type": "string", "enum": ["replace", "insert", "delete"], "description": "replace (default), insert or delete"}
  },
  "required": ["notebook_path", "new_source"],
  "additionalProperties": false
}`

type notebookEditTool struct{ w atomicWriter }

type notebookEditInput struct {
	NotebookPath string `json:"notebook_path"`
	CellID       string `json:"cell_id"`
	NewSource    string `json:"new_source"`
	CellType     string `json:"cell_type"`
	EditMode     string `json:"edit_mode"`
}

// notebookEditResult is NotebookEdit's structured result, as Claude Code
// reports it.
type notebookEditResult struct {
	NewSource string `json:"new_source"`
	// OldSource is the replaced cell's source (replace only).
	OldSource    *string `json:"old_source,omitempty"`
	CellType     string  `json:"cell_type"`
	Language     string  `json:"language"`
	EditMode     string  `json:"edit_mode"`
	CellID       string  `json:"cell_id,omitempty"`
	Error        string  `json:"error"` // always empty: a failed edit is an error result
	NotebookPath string  `json:"notebook_path"`
	OriginalFile string  `json:"original_file"`
	UpdatedFile  string  `json:"updated_file"`
}

// cell is a notebook cell with its fields kept verbatim.
type cell = map[string]json.RawMessage

func (notebookEditTool) Name() string                  { return "NotebookEdit" }
func (notebookEditTool) Description() string           { return notebookEditDescription }
func (notebookEditTool) InputSchema() json.RawMessage  { return json.RawMessage(notebookEditSchema) }
func (notebookEditTool) ReadOnly(json.RawMessage) bool { return false }

func (t notebookEditTool) Run(ctx context.Context, env *tool.Env, input json.RawMessage) (tool.Result, error) {
	var in notebookEditInput
	if err := tool.Decode(t.Name(), input, &in); err != nil {
		return tool.Result{}, err
	}
	path := env.Abs(in.NotebookPath)
	if !strings.EqualFold(filepath.Ext(path), ".ipynb") {
		return tool.Result{}, tool.BadInput(t.Name(), "%s is not a Jupyter notebook (.ipynb); change other files with Edit.", path)
	}
	info, err := statFile(t.Name(), path)
	if err != nil {
		return tool.Result{}, err
	}
	if info == nil {
		return tool.Result{}, missingFile(t.Name(), env, path)
	}
	if err := checkFresh(t.Name(), env, path, info); err != nil {
		return tool.Result{}, err
	}
	raw, err := loadText(ctx, env, path)
	if err != nil {
		return tool.Result{}, fmt.Errorf("read %s: %w", path, err)
	}
	var nb map[string]json.RawMessage
	var cells []cell
	if err := json.Unmarshal(raw, &nb); err != nil {
		return tool.Result{}, tool.BadInput(t.Name(), "%s is not valid notebook JSON: %v", path, err)
	}
	if err := json.Unmarshal(nb["cells"], &cells); err != nil || cells == nil {
		return tool.Result{}, tool.BadInput(t.Name(), "%s has no cells list, so it is not a Jupyter notebook.", path)
	}

	mode := in.EditMode
	if mode == "" {
		mode = "replace"
	}
	idx := -1
	if in.CellID != "" {
		if idx = findCell(cells, in.CellID); idx < 0 {
			return tool.Result{}, tool.BadInput(t.Name(), "No cell %q in %s. cell_id is a cell's \"id\" field, or cell-N for the cell at 0-based index N (the notebook has %d cells).", in.CellID, path, len(cells))
		}
	}
	if mode == "replace" && idx == len(cells) {
		// Replacing the cell one past the end appends a new one.
		mode, idx = "insert", len(cells)-1
		if in.CellType == "" {
			in.CellType = "code"
		}
	} else if idx == len(cells) {
		return tool.Result{}, tool.BadInput(t.Name(), "No cell %q in %s: the notebook has %d cells, numbered from cell-0.", in.CellID, path, len(cells))
	}

	cellType, cellID, msg := in.CellType, in.CellID, ""
	var oldSource *string
	switch mode {
	case "replace", "delete":
		if idx < 0 {
			return tool.Result{}, tool.BadInput(t.Name(), "cell_id is required to %s a cell.", mode)
		}
		if cellType == "" {
			_ = json.Unmarshal(cells[idx]["cell_type"], &cellType)
		}
		if mode == "delete" {
			cells = append(cells[:idx], cells[idx+1:]...)
			msg = "Deleted cell " + in.CellID + "."
			break
		}
		old := sourceText(cells[idx])
		oldSource = &old
		setSource(cells[idx], cellType, in.NewSource)
		msg = "Replaced the source of cell " + in.CellID + "."
	case "insert":
		if cellType == "" {
			return tool.Result{}, tool.BadInput(t.Name(), "cell_type (code or markdown) is required to insert a cell.")
		}
		c := cell{"metadata": json.RawMessage("{}")}
		if usesCellIDs(nb, cells) {
			cellID = newCellID()
			c["id"] = mustJSON(cellID)
		} else {
			cellID = "cell-" + strconv.Itoa(idx+1)
		}
		setSource(c, cellType, in.NewSource)
		cells = append(cells[:idx+1], append([]cell{c}, cells[idx+1:]...)...)
		msg = fmt.Sprintf("Inserted %s cell %s at position %d.", cellType, cellID, idx+1)
	default:
		return tool.Result{}, tool.BadInput(t.Name(), "edit_mode must be replace, insert or delete.")
	}

	updated, err := encodeNotebook(nb, cells, raw)
	if err != nil {
		return tool.Result{}, fmt.Errorf("encode %s: %w", path, err)
	}
	if err := ctx.Err(); err != nil {
		return tool.Result{}, err
	}
	if err := t.w.save(ctx, env, path, updated, info); err != nil {
		return tool.Result{}, err
	}
	return tool.TextResult(msg, notebookEditResult{
		NewSource: in.NewSource, OldSource: oldSource, CellID: cellID, CellType: cellType, Language: notebookLanguage(nb),
		EditMode: mode, NotebookPath: path, OriginalFile: string(raw), UpdatedFile: string(updated),
	}), nil
}

// findCell returns the index of the cell with the given id, or of cell-N;
// N may be one past the last cell. It returns -1 when there is none.
func findCell(cells []cell, id string) int {
	for i, c := range cells {
		var cid string
		if json.Unmarshal(c["id"], &cid) == nil && cid == id {
			return i
		}
	}
	if n, err := strconv.Atoi(strings.TrimPrefix(id, "cell-")); err == nil && strings.HasPrefix(id, "cell-") && n >= 0 && n <= len(cells) {
		return n
	}
	return -1
}

// setSource gives c the source and type, keeping the fields Jupyter expects
// of that type: a code cell's outputs are cleared since its source changed.
// sourceText is a cell's source as one string (nbformat allows a string or
// a list of lines).
func sourceText(c cell) string {
	var s string
	if json.Unmarshal(c["source"], &s) == nil {
		return s
	}
	var lines []string
	_ = json.Unmarshal(c["source"], &lines)
	return strings.Join(lines, "")
}

func setSource(c cell, cellType, source string) {
	c["cell_type"] = mustJSON(cellType)
	lines := diff.SplitLines(source) // Jupyter stores source as lines
	if lines == nil {
		lines = []string{}
	}
	c["source"] = mustJSON(lines)
	if cellType == "code" {
		c["execution_count"] = json.RawMessage("null")
		c["outputs"] = json.RawMessage("[]")
	} else {
		delete(c, "execution_count")
		delete(c, "outputs")
	}
}

// usesCellIDs reports whether new cells need an id: nbformat 4.5 and later
// require them.
func usesCellIDs(nb map[string]json.RawMessage, cells []cell) bool {
	for _, c := range cells {
		if _, ok := c["id"]; ok {
			return true
		}
	}
	var major, minor int
	_ = json.Unmarshal(nb["nbformat"], &major)
	_ = json.Unmarshal(nb["nbformat_minor"], &minor)
	return major > 4 || (major == 4 && minor >= 5)
}

// newCellID returns a random id in Jupyter's style (8 hex digits).
func newCellID() string {
	var b [4]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails
	return hex.EncodeToString(b[:])
}

func notebookLanguage(nb map[string]json.RawMessage) string {
	var meta struct {
		LanguageInfo struct {
			Name string `json:"name"`
		} `json:"language_info"`
		Kernelspec struct {
			Language string `json:"language"`
		} `json:"kernelspec"`
	}
	_ = json.Unmarshal(nb["metadata"], &meta)
	switch {
	case meta.LanguageInfo.Name != "":
		return meta.LanguageInfo.Name
	case meta.Kernelspec.Language != "":
		return meta.Kernelspec.Language
	}
	return "python"
}

// encodeNotebook writes nb with cells as Jupyter does — keys sorted,
// non-ASCII kept, one-space indent — but with the indent and final newline
// of the original.
func encodeNotebook(nb map[string]json.RawMessage, cells []cell, original []byte) ([]byte, error) {
	encCells, err := jsonx.Marshal(cells)
	if err != nil {
		return nil, err
	}
	nb["cells"] = encCells
	indent := " "
	if i := bytes.IndexByte(original, '\n'); i >= 0 {
		rest := original[i+1:]
		if n := len(rest) - len(bytes.TrimLeft(rest, " \t")); n > 0 {
			indent = string(rest[:n])
		}
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", indent)
	if err := enc.Encode(nb); err != nil {
		return nil, err
	}
	out := buf.Bytes() // Encode ends with a newline, as Jupyter's files do
	if !bytes.HasSuffix(original, []byte("\n")) {
		out = bytes.TrimSuffix(out, []byte("\n"))
	}
	return out, nil
}

// mustJSON encodes strings and string slices, which always encode.
func mustJSON[T string | []string](v T) json.RawMessage {
	b, err := jsonx.Marshal(v)
	if err != nil {
		panic(fmt.Sprintf("encode %T: %v", v, err))
	}
	return b
}

// notebookFile is Read's structured result for a notebook, as Claude
// Code's Read reports one (the model still reads the file's text).
type notebookFile struct {
	FilePath string         `json:"filePath"`
	Cells    []notebookCell `json:"cells"`
}

type notebookCell struct {
	CellType string `json:"cellType"`
	Source   string `json:"source"`
	CellID   string `json:"cell_id"`
	Language string `json:"language,omitempty"` // code cells
}

// readNotebook is the structured result of reading the notebook raw; ok is
// false when raw is not a notebook.
func readNotebook(path string, raw []byte) (readResult[notebookFile], bool) {
	var nb map[string]json.RawMessage
	var cells []cell
	if json.Unmarshal(raw, &nb) != nil || json.Unmarshal(nb["cells"], &cells) != nil || cells == nil {
		return readResult[notebookFile]{}, false
	}
	lang := notebookLanguage(nb)
	out := notebookFile{FilePath: path, Cells: make([]notebookCell, 0, len(cells))}
	for i, c := range cells {
		nc := notebookCell{Source: sourceText(c), CellID: "cell-" + strconv.Itoa(i)}
		_ = json.Unmarshal(c["cell_type"], &nc.CellType)
		_ = json.Unmarshal(c["id"], &nc.CellID)
		if nc.CellType == "code" {
			nc.Language = lang
		}
		out.Cells = append(out.Cells, nc)
	}
	return readResult[notebookFile]{"notebook", out}, true
}
