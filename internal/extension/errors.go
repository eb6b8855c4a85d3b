package extension

import (
	"strconv"

	"github.com/tackcode/tack/internal/config"
	"github.com/tackcode/tack/internal/spell"
)

// A problem with a definition file (a skill, command, agent, plugin
// manifest, hooks file, marketplace catalogue or the --agents flag) is a
// *config.Error, the one error type of settings, extensions and MCP
// configuration: it names the file, the line and column, and the
// frontmatter or JSON key concerned ("tools[2]",
// "hooks.PreToolUse[0].hooks[0].command"). A problem keeps the file's
// definition from loading, and every other definition still loads; a
// Warning kept nothing from loading.

// errAt returns an *config.Error at n's position in path.
func errAt(path string, n *node, field, msg string, cause error) *config.Error {
	e := &config.Error{Source: config.Source{Path: path}, Key: field, Msg: msg, Err: cause}
	if n != nil {
		e.Source.Line, e.Source.Col = n.line, n.col
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
