// Package extension finds and reads the definitions that extend tack the
// way they extend Claude Code, so that a user's files work unchanged:
// skills (NAME/SKILL.md), legacy slash commands (commands/**/*.md), custom
// agents (agents/*.md and --agents JSON), plugins (a folder with
// .claude-plugin/plugin.json) and the marketplaces plugins are installed
// from.
//
// # Where definitions are read
//
//	skills    <managed>/.claude/skills, <config>/skills, .claude/skills of the
//	          project (cwd, then its parents up to the git root), plugin skills/
//	commands  the same places, commands/ instead of skills/
//	agents    --agents, <managed>/.claude/agents, the project's .claude/agents,
//	          <config>/agents, plugin agents/, then the built-in general-purpose,
//	          Explore and Plan
//
// <config> is $CLAUDE_CONFIG_DIR or ~/.claude; <managed> is
// /etc/claude-code on Linux.
//
// # Names and precedence
//
// A skill is named by its folder, a command by its file name, with one
// "dir:" prefix per subfolder (commands/git/commit.md is /git:commit).
// Everything a plugin brings is prefixed by the plugin's name
// (/my-first-plugin:hello, agent my-first-plugin:reviewer). When two
// definitions share a name the first in this order wins and the other is
// kept as shadowed: for skills, skills before commands, then managed >
// user > project (nearer folder first); for agents, --agents > managed >
// project > user > plugin > built-in.
//
// # Frontmatter
//
// YAML between a first line "---" and the next "---" line, parsed with
// github.com/goccy/go-yaml, whose errors carry a line and column; they are
// reported at the file's line (the header's offset added). A header that
// does not parse is retried with its plain one-line values quoted, as
// Claude Code does, so "description: Use when: the user asks" loads.
//
// Unlike Claude Code, which loads a file with a broken header as if it had
// none, a definition that is not valid is left out and reported as a
// *config.Error (the error type settings and MCP configuration use too)
// naming its file, line and field (a bad model alias, a tools entry naming
// no tool, a hook without a command, a plugin.json without a name);
// everything else still loads. A skill needs a description; a command
// without one is described by its first line, as in Claude Code. Unknown
// fields that look like misspelt known ones are warnings.
//
// # Plugins and marketplaces
//
// Plugins come from --plugin-dir folders and from the settings'
// enabledPlugins ("name@marketplace": true), looked up in the Store under
// <config>/plugins, which mirrors Claude Code's layout there (see Store).
// A plugin's hooks/hooks.json becomes a hook.Config (Source
// "plugin:NAME"), its .mcp.json mcpconfig servers of scope plugin:NAME,
// with ${CLAUDE_PLUGIN_ROOT} expanded; its bin/ folder is reported for
// PATH and its settings.json kept as raw default settings.
package extension
