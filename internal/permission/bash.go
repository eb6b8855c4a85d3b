package permission

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/tackcode/tack/internal/shellcmd"
)

// finding is a reason to ask, with the rule behind it if any. maybeDeny
// marks a deny rule that might cover what the command does (a path or a
// command only known at run time, a tree it reads): unlike an ask rule,
// it denies where nobody is asked (bypassPermissions, dontAsk, auto).
type finding struct {
	rule      *compiledRule
	reason    string
	maybeDeny bool
}

// findings keeps the first finding of each kind.
type findings struct{ ask, maybe *finding }

func (f *findings) note(x *finding) {
	switch {
	case x == nil:
	case x.maybeDeny:
		if f.maybe == nil {
			f.maybe = x
		}
	case f.ask == nil:
		f.ask = x
	}
}

func (f *findings) merge(o findings) {
	f.note(o.ask)
	f.note(o.maybe)
}

// verdict is the outcome for one simple command.
type verdict struct {
	deny  *Decision
	found findings
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
// matches makes it ask. Where a deny rule might cover what it does, it is
// denied in the modes that ask nobody and asked elsewhere.
func (st *state) bash(cmd string) Decision {
	if r := firstWhole(st.deny, "Bash"); r != nil {
		return denyBy(r, fmt.Sprintf("%s denies every shell command", r.rule.describe()))
	}
	an := shellcmd.Parse(cmd)
	if an.Err != nil {
		return st.bashUnparsed(cmd, an.Err)
	}
	st.budget = walkBudget
	var found findings
	var soft, notRO []string
	var by *compiledRule
	for _, sc := range an.Commands {
		v := st.simple(sc)
		if v.deny != nil {
			return *v.deny
		}
		found.merge(v.found)
		if v.soft != "" && !slices.Contains(soft, v.soft) {
			soft = append(soft, v.soft)
		}
		if !v.readOnly && v.notRO != "" && !slices.Contains(notRO, v.notRO) {
			notRO = append(notRO, v.notRO)
		}
		if by == nil {
			by = v.by
		}
	}
	if len(an.Opaque) > 0 {
		found.note(st.opaqueFinding(quoteCmd(cmd), an.Opaque[0]))
	}
	for _, p := range an.Problems {
		why := fmt.Sprintf("%s %s", quoteCmd(cmd), p)
		soft = append(soft, why)
		notRO = append(notRO, why)
	}
	mutating := len(notRO) > 0
	if f := found.maybe; f != nil {
		return st.unsure(f.rule, f.reason, mutating)
	}
	if f := found.ask; f != nil {
		return st.hard(f.rule, f.reason, mutating)
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

// denyingRule returns a deny rule that a command could dodge by what it
// hides: one about shell commands or about file paths.
func (st *state) denyingRule() *compiledRule {
	for _, r := range st.deny {
		if r.coversTool("Bash") || r.coversTool("Read") || r.coversTool("Edit") {
			return r
		}
	}
	return nil
}

// opaqueFinding is a possible denial for a command whose effect cannot be
// told (what says why), when some deny rule could be dodged by it.
func (st *state) opaqueFinding(show, what string) *finding {
	r := st.denyingRule()
	if r == nil {
		return nil
	}
	return &finding{r, fmt.Sprintf("%s %s, so %s cannot be checked against it", show, what, r.rule.describe()), true}
}

// simple checks one simple command.
func (st *state) simple(sc *shellcmd.Command) verdict {
	var v verdict
	show := quoteCmd(sc.Src)
	eff := sc.Effect()
	layers, _ := shellcmd.HarmlessLayers(sc.Args)

	// The deny and ask rules: on the commands it runs, through wrappers,
	// shell strings and scripts, and on the files each of them touches.
	t := sc.Targets(st)
	if len(sc.Args) > 0 {
		d, f := st.matchRun(t, show)
		if d != nil {
			v.deny = d
			return v
		}
		v.found.merge(f)
	}
	own := st.files(eff, sc, show)
	if own.deny != nil {
		v.deny = own.deny
		return v
	}
	v.found.merge(own.found)
	for _, in := range t.Wrapped {
		e := shellcmd.EffectOf(in.Args)
		r := st.files(e, &shellcmd.Command{Dirs: in.At.Dirs, DirsUnknown: in.At.DirsUnknown}, show)
		if r.deny != nil {
			v.deny = r.deny
			return v
		}
		v.found.merge(r.found)
	}
	for _, n := range t.Nested {
		e := n.Effect()
		r := st.files(e, n, quoteCmd(n.Src))
		if r.deny != nil {
			v.deny = r.deny
			return v
		}
		v.found.merge(r.found)
	}
	if t.Opaque != "" {
		v.found.note(st.opaqueFinding(show, t.Opaque))
	}
	// git in a repository the project may have shipped runs what its
	// configuration says: no rule or mode vouches for that.
	gitWhy := ""
	if eff.Git {
		if gitWhy = st.gitProblem(sc, eff); gitWhy != "" {
			eff = eff.Demote("`git` here %s", gitWhy)
		}
	}

	// Allowed by a rule, as read-only, or by acceptEdits?
	envOK, env := true, ""
	if len(sc.Args) > 0 {
		for _, n := range sc.Assigns {
			if !shellcmd.SafeEnv(n) {
				envOK, env = false, n
				break
			}
		}
	}
	if envOK {
		v.by = st.allowRule(layers)
	}
	byMode := envOK && (eff.ReadOnly || st.mode == ModeAcceptEdits && eff.FileOp)
	v.readOnly = envOK && eff.ReadOnly && len(own.wv) == 0 && len(own.rwv) == 0 && !own.unknownW && !own.unknownRW
	switch {
	case !envOK:
		v.notRO = fmt.Sprintf("%s sets %s for the command", show, env)
	case !eff.ReadOnly:
		v.notRO = fmt.Sprintf("%s: %s", show, eff.Why)
	case !v.readOnly:
		v.notRO = fmt.Sprintf("%s writes files", show)
	}
	if v.by == nil && !byMode {
		switch {
		case !envOK:
			v.soft = fmt.Sprintf("%s sets %s for the command, which no allow rule vouches for", show, env)
		default:
			v.soft = fmt.Sprintf("%s needs approval: %s, and no allow rule matches it", show, eff.Why)
		}
		return v
	}

	if gitWhy != "" {
		v.soft = fmt.Sprintf("%s needs approval: git %s", show, gitWhy)
		return v
	}

	// Where it writes. An allow rule vouches for the files its command
	// names inside the working directories; redirections are not part of
	// the command, so they are edits like any other.
	if own.unknownW || own.unknownRW {
		v.soft = fmt.Sprintf("%s writes to a file only known at run time", show)
		return v
	}
	for i, p := range append(own.wv, own.rwv...) {
		vouched := v.by != nil && i < len(own.wv)
		if st.allowsPath(st.allow, "Edit", p) != nil {
			continue
		}
		switch {
		case !p.insideAny(st.dirs):
			v.soft = fmt.Sprintf("%s writes %s, outside the working directories", show, p.lex)
		case protectedPath(p.lex) || protectedPath(p.real):
			v.soft = fmt.Sprintf("%s writes %s, which configures git, MCP servers or permissions", show, p.lex)
		case st.protectedLink(p) != "":
			v.soft = fmt.Sprintf("%s writes %s, another name of %s, which configures git, MCP servers or permissions", show, p.lex, st.protectedLink(p))
		case !vouched && st.mode != ModeAcceptEdits:
			v.soft = fmt.Sprintf("%s writes %s: editing files needs approval in %s mode", show, p.lex, st.mode)
		}
		if v.soft != "" {
			return v
		}
	}
	if own.soft != "" {
		v.soft = own.soft
		return v
	}
	for _, w := range eff.Deletes {
		if !w.Static() {
			continue // a glob removes entries, not the directory itself
		}
		for _, ref := range st.wordRefs(w, sc) {
			if view(ref.raw, st.follow).isRoot(st.dirs) {
				v.soft = fmt.Sprintf("%s removes the working directory %s itself", show, ref.raw)
				return v
			}
		}
	}

	// What it reads, unless an allow rule vouches for the command.
	if v.by != nil {
		return v
	}
	if own.unknownR {
		v.soft = fmt.Sprintf("%s reads a path only known at run time", show)
		return v
	}
	for _, p := range own.rv {
		if !p.insideAny(st.dirs) && st.allowsPath(st.allow, "Read", p) == nil {
			v.soft = fmt.Sprintf("%s reads %s, outside the working directories", show, p.lex)
			return v
		}
	}
	return v
}

// fileReport is what the checker found about the files one command
// touches.
type fileReport struct {
	deny  *Decision
	found findings
	// wv, rwv and rv are the paths it writes (as the command's operands,
	// and by redirections) and reads.
	wv, rwv, rv []pathView
	// unknown*: one of them is only known at run time.
	unknownW, unknownRW, unknownR bool
	// soft says why it cannot run without approval, whatever allows it:
	// it follows links out of the working directories, or links a
	// protected file.
	soft string
}

// files applies the deny and ask rules to the files a command with effect
// eff reads, writes, removes, links and walks, at sc (its directories and
// redirections).
func (st *state) files(eff shellcmd.Effect, sc *shellcmd.Command, show string) fileReport {
	var rep fileReport
	var redirWrites, reads []shellcmd.Word
	reads = append(reads, eff.Reads...)
	for _, r := range sc.Redirs {
		if r.Write {
			redirWrites = append(redirWrites, r.Target)
		}
		if r.Read {
			reads = append(reads, r.Target)
		}
	}
	var d *Decision
	if rep.wv, rep.unknownW, d = st.pathRules(eff.Writes, sc, "Edit", "writing", show, &rep.found); d != nil {
		rep.deny = d
		return rep
	}
	if rep.rwv, rep.unknownRW, d = st.pathRules(redirWrites, sc, "Edit", "writing", show, &rep.found); d != nil {
		rep.deny = d
		return rep
	}
	if rep.rv, rep.unknownR, d = st.pathRules(reads, sc, "Read", "reading", show, &rep.found); d != nil {
		rep.deny = d
		return rep
	}
	// Names and metadata: inside the working directories, whatever the
	// Read rules say of contents.
	for _, w := range eff.MetaReads {
		refs, ok := st.paths(w, sc)
		if !ok {
			rep.unknownR = true
			continue
		}
		for _, ref := range refs {
			if eff.MetaNoFollow {
				rep.rv = append(rep.rv, viewNoFollow(ref.raw, st.follow))
			} else {
				rep.rv = append(rep.rv, view(ref.raw, st.follow))
			}
		}
	}
	// Words of unknown programs that name a denied file.
	for _, w := range eff.Maybe {
		if !w.Static() || w.Text == "" {
			continue
		}
		for _, ref := range st.wordRefs(w, sc) {
			pv := view(ref.raw, st.follow)
			for _, tool := range []string{"Read", "Edit"} {
				if r := st.matchPath(st.deny, tool, pv); r != nil {
					d := denyBy(r, fmt.Sprintf("%s denies %s, which %s names", r.rule.describe(), pv.lex, show))
					rep.deny = &d
					return rep
				}
				if r := st.matchPath(st.ask, tool, pv); r != nil {
					rep.found.note(&finding{rule: r, reason: fmt.Sprintf("%s requires approval for %s, which %s names", r.rule.describe(), pv.lex, show)})
				}
			}
		}
	}
	// Removing a directory removes what it holds: a rule about anything
	// under it applies.
	for _, w := range eff.Deletes {
		for _, ref := range st.wordRefs(w, sc) {
			pv := view(ref.raw, st.follow)
			if r := st.matchUnder(st.deny, "Edit", pv); r != nil {
				d := denyBy(r, fmt.Sprintf("%s denies removing %s (%s)", r.rule.describe(), pv.lex, show))
				rep.deny = &d
				return rep
			}
			if r := st.matchUnder(st.ask, "Edit", pv); r != nil {
				rep.found.note(&finding{rule: r, reason: fmt.Sprintf("%s requires approval for removing %s (%s)", r.rule.describe(), pv.lex, show)})
			}
		}
	}
	// A second name for a file writes it when the name is written.
	for _, w := range eff.HardLinks {
		for _, ref := range st.wordRefs(w, sc) {
			pv := view(ref.raw, st.follow)
			if r := st.matchPath(st.deny, "Edit", pv); r != nil {
				d := denyBy(r, fmt.Sprintf("%s denies writing %s, which %s gives another name", r.rule.describe(), pv.lex, show))
				rep.deny = &d
				return rep
			}
			if protectedPath(pv.lex) || protectedPath(pv.real) {
				rep.soft = fmt.Sprintf("%s gives %s, which configures git, MCP servers or permissions, another name", show, pv.lex)
			}
		}
	}
	// Trees it descends into.
	for _, w := range eff.Walks {
		refs, ok := st.walkRoots(w.Root, sc)
		if !ok {
			if w.Content {
				if r := hasPathRules(st.deny, "Read"); r != nil {
					rep.found.note(&finding{r, fmt.Sprintf("%s reads a tree only known at run time, which %s might cover", show, r.rule.describe()), true})
				}
			}
			continue
		}
		for _, root := range refs {
			st.checkWalk(root, w, show, &rep)
		}
	}
	return rep
}

// checkWalk looks into a tree a command descends into: a content reader
// meeting a file a deny rule covers might deny; one that follows links out
// of the working directories needs approval.
func (st *state) checkWalk(root pathView, w shellcmd.Walk, show string, rep *fileReport) {
	denyMayMatch := w.Content && st.matchUnder(st.deny, "Read", root) != nil
	if !denyMayMatch && !w.Follow {
		return
	}
	found := st.walkTree(root, w, &st.budget)
	if denyMayMatch {
		switch {
		case found.denied != "":
			r := found.deniedRule
			rep.found.note(&finding{r, fmt.Sprintf("%s would read %s, which %s denies", show, found.denied, r.rule.describe()), true})
		case found.incomplete:
			r := st.matchUnder(st.deny, "Read", root)
			rep.found.note(&finding{r, fmt.Sprintf("%s reads the tree %s, where %s might cover files the checker could not look through", show, root.lex, r.rule.describe()), true})
		}
	}
	if w.Follow && rep.soft == "" {
		switch {
		case found.outside != "":
			rep.soft = fmt.Sprintf("%s follows the symbolic link %s out of the working directories", show, found.outside)
		case found.incomplete:
			rep.soft = fmt.Sprintf("%s follows symbolic links under %s, too many to check", show, root.lex)
		}
	}
}

// pathRules resolves the paths a command writes or reads and applies the
// deny and ask rules of tool (Edit or Read) to them, noting findings in
// found.
func (st *state) pathRules(ws []shellcmd.Word, sc *shellcmd.Command, tool, verb, show string, found *findings) (views []pathView, unknown bool, deny *Decision) {
	for _, w := range ws {
		if w.Found {
			continue // checked by the walk of the command that finds it
		}
		refs, ok := st.paths(w, sc)
		if !ok {
			unknown = true
			if r := hasPathRules(st.deny, tool); r != nil {
				found.note(&finding{r, fmt.Sprintf("%s is %s a path only known at run time, which %s might deny", show, verb, r.rule.describe()), true})
			}
			continue
		}
		for _, ref := range refs {
			p := filepath.Clean(ref.raw)
			if tool == "Edit" && shellcmd.HarmlessWrite(p) || tool == "Read" && shellcmd.HarmlessRead(p) {
				continue
			}
			pv := view(ref.raw, st.follow)
			if ref.under {
				// A glob that could not be expanded: anything under pv.
				if r := st.matchUnder(st.deny, tool, pv); r != nil {
					found.note(&finding{r, fmt.Sprintf("%s is %s files under %s that %s might deny", show, verb, pv.lex, r.rule.describe()), true})
				}
			} else if r := st.matchPath(st.deny, tool, pv); r != nil {
				d := denyBy(r, fmt.Sprintf("%s denies %s %s (%s)", r.rule.describe(), verb, pv.lex, show))
				return nil, false, &d
			}
			if r, other, complete := st.hardLinkDenied(pv, tool, &st.budget); r != nil {
				d := denyBy(r, fmt.Sprintf("%s denies %s %s, another name of %s (%s)", r.rule.describe(), verb, pv.lex, other, show))
				return nil, false, &d
			} else if !complete {
				if r := hasPathRules(st.deny, tool); r != nil {
					found.note(&finding{r, fmt.Sprintf("%s is %s %s, which has other names the checker could not all find", show, verb, pv.lex), true})
				}
			}
			if tool == "Read" {
				if prog := st.programAt(pv.real); prog != nil {
					for _, r := range st.deny {
						if r.cmd != nil && r.cmd.match(prog.name) {
							found.note(&finding{r, fmt.Sprintf("%s reads %s, the program %s denies: a copy would run it under another name", show, prog.path, r.rule.describe()), true})
							break
						}
					}
				}
			}
			if r := st.matchPath(st.ask, tool, pv); r != nil {
				found.note(&finding{rule: r, reason: fmt.Sprintf("%s requires approval for %s %s (%s)", r.rule.describe(), verb, pv.lex, show)})
			}
			views = append(views, pv)
		}
	}
	return views, unknown, nil
}

// matchRun applies the Bash deny and ask rules to the commands a simple
// command runs.
func (st *state) matchRun(t *shellcmd.Targets, show string) (*Decision, findings) {
	var found findings
	for _, cmd := range t.Cmds {
		rendered := renderWords(cmd)
		unknown := strings.Contains(rendered, shellcmd.RunTime)
		for _, r := range st.deny {
			if r.cmd == nil {
				continue
			}
			if r.cmd.match(rendered) {
				d := denyBy(r, fmt.Sprintf("%s denies %s", r.rule.describe(), show))
				return &d, found
			}
			if unknown && r.cmd.mayMatch(rendered) {
				found.note(&finding{r, fmt.Sprintf("%s might match %s: part of it is only known at run time", show, r.rule.describe()), true})
			}
		}
		for _, r := range st.ask {
			if r.cmd != nil && (r.cmd.match(rendered) || unknown && r.cmd.mayMatch(rendered)) {
				found.note(&finding{rule: r, reason: fmt.Sprintf("%s requires approval for %s", r.rule.describe(), show)})
			}
		}
	}
	for _, raw := range t.Raws {
		if r := rawMatch(st.deny, raw); r != nil {
			d := denyBy(r, fmt.Sprintf("%s denies %s", r.rule.describe(), show))
			return &d, found
		}
		if r := rawMatch(st.ask, raw); r != nil {
			found.note(&finding{rule: r, reason: fmt.Sprintf("%s requires approval for %s", r.rule.describe(), show)})
		}
	}
	if t.Unknown {
		found.note(st.opaqueFinding(show, "runs a command only known at run time"))
	}
	return nil, found
}

// allowRule returns the allow rule that vouches for a command through any
// of its harmless-wrapper layers.
func (st *state) allowRule(layers [][]shellcmd.Word) *compiledRule {
	for _, layer := range layers {
		if len(layer) == 0 {
			continue
		}
		name, ok := layer[0].Lit()
		if !ok {
			continue
		}
		rendered := renderWords(layer)
		for _, r := range st.allow {
			if r.cmd != nil && r.cmd.vouches(name, rendered) {
				return r
			}
		}
	}
	return nil
}

// vouches reports whether an allow pattern vouches for the command named
// name, rendered: it matches, and a command that runs others (sudo, sh,
// xargs…) is vouched for only by a pattern that names it — `Bash(* --help)`
// must not vouch for `sudo rm -rf / --help`.
func (p *cmdPattern) vouches(name, rendered string) bool {
	return p.match(rendered) && (!shellcmd.RunsOthers(shellcmd.BaseName(name)) || strings.HasPrefix(p.firstLiteral(), name))
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
		if base := shellcmd.BaseName(strings.Trim(fields[0], `"'\`)); base != fields[0] {
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
