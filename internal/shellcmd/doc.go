// Package shellcmd answers questions about a shell command line without
// running it: which simple commands it may run, through which wrappers and
// shell strings, and what each does to files. It parses with
// mvdan.cc/sh/v3/syntax (bash dialect), so that a line is read the way the
// shell will read it, not matched as text.
//
// Parse breaks a line into every simple Command it may run — lists,
// pipelines, subshells, groups, $(…), backticks, <(…) and >(…), if, for,
// while, case, function bodies, here-documents with substitutions and
// arithmetic — each with its words, the variables set for it, its
// redirections and the directories earlier cd, pushd and popd may have
// moved it to. A Word keeps what is known before the command runs: quotes
// removed, brace expansion done, and every part only known at run time
// (parameters, substitutions, glob characters) replaced by the RunTime
// mark. The constructs that make a line do more than its commands say (a
// function definition, a variable that changes what later words name,
// arithmetic that evaluates a value, zsh's glob qualifiers) are listed in
// Line.Problems and Line.Opaque.
//
// Command.Targets follows what a command runs through wrappers (sudo, doas,
// su -c, env, nice, timeout, xargs, find -exec, watch, flock, eval,
// git -c alias.x=!cmd, sh -c and the other shells, here-documents fed to a
// shell, scripts run by source, bash f or ./f …); the caller's Resolver
// reads the scripts and names the programs the file system alone can tell.
// HarmlessLayers peels only the wrappers that leave a command doing what
// it would do alone (time, nice, nohup, timeout N, stdbuf).
//
// Command.Effect tells what a command does to files: whether it only reads
// (the read-only list: ls, cat, grep, find without -exec, git status and
// the other inspecting git subcommands, sed with a script that only edits
// text, …), which files it reads, writes, deletes, links and walks, what
// an unknown program's words may name, and where git runs. Long options
// are matched by prefix, as getopt_long, git and curl accept
// abbreviations. A command is read-only only when that is proven.
//
// The package decides nothing: what is allowed is internal/permission's
// to say, on top of these answers, as are the hooks' `if` filter and the
// commands skills inject, which go through it. It reads no file itself;
// what a glob matches (Word.ExpandGlob) is read through the caller's
// function, so the caller bounds the work.
package shellcmd
