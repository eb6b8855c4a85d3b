package fs

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The Edit of hello.py in compat/samples/tools4.stream-json.stdout.jsonl.
func TestEditMatchesSample(t *testing.T) {
	env, dir := newEnv(t)
	path := filepath.Join(dir, "hello.py")
	writeFile(t, path, "print('hello')\n", 0o644)
	readIt(t, env, path)
	res := mustCall(t, editTool{}, env, map[string]any{
		"replace_all": false, "file_path": path,
		"old_string": "print('hello')", "new_string": "print('hello, edited')",
	})
	if got, want := textOf(res), "The file "+path+" has been updated successfully."; !strings.HasPrefix(got, want) {
		t.Errorf("content %q, want prefix %q", got, want)
	}
	want := fmt.Sprintf(`{"filePath":%q,"oldString":"print('hello')","newString":"print('hello, edited')","originalFile":"print('hello')\n","structuredPatch":[{"oldStart":1,"oldLines":1,"newStart":1,"newLines":1,"lines":["-print('hello')","+print('hello, edited')"]}],"userModified":false,"replaceAll":false}`, path)
	if got := structured(t, res); got != want {
		t.Errorf("structured\n got %s\nwant %s", got, want)
	}
	if got := readFile(t, path); got != "print('hello, edited')\n" {
		t.Errorf("file holds %q", got)
	}
	noTempFiles(t, dir)
}

func TestEditUniqueness(t *testing.T) {
	env, dir := newEnv(t)
	path := filepath.Join(dir, "f.go")
	writeFile(t, path, "foo := 1\nbar(foo)\nbaz(foo)\n", 0o644)
	readIt(t, env, path)

	err := callErr(t, editTool{}, env, map[string]any{"file_path": path, "old_string": "foo", "new_string": "qux"},
		"3 times", "replace_all")
	isInputError(t, err)
	isInputError(t, callErr(t, editTool{}, env, map[string]any{"file_path": path, "old_string": "nope", "new_string": "x"},
		"not found"))
	isInputError(t, callErr(t, editTool{}, env, map[string]any{"file_path": path, "old_string": "bar", "new_string": "bar"},
		"same"))
	if got := readFile(t, path); got != "foo := 1\nbar(foo)\nbaz(foo)\n" {
		t.Fatalf("refused edits changed the file: %q", got)
	}

	// Unique with more context; then the rest with replace_all, no re-Read needed.
	mustCall(t, editTool{}, env, map[string]any{"file_path": path, "old_string": "bar(foo)", "new_string": "bar(foo, 2)"})
	res := mustCall(t, editTool{}, env, map[string]any{"file_path": path, "old_string": "foo", "new_string": "qux", "replace_all": true})
	if got := readFile(t, path); got != "qux := 1\nbar(qux, 2)\nbaz(qux)\n" {
		t.Errorf("file holds %q", got)
	}
	if got := textOf(res); !strings.Contains(got, "3 occurrences") {
		t.Errorf("content %q does not count the replacements", got)
	}
	if got := structured(t, res); !strings.Contains(got, `"replaceAll":true`) {
		t.Errorf("structured %s", got)
	}
}

func TestEditRequiresFreshRead(t *testing.T) {
	env, dir := newEnv(t)
	path := filepath.Join(dir, "f.txt")
	writeFile(t, path, "alpha\n", 0o644)
	input := map[string]any{"file_path": path, "old_string": "alpha", "new_string": "beta"}
	isInputError(t, callErr(t, editTool{}, env, input, "has not been read"))

	readIt(t, env, path)
	touch(t, path)
	isInputError(t, callErr(t, editTool{}, env, input, "modified since"))

	readIt(t, env, path)
	writeFile(t, path, "alpha and more\n", 0o644) // different size
	callErr(t, editTool{}, env, input, "modified since")
	if got := readFile(t, path); got != "alpha and more\n" {
		t.Errorf("refused edit changed the file: %q", got)
	}

	// A partial read is enough to edit.
	writeFile(t, path, numberedLines(100), 0o644)
	mustCall(t, readTool{}, env, map[string]any{"file_path": path, "offset": 50, "limit": 3})
	mustCall(t, editTool{}, env, map[string]any{"file_path": path, "old_string": "line 51\n", "new_string": "fifty-one\n"})
}

func TestEditCreateWithEmptyOldString(t *testing.T) {
	env, dir := newEnv(t)
	path := filepath.Join(dir, "pkg", "new.txt")
	res := mustCall(t, editTool{}, env, map[string]any{"file_path": path, "old_string": "", "new_string": "hello\n"})
	if got := readFile(t, path); got != "hello\n" {
		t.Errorf("file holds %q", got)
	}
	if !strings.HasPrefix(textOf(res), "File created successfully at: "+path) {
		t.Errorf("content %q", textOf(res))
	}
	if got := structured(t, res); !strings.Contains(got, `"structuredPatch":[{"oldStart":0,"oldLines":0,"newStart":1,"newLines":1,"lines":["+hello"]}]`) {
		t.Errorf("structured %s", got)
	}
	// Now it exists and is not empty.
	isInputError(t, callErr(t, editTool{}, env, map[string]any{"file_path": path, "old_string": "", "new_string": "again"}, "not empty"))

	empty := filepath.Join(dir, "empty.txt")
	writeFile(t, empty, "", 0o644)
	readIt(t, env, empty)
	mustCall(t, editTool{}, env, map[string]any{"file_path": empty, "old_string": "", "new_string": "filled\n"})
	if got := readFile(t, empty); got != "filled\n" {
		t.Errorf("empty file now holds %q", got)
	}

	isInputError(t, callErr(t, editTool{}, env, map[string]any{"file_path": filepath.Join(dir, "missing.txt"), "old_string": "x", "new_string": "y"},
		"File does not exist.", dir))
}

func TestEditKeepsCRLF(t *testing.T) {
	env, dir := newEnv(t)
	path := filepath.Join(dir, "dos.txt")
	writeFile(t, path, "one\r\ntwo\r\nthree\r\n", 0o644)
	readIt(t, env, path)
	res := mustCall(t, editTool{}, env, map[string]any{"file_path": path, "old_string": "one\ntwo", "new_string": "1\n2"})
	if got := readFile(t, path); got != "1\r\n2\r\nthree\r\n" {
		t.Errorf("file holds %q", got)
	}
	if got := structured(t, res); !strings.Contains(got, `"lines":["-one","-two","+1","+2"," three"]`) {
		t.Errorf("patch of a CRLF file must be on LF text: %s", got)
	}
	// old_string given with CRLF works too.
	mustCall(t, editTool{}, env, map[string]any{"file_path": path, "old_string": "2\r\nthree", "new_string": "3"})
	if got := readFile(t, path); got != "1\r\n3\r\n" {
		t.Errorf("file holds %q", got)
	}
}

func TestEditKeepsMode(t *testing.T) {
	env, dir := newEnv(t)
	path := filepath.Join(dir, "run.sh")
	writeFile(t, path, "#!/bin/sh\necho hi\n", 0o755)
	readIt(t, env, path)
	mustCall(t, editTool{}, env, map[string]any{"file_path": path, "old_string": "hi", "new_string": "bye"})
	info, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if info.Mode().Perm() != 0o755 {
		t.Errorf("mode %v, want 0755", info.Mode().Perm())
	}
	noTempFiles(t, dir)
}

func TestEditFailureLeavesOriginal(t *testing.T) {
	env, dir := newEnv(t)
	path := filepath.Join(dir, "f.txt")
	writeFile(t, path, "keep me\n", 0o644)
	readIt(t, env, path)
	_, err := call(t, editTool{w: failingWriter()}, env, map[string]any{"file_path": path, "old_string": "keep", "new_string": "lose"})
	if !errors.Is(err, errInjected) {
		t.Fatalf("err = %v, want the injected failure", err)
	}
	if got := readFile(t, path); got != "keep me\n" {
		t.Errorf("failed edit left %q", got)
	}
	noTempFiles(t, dir)
	// The stamp is unchanged, so a retry works.
	mustCall(t, editTool{}, env, map[string]any{"file_path": path, "old_string": "keep", "new_string": "lose"})
}

func TestEditRefusesNotebook(t *testing.T) {
	env, dir := newEnv(t)
	path := filepath.Join(dir, "nb.ipynb")
	writeFile(t, path, `{"cells": []}`, 0o644)
	readIt(t, env, path)
	callErr(t, editTool{}, env, map[string]any{"file_path": path, "old_string": "cells", "new_string": "x"}, "NotebookEdit")
}
