package shellcmd

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"mvdan.cc/sh/v3/expand"
	"mvdan.cc/sh/v3/syntax"
)

const (
	// maxCmds bounds the simple commands analysed in one call.
	maxCmds = 256
	// maxBraceWords bounds the words one brace expansion may produce.
	maxBraceWords = 256
	// maxDirs bounds the directories tracked through cd commands.
	maxDirs = 16
)

// Command is one simple command of a shell command line, with what the
// line around it tells: the variables set for it, its redirections, and
// the directories earlier cd commands may have moved it to.
type Command struct {
	// Args are the words, after brace expansion; empty for a statement
	// that only assigns variables or redirects.
	Args []Word
	// Assigns are the names assigned before the command (FOO=1 cmd), or by
	// a statement that only assigns (FOO=1).
	Assigns []string
	// Decl: a declare/export/local/readonly/typeset/nameref clause; Args
	// start with the keyword.
	Decl bool
	// Redirs are the command's (or its compound statement's) redirections.
	Redirs []Redir
	// Stdin is the here-document or here-string the command reads.
	Stdin *Word
	// Src is the command's source text, to show it.
	Src string
	// Dirs are the directories the command may run in after cd commands
	// earlier on the line: "" is the line's own directory, others are
	// relative to it, absolute, or "~/…". DirsUnknown: a cd went somewhere
	// only known at run time.
	Dirs        []string
	DirsUnknown bool
}

// Name returns the command name and whether it is known exactly.
func (c *Command) Name() (string, bool) {
	if len(c.Args) == 0 {
		return "", false
	}
	return c.Args[0].Lit()
}

// Redir is one redirection.
type Redir struct {
	Target Word
	Write  bool // the target is a file written
	Read   bool // the target is a file read
}

// Line is a shell command line broken into simple commands.
type Line struct {
	// Commands are every simple command the line may run, in order.
	Commands []*Command
	// Problems are constructs that make the line do more than its commands
	// say (a function that may shadow a name, a variable set for the rest
	// of the line, arithmetic that evaluates a value, a construct the
	// analysis does not know): nothing vouches for such a line, though what
	// its commands show still counts against it.
	Problems []string
	// Opaque are constructs that change what later words of the line run
	// or name (PATH=…, HOME=…, shopt …): the commands after them may run
	// other programs or name other files than their words say.
	Opaque []string
	// Err is set when the line does not parse; Commands is then empty.
	Err error
}

// Parse parses src (bash dialect) and collects every simple command it
// may run, including those inside substitutions, loops, conditionals,
// function bodies and here-documents.
func Parse(src string) *Line {
	out := &Line{}
	if strings.IndexByte(src, 0) >= 0 {
		out.Err = errors.New("NUL byte in the command")
		return out
	}
	f, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(src), "")
	if err != nil {
		out.Err = err
		return out
	}
	// Count the command nodes first: if the walk below misses one (a
	// construct it does not know), the line cannot be vouched for.
	want := 0
	syntax.Walk(f, func(n syntax.Node) bool {
		if _, ok := n.(syntax.Command); ok {
			want++
		}
		return true
	})
	a := &analyzer{src: src, out: out, dirs: []string{""}}
	a.stmts(f.Stmts)
	if a.seen != want && len(out.Commands) < maxCmds {
		a.problem("uses a shell construct the permission checker does not know")
	}
	return out
}

type analyzer struct {
	src         string
	out         *Line
	seen        int // command nodes walked
	dirs        []string
	dirsUnknown bool
	// loops are the values of the for-loop variables in scope that their
	// loop body does not change: `for f in src/*.go; do cat "$f"; done`
	// reads what the glob expands to.
	loops map[string][]Word
}

func (a *analyzer) problem(format string, args ...any) {
	p := fmt.Sprintf(format, args...)
	for _, q := range a.out.Problems {
		if q == p {
			return
		}
	}
	a.out.Problems = append(a.out.Problems, p)
}

func (a *analyzer) stmts(ss []*syntax.Stmt) {
	for _, s := range ss {
		a.stmt(s)
	}
}

func (a *analyzer) stmt(s *syntax.Stmt) {
	if s == nil {
		return
	}
	if call, ok := s.Cmd.(*syntax.CallExpr); ok {
		a.call(call, s)
		return
	}
	if s.Cmd != nil {
		a.command(s.Cmd)
	}
	if len(s.Redirs) > 0 {
		// Redirections of a compound command, or a bare "> file".
		a.record(&Command{Redirs: a.redirs(s.Redirs), Src: a.text(s)})
	}
}

// command walks a compound command.
func (a *analyzer) command(cmd syntax.Command) {
	a.seen++
	switch c := cmd.(type) {
	case *syntax.Block:
		a.stmts(c.Stmts)
	case *syntax.Subshell:
		a.stmts(c.Stmts)
	case *syntax.BinaryCmd:
		a.stmt(c.X)
		a.stmt(c.Y)
	case *syntax.IfClause:
		for ; c != nil; c = c.Else {
			a.stmts(c.Cond)
			a.stmts(c.Then)
		}
	case *syntax.WhileClause:
		a.stmts(c.Cond)
		a.stmts(c.Do)
	case *syntax.ForClause:
		switch l := c.Loop.(type) {
		case *syntax.WordIter:
			a.assignName(l.Name.Value)
			for _, w := range l.Items {
				a.nested(w)
			}
			if l.InPos.IsValid() && !reassigns(c.Do, l.Name.Value) {
				var values []Word
				for _, w := range l.Items {
					values = append(values, expandWord(w)...)
				}
				saved, had := a.loops[l.Name.Value]
				if a.loops == nil {
					a.loops = map[string][]Word{}
				}
				a.loops[l.Name.Value] = values
				a.stmts(c.Do)
				if had {
					a.loops[l.Name.Value] = saved
				} else {
					delete(a.loops, l.Name.Value)
				}
				return
			}
		case *syntax.CStyleLoop:
			for _, x := range []syntax.ArithmExpr{l.Init, l.Cond, l.Post} {
				if x != nil {
					a.arith(x)
					a.nested(x)
				}
			}
		}
		a.stmts(c.Do)
	case *syntax.CaseClause:
		a.nested(c.Word)
		for _, item := range c.Items {
			for _, p := range item.Patterns {
				a.nested(p)
			}
			a.stmts(item.Stmts)
		}
	case *syntax.FuncDecl:
		// A function may shadow any command name later on the line.
		a.problem("defines a shell function")
		a.stmt(c.Body)
	case *syntax.ArithmCmd:
		a.arith(c.X)
		a.nested(c.X)
	case *syntax.LetClause:
		for _, x := range c.Exprs {
			a.arith(x)
			a.nested(x)
		}
	case *syntax.TestClause:
		a.nested(c.X)
	case *syntax.DeclClause:
		a.decl(c)
	case *syntax.TimeClause:
		a.stmt(c.Stmt)
	case *syntax.CoprocClause:
		if c.Name != nil {
			a.nested(c.Name)
		}
		a.stmt(c.Stmt)
	default:
		a.problem("uses a shell construct the permission checker does not know")
	}
}

// call records a simple command.
func (a *analyzer) call(c *syntax.CallExpr, s *syntax.Stmt) {
	a.seen++
	sc := &Command{Src: a.text(s)}
	for _, as := range c.Assigns {
		a.assign(as)
		if as.Name != nil {
			sc.Assigns = append(sc.Assigns, as.Name.Value)
			a.resolution(as.Name.Value)
		}
	}
	for _, w := range c.Args {
		a.nested(w)
	}
	sc.Redirs = a.redirs(s.Redirs)
	sc.Stdin = hereInput(s.Redirs)
	for _, w := range c.Args {
		ws := expandWord(w)
		if name := paramRef(w); name != "" && len(ws) == 1 {
			if values, ok := a.loops[name]; ok {
				ws[0].Values = values
			}
		}
		sc.Args = append(sc.Args, ws...)
	}
	if name, ok := sc.Name(); ok && (name == "shopt" || name == "setopt" || name == "unsetopt") && len(sc.Args) > 1 {
		// dotglob, globstar, extglob, expand_aliases…
		p := "changes shell options (`" + name + "`), which decide what later globs and names mean"
		if !slices.Contains(a.out.Opaque, p) {
			a.out.Opaque = append(a.out.Opaque, p)
		}
	}
	for _, w := range sc.Args {
		if w.Unsafe != "" {
			a.problem("%s", w.Unsafe)
		}
	}
	if len(sc.Args) == 0 {
		// Only assignments: they change the shell for what follows.
		for _, name := range sc.Assigns {
			a.assignName(name)
		}
	}
	a.record(sc)
	a.trackCd(sc)
}

// decl records a declare-like clause as a command named by its keyword.
func (a *analyzer) decl(c *syntax.DeclClause) {
	sc := &Command{Decl: true, Args: []Word{plainWord(c.Variant.Value)}}
	sc.Src = a.slice(c.Pos(), c.End())
	for _, as := range c.Args {
		a.assign(as)
		if as.Name != nil && !as.Naked {
			a.resolution(as.Name.Value)
		}
		switch {
		case as.Naked && as.Name != nil:
			sc.Args = append(sc.Args, plainWord(as.Name.Value))
		case as.Naked && as.Value != nil:
			sc.Args = append(sc.Args, convertWord(as.Value))
		case as.Name != nil:
			v := Word{}
			if as.Value != nil {
				v = convertWord(as.Value)
			}
			if as.Array != nil || as.Index != nil {
				v.Dynamic, v.Text = true, v.Text+RunTime
			}
			op := "="
			if as.Append {
				op = "+="
			}
			v.Text = as.Name.Value + op + v.Text
			sc.Args = append(sc.Args, v)
		}
	}
	a.record(sc)
}

func (a *analyzer) record(sc *Command) {
	if len(a.out.Commands) >= maxCmds {
		a.problem("has too many commands to check")
		return
	}
	sc.Dirs = append([]string(nil), a.dirs...)
	sc.DirsUnknown = a.dirsUnknown
	a.out.Commands = append(a.out.Commands, sc)
}

// assign walks an assignment's value and index.
func (a *analyzer) assign(as *syntax.Assign) {
	if as.Value != nil {
		a.nested(as.Value)
	}
	if as.Index != nil {
		a.arith(as.Index)
		a.nested(as.Index)
	}
	if as.Array != nil {
		for _, e := range as.Array.Elems {
			if e.Index != nil {
				a.arith(e.Index)
				a.nested(e.Index)
			}
			if e.Value != nil {
				a.nested(e.Value)
			}
		}
	}
}

// assignName notes a variable the line sets for the rest of the shell's
// life: only harmless names keep the line allowable.
func (a *analyzer) assignName(name string) {
	if !harmlessVar(name) {
		a.problem("sets the shell variable %s", name)
	}
	a.resolution(name)
}

// resolution notes an assignment to a variable that changes which program
// a command name runs, which file a path names, what a glob matches or
// what code a program loads.
func (a *analyzer) resolution(name string) {
	if !resolutionVar(name) {
		return
	}
	p := "sets " + name + ", which changes what later commands run or which files they name"
	if !slices.Contains(a.out.Opaque, p) {
		a.out.Opaque = append(a.out.Opaque, p)
	}
}

// nested walks a word or expression for the commands inside substitutions
// and for variables assigned by expansions.
func (a *analyzer) nested(n syntax.Node) {
	syntax.Walk(n, func(n syntax.Node) bool {
		switch n := n.(type) {
		case *syntax.CmdSubst:
			a.stmts(n.Stmts)
			return false
		case *syntax.ProcSubst:
			a.stmts(n.Stmts)
			return false
		case *syntax.ParamExp:
			if n.Exp != nil && (n.Exp.Op == syntax.AssignUnset || n.Exp.Op == syntax.AssignUnsetOrNull) && n.Param != nil {
				a.assignName(n.Param.Value)
			}
			a.paramExp(n)
		case *syntax.ArithmExp:
			a.arith(n.X)
		case *syntax.ExtGlob:
			a.problem("uses an extended glob (a glob qualifier able to run code in zsh)")
		case *syntax.Word:
			if zshExpansion(n.Parts) {
				a.problem("uses a zsh expansion ($~, $=, $^ or $+)")
			}
		case *syntax.DblQuoted:
			if zshExpansion(n.Parts) {
				a.problem("uses a zsh expansion ($~, $=, $^ or $+)")
			}
		case *syntax.BinaryTest:
			switch n.Op {
			case syntax.TsEql, syntax.TsNeq, syntax.TsLeq, syntax.TsGeq, syntax.TsLss, syntax.TsGtr:
				// [[ a -eq b ]] evaluates both sides as arithmetic.
				for _, x := range []syntax.TestExpr{n.X, n.Y} {
					if w, ok := x.(*syntax.Word); !ok || !numericWord(w) {
						a.problem(evalProblem)
					}
				}
			}
		case *syntax.UnaryTest:
			if n.Op == syntax.TsVarSet || n.Op == syntax.TsRefVar {
				// -v a[i] evaluates the subscript i.
				if w, ok := n.X.(*syntax.Word); !ok || strings.ContainsAny(w.Lit(), "[") || w.Lit() == "" {
					a.problem(evalProblem)
				}
			}
		case *syntax.BinaryArithm:
			if isArithAssign(n.Op) {
				a.assignName(arithName(n.X))
			}
		case *syntax.UnaryArithm:
			if n.Op == syntax.Inc || n.Op == syntax.Dec {
				a.assignName(arithName(n.X))
			}
		}
		return true
	})
}

// redirs classifies redirections and walks their words and here-documents.
func (a *analyzer) redirs(rs []*syntax.Redirect) []Redir {
	var out []Redir
	for _, r := range rs {
		if r.Word != nil {
			a.nested(r.Word)
		}
		if r.Hdoc != nil {
			a.nested(r.Hdoc)
		}
		if r.N != nil && strings.HasPrefix(r.N.Value, "{") {
			// {name}>file stores a descriptor number in a variable.
			a.assignName(strings.Trim(r.N.Value, "{}"))
		}
		if r.Word == nil {
			continue
		}
		t := convertWord(r.Word)
		if t.Unsafe != "" {
			a.problem("%s", t.Unsafe)
		}
		if strings.HasPrefix(t.Text, "!") || strings.HasPrefix(t.Text, "|") {
			// zsh's >! and >>| clobbering forms: the file is the next word.
			t = Word{Text: RunTime, Dynamic: true}
		}
		switch r.Op {
		case syntax.Hdoc, syntax.DashHdoc, syntax.WordHdoc:
			continue
		case syntax.RdrIn:
			out = append(out, Redir{Target: t, Read: true})
		case syntax.DplIn, syntax.DplOut:
			if isFdTarget(t) {
				continue
			}
			out = append(out, Redir{Target: t, Write: r.Op == syntax.DplOut, Read: r.Op == syntax.DplIn})
		case syntax.RdrInOut:
			out = append(out, Redir{Target: t, Write: true, Read: true})
		default: // > >> >| &> &>> and zsh's clobbering forms
			out = append(out, Redir{Target: t, Write: true})
		}
	}
	return out
}

// zshExpansion reports whether literal parts hold an unescaped $~, $=,
// $^ or $+, which bash leaves alone but zsh expands. The parser may split
// the '$' and what follows into separate literals.
func zshExpansion(parts []syntax.WordPart) bool {
	var v strings.Builder
	for _, p := range parts {
		if lit, ok := p.(*syntax.Lit); ok {
			v.WriteString(lit.Value)
		} else {
			v.WriteByte(0)
		}
	}
	s := v.String()
	for i := 0; i+1 < len(s); i++ {
		switch s[i] {
		case '\\':
			i++
		case '$':
			if strings.IndexByte("~=^+", s[i+1]) >= 0 {
				return true
			}
		}
	}
	return false
}

// hereInput returns the text of the last here-document or here-string.
func hereInput(rs []*syntax.Redirect) *Word {
	var in *Word
	for _, r := range rs {
		switch r.Op {
		case syntax.Hdoc, syntax.DashHdoc:
			w := hereDoc(r)
			in = &w
		case syntax.WordHdoc:
			if r.Word != nil {
				w := convertWord(r.Word)
				in = &w
			}
		case syntax.RdrIn, syntax.DplIn, syntax.RdrInOut:
			in = nil
		}
	}
	return in
}

// hereDoc returns a here-document's text: literal when its delimiter is
// quoted, else with $ ` \ escapes and with its expansions unknown.
func hereDoc(r *syntax.Redirect) Word {
	var out Word
	if r.Hdoc == nil {
		return out
	}
	quoted := false
	if r.Word != nil {
		for _, p := range r.Word.Parts {
			if lit, ok := p.(*syntax.Lit); !ok || strings.Contains(lit.Value, `\`) {
				quoted = true
			}
		}
	}
	var b strings.Builder
	for _, p := range r.Hdoc.Parts {
		lit, ok := p.(*syntax.Lit)
		switch {
		case ok && quoted:
			b.WriteString(lit.Value)
		case ok:
			v := lit.Value
			for i := 0; i < len(v); i++ {
				if v[i] == '\\' && i+1 < len(v) && strings.IndexByte("$`\\\n", v[i+1]) >= 0 {
					i++
					if v[i] == '\n' {
						continue
					}
				}
				b.WriteByte(v[i])
			}
		default:
			out.Dynamic = true
			b.WriteString(RunTime)
		}
	}
	out.Text = b.String()
	return out
}

// isFdTarget reports whether a >& or <& target is a descriptor or "-".
func isFdTarget(t Word) bool {
	s, ok := t.Lit()
	if !ok || s == "" {
		return false
	}
	if s == "-" {
		return true
	}
	s = strings.TrimSuffix(s, "-") // n>&m- moves a descriptor
	return strings.Trim(s, "0123456789") == ""
}

// trackCd follows cd, pushd and popd, so that later relative paths are
// resolved against every directory the line may have moved to.
func (a *analyzer) trackCd(sc *Command) {
	name, ok := sc.Name()
	if !ok || name != "cd" && name != "pushd" {
		return
	}
	target, known := cdTarget(sc.Args[1:])
	if !known {
		a.dirsUnknown = true
		return
	}
	next := a.dirs
	for _, d := range a.dirs {
		j := joinDir(d, target)
		if !slices.Contains(next, j) {
			next = append(next, j)
		}
	}
	if len(next) > maxDirs {
		a.dirsUnknown = true
		return
	}
	a.dirs = next
}

// cdTarget returns the directory a cd/pushd goes to, as written.
func cdTarget(args []Word) (string, bool) {
	for i, w := range args {
		s, ok := w.Lit()
		if !ok {
			return "", false
		}
		switch {
		case s == "--":
			if i+1 < len(args) {
				return wordDir(args[i+1])
			}
			return "~", true
		case s == "-" || strings.HasPrefix(s, "+") || strings.HasPrefix(s, "-") && len(s) > 1 && strings.Trim(s[1:], "LPe@") != "":
			return "", false // cd -, pushd +N, unknown options
		case strings.HasPrefix(s, "-") && len(s) > 1:
			continue // -L -P -e -@
		}
		return wordDir(w)
	}
	return "~", true // cd alone goes home
}

func wordDir(w Word) (string, bool) {
	s, ok := w.Lit()
	if !ok {
		return "", false
	}
	if w.Tilde {
		return s, true
	}
	if strings.HasPrefix(s, "~") {
		return "", false
	}
	return s, true
}

// joinDir joins a cd target to a directory expression.
func joinDir(dir, target string) string {
	if dir == "" || strings.HasPrefix(target, "/") || target == "~" || strings.HasPrefix(target, "~/") {
		return target
	}
	return dir + "/" + target
}

// text returns a statement's source, without its terminator.
func (a *analyzer) text(s *syntax.Stmt) string {
	end := s.Pos()
	if s.Cmd != nil {
		end = s.Cmd.End()
	}
	for _, r := range s.Redirs {
		if e := r.End(); e.After(end) {
			end = e
		}
	}
	return strings.TrimSpace(a.slice(s.Pos(), end))
}

func (a *analyzer) slice(from, to syntax.Pos) string {
	i, j := int(from.Offset()), int(to.Offset())
	if i < 0 || j > len(a.src) || i > j {
		return ""
	}
	return a.src[i:j]
}

// expandWord converts a parsed word, performing brace expansion the way
// bash would before anything else.
func expandWord(w *syntax.Word) []Word {
	if !syntax.SplitBraces(w) {
		return []Word{convertWord(w)}
	}
	var out []Word
	for ew, err := range expand.BracesSeq(nil, w) {
		if err != nil || len(out) >= maxBraceWords {
			return []Word{{Text: RunTime, Dynamic: true}}
		}
		out = append(out, convertWord(ew))
	}
	return out
}

// evalProblem is the problem of a line that evaluates a variable's value
// as an arithmetic expression: bash then runs any $(…) in an array
// subscript inside that value, e.g. x='a[$(rm -rf ~)]'; echo $((x)).
const evalProblem = "evaluates a variable as arithmetic, which can run commands hidden in its value"

// arith notes an arithmetic expression that reads variables.
func (a *analyzer) arith(x syntax.ArithmExpr) {
	if !arithSafe(x) {
		a.problem(evalProblem)
	}
}

// paramExp notes parameter expansions that evaluate a value: indirection
// ${!x}, subscripts and offsets, and prompt expansion ${x@P}.
func (a *analyzer) paramExp(p *syntax.ParamExp) {
	if p.Excl && p.Names == 0 && !allIndex(p.Index) {
		a.problem(evalProblem)
	}
	if p.Index != nil && !allIndex(p.Index) {
		a.arith(p.Index)
	}
	if p.Slice != nil {
		for _, x := range []syntax.ArithmExpr{p.Slice.Offset, p.Slice.Length} {
			if x != nil {
				a.arith(x)
			}
		}
	}
	if p.Exp != nil && p.Exp.Op == syntax.OtherParamOps && p.Exp.Word != nil && strings.ContainsAny(p.Exp.Word.Lit(), "PAK") {
		a.problem("uses prompt or declaration expansion, which can run commands")
	}
}

// allIndex reports whether an index is @ or *: all elements.
func allIndex(x syntax.ArithmExpr) bool {
	w, ok := x.(*syntax.Word)
	return ok && (w.Lit() == "@" || w.Lit() == "*")
}

// arithSafe reports whether an arithmetic expression has only numbers as
// operands (and ${#x} lengths), so no variable's value is evaluated.
func arithSafe(x syntax.ArithmExpr) bool {
	switch x := x.(type) {
	case nil:
		return true
	case *syntax.BinaryArithm:
		return arithSafe(x.X) && arithSafe(x.Y)
	case *syntax.UnaryArithm:
		return arithSafe(x.X)
	case *syntax.ParenArithm:
		return arithSafe(x.X)
	case *syntax.Word:
		return numericWord(x)
	}
	return false
}

// numericWord reports whether a word is a number literal, a length ${#x},
// or a safe arithmetic expansion.
func numericWord(w *syntax.Word) bool {
	if len(w.Parts) != 1 {
		return false
	}
	switch p := w.Parts[0].(type) {
	case *syntax.Lit:
		return isNumber(p.Value)
	case *syntax.ParamExp:
		return p.Length && p.Index == nil && !p.Excl
	case *syntax.ArithmExp:
		return arithSafe(p.X)
	}
	return false
}

// isNumber reports whether s is an integer constant as bash reads one:
// decimal, 0x hex, octal, or base#digits.
func isNumber(s string) bool {
	if s == "" {
		return false
	}
	if base, digits, ok := strings.Cut(s, "#"); ok {
		return base != "" && strings.Trim(base, "0123456789") == "" && digits != "" &&
			strings.Trim(digits, "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ@_") == ""
	}
	if strings.HasPrefix(s, "0x") || strings.HasPrefix(s, "0X") {
		return len(s) > 2 && strings.Trim(s[2:], "0123456789abcdefABCDEF") == ""
	}
	return strings.Trim(s, "0123456789") == ""
}

func isArithAssign(op syntax.BinAritOperator) bool {
	switch op {
	case syntax.Assgn, syntax.AddAssgn, syntax.SubAssgn, syntax.MulAssgn, syntax.QuoAssgn,
		syntax.RemAssgn, syntax.AndAssgn, syntax.OrAssgn, syntax.XorAssgn, syntax.ShlAssgn,
		syntax.ShrAssgn, syntax.AndBoolAssgn, syntax.OrBoolAssgn, syntax.XorBoolAssgn, syntax.PowAssgn:
		return true
	}
	return false
}

// arithName returns the variable an arithmetic assignment targets, or ""
// when it cannot be told.
func arithName(x syntax.ArithmExpr) string {
	w, ok := x.(*syntax.Word)
	if !ok || len(w.Parts) != 1 {
		return ""
	}
	switch p := w.Parts[0].(type) {
	case *syntax.Lit:
		return p.Value
	case *syntax.ParamExp:
		if p.Param != nil {
			return p.Param.Value
		}
	}
	return ""
}

// paramRef returns the variable a word is exactly ($x, ${x}, "$x"), or "".
func paramRef(w *syntax.Word) string {
	if len(w.Parts) != 1 {
		return ""
	}
	part := w.Parts[0]
	if dq, ok := part.(*syntax.DblQuoted); ok {
		if len(dq.Parts) != 1 {
			return ""
		}
		part = dq.Parts[0]
	}
	p, ok := part.(*syntax.ParamExp)
	if !ok || p.Param == nil || p.Exp != nil || p.Index != nil || p.Slice != nil || p.Repl != nil ||
		p.Length || p.Width || p.Excl || p.Names != 0 || p.IsSet {
		return ""
	}
	return p.Param.Value
}

// reassigns reports whether the statements may change the variable name:
// an assignment, a command that sets variables (read, declare, printf -v,
// unset…), or an expansion that assigns.
func reassigns(stmts []*syntax.Stmt, name string) bool {
	found := false
	for _, st := range stmts {
		syntax.Walk(st, func(n syntax.Node) bool {
			switch n := n.(type) {
			case *syntax.Assign:
				if n.Name != nil && n.Name.Value == name {
					found = true
				}
			case *syntax.CallExpr:
				if len(n.Args) > 0 {
					switch n.Args[0].Lit() {
					case "read", "mapfile", "readarray", "getopts", "printf", "declare", "typeset", "local",
						"export", "readonly", "unset", "eval", "source", ".", "let":
						found = true
					}
				}
			case *syntax.DeclClause, *syntax.LetClause, *syntax.ArithmCmd, *syntax.ArithmExp:
				found = true
			case *syntax.ParamExp:
				if n.Exp != nil && (n.Exp.Op == syntax.AssignUnset || n.Exp.Op == syntax.AssignUnsetOrNull) {
					found = true
				}
			case *syntax.ForClause:
				if wi, ok := n.Loop.(*syntax.WordIter); ok && wi.Name.Value == name {
					found = true
				}
			}
			return !found
		})
	}
	return found
}
