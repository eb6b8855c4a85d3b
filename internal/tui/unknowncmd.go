package tui

import (
	"strings"

	"github.com/tackcode/tack/internal/spell"
)

// unknownCommand reports whether name, typed as "/name", is a command
// neither the UI nor the session knows: such a line is answered here and
// nothing is sent. A line that only looks like one ("/usr/bin is empty", a
// lone "/") is a prompt, and an MCP prompt's command (mcp__server__prompt)
// is left to the session, which knows its servers' prompts.
func (m *Model) unknownCommand(name string) bool {
	if !commandLike(name) || strings.HasPrefix(name, "mcp__") || findBuiltin(name) != nil {
		return false
	}
	for _, c := range m.commands {
		if c == name {
			return false
		}
	}
	return true
}

// commandLike reports whether name could be a command's name: letters,
// digits and the - _ : . of skills, plugin commands (plugin:name) and
// folders of commands (dir:name).
func commandLike(name string) bool {
	if name == "" {
		return false
	}
	for _, r := range name {
		ok := r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_:.", r)
		if !ok {
			return false
		}
	}
	return true
}

// unknownCommandText says that /name is no command, with the closest one.
func (m *Model) unknownCommandText(name string) string {
	names := make([]string, 0, len(builtins)+len(m.commands))
	for _, b := range builtins {
		names = append(names, b.name)
	}
	names = append(names, m.commands...)
	text := "Unknown command: /" + name
	if s := spell.Suggest(name, names); s != "" {
		text += " · did you mean /" + s + "?"
	}
	return text + " (/help lists the commands; nothing was sent)"
}
