package config

import (
	"bytes"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/tackcode/tack/internal/atomicfile"
	"github.com/tackcode/tack/internal/jsontree"
	"github.com/tackcode/tack/internal/jsonx"
)

// newFileMode is the mode of a settings file EditFile creates, that of a
// file Claude Code writes.
const newFileMode fs.FileMode = 0o644

// EditFile edits the settings file at path in place: fn changes the
// document through the editor and reports whether it changed anything. Only
// the bytes fn edits change; the rest of the file (other keys, their order,
// spacing, line endings, a byte order mark) stays as it was.
//
// A file that is a symbolic link has its target rewritten. A missing or
// blank file is taken as {} (and created, with its folder, when fn changes
// it). The file is replaced atomically, keeping its mode, and only when its
// text changed and still parses. A malformed file is refused with an *Error
// that gives the line and column of the problem; every error names the
// file.
func EditFile(path string, fn func(*jsontree.Editor) (changed bool, err error)) error {
	target := path
	if t, err := filepath.EvalSymlinks(path); err == nil {
		target = t
	}
	src, info, rerr := readSettings(osFS{}, target, false)
	if rerr != nil {
		return &Error{Source: Source{Path: path}, Msg: rerr.msg, Err: rerr.err}
	}
	mode := newFileMode
	if info != nil {
		mode = info.Mode().Perm()
	}
	if err := checkEditable(path, src); err != nil {
		return err
	}
	e := jsontree.NewEditor(src)
	changed, err := fn(e)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	out := e.Bytes()
	if !changed || bytes.Equal(out, src) {
		return nil
	}
	if _, serr := jsontree.Parse(e.Text(), shallow); serr != nil { // never write a file we broke
		return fmt.Errorf("%s: internal error: the edit would leave invalid JSON (%s); nothing written", path, serr.Msg)
	}
	if info == nil {
		if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
	}
	return atomicfile.Write(target, out, mode)
}

// shallow checks a document without building it.
func shallow([]string) jsontree.Build { return jsontree.Shallow }

// checkEditable returns an *Error when src, after a byte order mark, is
// neither blank nor a JSON object.
func checkEditable(path string, src []byte) error {
	text := bytes.TrimPrefix(src, []byte("\xef\xbb\xbf"))
	root, serr := jsontree.Parse(text, shallow)
	switch {
	case serr != nil:
		line, col := jsontree.NewLines(text).Pos(serr.Off)
		return &Error{Source: Source{Path: path, Line: line, Col: col}, Msg: "invalid JSON: " + serr.Msg}
	case root != nil && root.Kind != jsontree.Object:
		return &Error{Source: Source{Path: path}, Msg: fmt.Sprintf("the settings file holds %s, not a JSON object", root.Kind)}
	}
	return nil
}

// AddPermissionRule adds rule to the list permissions.<behavior> (allow,
// ask or deny) of the settings file at path, as EditFile edits it, creating
// the file, the object or the list when missing. added is false when the
// list already holds the rule; the file is then not written.
func AddPermissionRule(path, behavior, rule string) (added bool, err error) {
	switch behavior {
	case "allow", "ask", "deny":
	default:
		return false, fmt.Errorf("unknown permission behavior %q (want allow, ask or deny)", behavior)
	}
	if rule == "" {
		return false, fmt.Errorf("empty permission rule for %s", path)
	}
	err = EditFile(path, func(e *jsontree.Editor) (bool, error) {
		var err error
		added, err = e.AppendUnique([]string{"permissions", behavior}, jsonx.AppendString(nil, rule))
		return added, err
	})
	return added && err == nil, err
}
