package permission

import (
	"fmt"
	"strings"
)

// finding is a reason to ask, with the rule behind it if any.
type finding struct {
	rule   *compiledRule
	reason string
}

// verdict is the outcome for one simple command.
type verdict struct {
	deny *Decision
	ask  *finding
	// soft says why the command is not allowed ("" when it is).
	soft string
	// readOnly: it only reads, so plan mode accepts it.
	readOnly bool
	// notRO says why it is not read-only.
	notRO string
	// by is the allow rule that vouched for it, if any.
	by *compiledRule
}

// bash decides a shell command: every simple command in it must be
// allowed, any denied one denies the whole, and any that an ask rule
// matches makes it ask.
func (st *state) bash(cmd string) Decision {
	if r := firstWhole(st.deny, "Bash"); r != nil {
		return denyBy(r, fmt.Sprintf("%s denies every shell command", r.rule.describe()))
	}
	an := analyze(cmd)
	if an.err != nil {
		return st.bashUnparsed(cmd, an.err)
	}
	var ask *finding
	var soft, notRO []string
	var by *compiledRule
	for _, sc := range an.cmds {
		v := st.simple(sc)
		if v.deny != nil {
			return *v.deny
		}
		if v.ask != nil && ask == nil {
			ask = v.ask
		}
		if v.soft != "" && !contains(soft, v.soft) {
			soft = append(soft, v.soft)
		}
		if !v.readOnly && v.notRO != "" && !contains(notRO, v.notRO) {
			notRO = append(notRO, v.notRO)
		}
		if by == nil {
			by = v.by
		}
	}
	for _, p := range an.problems {
		why := fmt.Sprintf("%s %s", quoteCmd(cmd), p)
		soft = append(soft, why)
		notRO = append(notRO, why)
	}
	mutating := len(notRO) > 0
	if ask != nil {
		return st.hard(ask.rule, ask.reason, mutating)
	}
	if r := firstWhole(st.ask, "Bash"); r != nil {
		return st.hard(r, fmt.Sprintf("%s requires approval for every shell command", r.rule.describe()), mutating)
	}
	if r := firstWhole(st.allow, "Bash"); r != nil {
		return st.allowed(r, fmt.Sprintf("%s allows every shell command", r.rule.describe()), mutating)
	}
	if len(soft) > 0 {
		return st.soft(strings.Join(soft, "; "), mutating)
	}
	if st.mode == ModePlan && mutating {
		return Decision{Behavior: Deny, Reason: "plan mode allows only read-only commands: " + strings.Join(notRO, "; ")}
	}
	if by != nil {
		reason := fmt.Sprintf("%s allows %s", by.rule.describe(), quoteCmd(cmd))
		return allowBy(by, reason)
	}
	if mutating {
		return Decision{Behavior: Allow, Reason: "acceptEdits mode accepts file changes inside the working directories"}
	}
	return Decision{Behavior: Allow, Reason: "read-only command inside the working directories"}
}

// simple checks one simple command.
func (st *state) simple(sc *simpleCmd) verdict {
	var v verdict
	show := quoteCmd(sc.src)
	if len(sc.args) > 0 {
		if d, a := st.matchRun(runTargets(sc.args, sc.stdin), show); d != nil {
			v.deny = d
			return v
		} else if a != nil {
			v.ask = a
		}
	}

	// What it does.
	layers, writes := harmlessLayers(sc.args)
	inner := layers[len(layers)-1]
	var eff effect
	switch {
	case len(sc.args) == 0:
		eff = effect{readOnly: true} // assignments or redirections alone
	case sc.decl:
		eff = notReadOnly("`%s` sets shell variables", sc.args[0].text)
	default:
		eff = commandEffect(inner)
	}
	writes = append(writes, eff.writes...)
	reads := eff.reads
	var redirWrites []word
	for _, r := range sc.redirs {
		if r.write {
			redirWrites = append(redirWrites, r.target)
		}
		if r.read {
			reads = append(reads, r.target)
		}
	}

	// Deny and ask rules on the files it writes and reads.
	wv, unknownW, d, a := st.filesOf(writes, sc, "Edit", "writing", show)
	if d != nil {
		v.deny = d
		return v
	}
	rwv, unknownRW, d, a3 := st.filesOf(redirWrites, sc, "Edit", "writing", show)
	if d != nil {
		v.deny = d
		return v
	}
	if a == nil {
		a = a3
	}
	rv, unknownR, d, a2 := st.filesOf(reads, sc, "Read", "reading", show)
	if d != nil {
		v.deny = d
		return v
	}
	if v.ask == nil {
		v.ask = a
	}
	if v.ask == nil {
		v.ask = a2
	}
	// Removing a directory removes what it holds: a rule about anything
	// under it applies.
	for _, w := range eff.deletes {
		paths, _ := wordPaths(w, st.cwd, st.home, sc.dirs, sc.dirsUnknown)
		for _, p := range paths {
			pv := view(p, st.follow)
			if r := st.matchUnder(st.deny, "Edit", pv); r != nil {
				d := denyBy(r, fmt.Sprintf("%s denies removing %s (%s)", r.rule.describe(), p, show))
				v.deny = &d
				return v
			}
			if r := st.matchUnder(st.ask, "Edit", pv); r != nil && v.ask == nil {
				v.ask = &finding{r, fmt.Sprintf("%s requires approval for removing %s (%s)", r.rule.describe(), p, show)}
			}
		}
	}

	// Allowed by a rule, as read-only, or by acceptEdits?
	envOK, env := true, ""
	if len(sc.args) > 0 {
		for _, n := range sc.assigns {
			if !safeEnv(n) {
				envOK, env = false, n
				break
			}
		}
	}
	if envOK {
		v.by = st.allowRule(layers)
	}
	byMode := envOK && (eff.readOnly || st.mode == ModeAcceptEdits && eff.fileOp)
	v.readOnly = envOK && eff.readOnly && len(wv) == 0 && len(rwv) == 0 && !unknownW && !unknownRW
	switch {
	case !envOK:
		v.notRO = fmt.Sprintf("%s sets %s for the command", show, env)
	case !eff.readOnly:
		v.notRO = fmt.Sprintf("%s: %s", show, eff.why)
	case !v.readOnly:
		v.notRO = fmt.Sprintf("%s writes files", show)
	}
	if v.by == nil && !byMode {
		switch {
		case !envOK:
			v.soft = fmt.Sprintf("%s sets %s for the command, which no allow rule vouches for", show, env)
		default:
			v.soft = fmt.Sprintf("%s needs approval: %s, and no allow rule matches it", show, eff.why)
		}
		return v
	}

	// Where it writes. An allow rule vouches for the files its command
	// names inside the working directories; redirections are not part of
	// the command, so they are edits like any other.
	if unknownW || unknownRW {
		v.soft = fmt.Sprintf("%s writes to a file only known at run time", show)
		return v
	}
	for i, p := range append(wv, rwv...) {
		vouched := v.by != nil && i < len(wv)
		if st.matchPath(st.allow, "Edit", p) != nil {
			continue
		}
		switch {
		case !p.insideAny(st.dirs):
			v.soft = fmt.Sprintf("%s writes %s, outside the working directories", show, p.lex)
		case protectedPath(p.lex) || protectedPath(p.real):
			v.soft = fmt.Sprintf("%s writes %s, which configures git, MCP servers or permissions", show, p.lex)
		case !vouched && st.mode != ModeAcceptEdits:
			v.soft = fmt.Sprintf("%s writes %s: editing files needs approval in %s mode", show, p.lex, st.mode)
		}
		if v.soft != "" {
			return v
		}
	}
	for _, w := range eff.deletes {
		if !w.static() {
			continue // a glob removes entries, not the directory itself
		}
		paths, _ := wordPaths(w, st.cwd, st.home, sc.dirs, sc.dirsUnknown)
		for _, p := range paths {
			if view(p, st.follow).isRoot(st.dirs) {
				v.soft = fmt.Sprintf("%s removes the working directory %s itself", show, p)
				return v
			}
		}
	}

	// What it reads, unless an allow rule vouches for the command.
	if v.by != nil {
		return v
	}
	if unknownR {
		v.soft = fmt.Sprintf("%s reads a path only known at run time", show)
		return v
	}
	for _, p := range rv {
		if !p.insideAny(st.dirs) && st.matchPath(st.allow, "Read", p) == nil {
			v.soft = fmt.Sprintf("%s reads %s, outside the working directories", show, p.lex)
			return v
		}
	}
	return v
}

// filesOf resolves the paths a command writes or reads and applies the
// deny and ask rules of tool (Edit or Read) to them.
func (st *state) filesOf(ws []word, sc *simpleCmd, tool, verb, show string) (views []pathView, unknown bool, deny *Decision, ask *finding) {
	for _, w := range ws {
		paths, ok := wordPaths(w, st.cwd, st.home, sc.dirs, sc.dirsUnknown)
		if !ok {
			unknown = true
			if r := hasPathRules(st.deny, tool); r != nil && ask == nil {
				ask = &finding{r, fmt.Sprintf("%s is %s a path only known at run time, which %s might deny", show, verb, r.rule.describe())}
			}
			continue
		}
		for _, p := range paths {
			if tool == "Edit" && harmlessWrite(p) || tool == "Read" && harmlessRead(p) {
				continue
			}
			pv := view(p, st.follow)
			if r := st.matchPath(st.deny, tool, pv); r != nil {
				d := denyBy(r, fmt.Sprintf("%s denies %s %s (%s)", r.rule.describe(), verb, p, show))
				return nil, false, &d, nil
			}
			if r := st.matchPath(st.ask, tool, pv); r != nil && ask == nil {
				ask = &finding{r, fmt.Sprintf("%s requires approval for %s %s (%s)", r.rule.describe(), verb, p, show)}
			}
			views = append(views, pv)
		}
	}
	return views, unknown, nil, ask
}

// matchRun applies the Bash deny and ask rules to the commands a simple
// command runs.
func (st *state) matchRun(t *targets, show string) (*Decision, *finding) {
	var ask *finding
	note := func(f *finding) {
		if ask == nil {
			ask = f
		}
	}
	for _, cmd := range t.cmds {
		rendered := renderWords(cmd)
		unknown := strings.Contains(rendered, runtime)
		for _, r := range st.deny {
			if r.cmd == nil {
				continue
			}
			if r.cmd.match(rendered) {
				d := denyBy(r, fmt.Sprintf("%s denies %s", r.rule.describe(), show))
				return &d, nil
			}
			if unknown && r.cmd.mayMatch(rendered) {
				note(&finding{r, fmt.Sprintf("%s might match %s: part of it is only known at run time", show, r.rule.describe())})
			}
		}
		for _, r := range st.ask {
			if r.cmd != nil && (r.cmd.match(rendered) || unknown && r.cmd.mayMatch(rendered)) {
				note(&finding{r, fmt.Sprintf("%s requires approval for %s", r.rule.describe(), show)})
			}
		}
	}
	for _, raw := range t.raws {
		if r := rawMatch(st.deny, raw); r != nil {
			d := denyBy(r, fmt.Sprintf("%s denies %s", r.rule.describe(), show))
			return &d, nil
		}
		if r := rawMatch(st.ask, raw); r != nil {
			note(&finding{r, fmt.Sprintf("%s requires approval for %s", r.rule.describe(), show)})
		}
	}
	if t.unknown {
		for _, r := range st.deny {
			if r.cmd != nil {
				note(&finding{r, fmt.Sprintf("%s runs a command only known at run time, which %s might deny", show, r.rule.describe())})
				break
			}
		}
	}
	return nil, ask
}

// allowRule returns the allow rule that vouches for a command through any
// of its harmless-wrapper layers.
func (st *state) allowRule(layers [][]word) *compiledRule {
	for _, layer := range layers {
		if len(layer) == 0 {
			continue
		}
		name, ok := layer[0].lit()
		if !ok {
			continue
		}
		rendered := renderWords(layer)
		for _, r := range st.allow {
			if r.cmd == nil || !r.cmd.match(rendered) {
				continue
			}
			if runsOthers(commandBase(name)) && !strings.HasPrefix(r.cmd.firstLiteral(), name) {
				// `Bash(* --help)` must not vouch for `sudo rm -rf / --help`.
				continue
			}
			return r
		}
	}
	return nil
}

// bashUnparsed decides a command that does not parse: no allow rule or
// mode can vouch for it, and deny rules are matched against its text.
func (st *state) bashUnparsed(cmd string, err error) Decision {
	show := quoteCmd(cmd)
	if r := rawMatch(st.deny, cmd); r != nil {
		return denyBy(r, fmt.Sprintf("%s denies %s", r.rule.describe(), show))
	}
	reason := fmt.Sprintf("%s could not be parsed (%v), so no rule can vouch for it", show, err)
	if r := rawMatch(st.ask, cmd); r != nil {
		return st.hard(r, reason, true)
	}
	if r := firstWhole(st.ask, "Bash"); r != nil {
		return st.hard(r, reason, true)
	}
	return st.soft(reason, true)
}

// rawMatch matches Bash rules against the text of a command that could not
// be parsed: the whole text and each piece between shell operators, with
// blanks collapsed and the first word also by its base name.
func rawMatch(rs []*compiledRule, text string) *compiledRule {
	pieces := strings.FieldsFunc(text, func(r rune) bool {
		return strings.ContainsRune(";&|()`\n{}<>$", r)
	})
	pieces = append(pieces, text)
	for _, piece := range pieces {
		fields := strings.Fields(piece)
		if len(fields) == 0 {
			continue
		}
		cands := []string{strings.Join(fields, " ")}
		for len(fields) > 1 && rawPrefixWord(fields[0]) {
			fields = fields[1:]
			cands = append(cands, strings.Join(fields, " "))
		}
		if base := commandBase(strings.Trim(fields[0], `"'\`)); base != fields[0] {
			cands = append(cands, strings.Join(append([]string{base}, fields[1:]...), " "))
		}
		for _, r := range rs {
			if r.cmd == nil {
				continue
			}
			for _, c := range cands {
				if r.cmd.match(c) {
					return r
				}
			}
		}
	}
	return nil
}

// rawPrefixWord reports whether a word starting a piece of unparsed text
// is a keyword or wrapper to look past.
func rawPrefixWord(w string) bool {
	switch w {
	case "if", "then", "else", "elif", "do", "while", "until", "!", "time", "sudo", "exec", "command",
		"builtin", "env", "nohup", "nice", "xargs", "eval":
		return true
	}
	return false
}

// quoteCmd shows a command in reasons: in backquotes, shortened.
func quoteCmd(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > 120 {
		s = s[:117] + "..."
	}
	return "`" + s + "`"
}

// safeEnv reports whether an environment variable set for one command
// cannot change what the command runs or writes.
func safeEnv(name string) bool {
	switch name {
	case "LANG", "LANGUAGE", "TZ", "NO_COLOR", "FORCE_COLOR", "CLICOLOR", "CLICOLOR_FORCE", "TERM", "CI",
		"NODE_ENV", "PYTHONUNBUFFERED", "PYTHONDONTWRITEBYTECODE", "RUST_BACKTRACE", "COLUMNS", "LINES":
		return true
	}
	return strings.HasPrefix(name, "LC_") && isName(name)
}

// harmlessVar reports whether setting a shell variable for the rest of the
// line is harmless: a safe environment name, or a lower-case name that no
// shell or common tool gives a meaning to.
func harmlessVar(name string) bool {
	if safeEnv(name) {
		return true
	}
	if name == "" || !isName(name) || strings.ToLower(name) != name {
		return false
	}
	switch name {
	case "path", "cdpath", "fpath", "manpath", "module_path", "mailpath", "fignore", "psvar", "watch",
		"histchars", "prompt", "ifs", "home", "_":
		return false
	}
	return !strings.HasSuffix(name, "_proxy") && !strings.HasSuffix(name, "_functions")
}
