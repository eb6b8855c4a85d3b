package fs

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/tackcode/tack/internal/tool"
)

// notebook is written as Jupyter writes files: sorted keys, one-space indent.
const notebook = `{
 "cells": [
  {
   "cell_type": "markdown",
   "id": "intro",
   "metadata": {},
   "source": [
    "# Title <b>bold</b> & more\n",
    "Some text é"
   ]
  },
  {
   "cell_type": "code",
   "execution_count": 1,
   "id": "c0ffee01",
   "metadata": {
    "tags": [
     "keep"
    ]
   },
   "outputs": [
    {
     "name": "stdout",
     "output_type": "stream",
     "text": [
      "2\n"
     ]
    }
   ],
   "source": [
    "print(1 + 1)"
   ]
  }
 ],
 "metadata": {
  "kernelspec": {
   "display_name": "Python 3",
   "language": "python",
   "name": "python3"
  },
  "language_info": {
   "name": "python",
   "version": "3.12.0"
  }
 },
 "nbformat": 4,
 "nbformat_minor": 5
}
`

type nbCell struct {
	CellType       string           `json:"cell_type"`
	ID             *string          `json:"id"`
	Source         []string         `json:"source"`
	Outputs        *json.RawMessage `json:"outputs"`
	ExecutionCount *json.RawMessage `json:"execution_count"`
}

func loadCells(t *testing.T, path string) []nbCell {
	t.Helper()
	var nb struct {
		Cells []nbCell `json:"cells"`
	}
	if err := json.Unmarshal([]byte(readFile(t, path)), &nb); err != nil {
		t.Fatal(err)
	}
	return nb.Cells
}

func newNotebook(t *testing.T, content string) (*tool.Env, string) {
	t.Helper()
	env, dir := newEnv(t)
	path := filepath.Join(dir, "analysis.ipynb")
	writeFile(t, path, content, 0o644)
	readIt(t, env, path)
	return env, path
}

func TestNotebookReplaceKeepsFormatting(t *testing.T) {
	env, path := newNotebook(t, notebook)
	res := mustCall(t, notebookEditTool{}, env, map[string]any{
		"notebook_path": path, "cell_id": "c0ffee01", "new_source": "x = 2\nprint(x)",
	})
	want := strings.Replace(notebook, `   "execution_count": 1,`, `   "execution_count": null,`, 1)
	i, j := strings.Index(want, `   "outputs": [`), strings.Index(want, `    "print(1 + 1)"`)
	want = want[:i] + "   \"outputs\": [],\n   \"source\": [\n    \"x = 2\\n\",\n    \"print(x)\"" + want[j+len(`    "print(1 + 1)"`):]
	if got := readFile(t, path); got != want {
		t.Errorf("notebook after replace:\n%s\nwant:\n%s", got, want)
	}
	if !strings.Contains(textOf(res), "c0ffee01") {
		t.Errorf("content %q", textOf(res))
	}
	var s notebookEditResult
	if err := json.Unmarshal([]byte(structured(t, res)), &s); err != nil {
		t.Fatal(err)
	}
	if s.EditMode != "replace" || s.CellType != "code" || s.Language != "python" || s.OriginalFile != notebook || s.UpdatedFile != want {
		t.Errorf("structured %+v", s)
	}
	noTempFiles(t, filepath.Dir(path))

	// Changing the type of a cell drops what the old type had.
	mustCall(t, notebookEditTool{}, env, map[string]any{
		"notebook_path": path, "cell_id": "cell-1", "new_source": "now prose", "cell_type": "markdown", "edit_mode": "replace",
	})
	c := loadCells(t, path)[1]
	if c.CellType != "markdown" || c.Outputs != nil || c.ExecutionCount != nil || c.Source[0] != "now prose" {
		t.Errorf("cell after type change: %+v", c)
	}
}

var cellIDPattern = regexp.MustCompile(`^[0-9a-f]{8}$`)

func TestNotebookInsert(t *testing.T) {
	env, path := newNotebook(t, notebook)
	res := mustCall(t, notebookEditTool{}, env, map[string]any{
		"notebook_path": path, "cell_id": "intro", "new_source": "## Part 2", "cell_type": "markdown", "edit_mode": "insert",
	})
	cells := loadCells(t, path)
	if len(cells) != 3 || cells[1].CellType != "markdown" || cells[1].Source[0] != "## Part 2" || cells[1].Outputs != nil {
		t.Fatalf("cells after insert: %+v", cells)
	}
	if cells[1].ID == nil || !cellIDPattern.MatchString(*cells[1].ID) {
		t.Errorf("new cell id %v, want 8 hex digits", cells[1].ID)
	}
	if !strings.Contains(textOf(res), *cells[1].ID) {
		t.Errorf("content %q does not name the new cell", textOf(res))
	}

	mustCall(t, notebookEditTool{}, env, map[string]any{
		"notebook_path": path, "new_source": "import os\n", "cell_type": "code", "edit_mode": "insert",
	})
	cells = loadCells(t, path)
	if len(cells) != 4 || cells[0].CellType != "code" || cells[0].Outputs == nil || string(*cells[0].Outputs) != "[]" {
		t.Fatalf("insert at start: %+v", cells[0])
	}

	callErr(t, notebookEditTool{}, env, map[string]any{
		"notebook_path": path, "cell_id": "intro", "new_source": "x", "edit_mode": "insert",
	}, "cell_type")

	// Replacing the cell one past the end appends one.
	mustCall(t, notebookEditTool{}, env, map[string]any{"notebook_path": path, "cell_id": "cell-4", "new_source": "last"})
	cells = loadCells(t, path)
	if len(cells) != 5 || cells[4].CellType != "code" || cells[4].Source[0] != "last" {
		t.Fatalf("append: %+v", cells)
	}
}

func TestNotebookInsertWithoutIDs(t *testing.T) {
	old := strings.NewReplacer(`   "id": "intro",`+"\n", "", `   "id": "c0ffee01",`+"\n", "", `"nbformat_minor": 5`, `"nbformat_minor": 4`).Replace(notebook)
	env, path := newNotebook(t, old)
	res := mustCall(t, notebookEditTool{}, env, map[string]any{
		"notebook_path": path, "cell_id": "cell-0", "new_source": "y", "cell_type": "code", "edit_mode": "insert",
	})
	cells := loadCells(t, path)
	if len(cells) != 3 || cells[1].ID != nil {
		t.Fatalf("cells: %+v", cells)
	}
	if !strings.Contains(textOf(res), "cell-1") {
		t.Errorf("content %q", textOf(res))
	}
}

func TestNotebookDelete(t *testing.T) {
	env, path := newNotebook(t, notebook)
	mustCall(t, notebookEditTool{}, env, map[string]any{"notebook_path": path, "cell_id": "intro", "new_source": "", "edit_mode": "delete"})
	cells := loadCells(t, path)
	if len(cells) != 1 || *cells[0].ID != "c0ffee01" {
		t.Fatalf("cells after delete: %+v", cells)
	}
	callErr(t, notebookEditTool{}, env, map[string]any{"notebook_path": path, "cell_id": "intro", "new_source": "", "edit_mode": "delete"}, "No cell")
	callErr(t, notebookEditTool{}, env, map[string]any{"notebook_path": path, "new_source": "", "edit_mode": "delete"}, "cell_id is required")
}

func TestNotebookRefusals(t *testing.T) {
	env, dir := newEnv(t)
	path := filepath.Join(dir, "nb.ipynb")
	writeFile(t, path, notebook, 0o644)
	input := map[string]any{"notebook_path": path, "cell_id": "intro", "new_source": "x"}
	isInputError(t, callErr(t, notebookEditTool{}, env, input, "has not been read"))
	readIt(t, env, path)
	touch(t, path)
	callErr(t, notebookEditTool{}, env, input, "modified since")
	readIt(t, env, path)
	callErr(t, notebookEditTool{}, env, map[string]any{"notebook_path": path, "cell_id": "nope", "new_source": "x"}, "No cell", "cell-N")

	txt := filepath.Join(dir, "nb.txt")
	writeFile(t, txt, notebook, 0o644)
	callErr(t, notebookEditTool{}, env, map[string]any{"notebook_path": txt, "cell_id": "intro", "new_source": "x"}, "not a Jupyter notebook")
	callErr(t, notebookEditTool{}, env, map[string]any{"notebook_path": filepath.Join(dir, "gone.ipynb"), "new_source": "x"}, "File does not exist.")

	_, err := call(t, notebookEditTool{w: failingWriter()}, env, input)
	if !errors.Is(err, errInjected) {
		t.Fatalf("err = %v, want the injected failure", err)
	}
	if readFile(t, path) != notebook {
		t.Error("failed edit changed the notebook")
	}
	noTempFiles(t, dir)
	if info, _ := os.Stat(path); info.Mode().Perm() != 0o644 {
		t.Errorf("mode %v", info.Mode())
	}
}
