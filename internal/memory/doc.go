// Package memory finds, reads and renders a project's memory files —
// CLAUDE.md and its relatives — the way Claude Code sends them to the model,
// so a project's instructions reach the model unchanged under tack.
//
// # Discovery at start (Load)
//
// Memory files are sent in this order; later files weigh more:
//
//  1. Managed memory, Options.ManagedPath (/etc/claude-code/CLAUDE.md on
//     Linux), then the rules in .claude/rules beside it.
//  2. User memory, ConfigDir/CLAUDE.md ($CLAUDE_CONFIG_DIR or ~/.claude),
//     then the rules in ConfigDir/rules.
//  3. Every directory from the file system root down to the cwd, the root
//     first and the cwd last. In each: CLAUDE.md, .claude/CLAUDE.md,
//     AGENTS.md only when neither of those two exists, the rules in
//     .claude/rules, then CLAUDE.local.md (kind Local).
//
// Each file is followed at once by the files it imports (below), depth
// first. A file is sent at most once per Set: a second path to it — an
// import, a symbolic link, ~/.claude seen both as the config directory and
// as a project's .claude when the cwd is below the home — is skipped, the
// first occurrence wins. Rules files are the *.md files under a rules
// directory and its subfolders (symbolic links followed), in the byte order
// of their slash-separated path relative to the rules directory.
//
// A candidate is a regular file (symbolic links followed); a directory, even
// one named CLAUDE.md, is not memory and does not count as "a CLAUDE.md
// exists" for the AGENTS.md rule. A file that exists but cannot be read
// (permissions, a binary file, a FIFO) is reported in Set.Problems and
// skipped. A file longer than 1 MiB is cut at the last line break before
// that size, with a note saying so. A file left empty after processing is
// not sent (but still counts as loaded).
//
// Options.Excludes (claudeMdExcludes) are doublestar patterns matched
// against the slash form of each candidate's absolute path, as found
// (symbolic links not resolved); a leading ~/ is the home. They apply to
// every kind but Managed, imported files included. An excluded CLAUDE.md
// still exists for the AGENTS.md rule.
//
// # Content
//
// What is sent of a file (File.Content) is its text with: YAML frontmatter
// removed from rules files (a first line "---" up to the next "---" line);
// block-level HTML comments removed — a comment that opens a line (after any
// indentation), outside fenced code blocks, up to its "-->", text after the
// "-->" on its last line kept; leading blank lines and trailing white space
// trimmed; invalid UTF-8 replaced by U+FFFD.
//
// # Imports
//
// In a memory file, @path imports another file. The rules:
//
//   - Only in Markdown text: not inside fenced code blocks (a line starting,
//     after any indentation, with three or more backticks or tildes, up to a
//     line of the same character at least as long, or the end of the file),
//     not inside code spans (a run of N backticks up to the next run of
//     exactly N within the same paragraph), not inside a removed HTML
//     comment. Indented (four-space) code blocks are not recognised as code.
//   - The @ must start the paragraph or follow white space, so
//     me@example.com and (@x) are not imports; a backslash-escaped \@ is not
//     one either.
//   - The path runs to the next white space, backtick or backslash; "\ "
//     stands for a space inside it. A #fragment is removed. Punctuation is
//     part of the path ("@a.md." names "a.md.").
//   - It must start with ./, ../, ~/, / (but be more than "/"), or an ASCII
//     letter, digit, '.', '_' or '-'; anything else (@@x, @#x, @~x) is no
//     import.
//   - ~/ is relative to Options.Home, / is absolute, anything else is
//     relative to the importing file's directory (as found, not resolved).
//   - The imported file gets the importer's Kind and ImportedBy = the
//     importer's Path, and is sent right after its importer, in the order of
//     the imports, each followed by its own imports (depth first).
//   - Files found by discovery are at depth 0; a file they import directly
//     is one hop. Imports are followed for 5 hops: a file 6 hops away is not
//     loaded, silently (a note in Set.Notes).
//   - A file already loaded is not loaded again, which also cuts cycles.
//   - A missing file, a directory, an excluded file: skipped silently (a
//     note in Set.Notes).
//
// The auto memory MEMORY.md has no imports: its topic files are read by the
// model on demand.
//
// # Memory on demand (Tracker)
//
// Memory below the cwd is not loaded at start. Tracker.OnRead(path), called
// when a file is read, returns what that read makes relevant, once per file
// ever: first the path-scoped rules waiting so far that match path, then,
// for each directory from just below the cwd down to path's directory not
// looked at before, that directory's memory exactly as at start (CLAUDE.md,
// .claude/CLAUDE.md, AGENTS.md, rules, CLAUDE.local.md, with imports).
//
// Every File says why it was loaded (Reason: at start, as the memory of a
// directory below the cwd, as a path-scoped rule, as an import, after a
// compaction's Reload) and, when a read brought it, which file was read
// (Trigger): what Claude Code's InstructionsLoaded hook is told.
//
// A rule whose frontmatter has paths: globs (a block list, a flow list or a
// comma-separated string; commas inside braces do not split) waits until a
// file matching one of them is read. Relative globs are matched with
// doublestar against the read file's path relative to the directory holding
// the rule's .claude (for user and managed rules, the cwd); a glob starting
// with / is matched against the absolute path. A rule without paths (or
// with an empty list) loads like any memory file.
//
// # Auto memory
//
// Options.AutoMemoryPath (…/projects/<slug>/memory/MEMORY.md) is read as
// is — no imports, exclusions or comment stripping — and cut to its first
// 200 lines, then to 25 000 bytes at the last line break within them (at a
// character boundary if there is none), with a note telling the model it was
// cut and which limit applied. It is rendered as its own block
// (Set.AutoBlock) for the system prompt.
//
// # Rendering
//
// Each file is one text block, byte for byte:
//
//	<system-reminder>Contents of PATH (DESCRIPTION):\n\nCONTENT\n</system-reminder>
//
// where DESCRIPTION is Kind.Description(). The first block of Set.Blocks
// carries the introduction from intro.md between "<system-reminder>" and
// "Contents of", followed by a blank line. Nothing in a block depends on
// time or on anything but the files' contents and paths, so the same files
// give the same bytes.
package memory
