package config

import (
	"strconv"
	"strings"
)

// Error is one problem in one settings file: where it is, which setting it
// concerns and what is wrong. Load returns one per malformed file (the first
// problem found in it); warnings have the same shape.
type Error struct {
	// Source names the file ("--settings" for inline JSON) and, when the
	// problem is at one place in it, the 1-based line and column.
	Source Source
	// Key is the JSON path of the offending setting, such as
	// "permissions.allow[2]" or "hooks.PreToolUse[0].hooks[1].timeout";
	// empty for problems with the file itself (unreadable, invalid JSON).
	Key string
	// Msg says what is wrong and, where it helps, what would be right.
	Msg string
	// Err is the underlying cause, if any: the error of a rule validator, of
	// the file system, of the regular expression compiler.
	Err error
}

// Error formats the problem as path:line:col: key: message[: cause], the form
// editors and terminals turn into a link.
func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString(e.Source.Path)
	if e.Source.Line > 0 {
		b.WriteByte(':')
		b.WriteString(strconv.Itoa(e.Source.Line))
		b.WriteByte(':')
		b.WriteString(strconv.Itoa(e.Source.Col))
	}
	b.WriteString(": ")
	if e.Key != "" {
		b.WriteString(e.Key)
		b.WriteString(": ")
	}
	b.WriteString(e.Msg)
	if e.Err != nil {
		b.WriteString(": ")
		b.WriteString(e.Err.Error())
	}
	return b.String()
}

// Unwrap returns the underlying cause, so errors.Is(err, fs.ErrPermission)
// and errors.As on a validator's error type work.
func (e *Error) Unwrap() error { return e.Err }
