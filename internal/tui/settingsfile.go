package tui

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/tackcode/tack/internal/jsontree"
	"github.com/tackcode/tack/internal/jsonx"
)

// addAllowRule adds rule to permissions.allow in the settings file at path,
// creating what is missing. Only the bytes of the new member or element are
// inserted: the rest of the file stays as it was. The file is replaced
// atomically, keeping its mode.
func addAllowRule(path, rule string) error {
	if resolved, err := filepath.EvalSymlinks(path); err == nil {
		path = resolved
	}
	src, err := os.ReadFile(path)
	mode := fs.FileMode(0o644)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		src = nil
	case err != nil:
		return fmt.Errorf("edit settings: %w", err)
	default:
		if fi, err := os.Stat(path); err == nil {
			mode = fi.Mode().Perm()
		}
	}
	if len(bytes.TrimSpace(src)) == 0 {
		src = []byte("{}\n")
	}
	root, perr := jsontree.Parse(src, nil)
	if perr != nil {
		return fmt.Errorf("edit settings %s: %w", path, perr)
	}
	if root == nil || root.Kind != jsontree.Object {
		return fmt.Errorf("edit settings %s: the file does not hold a JSON object", path)
	}
	nl := "\n"
	if bytes.Contains(src, []byte("\r\n")) {
		nl = "\r\n"
	}
	q := string(jsonx.AppendString(nil, rule))
	unit := indentUnit(src)
	var out []byte
	perms := root.Lookup("permissions")
	switch {
	case perms == nil:
		out = insertMember(src, root, "permissions", "{"+nl+indentAt(src, root.Off)+unit+unit+`"allow": [`+q+"]"+nl+indentAt(src, root.Off)+unit+"}", unit, nl)
	case perms.Kind != jsontree.Object:
		return fmt.Errorf("edit settings %s: permissions is not an object", path)
	default:
		allow := perms.Lookup("allow")
		switch {
		case allow == nil:
			out = insertMember(src, perms, "allow", "["+q+"]", unit, nl)
		case allow.Kind != jsontree.Array:
			return fmt.Errorf("edit settings %s: permissions.allow is not an array", path)
		default:
			for _, e := range allow.Elems {
				if e.Kind == jsontree.String && e.Str == rule {
					return nil
				}
			}
			if len(allow.Elems) == 0 {
				out = splice(src, allow.Off+1, allow.End-1, q)
			} else {
				last := allow.Elems[len(allow.Elems)-1]
				out = splice(src, last.End, last.End, ", "+q)
			}
		}
	}
	if _, perr := jsontree.Parse(out, nil); perr != nil {
		return fmt.Errorf("edit settings %s: internal error: the edit made invalid JSON", path)
	}
	return writeFileAtomic(path, out, mode)
}

// insertMember adds "key": value as the last member of obj.
func insertMember(src []byte, obj *jsontree.Node, key, value, unit, nl string) []byte {
	member := string(jsonx.AppendString(nil, key)) + ": " + value
	outer := indentAt(src, obj.Off)
	if len(obj.Members) == 0 {
		return splice(src, obj.Off+1, obj.End-1, nl+outer+unit+member+nl+outer)
	}
	last := obj.Members[len(obj.Members)-1]
	ls := bytes.LastIndexByte(src[:last.KeyOff], '\n') + 1
	if ls <= obj.Off { // a one-line object
		return splice(src, last.Value.End, last.Value.End, ", "+member)
	}
	indent := string(src[ls:last.KeyOff])
	if strings.TrimLeft(indent, " \t") != "" {
		indent = outer + unit
	}
	return splice(src, last.Value.End, last.Value.End, ","+nl+indent+member)
}

func splice(src []byte, from, to int, text string) []byte {
	out := make([]byte, 0, len(src)+len(text))
	out = append(out, src[:from]...)
	out = append(out, text...)
	return append(out, src[to:]...)
}

// indentAt is the blanks that start the line holding offset off.
func indentAt(src []byte, off int) string {
	ls := bytes.LastIndexByte(src[:off], '\n') + 1
	i := ls
	for i < len(src) && (src[i] == ' ' || src[i] == '\t') {
		i++
	}
	return string(src[ls:i])
}

// indentUnit is the file's indentation step: the blanks of the first
// indented line, or two spaces.
func indentUnit(src []byte) string {
	for _, l := range strings.Split(string(src), "\n") {
		t := strings.TrimLeft(l, " \t")
		if t != "" && len(t) < len(l) {
			return l[:len(l)-len(t)]
		}
	}
	return "  "
}

// writeFileAtomic replaces path by data through a temporary file.
func writeFileAtomic(path string, data []byte, mode fs.FileMode) error {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	tmp := f.Name()
	_, werr := f.Write(data)
	if werr == nil {
		werr = f.Chmod(mode)
	}
	if werr == nil {
		werr = f.Sync()
	}
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	if werr == nil {
		werr = os.Rename(tmp, path)
	}
	if werr != nil {
		os.Remove(tmp)
		return fmt.Errorf("write %s: %w", path, werr)
	}
	return nil
}
