package config

import (
	"strconv"
	"strings"
)

// Error is one problem at one place of one file: a settings file, a
// definition file (skill, command, agent, plugin manifest, hooks file,
// marketplace catalogue) or an MCP configuration. Settings, extensions and
// MCP configuration all report their problems as *Error, the first problem
// of a malformed file each; warnings have the same shape.
type Error struct {
	// Source names the file ("--settings", "--mcp-config" or "--agents" for
	// JSON given on the command line), its scope when it is a settings
	// file, and, when the problem is at one place in it, the 1-based line
	// and column (Col is 0 when only the line is known).
	Source Source
	// Key is the JSON path or frontmatter field of the offending value,
	// such as "permissions.allow[2]", "mcpServers.github.args[1]" or
	// "tools[2]"; empty for problems with the file itself (unreadable,
	// invalid JSON).
	Key string
	// Msg says what is wrong and, where it helps, what would be right.
	Msg string
	// Err is the underlying cause, if any: the error of a rule validator, of
	// the file system, of the regular expression compiler.
	Err error
	// Warning marks, among the problems of extensions, one that kept
	// nothing from loading (an unknown field that looks like a misspelt
	// known one, a description too long for listings); its text says so.
	// Settings list their warnings apart, in Merged.Warnings.
	Warning bool
	// Server is the MCP server the problem disables, "" for a problem with
	// a file itself or with something else.
	Server string
	// Missing lists the environment variables that are not set, when that
	// is the problem (an MCP server's ${VAR}).
	Missing []string
}

// Error formats the problem as path:line:col: [warning: ]key: message[:
// cause], the form editors and terminals turn into a link.
func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString(e.Source.Path)
	if e.Source.Line > 0 {
		b.WriteByte(':')
		b.WriteString(strconv.Itoa(e.Source.Line))
		if e.Source.Col > 0 {
			b.WriteByte(':')
			b.WriteString(strconv.Itoa(e.Source.Col))
		}
	}
	b.WriteString(": ")
	if e.Warning {
		b.WriteString("warning: ")
	}
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
