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
// find -exec, …), and the commands of shell strings it hands to a shell
// (sh -c, eval, su -c, watch).
type targets struct {
	cmds [][]word
	// raws are shell strings that did not parse, checked by their text.
	raws []string
	// unknown: a wrapper runs something that cannot be made out (a
	// dynamic word where the command should be, a shell reading a script
	// from a pipe).
	unknown bool
	// stdin is the here-document the command reads.
	stdin *word
}

// runTargets collects the targets of one simple command. stdin is the
// here-document or here-string it reads, if any: a shell reading its
// script from standard input runs that.
func runTargets(args []word, stdin *word) *targets {
	t := &targets{stdin: stdin}
	t.add(args, 0)
	return t
}

func (t *targets) add(args []word, depth int) {
	if len(args) == 0 || len(t.cmds) >= maxTargets {
		return
	}
	t.cmds = append(t.cmds, args)
	if name, ok := args[0].lit(); ok {
		if base := commandBase(name); base != name && base != "" {
			// A path to the binary (/bin/rm, ./rm, zsh's =rm) is matched by
			// its base name for deny and ask rules.
			alias := append([]word{plainWord(base)}, args[1:]...)
			t.cmds = append(t.cmds, alias)
		}
	} else {
		t.unknown = true
		return
	}
	inner, scripts, unknown := unwrap(args)
	if unknown {
		t.unknown = true
	}
	if name, _ := args[0].lit(); isShell(commandBase(name)) {
		if _, found, ok := shellCommandString(args[1:]); ok && !found && !shellHasScript(args[1:]) {
			// The shell reads its commands from standard input.
			if t.stdin != nil {
				scripts = append(scripts, *t.stdin)
			} else {
				t.unknown = true
			}
		}
	}
	for _, in := range inner {
		t.add(in, depth)
	}
	for _, s := range scripts {
		t.script(s, depth+1)
	}
}

// script adds the commands of a shell string.
func (t *targets) script(s word, depth int) {
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
	for _, c := range an.cmds {
		if len(c.args) > 0 {
			t.add(c.args, depth)
		}
	}
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
			return [][]word{{plainWord("echo")}}, nil, false
		}
		return one(rest[i:], true)
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

// shellHasScript reports whether a shell without -c is given a script
// file (rather than reading standard input).
func shellHasScript(args []word) bool {
	for i := 0; i < len(args); i++ {
		a, _ := args[i].lit()
		switch {
		case a == "-s":
			return false
		case a == "--rcfile" || a == "--init-file" || a == "-o" || a == "+o" || a == "-O" || a == "+O":
			i++
		case a == "--" || a == "-":
			return i+1 < len(args) && a == "--"
		case strings.HasPrefix(a, "-") || strings.HasPrefix(a, "+"):
			if strings.Contains(a[1:], "s") && !strings.HasPrefix(a, "--") {
				return false
			}
		default:
			return true
		}
	}
	return false
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
			out = append(out, args[i+1:j])
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
	name  string // "-x" or "--long"
	value word
	has   bool // value present
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
			if eq {
				opt.value, opt.has = plainWord(val), true
			} else if _, ok := matchLong(name, argLong); ok && i+1 < len(args) {
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
		"nocorrect", "repeat", "nohup", "nice", "time", "timeout", "stdbuf":
		return true
	}
	return isShell(name)
}
