// Package permission decides whether a tool call may run: the rule grammar
// of Claude Code's settings (`Tool` and `Tool(specifier)`), the permission
// modes, and the deny → ask → allow evaluation, with shell commands
// analysed by internal/shellcmd (parsed as bash parses them) rather than
// matched as text, and the file system asked what the words cannot tell.
//
// It imports no other tack package but internal/shellcmd.
//
// # Rules
//
// `Tool` matches every call of a tool; `Tool()` and `Tool(*)` mean the same.
// Rule families: Edit, Write, MultiEdit and NotebookEdit rules cover every
// tool that writes files (`deny: ["Edit(.env)"]` also stops Write), and
// Read rules cover every tool that reads them (Read, Glob, Grep, LS);
// Glob and Grep rules cover only themselves. Task is the legacy name of
// Agent. A specifier on a tool that takes none (WebSearch, MCP tools,
// unknown tools) is an error, so that a rule never silently matches
// nothing.
//
//   - Bash(npm run test *): a command pattern. '*' matches any run of
//     characters, spaces included; a trailing " *" also matches the bare
//     command (`Bash(ls *)` matches `ls` and `ls -la`, not `lsof`;
//     `Bash(ls*)` matches `lsof`); the legacy `Bash(npm:*)` is
//     `Bash(npm *)`; without '*' the match is exact. Patterns are matched
//     word by word: quotes in a pattern group words as in the shell, and a
//     command argument holding blanks never reads as several words.
//   - Read(path), Edit(path), …: gitignore-style patterns. "//abs" is
//     absolute, "~/x" under the home directory, "/x" under the rule's Base
//     (its settings file's project root), "./x" and "dir/x" under the
//     working directory, and a pattern without a slash matches at any depth
//     under the working directory. '*' stays within a directory, "**"
//     crosses them, {a,b} alternates, ".." is normalised, and a pattern
//     naming a directory covers everything under it.
//   - WebFetch(domain:example.com) matches exactly that host;
//     WebFetch(domain:*.example.com) matches its subdomains at any depth
//     but not example.com itself; WebFetch(domain:*) matches every host.
//     Ports, schemes and paths are refused in a domain rule.
//   - mcp__server matches every tool of the server; mcp__server__tool one
//     tool; '*' is a wildcard in MCP names (mcp__server__*).
//   - Agent(Explore) matches the subagent type (default
//     "general-purpose"); Skill(name) and Skill(name *) match the skill
//     whatever its arguments.
//
// # Evaluation
//
// Deny rules first, then ask rules, then allow rules, then the mode and the
// built-in defaults. A deny rule holds in every mode, and a more specific
// allow rule never overrides it. Choices made where Claude Code's
// documentation is silent:
//
//   - Ask rules ask even in bypassPermissions mode (the user asked to be
//     asked); in dontAsk mode they deny.
//   - Auto mode accepts edits inside the working directories as acceptEdits
//     does (Bash file commands are not accepted by the mode); what would
//     be asked is left to the caller's classifier, and what a deny rule
//     might cover is denied, as in bypassPermissions mode.
//   - In plan mode an allow rule does not let a call that may change
//     anything run: plan mode denies it. Read-only calls are evaluated as
//     in default mode (a read outside the working directories asks).
//   - Tools that need no approval by default: Agent, TodoWrite, ToolSearch,
//     ListAgents, the Task* tools, KillShell, BashOutput, EnterPlanMode.
//     Read, Glob, Grep and LS inside the working directories run; edits
//     ask (acceptEdits accepts them inside the working directories, except
//     for protected paths: anything under .git, .claude/settings*.json and
//     .mcp.json, which configure code that runs later). Everything else
//     asks; in plan mode, tools that may change things are denied
//     (Call.ReadOnly spares a tool the checker does not know).
//   - Paths are taken as the kernel sees them: each element in order, a
//     symbolic link replaced by its target and ".." going to the parent of
//     what was reached (so `lnk/../x` is beside lnk's target). A path is
//     allowed only if both its written and its resolved forms are — inside
//     the working directories, or covered by an allow rule — and denied if
//     either is denied. A regular file with several names (a hard link) is
//     denied if another of its names is, and writing one that is another
//     name of a protected file asks. Config.LexicalPaths keeps the checker
//     off the file system entirely (for tests on paths that do not exist).
//
// # Shell commands
//
// A command line is broken into every simple command it may run: lists,
// pipelines, subshells, groups, $(…), backticks, <(…) and >(…), if, for,
// while, case, function bodies, here-documents with substitutions, and
// arithmetic. It is allowed only when every simple command is allowed,
// denied when any is denied, and asks when an ask rule matches any.
//
// Deny and ask rules see through wrappers: sudo, doas, su -c, runuser,
// env (also env -S), nice, ionice, nohup, setsid, time, timeout, stdbuf,
// xargs, find -exec/-execdir/-ok/-okdir, command, exec, builtin, busybox,
// chroot, flock, watch, eval, zsh's - noglob nocorrect repeat, git -c
// alias.x=!cmd, and the strings given to sh/bash/zsh/dash/ksh -c or fed
// to a shell as a here-document; a path to a binary matches by its base
// name (/bin/rm matches Bash(rm *)). A command whose name or wrapped
// command is only known at run time ($CMD, $(…), a shell reading a pipe)
// asks when a deny rule might match it, even in bypassPermissions mode.
// A line that does not parse is allowed by no rule and is matched against
// deny rules by its text.
//
// Allow rules see through the harmless wrappers only (time, nice, nohup,
// timeout N, stdbuf), never sudo, env, xargs or sh -c, and a pattern
// starting with a wildcard never vouches for a command that runs another.
// A word only known at run time in a position the pattern spells out
// cannot match; under a wildcard it can. Variables set for the command
// (FOO=1 cmd) keep allow rules and the read-only list from vouching for it
// unless every name is safe (LANG, LC_*, TZ, TERM, NO_COLOR, FORCE_COLOR,
// CLICOLOR*, CI, NODE_ENV, PYTHONUNBUFFERED, PYTHONDONTWRITEBYTECODE,
// RUST_BACKTRACE, COLUMNS, LINES). Defining a function, setting a variable
// other than a plain lower-case one, evaluating a variable as arithmetic
// ($((x)), ${!x}, ${a[i]}, [[ x -eq 1 ]], [ -v x ], which run the $(…) a
// value may hide), ${x@P}, extended globs and zsh's $~x keep the whole
// line from being allowed.
//
// Files: redirections that write (>, >>, >|, &>, &>>, <>, >&file) and the
// files known commands write (tee, dd of=, cp/mv/ln destinations,
// rm/rmdir/mkdir/touch operands, sed -i, sort -o, uniq's second operand,
// tree -o, find -fprint, git --output, time -o, curl -o, wget -O …) are
// checked against Edit rules however the command is allowed: a write
// outside the working directories, or to a protected path, asks unless an
// Edit allow rule covers it. Inside them, a Bash allow rule vouches for the
// files its command names (`Bash(mkdir *)` runs `mkdir build`), but never
// for redirections, which are not part of the command: they are edits like
// any other, accepted by an Edit allow rule or by acceptEdits, asked in
// default mode (`Bash(echo *)` does not let `echo x > main.go` through). Removing a directory is matched against rules for anything
// under it, and removing a working directory itself asks. /dev/null and
// the standard streams are harmless. The files a command reads (operands
// of the read-only commands, < redirections, cp sources, grep -f files …)
// are checked against Read deny and ask rules; for the read-only list they
// must be inside the working directories or covered by a Read allow rule,
// while a Bash allow rule vouches for what its command reads. cd, pushd
// and popd are followed: later relative paths are checked from every
// directory the line may have moved to.
//
// The read-only list (run without asking in default mode): ls, cat, head,
// tail, wc, echo, printf (without -v), pwd, whoami, id, date (without
// -s), uname, hostname (no operand), which, type, file, stat, du, df,
// tree, basename, dirname, realpath, readlink, true, false, test and [
// (without -v), sort (without -o, -T, --compress-program), uniq (one
// operand), cut, tr, grep/egrep/fgrep, rg (without --pre), find (without
// -exec, -delete, -fprint …), diff, cmp, comm, jq, checksum tools, env and
// printenv without a command, sed with a script that cannot run commands
// or touch files, cd/pushd/popd, command -v, and git status, log, show,
// diff, blame, branch and tag listings, rev-parse, ls-files, ls-tree,
// remote [-v|show], config --get/--list, describe, shortlog, reflog
// [show], stash list/show and a few more — with git's -c, --exec-path,
// --ext-diff, --output and --no-index refused. Long options are matched by
// prefix, as getopt_long, git and curl accept abbreviations (--o is
// --output); an ambiguous one makes the program fail, so it counts as
// every option it could abbreviate. Recursive readers that follow links
// (grep -R, rg -L, find -L, ls -RL, du -L, tree -l, diff -r, cp -rL) ask
// when a link under their tree leads out of the working directories.
//
// git is read-only only in a repository git made: from every directory it
// may run in (the call's, those cd moved to, its -C operands), the
// repository it would find must be a .git directory or a .git file
// pointing into one — never a bare repository or a directory the project
// ships, whose config (core.fsmonitor, diff.external…) runs programs.
// --git-dir, --work-tree and --bare always need approval, and no allow
// rule vouches for git in such a repository.
//
// # Deny rules in every mode
//
// A deny rule holds whatever the mode. Where the checker cannot rule out
// that a command dodges one, the command is denied in bypassPermissions,
// dontAsk and auto modes and asked elsewhere (Decision.Rule names the rule):
// a path or command only known at run time ("$PWD/.env", $(…), $CMD),
// shell strings (sh -c, eval, su -c, watch, alias values, trap actions)
// and script files (source f, . f, bash f, ./f with a shell #! line),
// whose commands and file effects are checked like the line's own (a
// script that cannot be read is opaque); xargs, whose commands get
// arguments from standard input; recursive readers (grep -r, rg, git
// grep, diff -r, cp -r, find -exec, tar, zip, rsync…), whose trees are
// walked for files a Read deny rule covers (hidden ones too when the
// reader reads them; hard links of denied files count; a tree too large
// to walk counts as a possible match); assignments that change what later
// words run or name (PATH, HOME, IFS, BASH_ENV, LD_PRELOAD, GIT_*…) and
// shell options (shopt); and reading a program a Bash deny rule names
// (a copy would run it under another name). Globs are expanded against
// the file system as bash would (no dotglob, no globstar), and a for-loop
// variable stands for its values when the loop does not change it. A
// command whose binary is a copy or link of a denied program (compared by
// identity, then content) is matched as that program. Programs the
// checker does not know have their operands checked against the deny
// rules of files (`less .env`). Metadata readers (ls, stat, du, tree,
// readlink, realpath) read names, not contents: Read deny rules do not
// apply to their operands, the working directories do.
//
// Known limits: what programs other than shells do with their input
// (python -c, make, node) is not inspected; CDPATH set in the session's
// environment is not followed; a denied file committed to git can be read
// through git's history.
package permission
