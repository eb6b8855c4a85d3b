package extension

import (
	"strconv"
	"strings"

	"github.com/tackcode/tack/internal/spell"
)

// Error is one problem with one definition file: a skill, command, agent,
// plugin manifest, hooks file, marketplace catalogue or the --agents flag.
// A problem keeps the file's definition from loading; every other
// definition still loads.
type Error struct {
	// Path is the file ("--agents" for the flag's JSON).
	Path string
	// Line and Col are 1-based; both are 0 when the problem is with the
	// file as a whole (unreadable, a missing field).
	Line, Col int
	// Field is the frontmatter or JSON key concerned, such as "tools[2]" or
	// "hooks.PreToolUse[0].hooks[0].command"; "" for the file itself.
	Field string
	// Msg says what is wrong and, where it helps, what would be right.
	Msg string
	// Err is the underlying cause, if any.
	Err error
	// Warning marks a problem that kept nothing from loading: an unknown
	// field that looks like a misspelt known one, a description too long
	// for listings.
	Warning bool
}

// Error formats the problem as path:line:col: field: message[: cause], the
// form editors and terminals turn into a link.
func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString(e.Path)
	if e.Line > 0 {
		b.WriteByte(':')
		b.WriteString(strconv.Itoa(e.Line))
		if e.Col > 0 {
			b.WriteByte(':')
			b.WriteString(strconv.Itoa(e.Col))
		}
	}
	b.WriteString(": ")
	if e.Warning {
		b.WriteString("warning: ")
	}
	if e.Field != "" {
		b.WriteString(e.Field)
		b.WriteString(": ")
	}
	b.WriteString(e.Msg)
	if e.Err != nil {
		b.WriteString(": ")
		b.WriteString(e.Err.Error())
	}
	return b.String()
}

// Unwrap returns the underlying cause.
func (e *Error) Unwrap() error { return e.Err }

// errAt returns an *Error at n's position in path.
func errAt(path string, n *node, field, msg string, cause error) *Error {
	e := &Error{Path: path, Field: field, Msg: msg, Err: cause}
	if n != nil {
		e.Line, e.Col = n.line, n.col
	}
	return e
}

// didYouMean is " (did you mean "x"?)" or "".
func didYouMean(s string, candidates []string) string {
	if c := spell.Suggest(s, candidates); c != "" {
		return " (did you mean " + strconv.Quote(c) + "?)"
	}
	return ""
}
