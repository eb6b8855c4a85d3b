package permission

import (
	"strings"
)

// gitEffect classifies a git command line (without "git"): read-only for
// the subcommands and options that only inspect the repository.
func gitEffect(args []word) effect {
	e := effect{readOnly: true, git: true}
	i := 0
	// Global options before the subcommand. Only the few that cannot run
	// programs or change configuration are accepted: -c, --exec-path,
	// --config-env and friends can make any subcommand run code.
	for ; i < len(args); i++ {
		a, static := args[i].lit()
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
			e.reads = append(e.reads, args[i])
			e.gitCd = append(e.gitCd, args[i])
		case "--git-dir", "--work-tree", "--bare":
			// The repository named there may be one the project ships,
			// whose config (core.fsmonitor…) runs programs.
			out := notReadOnly("`git %s` uses a repository named on the command line", name)
			out.git, out.gitNamed = true, name
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
	sub, _ := args[i].lit()
	rest := args[i+1:]
	// Run-time words could expand to --output=… or a write subcommand;
	// globs are accepted only after "--", where they are pathspecs.
	dashdash := false
	for _, a := range rest {
		if s, ok := a.lit(); ok && s == "--" {
			dashdash = true
			continue
		}
		if a.dynamic || a.glob && !dashdash {
			return notReadOnly("`git %s` has an argument only known at run time or a glob", sub)
		}
	}
	opts, operands := gitArgs(rest, gitValueOpts(sub))
	bad := func(format string, a ...any) effect {
		return e.demote(format, a...)
	}
	// Paths and REV:path operands may name files it reads: a deny rule
	// on them holds (`git show HEAD:.env`, `git blame .env`).
	for _, op := range operands {
		e.maybe = append(e.maybe, op)
		if _, p, ok := strings.Cut(op.text, ":"); ok && p != "" && op.static() {
			e.maybe = append(e.maybe, plainWord(p))
		}
	}
	if sub == "grep" {
		e.walks = append(e.walks, walk{root: plainWord("."), content: true, hidden: true})
	}
	switch sub {
	case "status", "rev-parse", "ls-files", "ls-tree", "describe", "shortlog", "cat-file", "rev-list",
		"merge-base", "show-ref", "for-each-ref", "count-objects", "name-rev", "check-ignore", "version",
		"blame", "annotate", "var", "whatchanged", "log", "show", "diff", "grep", "cherry", "range-diff":
		for _, o := range opts {
			name, val, eq := strings.Cut(o, "=")
			switch {
			case optIn(name, []string{"--output"}):
				e = e.demote("`git %s --output` writes a file", sub)
				if eq {
					e.writes = append(e.writes, plainWord(val))
				} else {
					e.writes = append(e.writes, unknownPath())
				}
			case optIn(name, []string{"--ext-diff"}):
				return bad("`git %s --ext-diff` runs an external program", sub)
			case optIn(name, []string{"--no-index"}) && (sub == "diff" || sub == "grep"):
				return bad("`git %s --no-index` reads files outside the repository", sub)
			case optIn(name, []string{"--contents"}) && (sub == "blame" || sub == "annotate"):
				if eq {
					e.reads = append(e.reads, plainWord(val))
				} else {
					e.reads = append(e.reads, unknownPath())
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
		switch s, _ := operands[0].lit(); s {
		case "show", "get-url":
			return e
		}
		return bad("`git remote %s` is not read-only", operands[0].text)
	case "config":
		for _, o := range opts {
			if name, val, ok := strings.Cut(o, "="); ok && (name == "--file" || name == "-f") {
				e.reads = append(e.reads, plainWord(val))
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
			if s, _ := operands[0].lit(); s == "get" || s == "list" {
				return e
			}
		}
		return bad("`git config` without --get or --list changes configuration")
	case "reflog":
		if len(operands) == 0 {
			return e
		}
		if s, _ := operands[0].lit(); s == "show" || s == "exists" {
			return e
		}
		if strings.HasPrefix(operands[0].text, "-") {
			return e
		}
		return bad("`git reflog %s` is not read-only", operands[0].text)
	case "stash":
		if len(operands) > 0 {
			if s, _ := operands[0].lit(); s == "list" || s == "show" {
				return e
			}
		}
		return bad("`git stash` changes the working tree")
	case "worktree":
		if len(operands) > 0 {
			if s, _ := operands[0].lit(); s == "list" {
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
func gitArgs(args []word, valueOpts []string) (opts []string, operands []word) {
	for i := 0; i < len(args); i++ {
		s := args[i].text
		if s == "--" {
			return opts, append(operands, args[i+1:]...)
		}
		if strings.HasPrefix(s, "-") && s != "-" {
			if contains(valueOpts, s) && i+1 < len(args) {
				i++
				s += "=" + args[i].text
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

// gitProblem says why git, as sc runs it, might use a repository the
// project ships (see gitRepoProblem): the directories it may run in (the
// call's, those cd moved to, its -C operands) are each looked at. Without
// the file system, any other directory than the call's is a problem.
func (st *state) gitProblem(sc *simpleCmd, eff effect) string {
	if eff.gitNamed != "" {
		return "uses the repository " + eff.gitNamed + " names, whose configuration can run programs"
	}
	if sc.dirsUnknown {
		return "runs in a directory only known at run time"
	}
	for _, d := range sc.dirs {
		dir := st.cwd
		if d != "" {
			if !st.follow {
				return "runs in another directory (after cd), whose repository the checker cannot look at"
			}
			dir = rawAbs(d, st.cwd, st.home)
		}
		for _, c := range eff.gitCd {
			s, ok := c.lit()
			if !ok {
				return "runs in a directory only known at run time"
			}
			if !st.follow {
				return "runs in another directory (git -C), whose repository the checker cannot look at"
			}
			dir = rawAbs(s, dir, st.home)
		}
		if why := st.gitRepoProblem(dir); why != "" {
			return "would use a repository whose configuration can run programs: " + why
		}
	}
	return ""
}
