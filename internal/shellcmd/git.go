package shellcmd

import (
	"slices"
	"strings"
)

// gitEffect classifies a git command line (without "git"): read-only for
// the subcommands and options that only inspect the repository.
func gitEffect(args []Word) Effect {
	e := Effect{ReadOnly: true, Git: true}
	i := 0
	// Global options before the subcommand. Only the few that cannot run
	// programs or change configuration are accepted: -c, --exec-path,
	// --config-env and friends can make any subcommand run code.
	for ; i < len(args); i++ {
		a, static := args[i].Lit()
		if !static {
			return notReadOnly("`git` has an argument only known at run time")
		}
		if !strings.HasPrefix(a, "-") {
			break
		}
		name, _, _ := strings.Cut(a, "=")
		switch name {
		case "-C":
			if i+1 >= len(args) {
				return notReadOnly("`git -C` without a directory")
			}
			i++
			e.Reads = append(e.Reads, args[i])
			e.GitCd = append(e.GitCd, args[i])
		case "--git-dir", "--work-tree", "--bare":
			// The repository named there may be one the project ships,
			// whose config (core.fsmonitor…) runs programs.
			out := notReadOnly("`git %s` uses a repository named on the command line", name)
			out.Git, out.GitNamed = true, name
			return out
		case "--no-pager", "-P", "--no-optional-locks", "--literal-pathspecs", "--glob-pathspecs",
			"--noglob-pathspecs", "--icase-pathspecs", "--no-replace-objects", "--no-advice":
		default:
			return notReadOnly("`git %s` is not read-only", a)
		}
	}
	if i >= len(args) {
		return e // git alone prints its usage
	}
	sub, _ := args[i].Lit()
	rest := args[i+1:]
	// Run-time words could expand to --output=… or a write subcommand;
	// globs are accepted only after "--", where they are pathspecs.
	dashdash := false
	for _, a := range rest {
		if s, ok := a.Lit(); ok && s == "--" {
			dashdash = true
			continue
		}
		if a.Dynamic || a.Glob && !dashdash {
			return notReadOnly("`git %s` has an argument only known at run time or a glob", sub)
		}
	}
	opts, operands := gitArgs(rest, gitValueOpts(sub))
	bad := func(format string, a ...any) Effect {
		return e.Demote(format, a...)
	}
	// Paths and REV:path operands may name files it reads (`git show
	// HEAD:.env`, `git blame .env`).
	for _, op := range operands {
		e.Maybe = append(e.Maybe, op)
		if _, p, ok := strings.Cut(op.Text, ":"); ok && p != "" && op.Static() {
			e.Maybe = append(e.Maybe, plainWord(p))
		}
	}
	if sub == "grep" {
		e.Walks = append(e.Walks, Walk{Root: plainWord("."), Content: true, Hidden: true})
	}
	switch sub {
	case "status", "rev-parse", "ls-files", "ls-tree", "describe", "shortlog", "cat-file", "rev-list",
		"merge-base", "show-ref", "for-each-ref", "count-objects", "name-rev", "check-ignore", "version",
		"blame", "annotate", "var", "whatchanged", "log", "show", "diff", "grep", "cherry", "range-diff":
		for _, o := range opts {
			name, val, eq := strings.Cut(o, "=")
			switch {
			case optIn(name, []string{"--output"}):
				e = e.Demote("`git %s --output` writes a file", sub)
				if eq {
					e.Writes = append(e.Writes, plainWord(val))
				} else {
					e.Writes = append(e.Writes, unknownPath())
				}
			case optIn(name, []string{"--ext-diff"}):
				return bad("`git %s --ext-diff` runs an external program", sub)
			case optIn(name, []string{"--no-index"}) && (sub == "diff" || sub == "grep"):
				return bad("`git %s --no-index` reads files outside the repository", sub)
			case optIn(name, []string{"--contents"}) && (sub == "blame" || sub == "annotate"):
				if eq {
					e.Reads = append(e.Reads, plainWord(val))
				} else {
					e.Reads = append(e.Reads, unknownPath())
				}
			case sub == "grep" && (strings.HasPrefix(o, "-O") || optIn(name, []string{"--open-files-in-pager"})):
				return bad("`git grep -O` runs a pager")
			}
		}
		return e
	case "branch":
		listing := hasOpt(opts, "-l", "--list")
		for _, o := range opts {
			if hasOpt([]string{o}, "-d", "-D", "--delete", "-m", "-M", "--move", "-c", "-C", "--copy", "-f", "--force",
				"-u", "--set-upstream-to", "--unset-upstream", "--edit-description", "--track", "--no-track", "--create-reflog", "--set-upstream") {
				return bad("`git branch %s` changes branches", o)
			}
		}
		if len(operands) > 0 && !listing {
			return bad("`git branch NAME` creates a branch")
		}
		return e
	case "tag":
		listing := hasOpt(opts, "-l", "--list")
		for _, o := range opts {
			if !hasOpt([]string{o}, "-l", "--list", "-n", "--contains", "--no-contains", "--merged", "--no-merged",
				"--points-at", "--sort", "--format", "--column", "--no-column", "--color", "-i", "--ignore-case", "--omit-empty") && !strings.HasPrefix(o, "-n") {
				return bad("`git tag %s` is not read-only", o)
			}
		}
		if len(operands) > 0 && !listing {
			return bad("`git tag NAME` creates a tag")
		}
		return e
	case "remote":
		if len(operands) == 0 {
			return e
		}
		switch s, _ := operands[0].Lit(); s {
		case "show", "get-url":
			return e
		}
		return bad("`git remote %s` is not read-only", operands[0].Text)
	case "config":
		for _, o := range opts {
			if name, val, ok := strings.Cut(o, "="); ok && (name == "--file" || name == "-f") {
				e.Reads = append(e.Reads, plainWord(val))
			}
			if hasOpt([]string{o}, "-e", "--edit", "--add", "--unset", "--unset-all", "--replace-all", "--rename-section",
				"--remove-section", "--fixed-value") {
				return bad("`git config %s` changes configuration", o)
			}
		}
		if hasOpt(opts, "--get", "--get-all", "--get-regexp", "--get-urlmatch", "--get-color", "--get-colorbool", "-l", "--list") {
			return e
		}
		if len(operands) > 0 {
			if s, _ := operands[0].Lit(); s == "get" || s == "list" {
				return e
			}
		}
		return bad("`git config` without --get or --list changes configuration")
	case "reflog":
		if len(operands) == 0 {
			return e
		}
		if s, _ := operands[0].Lit(); s == "show" || s == "exists" {
			return e
		}
		if strings.HasPrefix(operands[0].Text, "-") {
			return e
		}
		return bad("`git reflog %s` is not read-only", operands[0].Text)
	case "stash":
		if len(operands) > 0 {
			if s, _ := operands[0].Lit(); s == "list" || s == "show" {
				return e
			}
		}
		return bad("`git stash` changes the working tree")
	case "worktree":
		if len(operands) > 0 {
			if s, _ := operands[0].Lit(); s == "list" {
				return e
			}
		}
		return bad("`git worktree` changes worktrees")
	case "symbolic-ref":
		if len(operands) <= 1 && !hasOpt(opts, "-d", "--delete", "-m") {
			return e
		}
		return bad("`git symbolic-ref` with a target changes a ref")
	}
	return bad("`git %s` is not read-only", sub)
}

// gitArgs splits a subcommand's arguments into options (as written, a
// value attached with "=") and operands, stopping options at "--". The
// long options in valueOpts take the next word as their value.
func gitArgs(args []Word, valueOpts []string) (opts []string, operands []Word) {
	for i := 0; i < len(args); i++ {
		s := args[i].Text
		if s == "--" {
			return opts, append(operands, args[i+1:]...)
		}
		if strings.HasPrefix(s, "-") && s != "-" {
			if slices.Contains(valueOpts, s) && i+1 < len(args) {
				i++
				s += "=" + args[i].Text
			}
			opts = append(opts, s)
			continue
		}
		operands = append(operands, args[i])
	}
	return opts, operands
}

// gitValueOpts are the options of a subcommand that take the next word as
// their value.
func gitValueOpts(sub string) []string {
	switch sub {
	case "branch", "tag":
		return []string{"--contains", "--no-contains", "--merged", "--no-merged", "--points-at", "--sort", "--format"}
	case "blame", "annotate":
		return []string{"--contents"}
	case "config":
		return []string{"--file", "-f"}
	}
	return nil
}

// hasOpt reports whether an option (possibly with "=value" attached, or a
// short cluster) among opts is one of names.
func hasOpt(opts []string, names ...string) bool {
	for _, o := range opts {
		name, _, _ := strings.Cut(o, "=")
		for _, n := range names {
			if name == n {
				return true
			}
			if abbreviates(name, n) {
				return true
			}
			if len(n) == 2 && n[0] == '-' && n[1] != '-' && len(name) > 2 && name[0] == '-' && name[1] != '-' && strings.IndexByte(name[1:], n[1]) >= 0 {
				return true // inside a short-option cluster
			}
		}
	}
	return false
}
