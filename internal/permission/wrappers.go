package permission

import (
	"path"
	"strings"
)

// maxDepth bounds nested shell strings (sh -c "sh -c '…'").
const maxDepth = 4

// maxTargets bounds the commands collected from one simple command.
const maxTargets = 64

// targets are the commands a simple command may run, for deny and ask
// rules: the command itself, what its wrappers run (sudo, env, xargs,
// find -exec, …), and the commands of shell strings and script files it
// hands to a shell (sh -c, eval, su -c, watch, alias, trap, source f,
// bash f, ./f).
type targets struct {
	st *state
	// cmds are argument lists to match Bash rules against.
	cmds [][]word
	// inner are the argument lists wrappers run (sudo X, xargs X…): what
	// they do to files is checked like the command's own.
	inner []innerCmd
	// nested are the simple commands of the shell strings and scripts it
	// runs, with directories relative to the command's.
	nested []*simpleCmd
	// raws are shell strings that did not parse, checked by their text.
	raws []string
	// unknown: a wrapper runs something that cannot be made out (a
	// dynamic word where the command should be, a shell reading a script
	// from a pipe).
	unknown bool
	// opaque says why a script it runs cannot be read.
	opaque string
}

// innerCmd is a command a wrapper runs, at the simple command (of the line
// or of a shell string) whose directories it runs in.
type innerCmd struct {
	args []word
	at   *simpleCmd
}

// runTargets collects the targets of one simple command.
func (st *state) runTargets(sc *simpleCmd) *targets {
	t := &targets{st: st}
	t.add(sc.args, 0, sc)
	return t
}

// add collects args, run at the simple command at.
func (t *targets) add(args []word, depth int, at *simpleCmd) {
	if len(args) == 0 || len(t.cmds) >= maxTargets {
		return
	}
	t.cmds = append(t.cmds, args)
	name, ok := args[0].lit()
	if !ok {
		t.unknown = true
		return
	}
	if base := commandBase(name); base != name && base != "" {
		// A path to the binary (/bin/rm, ./rm, zsh's =rm) is matched by
		// its base name for deny and ask rules.
		t.cmds = append(t.cmds, append([]word{plainWord(base)}, args[1:]...))
	}
	if prog := t.st.runsProgram(name, at.dirs); prog != nil {
		// A copy or link of a denied program under another name.
		t.cmds = append(t.cmds, append([]word{plainWord(prog.name)}, args[1:]...))
	}
	inner, scripts, unknown := unwrap(args)
	if unknown {
		t.unknown = true
	}
	base := commandBase(name)
	if isShell(base) {
		if _, found, ok := shellCommandString(args[1:]); ok && !found {
			if file, isFile := shellScriptFile(args[1:]); isFile {
				t.file(file, depth, false, at)
			} else if at.stdin != nil {
				// The shell reads its commands from standard input.
				scripts = append(scripts, *at.stdin)
			} else {
				t.unknown = true
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
		t.inner = append(t.inner, innerCmd{args: in, at: at})
		t.add(in, depth, at)
	}
	for _, s := range scripts {
		t.script(s, depth+1, at)
	}
}

// file adds the commands of a script file run at the simple command at.
func (t *targets) file(w word, depth int, shebang bool, at *simpleCmd) {
	src, ran, opaque := t.st.readScript(w, at.dirs, at.dirsUnknown, shebang)
	switch {
	case opaque != "":
		if t.opaque == "" {
			t.opaque = opaque
		}
	case ran:
		t.script(plainWord(src), depth+1, at)
	}
}

// script adds the commands of a shell string run at the simple command at.
func (t *targets) script(s word, depth int, at *simpleCmd) {
	src, ok := s.lit()
	if !ok {
		t.unknown = true
		return
	}
	if depth > maxDepth {
		t.unknown = true
		t.raws = append(t.raws, src)
		return
	}
	an := analyze(src)
	if an.err != nil {
		t.raws = append(t.raws, src)
		return
	}
	if len(an.opaque) > 0 && t.opaque == "" {
		t.opaque = an.opaque[0]
	}
	for _, c := range an.cmds {
		c.dirs, c.dirsUnknown = composeDirs(at, c)
		t.nested = append(t.nested, c)
		if len(c.args) > 0 {
			t.add(c.args, depth, c)
		}
	}
}

// composeDirs returns the directories a command of a shell string runs
// in: its own, taken from each directory the outer command may run in.
func composeDirs(outer, c *simpleCmd) ([]string, bool) {
	if outer.dirsUnknown || c.dirsUnknown {
		return nil, true
	}
	var out []string
	for _, o := range outer.dirs {
		for _, d := range c.dirs {
			j := joinDir(o, d)
			if d == "" {
				j = o
			}
			if !contains(out, j) {
				out = append(out, j)
			}
		}
	}
	return out, len(out) > maxDirs
}

// commandBase is the name a command is known by: the last element of a
// path, without zsh's leading '='.
func commandBase(name string) string {
	name = strings.TrimPrefix(name, "=")
	if strings.Contains(name, "/") {
		name = path.Base(name)
	}
	return name
}

// unwrap returns what a wrapper command runs: argument lists, and shell
// strings. unknown reports a wrapper whose command cannot be made out.
func unwrap(args []word) (inner [][]word, scripts []word, unknown bool) {
	name, _ := args[0].lit()
	name = commandBase(name)
	rest := args[1:]
	one := func(cmd []word, ok bool) ([][]word, []word, bool) {
		if !ok {
			return nil, nil, true
		}
		if len(cmd) == 0 {
			return nil, nil, false
		}
		return [][]word{cmd}, nil, false
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
			return nil, []word{c}, false
		}
		return nil, nil, false
	case "env":
		i, opts, ok := scanOpts(rest, "uCS", []string{"unset", "chdir", "split-string"})
		if !ok {
			return nil, nil, true
		}
		cmd, ok := skipAssignments(rest[i:])
		if s, found := opts.value("-S", "--split-string"); found {
			return nil, []word{joinWords(append([]word{s}, cmd...))}, false
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
			if s, _ := after[0].lit(); s == "-c" || s == "--command" {
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
			return nil, []word{joinWords(rest[i:])}, false
		}
		return nil, nil, false
	case "xargs":
		i, _, ok := scanOpts(rest, "adEILnPs", []string{"arg-file", "delimiter", "max-args", "max-procs", "max-chars", "process-slot-var"})
		if !ok {
			return nil, nil, true
		}
		if i >= len(rest) {
			return [][]word{{plainWord("echo"), unknownPath()}}, nil, false
		}
		// The command gets more arguments from standard input.
		return one(append(append([]word(nil), rest[i:]...), unknownPath()), true)
	case "alias":
		// alias name=value: the value runs wherever the name is used.
		var values []word
		for _, a := range rest {
			if _, v, ok := strings.Cut(a.text, "="); ok {
				values = append(values, word{text: v, dynamic: a.dynamic, glob: a.glob})
			}
		}
		return nil, values, false
	case "hash":
		// hash -p PATH NAME makes NAME run PATH.
		for i := 0; i+1 < len(rest); i++ {
			if s, _ := rest[i].lit(); s == "-p" {
				return [][]word{{rest[i+1]}}, nil, false
			}
		}
		return nil, nil, false
	case "trap":
		// trap ACTION SIGNAL…: the action is a shell string.
		if len(rest) > 1 {
			if s, _ := rest[0].lit(); s != "-" && s != "-p" && s != "-l" && s != "--" {
				return nil, rest[:1], false
			}
		}
		return nil, nil, false
	case "enable":
		// enable -f FILE loads a builtin from a shared object.
		for _, a := range rest {
			if s, _ := a.lit(); strings.HasPrefix(s, "-") && strings.Contains(s, "f") {
				return nil, nil, true
			}
		}
		return nil, nil, false
	case "eval":
		if len(rest) == 0 {
			return nil, nil, false
		}
		return nil, []word{joinWords(rest)}, false
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
			return nil, []word{s}, false
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
func shellCommandString(args []word) (s word, found, ok bool) {
	cmdMode := false
	for i := 0; i < len(args); i++ {
		a, static := args[i].lit()
		if !static {
			if cmdMode {
				return args[i], true, true
			}
			return word{}, false, false
		}
		switch {
		case a == "--" || a == "-":
			if cmdMode && i+1 < len(args) {
				return args[i+1], true, true
			}
			return word{}, false, true
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
			return word{}, false, true
		}
	}
	return word{}, false, true
}

// shellScriptFile returns the script file a shell without -c runs; found
// is false when it reads its standard input instead.
func shellScriptFile(args []word) (file word, found bool) {
	for i := 0; i < len(args); i++ {
		a, _ := args[i].lit()
		switch {
		case a == "-s":
			return word{}, false
		case a == "--rcfile" || a == "--init-file" || a == "-o" || a == "+o" || a == "-O" || a == "+O":
			i++
		case a == "--" || a == "-":
			if a == "--" && i+1 < len(args) {
				return args[i+1], true
			}
			return word{}, false
		case strings.HasPrefix(a, "-") || strings.HasPrefix(a, "+"):
			if strings.Contains(a[1:], "s") && !strings.HasPrefix(a, "--") {
				return word{}, false
			}
		default:
			return args[i], true
		}
	}
	return word{}, false
}

// findExecs returns the commands of find's -exec, -execdir, -ok and
// -okdir actions.
func findExecs(args []word) [][]word {
	var out [][]word
	for i := 0; i < len(args); i++ {
		s, _ := args[i].lit()
		switch s {
		case "-exec", "-execdir", "-ok", "-okdir":
		default:
			continue
		}
		j := i + 1
		for j < len(args) {
			if t, _ := args[j].lit(); t == ";" || t == "+" {
				break
			}
			j++
		}
		if j > i+1 {
			// {} stands for each path found: only known at run time.
			cmd := make([]word, 0, j-i-1)
			for _, w := range args[i+1 : j] {
				if strings.Contains(w.text, "{}") {
					w = word{text: runtime, dynamic: true, found: true}
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
func gitAliasScripts(args []word) []word {
	var out []word
	for i := 0; i+1 < len(args); i++ {
		s, _ := args[i].lit()
		if s != "-c" {
			continue
		}
		v := args[i+1]
		if _, val, ok := strings.Cut(v.text, "="); ok && strings.HasPrefix(strings.ToLower(v.text), "alias.") && strings.HasPrefix(val, "!") {
			out = append(out, word{text: val[1:], dynamic: v.dynamic, glob: v.glob})
		}
		i++
	}
	return out
}

// joinWords joins words into one shell string, as eval does.
func joinWords(ws []word) word {
	var out word
	texts := make([]string, len(ws))
	for i, w := range ws {
		texts[i] = w.text
		out.dynamic = out.dynamic || w.dynamic
		out.glob = out.glob || w.glob
	}
	out.text = strings.Join(texts, " ")
	return out
}

// skipAssignments skips NAME=value words (sudo and env take them before
// the command). ok is false when a dynamic word hides where they end.
func skipAssignments(args []word) ([]word, bool) {
	for i, a := range args {
		s, static := a.lit()
		if !static {
			if name, _, found := strings.Cut(a.prefix(), "="); found && isName(name) {
				continue
			}
			return args[i:], a.glob && !a.dynamic
		}
		name, _, found := strings.Cut(s, "=")
		if !found || !isName(name) {
			return args[i:], true
		}
	}
	return nil, true
}

// isName reports whether s is a valid shell variable name.
func isName(s string) bool {
	if s == "" {
		return false
	}
	for i, c := range s {
		if c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || i > 0 && c >= '0' && c <= '9' {
			continue
		}
		return false
	}
	return true
}

// options are the options scanOpts saw, in order.
type options []option

type option struct {
	name  string // "-x" or "--long" (an abbreviation is given its full name)
	value word
	has   bool // value present
	// abbrev: the option was written abbreviated (--o for --output).
	abbrev bool
}

// count returns how many times the option name was given.
func (o options) count(name string) int {
	n := 0
	for _, opt := range o {
		if opt.name == name {
			n++
		}
	}
	return n
}

// valueIs reports whether one of the options names was given the value v.
func (o options) valueIs(v string, names ...string) bool {
	w, ok := o.value(names...)
	s, static := w.lit()
	return ok && static && s == v
}

func (o options) has(names ...string) bool {
	for _, opt := range o {
		for _, n := range names {
			if opt.name == n {
				return true
			}
		}
	}
	return false
}

func (o options) value(names ...string) (word, bool) {
	for _, opt := range o {
		for _, n := range names {
			if opt.name == n && opt.has {
				return opt.value, true
			}
		}
	}
	return word{}, false
}

// scanOpts reads leading options, stopping at the first operand or "--",
// and returns the operand's index. Short options listed in argShort and
// long options listed in argLong take a value (attached or as the next
// word). ok is false when a dynamic word stands where an option may be.
func scanOpts(args []word, argShort string, argLong []string) (int, options, bool) {
	var opts options
	for i := 0; i < len(args); i++ {
		a, static := args[i].lit()
		if !static {
			return i, opts, false
		}
		switch {
		case a == "--":
			return i + 1, opts, true
		case strings.HasPrefix(a, "--"):
			name, val, eq := strings.Cut(a, "=")
			opt := option{name: name}
			full, takesValue := matchLong(name, argLong)
			if takesValue {
				// Abbreviations count as the option they stand for.
				opt.name, opt.abbrev = "--"+full, full != name[2:]
			}
			if eq {
				opt.value, opt.has = plainWord(val), true
			} else if takesValue && i+1 < len(args) {
				i++
				opt.value, opt.has = args[i], true
				if !args[i].static() {
					return i, opts, false // it may split into more words
				}
			}
			opts = append(opts, opt)
		case len(a) > 1 && a[0] == '-':
			for j := 1; j < len(a); j++ {
				opt := option{name: "-" + a[j:j+1]}
				if strings.IndexByte(argShort, a[j]) >= 0 {
					if j+1 < len(a) {
						opt.value, opt.has = plainWord(a[j+1:]), true
					} else if i+1 < len(args) {
						i++
						opt.value, opt.has = args[i], true
						if !args[i].static() {
							return i, opts, false
						}
					}
					opts = append(opts, opt)
					break
				}
				opts = append(opts, opt)
			}
		default:
			return i, opts, true
		}
	}
	return len(args), opts, true
}

// matchLong finds the long option name (given with its "--") among names
// (given without): GNU getopt_long accepts any unambiguous prefix, so a
// prefix counts as a match. It returns the full name.
func matchLong(name string, names []string) (string, bool) {
	n := strings.TrimPrefix(name, "--")
	if n == "" || n == name {
		return "", false
	}
	found := ""
	for _, full := range names {
		if full == n {
			return full, true
		}
		if strings.HasPrefix(full, n) && found == "" {
			found = full
		}
	}
	return found, found != ""
}

// harmlessLayers peels the wrappers that only change how a command runs
// (time, nice, nohup, timeout N, stdbuf) for allow rules and the read-only
// check: the layers go from the command as written to the innermost
// command. writes are the files the wrappers write (time -o FILE).
func harmlessLayers(args []word) (layers [][]word, writes []word) {
	layers = [][]word{args}
	cur := args
	for len(cur) > 1 {
		name, ok := cur[0].lit()
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
			if !w.static() {
				return layers, writes
			}
		}
		cur = cur[1+i:]
		layers = append(layers, cur)
	}
	return layers, writes
}

// runsOthers reports whether a command runs the command given in its
// arguments: an allow rule only vouches for it when it names it.
func runsOthers(name string) bool {
	switch name {
	case "eval", "exec", "source", ".", "command", "builtin", "sudo", "doas", "su", "runuser", "env",
		"xargs", "busybox", "chroot", "flock", "watch", "setsid", "ionice", "unbuffer", "-", "noglob",
		"nocorrect", "repeat", "nohup", "nice", "time", "timeout", "stdbuf", "alias", "hash", "trap", "enable":
		return true
	}
	return isShell(name)
}
