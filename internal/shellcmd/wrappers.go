package shellcmd

import (
	"bufio"
	"bytes"
	"io"
	"path"
	"slices"
	"strings"
)

// maxDepth bounds nested shell strings (sh -c "sh -c '…'").
const maxDepth = 4

// maxTargets bounds the commands collected from one simple command.
const maxTargets = 64

// Targets are the commands a simple command may run: the command itself,
// what its wrappers run (sudo, env, xargs, find -exec, …), and the
// commands of shell strings and script files it hands to a shell (sh -c,
// eval, su -c, watch, alias, trap, source f, bash f, ./f).
type Targets struct {
	// Cmds are the argument lists it runs, each under every name its
	// program goes by: as written, by its base name (/bin/rm as rm), and
	// by the Resolver's alias.
	Cmds [][]Word
	// Wrapped are the argument lists wrappers run (sudo X, xargs X…),
	// which do to files what the command would do on its own.
	Wrapped []Wrapped
	// Nested are the simple commands of the shell strings and scripts it
	// runs, with directories relative to the command's.
	Nested []*Command
	// Raws are shell strings that did not parse, known only by their text.
	Raws []string
	// Unknown: a wrapper runs something that cannot be made out (a
	// dynamic word where the command should be, a shell reading a script
	// from a pipe).
	Unknown bool
	// Opaque says why a script it runs cannot be read.
	Opaque string
}

// Wrapped is a command a wrapper runs, at the simple command (of the line
// or of a shell string) whose directories it runs in.
type Wrapped struct {
	Args []Word
	At   *Command
}

// Resolver answers what the words of a command line cannot tell: what is
// in the script files it runs and which programs its command names run.
type Resolver interface {
	// Script returns the text of the shell script w names, run by the
	// command at (as `source w`, `bash w`, or the program w when shebang is
	// set, which runs in a shell only when its #! line names one, see
	// IsShellScript). ran is false when no such script runs (it does not
	// exist, or is not a shell script); opaque says why what runs cannot be
	// told.
	Script(w Word, at *Command, shebang bool) (src string, ran bool, opaque string)
	// Alias returns the name of a program of interest that the command name
	// runs at the command at under another name (a copy or link of it), or
	// "".
	Alias(name string, at *Command) string
}

// Targets collects what the simple command may run, reading scripts and
// naming programs through r.
func (sc *Command) Targets(r Resolver) *Targets {
	t := &collector{Targets: &Targets{}, r: r}
	t.add(sc.Args, 0, sc)
	return t.Targets
}

// collector gathers Targets, asking r what the words cannot tell.
type collector struct {
	*Targets
	r Resolver
}

// add collects args, run at the simple command at.
func (t *collector) add(args []Word, depth int, at *Command) {
	if len(args) == 0 || len(t.Cmds) >= maxTargets {
		return
	}
	t.Cmds = append(t.Cmds, args)
	name, ok := args[0].Lit()
	if !ok {
		t.Unknown = true
		return
	}
	if base := BaseName(name); base != name && base != "" {
		// A path to the binary (/bin/rm, ./rm, zsh's =rm) runs the
		// program known by its base name.
		t.Cmds = append(t.Cmds, append([]Word{plainWord(base)}, args[1:]...))
	}
	if alias := t.r.Alias(name, at); alias != "" {
		// A copy or link of a program of interest under another name.
		t.Cmds = append(t.Cmds, append([]Word{plainWord(alias)}, args[1:]...))
	}
	inner, scripts, unknown := unwrap(args)
	if unknown {
		t.Unknown = true
	}
	base := BaseName(name)
	if isShell(base) {
		if _, found, ok := shellCommandString(args[1:]); ok && !found {
			if file, isFile := shellScriptFile(args[1:]); isFile {
				t.file(file, depth, false, at)
			} else if at.Stdin != nil {
				// The shell reads its commands from standard input.
				scripts = append(scripts, *at.Stdin)
			} else {
				t.Unknown = true
			}
		}
	}
	switch {
	case base == "source" || base == ".":
		if len(args) > 1 {
			t.file(args[1], depth, false, at)
		}
	case strings.Contains(name, "/"):
		t.file(args[0], depth, true, at)
	}
	for _, in := range inner {
		t.Wrapped = append(t.Wrapped, Wrapped{Args: in, At: at})
		t.add(in, depth, at)
	}
	for _, s := range scripts {
		t.script(s, depth+1, at)
	}
}

// file adds the commands of a script file run at the simple command at.
func (t *collector) file(w Word, depth int, shebang bool, at *Command) {
	src, ran, opaque := t.r.Script(w, at, shebang)
	switch {
	case opaque != "":
		if t.Opaque == "" {
			t.Opaque = opaque
		}
	case ran:
		t.script(plainWord(src), depth+1, at)
	}
}

// script adds the commands of a shell string run at the simple command at.
func (t *collector) script(s Word, depth int, at *Command) {
	src, ok := s.Lit()
	if !ok {
		t.Unknown = true
		return
	}
	if depth > maxDepth {
		t.Unknown = true
		t.Raws = append(t.Raws, src)
		return
	}
	an := Parse(src)
	if an.Err != nil {
		t.Raws = append(t.Raws, src)
		return
	}
	if len(an.Opaque) > 0 && t.Opaque == "" {
		t.Opaque = an.Opaque[0]
	}
	for _, c := range an.Commands {
		c.Dirs, c.DirsUnknown = composeDirs(at, c)
		t.Nested = append(t.Nested, c)
		if len(c.Args) > 0 {
			t.add(c.Args, depth, c)
		}
	}
}

// composeDirs returns the directories a command of a shell string runs
// in: its own, taken from each directory the outer command may run in.
func composeDirs(outer, c *Command) ([]string, bool) {
	if outer.DirsUnknown || c.DirsUnknown {
		return nil, true
	}
	var out []string
	for _, o := range outer.Dirs {
		for _, d := range c.Dirs {
			j := joinDir(o, d)
			if d == "" {
				j = o
			}
			if !slices.Contains(out, j) {
				out = append(out, j)
			}
		}
	}
	return out, len(out) > maxDirs
}

// IsShellScript reports whether a file run as a program runs in a shell:
// its #! line names one (directly or through env).
func IsShellScript(b []byte) bool {
	line, err := bufio.NewReader(bytes.NewReader(b)).ReadString('\n')
	if err != nil && err != io.EOF {
		return false
	}
	rest, ok := strings.CutPrefix(strings.TrimSpace(line), "#!")
	if !ok {
		return false
	}
	f := strings.Fields(rest)
	if len(f) == 0 {
		return false
	}
	prog := BaseName(f[0])
	if prog == "env" && len(f) > 1 {
		prog = BaseName(f[len(f)-1])
	}
	return isShell(prog)
}

// BaseName is the name a command is known by: the last element of a
// path, without zsh's leading '='.
func BaseName(name string) string {
	name = strings.TrimPrefix(name, "=")
	if strings.Contains(name, "/") {
		name = path.Base(name)
	}
	return name
}

// unwrap returns what a wrapper command runs: argument lists, and shell
// strings. unknown reports a wrapper whose command cannot be made out.
func unwrap(args []Word) (inner [][]Word, scripts []Word, unknown bool) {
	name, _ := args[0].Lit()
	name = BaseName(name)
	rest := args[1:]
	one := func(cmd []Word, ok bool) ([][]Word, []Word, bool) {
		if !ok {
			return nil, nil, true
		}
		if len(cmd) == 0 {
			return nil, nil, false
		}
		return [][]Word{cmd}, nil, false
	}
	switch name {
	case "sudo":
		i, opts, ok := scanOpts(rest, "ugCDprtTUR", []string{"user", "group", "close-from", "chdir", "host", "prompt", "role", "type", "command-timeout", "other-user", "chroot"})
		if !ok {
			return nil, nil, true
		}
		if opts.has("-e", "--edit", "-V", "--version") {
			return nil, nil, false
		}
		return one(skipAssignments(rest[i:]))
	case "doas":
		i, _, ok := scanOpts(rest, "uC", nil)
		return one(rest[i:], ok)
	case "su", "runuser":
		if name == "runuser" {
			if i, opts, ok := scanOpts(rest, "ugG", []string{"user", "group", "supp-group"}); opts.has("-u", "--user") {
				return one(rest[i:], ok)
			}
		}
		// su permutes its options: `su root -c CMD` runs CMD.
		opts, _ := scanArgs(rest, "cgGsw", []string{"command", "session-command", "group", "supp-group", "shell", "whitelist-environment"})
		if c, found := opts.value("-c", "--command", "--session-command"); found {
			return nil, []Word{c}, false
		}
		return nil, nil, false
	case "env":
		i, opts, ok := scanOpts(rest, "uCS", []string{"unset", "chdir", "split-string"})
		if !ok {
			return nil, nil, true
		}
		cmd, ok := skipAssignments(rest[i:])
		if s, found := opts.value("-S", "--split-string"); found {
			return nil, []Word{joinWords(append([]Word{s}, cmd...))}, false
		}
		return one(cmd, ok)
	case "nice":
		i, _, ok := scanOpts(rest, "n", []string{"adjustment"})
		return one(rest[i:], ok)
	case "ionice":
		i, opts, ok := scanOpts(rest, "cnp", []string{"class", "classdata", "pid", "pgid", "uid"})
		if opts.has("-p", "-P", "-u", "--pid", "--pgid", "--uid") {
			return nil, nil, false
		}
		return one(rest[i:], ok)
	case "nohup", "builtin", "busybox", "setsid", "unbuffer", "catchsegv", "-", "noglob", "nocorrect":
		// "-", noglob and nocorrect are zsh precommand modifiers.
		i, _, ok := scanOpts(rest, "", nil)
		return one(rest[i:], ok)
	case "time":
		i, _, ok := scanOpts(rest, "fo", []string{"format", "output"})
		return one(rest[i:], ok)
	case "timeout":
		i, _, ok := scanOpts(rest, "sk", []string{"signal", "kill-after"})
		if !ok || i >= len(rest) {
			return nil, nil, !ok
		}
		return one(rest[i+1:], true) // skip the duration
	case "stdbuf":
		i, _, ok := scanOpts(rest, "ioe", []string{"input", "output", "error"})
		return one(rest[i:], ok)
	case "command":
		i, opts, ok := scanOpts(rest, "", nil)
		if opts.has("-v", "-V") {
			return nil, nil, false
		}
		return one(rest[i:], ok)
	case "exec":
		i, _, ok := scanOpts(rest, "a", nil)
		return one(rest[i:], ok)
	case "repeat": // zsh: repeat N command
		if len(rest) < 2 {
			return nil, nil, false
		}
		return one(rest[1:], true)
	case "chroot":
		i, _, ok := scanOpts(rest, "", []string{"userspec", "groups"})
		if !ok || i >= len(rest) {
			return nil, nil, !ok
		}
		return one(rest[i+1:], true)
	case "flock":
		i, _, ok := scanOpts(rest, "wE", []string{"timeout", "conflict-exit-code"})
		if !ok || i >= len(rest) {
			return nil, nil, !ok
		}
		after := rest[i+1:]
		if len(after) > 0 {
			if s, _ := after[0].Lit(); s == "-c" || s == "--command" {
				if len(after) > 1 {
					return nil, after[1:2], false
				}
				return nil, nil, false
			}
		}
		return one(after, true)
	case "watch":
		i, opts, ok := scanOpts(rest, "n", []string{"interval"})
		if !ok {
			return nil, nil, true
		}
		if opts.has("-x", "--exec") {
			return one(rest[i:], true)
		}
		if i < len(rest) {
			return nil, []Word{joinWords(rest[i:])}, false
		}
		return nil, nil, false
	case "xargs":
		i, _, ok := scanOpts(rest, "adEILnPs", []string{"arg-file", "delimiter", "max-args", "max-procs", "max-chars", "process-slot-var"})
		if !ok {
			return nil, nil, true
		}
		if i >= len(rest) {
			return [][]Word{{plainWord("echo"), unknownPath()}}, nil, false
		}
		// The command gets more arguments from standard input.
		return one(append(append([]Word(nil), rest[i:]...), unknownPath()), true)
	case "alias":
		// alias name=value: the value runs wherever the name is used.
		var values []Word
		for _, a := range rest {
			if _, v, ok := strings.Cut(a.Text, "="); ok {
				values = append(values, Word{Text: v, Dynamic: a.Dynamic, Glob: a.Glob})
			}
		}
		return nil, values, false
	case "hash":
		// hash -p PATH NAME makes NAME run PATH.
		for i := 0; i+1 < len(rest); i++ {
			if s, _ := rest[i].Lit(); s == "-p" {
				return [][]Word{{rest[i+1]}}, nil, false
			}
		}
		return nil, nil, false
	case "trap":
		// trap ACTION SIGNAL…: the action is a shell string.
		if len(rest) > 1 {
			if s, _ := rest[0].Lit(); s != "-" && s != "-p" && s != "-l" && s != "--" {
				return nil, rest[:1], false
			}
		}
		return nil, nil, false
	case "enable":
		// enable -f FILE loads a builtin from a shared object.
		for _, a := range rest {
			if s, _ := a.Lit(); strings.HasPrefix(s, "-") && strings.Contains(s, "f") {
				return nil, nil, true
			}
		}
		return nil, nil, false
	case "eval":
		if len(rest) == 0 {
			return nil, nil, false
		}
		return nil, []Word{joinWords(rest)}, false
	case "find":
		return findExecs(rest), nil, false
	case "git":
		return nil, gitAliasScripts(rest), false
	}
	if isShell(name) {
		s, found, ok := shellCommandString(rest)
		if !ok {
			return nil, nil, true
		}
		if found {
			return nil, []Word{s}, false
		}
	}
	return nil, nil, false
}

// isShell reports whether name is a shell that takes -c.
func isShell(name string) bool {
	switch name {
	case "sh", "bash", "zsh", "dash", "ksh", "ash", "mksh", "lksh", "yash", "posh", "rbash", "fish":
		return true
	}
	return false
}

// shellCommandString finds the string a shell runs with -c. found is false
// when the shell reads a script file or its standard input.
func shellCommandString(args []Word) (s Word, found, ok bool) {
	cmdMode := false
	for i := 0; i < len(args); i++ {
		a, static := args[i].Lit()
		if !static {
			if cmdMode {
				return args[i], true, true
			}
			return Word{}, false, false
		}
		switch {
		case a == "--" || a == "-":
			if cmdMode && i+1 < len(args) {
				return args[i+1], true, true
			}
			return Word{}, false, true
		case strings.HasPrefix(a, "--"):
			if a == "--rcfile" || a == "--init-file" {
				i++
			}
			if a == "--command" {
				cmdMode = true
			}
		case len(a) > 1 && (a[0] == '-' || a[0] == '+'):
			for _, c := range a[1:] {
				switch c {
				case 'c':
					cmdMode = true
				case 'o', 'O':
					i++
				}
			}
		default:
			if cmdMode {
				return args[i], true, true
			}
			return Word{}, false, true
		}
	}
	return Word{}, false, true
}

// shellScriptFile returns the script file a shell without -c runs; found
// is false when it reads its standard input instead.
func shellScriptFile(args []Word) (file Word, found bool) {
	for i := 0; i < len(args); i++ {
		a, _ := args[i].Lit()
		switch {
		case a == "-s":
			return Word{}, false
		case a == "--rcfile" || a == "--init-file" || a == "-o" || a == "+o" || a == "-O" || a == "+O":
			i++
		case a == "--" || a == "-":
			if a == "--" && i+1 < len(args) {
				return args[i+1], true
			}
			return Word{}, false
		case strings.HasPrefix(a, "-") || strings.HasPrefix(a, "+"):
			if strings.Contains(a[1:], "s") && !strings.HasPrefix(a, "--") {
				return Word{}, false
			}
		default:
			return args[i], true
		}
	}
	return Word{}, false
}

// findExecs returns the commands of find's -exec, -execdir, -ok and
// -okdir actions.
func findExecs(args []Word) [][]Word {
	var out [][]Word
	for i := 0; i < len(args); i++ {
		s, _ := args[i].Lit()
		switch s {
		case "-exec", "-execdir", "-ok", "-okdir":
		default:
			continue
		}
		j := i + 1
		for j < len(args) {
			if t, _ := args[j].Lit(); t == ";" || t == "+" {
				break
			}
			j++
		}
		if j > i+1 {
			// {} stands for each path found: only known at run time.
			cmd := make([]Word, 0, j-i-1)
			for _, w := range args[i+1 : j] {
				if strings.Contains(w.Text, "{}") {
					w = Word{Text: RunTime, Dynamic: true, Found: true}
				}
				cmd = append(cmd, w)
			}
			out = append(out, cmd)
		}
		i = j
	}
	return out
}

// gitAliasScripts returns the shell commands of `git -c alias.X=!cmd`.
func gitAliasScripts(args []Word) []Word {
	var out []Word
	for i := 0; i+1 < len(args); i++ {
		s, _ := args[i].Lit()
		if s != "-c" {
			continue
		}
		v := args[i+1]
		if _, val, ok := strings.Cut(v.Text, "="); ok && strings.HasPrefix(strings.ToLower(v.Text), "alias.") && strings.HasPrefix(val, "!") {
			out = append(out, Word{Text: val[1:], Dynamic: v.Dynamic, Glob: v.Glob})
		}
		i++
	}
	return out
}

// joinWords joins words into one shell string, as eval does.
func joinWords(ws []Word) Word {
	var out Word
	texts := make([]string, len(ws))
	for i, w := range ws {
		texts[i] = w.Text
		out.Dynamic = out.Dynamic || w.Dynamic
		out.Glob = out.Glob || w.Glob
	}
	out.Text = strings.Join(texts, " ")
	return out
}

// skipAssignments skips NAME=value words (sudo and env take them before
// the command). ok is false when a dynamic word hides where they end.
func skipAssignments(args []Word) ([]Word, bool) {
	for i, a := range args {
		s, static := a.Lit()
		if !static {
			if name, _, found := strings.Cut(a.prefix(), "="); found && isName(name) {
				continue
			}
			return args[i:], a.Glob && !a.Dynamic
		}
		name, _, found := strings.Cut(s, "=")
		if !found || !isName(name) {
			return args[i:], true
		}
	}
	return nil, true
}

// HarmlessLayers peels the wrappers that only change how a command runs
// (time, nice, nohup, timeout N, stdbuf), which leave the command it runs
// doing what it would do alone: the layers go from the command as written
// to the innermost command. writes are the files the wrappers write (time
// -o FILE).
func HarmlessLayers(args []Word) (layers [][]Word, writes []Word) {
	layers = [][]Word{args}
	cur := args
	for len(cur) > 1 {
		name, ok := cur[0].Lit()
		if !ok {
			return layers, writes
		}
		var i int
		var opts options
		switch name {
		case "time":
			i, opts, ok = scanOpts(cur[1:], "fo", []string{"format", "output"})
			if v, found := opts.value("-o", "--output"); found {
				writes = append(writes, v)
			}
		case "nice":
			i, _, ok = scanOpts(cur[1:], "n", []string{"adjustment"})
		case "nohup":
			i, _, ok = scanOpts(cur[1:], "", nil)
		case "timeout":
			i, _, ok = scanOpts(cur[1:], "sk", []string{"signal", "kill-after"})
			i++ // the duration
		case "stdbuf":
			i, _, ok = scanOpts(cur[1:], "ioe", []string{"input", "output", "error"})
		default:
			return layers, writes
		}
		if !ok || 1+i >= len(cur) {
			return layers, writes
		}
		// Every word the wrapper consumes must be known: a run-time word
		// could split into more words and shift the command.
		for _, w := range cur[:1+i] {
			if !w.Static() {
				return layers, writes
			}
		}
		cur = cur[1+i:]
		layers = append(layers, cur)
	}
	return layers, writes
}

// RunsOthers reports whether the command name (a base name) runs the
// command given in its arguments, as sudo, env, xargs, sh and eval do: a
// pattern that does not name it says nothing of what it runs.
func RunsOthers(name string) bool {
	switch name {
	case "eval", "exec", "source", ".", "command", "builtin", "sudo", "doas", "su", "runuser", "env",
		"xargs", "busybox", "chroot", "flock", "watch", "setsid", "ionice", "unbuffer", "-", "noglob",
		"nocorrect", "repeat", "nohup", "nice", "time", "timeout", "stdbuf", "alias", "hash", "trap", "enable":
		return true
	}
	return isShell(name)
}
