package extension

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/tackcode/tack/internal/jsonx"
)

// This file turns plugins on and off in a settings file's enabledPlugins.
// An edit replaces, inserts or deletes the bytes of one member of the JSON
// text and nothing else, so the rest of the file — other keys, their order,
// spacing, comments of style — stays byte for byte what it was. New text
// follows the indentation and line endings of the object it goes into. The
// file is replaced atomically (temporary file, then rename), keeping its
// mode; a file that is a symbolic link has its target rewritten.

// SetPluginEnabled sets enabledPlugins[id] to enabled in the settings file
// at path, creating the file or the object when missing.
func SetPluginEnabled(path, id string, enabled bool) error {
	val := "false"
	if enabled {
		val = "true"
	}
	return editSettings(path, func(e *jsonEdit) (bool, error) {
		root := e.root
		ep := root.get("enabledPlugins")
		switch {
		case ep == nil:
			unit := e.unit()
			inner := e.indentOf(root) + unit
			obj := "{" + e.nl + inner + unit + quote(id) + ": " + val + e.nl + inner + "}"
			e.insert(root, "enabledPlugins", obj)
		case ep.kind != kindMap:
			if ep.kind != kindNull {
				return false, fmt.Errorf("enabledPlugins is %s, not an object", ep.kind)
			}
			e.splice(ep.start, ep.end, "{"+quote(id)+": "+val+"}")
		default:
			if cur := ep.get(id); cur != nil {
				if cur.kind == kindBool && cur.str == val {
					return false, nil
				}
				e.splice(cur.start, cur.end, val)
			} else {
				e.insert(ep, id, val)
			}
		}
		return true, nil
	})
}

// RemovePluginSetting deletes enabledPlugins[id] from the settings file at
// path; removed is false when it was not there.
func RemovePluginSetting(path, id string) (removed bool, err error) {
	err = editSettings(path, func(e *jsonEdit) (bool, error) {
		ep := e.root.get("enabledPlugins")
		if ep == nil || ep.kind != kindMap {
			return false, nil
		}
		for i := len(ep.mems) - 1; i >= 0; i-- {
			if ep.mems[i].key == id {
				e.remove(ep, i)
				removed = true
				return true, nil
			}
		}
		return false, nil
	})
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	return removed, err
}

func quote(s string) string { return string(jsonx.AppendString(nil, s)) }

// jsonEdit is one edit of a JSON document's text.
type jsonEdit struct {
	src  []byte
	root *node
	nl   string
	// done is set once splice has run: the tree no longer matches src.
	done bool
}

// editSettings reads path, lets fn change it, and writes it back when fn
// reports a change. A missing file is taken as {}.
func editSettings(path string, fn func(e *jsonEdit) (bool, error)) error {
	if resolved, err := filepath.EvalSymlinks(path); err == nil {
		path = resolved
	}
	src, err := os.ReadFile(path)
	mode := fs.FileMode(0o644)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		src = nil
	case err != nil:
		return fmt.Errorf("edit %s: %w", path, unwrapPath(err))
	default:
		if fi, err := os.Stat(path); err == nil {
			mode = fi.Mode().Perm()
		}
	}
	created := len(bytes.TrimSpace(bytes.TrimPrefix(src, []byte("\xef\xbb\xbf")))) == 0
	if created {
		src = append(bytes.TrimRight(src, " \t\r\n"), []byte("{}\n")...)
	}
	root, perr := parseJSONFile(src, path)
	if perr != nil {
		return fmt.Errorf("edit settings: %w", perr)
	}
	if root == nil || root.kind != kindMap {
		return fmt.Errorf("edit %s: the settings file holds %s, not a JSON object", path, root.kind)
	}
	e := &jsonEdit{src: src, root: root, nl: "\n"}
	if bytes.Contains(src, []byte("\r\n")) {
		e.nl = "\r\n"
	}
	changed, err := fn(e)
	if err != nil {
		return fmt.Errorf("edit %s: %w", path, err)
	}
	if !changed {
		return nil
	}
	if _, perr := parseJSON(e.src); perr != nil { // never write a file we broke
		return fmt.Errorf("edit %s: internal error: the edit made invalid JSON: %s", path, perr.msg)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("edit %s: %w", path, err)
	}
	return writeAtomic(path, e.src, mode)
}

// splice replaces src[from:to] by text. Only one structural edit is made
// per jsonEdit, so offsets in the tree stay valid up to it.
func (e *jsonEdit) splice(from, to int, text string) {
	out := make([]byte, 0, len(e.src)-(to-from)+len(text))
	out = append(out, e.src[:from]...)
	out = append(out, text...)
	e.src = append(out, e.src[to:]...)
	e.done = true
}

// lineStart is the offset where the line holding off begins.
func (e *jsonEdit) lineStart(off int) int {
	return bytes.LastIndexByte(e.src[:off], '\n') + 1
}

// indentOf is the blanks that start the line where n begins.
func (e *jsonEdit) indentOf(n *node) string {
	ls := e.lineStart(n.start)
	i := ls
	for i < len(e.src) && (e.src[i] == ' ' || e.src[i] == '\t') {
		i++
	}
	return string(e.src[ls:i])
}

// unit is the file's indentation step: the blanks of the first indented
// line, or two spaces.
func (e *jsonEdit) unit() string {
	for _, l := range strings.Split(string(e.src), "\n") {
		t := strings.TrimLeft(l, " \t")
		if t != "" && len(t) < len(l) {
			return l[:len(l)-len(t)]
		}
	}
	return "  "
}

// insert adds "key": value as the last member of obj.
func (e *jsonEdit) insert(obj *node, key, value string) {
	member := quote(key) + ": " + value
	if len(obj.mems) == 0 {
		outer := e.indentOf(obj)
		e.splice(obj.start+1, obj.end-1, e.nl+outer+e.unit()+member+e.nl+outer)
		return
	}
	last := obj.mems[len(obj.mems)-1]
	if e.lineStart(last.keyStart) <= obj.start { // a one-line object
		e.splice(last.val.end, last.val.end, ", "+member)
		return
	}
	ls := e.lineStart(last.keyStart)
	indent := string(e.src[ls:last.keyStart])
	if strings.TrimLeft(indent, " \t") != "" { // the key shares its line with another member
		indent = e.indentOf(obj) + e.unit()
	}
	e.splice(last.val.end, last.val.end, ","+e.nl+indent+member)
}

// remove deletes obj's member i with the separator that goes with it.
func (e *jsonEdit) remove(obj *node, i int) {
	switch {
	case len(obj.mems) == 1:
		e.splice(obj.start+1, obj.end-1, "")
	case i == len(obj.mems)-1:
		e.splice(obj.mems[i-1].val.end, obj.mems[i].val.end, "")
	default:
		e.splice(obj.mems[i].keyStart, obj.mems[i+1].keyStart, "")
	}
}

// writeAtomic replaces path by data: a temporary file in the same folder,
// synced, then renamed over it.
func writeAtomic(path string, data []byte, mode fs.FileMode) error {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	tmp := f.Name()
	ok := false
	defer func() {
		if !ok {
			os.Remove(tmp)
		}
	}()
	if _, err := f.Write(data); err != nil {
		f.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := f.Chmod(mode); err != nil {
		f.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	ok = true
	return nil
}
