package permission

import (
	"fmt"
	"strings"
)

// effect is what one simple command does to files, as far as the checker
// can tell from its words.
type effect struct {
	// readOnly: the command only reads (the files in reads) and prints.
	readOnly bool
	// fileOp: a common file-changing command (mkdir, touch, rm, rmdir, mv,
	// cp, ln, sed -i, tee) that acceptEdits accepts when every path it
	// touches is inside the working directories.
	fileOp bool
	// reads are the files and directories it reads, known or not: they are
	// collected even when the command is not read-only, for deny rules.
	reads []word
	// metaReads are paths whose names and metadata it reads (see
	// roSpec.meta); metaNoFollow: a symbolic link named there is looked at
	// itself, not followed.
	metaReads    []word
	metaNoFollow bool
	// writes are the files it creates or changes, checked however the
	// command is allowed: `sort -o F`, `tee F`, `dd of=F`, `cp A F`, …
	writes []word
	// deletes are paths removed or moved away (rm, rmdir, mv sources).
	deletes []word
	// maybe are words that may name files a command the checker does not
	// know reads or writes: a deny rule naming one of them denies it.
	maybe []word
	// walks are the trees it descends into.
	walks []walk
	// hardLinks are files given a second name (ln without -s): writing the
	// new name writes them.
	hardLinks []word
	// git: the command is git, whose repository directory (the call's
	// directory, moved by cd and by these -C operands) must be one git made.
	git   bool
	gitCd []word
	// gitNamed is the option naming a repository directory (--git-dir…).
	gitNamed string
	// why says why the command is not read-only.
	why string
}

// walk is a directory tree a command descends into.
type walk struct {
	root word
	// content: it reads the files it finds (grep -r), rather than only
	// listing them (ls -R, du, find without -exec).
	content bool
	// follow: it follows the symbolic links it meets (grep -R, find -L).
	follow bool
	// hidden: it also reads hidden files (rg skips them by default).
	hidden bool
}

func notReadOnly(format string, args ...any) effect {
	return effect{why: fmt.Sprintf(format, args...)}
}

// demote marks e as not read-only for the reason given, keeping what it
// reads and writes for the deny rules.
func (e effect) demote(format string, args ...any) effect {
	e.readOnly, e.fileOp = false, false
	e.why = fmt.Sprintf(format, args...)
	return e
}

// unknownPath stands for a path only known at run time.
func unknownPath() word { return word{text: runtime, dynamic: true} }

// commandEffect classifies one simple command (wrappers already peeled).
func commandEffect(args []word) effect {
	name, ok := args[0].lit()
	if !ok {
		return notReadOnly("its command name is only known at run time")
	}
	if strings.Contains(name, "/") || strings.HasPrefix(name, "=") {
		return notReadOnly("`%s` is run by path", name)
	}
	rest := args[1:]
	switch name {
	case "git":
		return gitEffect(rest)
	case "sed":
		return sedEffect(rest)
	case "find":
		return findEffect(rest)
	case "jq":
		return jqEffect(rest)
	case "cd", "pushd":
		target, known := cdTarget(rest)
		if !known {
			return notReadOnly("`%s` goes to a directory only known at run time", name)
		}
		return effect{readOnly: true, reads: []word{{text: target, tilde: target == "~" || strings.HasPrefix(target, "~/")}}}
	case "popd", "dirs":
		return effect{readOnly: true}
	case "env":
		return envEffect(rest)
	case "command":
		_, opts, ok := scanOpts(rest, "", nil)
		if ok && opts.has("-v", "-V") {
			return effect{readOnly: true}
		}
		return notReadOnly("`command` runs another command")
	case "printf":
		if len(rest) > 0 {
			first, static := rest[0].lit()
			if !static || strings.HasPrefix(first, "-") && first != "--" {
				return notReadOnly("`printf` with an option (-v assigns a variable)")
			}
		}
		return effect{readOnly: true}
	case "tee":
		return teeEffect(rest)
	case "test", "[":
		return testEffect(name, rest)
	case "dd":
		return ddEffect(rest)
	case "mkdir", "touch", "rm", "rmdir", "mv", "cp", "ln":
		return fileOpEffect(name, rest)
	case "curl", "wget":
		return downloadEffect(name, rest)
	case "source", ".":
		e := notReadOnly("`%s` runs a script", name)
		if len(rest) > 0 {
			e.reads = rest[:1]
		}
		return e
	}
	spec, ok := roSpecFor(name)
	if !ok {
		e := notReadOnly("`%s` is not a read-only command", name)
		e.maybe = operandWords(rest)
		if follow, isArchiver := archivers[name]; isArchiver {
			// Archivers and copiers read the trees they are given.
			for _, w := range e.maybe {
				e.walks = append(e.walks, walk{root: w, content: true, hidden: true, follow: follow})
			}
		}
		return e
	}
	return spec.apply(name, rest)
}

// archivers are programs that read whole trees given as operands, with
// whether they follow the symbolic links they meet by default.
var archivers = map[string]bool{
	"tar": false, "gtar": false, "bsdtar": false, "pax": false, "cpio": false, "rsync": false,
	"zip": true, "7z": true, "7za": true, "7zz": true, "jar": true, "scp": true, "rclone": false,
}

// operandWords are the words of an unknown command that may name files:
// its arguments that are not options, and the values of NAME=VALUE and
// --option=VALUE words.
func operandWords(args []word) []word {
	var out []word
	for _, a := range args {
		if !a.static() {
			continue
		}
		if _, val, ok := strings.Cut(a.text, "="); ok {
			out = append(out, plainWord(val))
			if !strings.HasPrefix(a.text, "-") {
				out = append(out, a)
			}
			continue
		}
		if !strings.HasPrefix(a.text, "-") {
			out = append(out, a)
		}
	}
	return out
}

// pathRole says which operands of a read-only command are paths.
type pathRole int

const (
	pathsNone     pathRole = iota // no operand is a file
	pathsAll                      // every operand is a file or directory
	pathsAfter1st                 // the first operand is a pattern or filter
)

// roSpec describes a read-only command's arguments.
type roSpec struct {
	argShort string   // short options that take a value
	argLong  []string // long options that take a value (without "--")
	paths    pathRole
	// patternOpts give the pattern, so that no operand is one.
	patternOpts []string
	// readOpts take a file the command reads.
	readOpts []string
	// listOpts take a file listing the files the command reads.
	listOpts []string
	// writeOpts take a file the command writes: not read-only then.
	writeOpts []string
	// forbid are options that run programs or change things.
	forbid []string
	// allowOnly, when set, are the only options accepted.
	allowOnly []string
	// strict: a glob could expand to one of the forbidden options, so
	// globs are refused (dynamic words always are, but for dynOK).
	strict bool
	// dynOK: arguments only known at run time are harmless (pure output).
	dynOK bool
	// implicitCwd: with no path operand, the command reads the current
	// directory.
	implicitCwd bool
	// meta: it reads the names and metadata of its path operands, not
	// their contents (ls, stat, du), so Read deny rules do not apply to
	// them; they must still be inside the working directories.
	meta bool
	// maxOperands bounds the operands (-1: no bound).
	maxOperands int
}

// roSpecFor returns the spec of a read-only command.
func roSpecFor(name string) (roSpec, bool) {
	s := roSpec{maxOperands: -1}
	switch name {
	case "echo", "true", "false", ":", "pwd", "whoami", "id", "groups", "uname", "nproc", "arch",
		"basename", "dirname", "seq", "sleep", "printenv", "tty", "logname", "which", "type",
		"uptime", "free", "locale":
		s.dynOK = true
	case "date":
		s.argShort, s.argLong = "dfr", []string{"date", "file", "reference", "rfc-3339"}
		s.readOpts = []string{"-f", "--file", "-r", "--reference"}
		s.forbid = []string{"-s", "--set"}
		s.strict = true
	case "hostname":
		s.allowOnly = []string{"-s", "-f", "-i", "-I", "-d", "-a", "-A", "--short", "--fqdn", "--long", "--ip-address", "--all-ip-addresses", "--domain", "--alias", "--all-fqdns"}
		s.maxOperands = 0
		s.strict = true
	case "ps":
		s.argShort, s.argLong = "CGgopstUu", []string{"format", "sort", "pid", "ppid", "user", "group", "cols", "columns", "rows", "lines", "width"}
	case "ls", "dir", "vdir":
		s.argShort = "IwT"
		s.argLong = []string{"ignore", "hide", "width", "tabsize", "format", "sort", "time", "quoting-style", "indicator-style", "block-size", "time-style"}
		s.paths, s.implicitCwd, s.meta = pathsAll, true, true
	case "realpath", "readlink":
		s.argLong = []string{"relative-to", "relative-base"}
		s.paths, s.meta = pathsAll, true
	case "cat", "rev", "comm", "sha256sum", "sha1sum", "sha512sum",
		"sha224sum", "sha384sum", "md5sum", "b2sum", "cksum", "sum":
		s.argLong = []string{"relative-to", "relative-base", "output-delimiter", "length", "algorithm"}
		s.paths = pathsAll
	case "tac", "paste", "fold", "expand", "unexpand", "fmt", "nl":
		s.argShort = map[string]string{"tac": "s", "paste": "d", "fold": "w", "expand": "t", "unexpand": "t", "fmt": "wgp", "nl": "bdfhilnsvw"}[name]
		s.argLong = []string{"separator", "delimiters", "width", "tabs", "goal", "prefix", "body-numbering", "section-delimiter",
			"footer-numbering", "header-numbering", "line-increment", "join-blank-lines", "number-format", "number-separator",
			"starting-line-number", "number-width"}
		s.paths = pathsAll
	case "head", "tail":
		s.argShort, s.argLong = "ncs", []string{"lines", "bytes", "pid", "sleep-interval", "max-unchanged-stats"}
		s.paths = pathsAll
	case "wc":
		s.argLong = []string{"files0-from"}
		s.readOpts = []string{"--files0-from"}
		s.listOpts = []string{"--files0-from"}
		s.paths = pathsAll
	case "file":
		s.argShort, s.argLong = "mfFeP", []string{"magic-file", "files-from", "separator", "exclude", "exclude-quiet", "parameter"}
		s.readOpts = []string{"-m", "--magic-file", "-f", "--files-from"}
		s.listOpts = []string{"-f", "--files-from"}
		s.forbid = []string{"-C", "--compile"}
		s.paths = pathsAll
	case "stat":
		s.argShort, s.argLong = "c", []string{"format", "printf", "cached"}
		s.paths, s.meta = pathsAll, true
	case "du":
		s.argShort, s.argLong = "BdtX", []string{"block-size", "max-depth", "threshold", "exclude-from", "exclude", "files0-from", "time", "time-style"}
		s.readOpts = []string{"-X", "--exclude-from", "--files0-from"}
		s.listOpts = []string{"--files0-from"}
		s.paths, s.implicitCwd, s.meta = pathsAll, true, true
	case "df":
		s.argShort, s.argLong = "Btx", []string{"block-size", "type", "exclude-type"}
		s.paths = pathsAll
	case "tree":
		s.argShort, s.argLong = "LPIoH", []string{"filelimit", "timefmt", "sort", "charset", "fromfile", "infofile"}
		s.writeOpts = []string{"-o"}
		s.forbid = []string{"-R"} // runs itself again with -o 00Tree.html in every directory
		s.paths, s.implicitCwd, s.meta = pathsAll, true, true
	case "diff":
		s.argShort = "CUFILDSWxX"
		s.argLong = []string{"context", "unified", "show-function-line", "ignore-matching-lines", "label", "ifdef", "starting-file",
			"width", "exclude", "exclude-from", "tabsize", "line-format", "old-line-format", "new-line-format", "unchanged-line-format",
			"old-group-format", "new-group-format", "changed-group-format", "unchanged-group-format", "from-file", "to-file", "horizon-lines", "color", "palette"}
		s.readOpts = []string{"-X", "--exclude-from", "--from-file", "--to-file"}
		s.paths = pathsAll
	case "cmp":
		s.argShort, s.argLong = "in", []string{"ignore-initial", "bytes"}
		s.paths = pathsAll
	case "sort":
		s.argShort, s.argLong = "kStTo", []string{"key", "buffer-size", "field-separator", "temporary-directory", "output", "files0-from", "batch-size", "parallel", "random-source", "sort", "compress-program"}
		s.readOpts = []string{"--files0-from", "--random-source"}
		s.listOpts = []string{"--files0-from"}
		s.writeOpts = []string{"-o", "--output", "-T", "--temporary-directory"}
		s.forbid = []string{"--compress-program"}
		s.paths, s.strict = pathsAll, true
	case "uniq":
		s.argShort, s.argLong = "fsw", []string{"skip-fields", "skip-chars", "check-chars", "all-repeated", "group"}
		s.paths, s.maxOperands = pathsAll, 1
	case "cut":
		s.argShort, s.argLong = "bcdf", []string{"bytes", "characters", "delimiter", "fields", "output-delimiter"}
		s.paths = pathsAll
	case "tr":
		s.dynOK = true
	case "grep", "egrep", "fgrep":
		s.argShort = "efmABCdD"
		s.argLong = []string{"regexp", "file", "max-count", "after-context", "before-context", "context", "directories", "devices",
			"label", "include", "exclude", "exclude-from", "exclude-dir", "binary-files", "group-separator"}
		s.patternOpts = []string{"-e", "--regexp", "-f", "--file"}
		s.readOpts = []string{"-f", "--file", "--exclude-from"}
		s.paths = pathsAfter1st
	case "rg":
		s.argShort = "ABCEefgjmMrtTd"
		s.argLong = []string{"regexp", "file", "glob", "iglob", "type", "type-not", "type-add", "type-clear", "max-count", "max-columns",
			"max-depth", "max-filesize", "encoding", "replace", "context", "after-context", "before-context", "threads", "sort", "sortr",
			"colors", "color", "path-separator", "pre", "pre-glob", "engine", "dfa-size-limit", "regex-size-limit", "ignore-file",
			"context-separator", "field-match-separator", "field-context-separator", "hostname-bin", "hyperlink-format", "generate", "max-columns-preview"}
		s.patternOpts = []string{"-e", "--regexp", "-f", "--file"}
		s.readOpts = []string{"-f", "--file", "--ignore-file"}
		s.forbid = []string{"--pre", "--hostname-bin"}
		s.paths, s.strict, s.implicitCwd = pathsAfter1st, true, true
	case "od":
		s.argShort, s.argLong = "AjNSt", []string{"address-radix", "skip-bytes", "read-bytes", "format", "endian"}
		s.paths = pathsAll
	case "hexdump":
		s.argShort, s.argLong = "nsef", []string{"length", "skip", "format", "format-file", "color"}
		s.readOpts = []string{"-f", "--format-file"}
		s.paths = pathsAll
	case "strings":
		s.argShort, s.argLong = "nteT", []string{"bytes", "radix", "encoding", "target", "output-separator"}
		s.paths = pathsAll
	default:
		return s, false
	}
	return s, true
}

// apply checks a read-only command's arguments against its spec. What it
// reads is collected even when it turns out not to be read-only.
func (s roSpec) apply(name string, args []word) effect {
	e := effect{readOnly: true}
	for _, a := range args {
		if a.procSubst {
			continue
		}
		if a.dynamic && !s.dynOK && !a.loopPaths() && e.readOnly {
			e = e.demote("`%s` has an argument only known at run time", name)
		}
		if a.glob && s.strict && e.readOnly {
			e = e.demote("`%s` has a glob that could expand to an option", name)
		}
	}
	opts, operands := scanArgs(args, s.argShort, s.argLong)
	patternGiven := false
	for _, o := range opts {
		switch {
		case optIn(o.name, s.forbid), s.allowOnly != nil && !optIn(o.name, s.allowOnly):
			e = e.demote("`%s %s` is not read-only", name, o.name)
		case optIn(o.name, s.writeOpts):
			e = e.demote("`%s %s` writes a file", name, o.name)
			e.writes = append(e.writes, optPath(o))
		}
		if optIn(o.name, s.readOpts) {
			e.reads = append(e.reads, optPath(o))
		}
		if optIn(o.name, s.listOpts) {
			e.reads = append(e.reads, unknownPath()) // the files it lists
		}
		if optIn(o.name, s.patternOpts) {
			patternGiven = true
		}
		if o.abbrev && o.has {
			// A value taken by an abbreviation the program may read
			// differently: it could be a file operand.
			e.maybe = append(e.maybe, o.value)
		}
	}
	if s.maxOperands >= 0 && len(operands) > s.maxOperands {
		if name == "uniq" {
			e = e.demote("`uniq` with a second operand writes it")
			e.writes = append(e.writes, operands[1:]...)
			e.reads = append(e.reads, operands[0])
			return e
		}
		e = e.demote("`%s` takes no operand here", name)
	}
	var paths []word
	switch s.paths {
	case pathsAll:
		paths = appendPaths(nil, operands)
	case pathsAfter1st:
		if !patternGiven && len(operands) > 0 {
			operands = operands[1:]
		}
		paths = appendPaths(nil, operands)
	}
	if len(paths) == 0 && (s.implicitCwd || strings.HasSuffix(name, "grep") && recursiveGrep(opts)) {
		paths = append(paths, plainWord("."))
	}
	if s.meta {
		e.metaReads = paths
		e.metaNoFollow = metaNoFollow(name, opts)
	} else {
		e.reads = append(e.reads, paths...)
	}
	e.walks = walksOf(name, opts, paths)
	return e
}

// recursiveGrep reports whether grep's options make it search trees.
func recursiveGrep(opts options) bool {
	return opts.has("-r", "-R", "--recursive", "--dereference-recursive") || opts.valueIs("recurse", "-d", "--directories")
}

// metaNoFollow reports whether a metadata reader looks at a symbolic link
// named as its operand rather than at what it points to.
func metaNoFollow(name string, opts options) bool {
	switch name {
	case "stat":
		return !opts.has("-L", "--dereference")
	case "readlink":
		return !opts.has("-f", "-e", "-m", "--canonicalize", "--canonicalize-existing", "--canonicalize-missing")
	case "ls", "dir", "vdir":
		return (opts.has("-l", "-d", "--directory") || opts.has("-g", "-o")) && !opts.has("-L", "-H", "--dereference", "--dereference-command-line")
	}
	return false
}

// walksOf says which of the directories a read-only command reads it
// descends into, reading or listing what it finds.
func walksOf(name string, opts options, reads []word) []walk {
	var w walk
	switch name {
	case "grep", "egrep", "fgrep":
		if !recursiveGrep(opts) {
			return nil
		}
		w = walk{content: true, hidden: true, follow: opts.has("-R", "--dereference-recursive")}
	case "rg":
		w = walk{content: true, follow: opts.has("-L", "--follow"),
			hidden: opts.has("--hidden", "-.") || opts.count("-u") >= 2}
	case "ls", "dir", "vdir":
		if !opts.has("-R", "--recursive") {
			return nil
		}
		w = walk{hidden: true, follow: opts.has("-L", "--dereference")}
	case "du":
		w = walk{hidden: true, follow: opts.has("-L", "--dereference")}
	case "tree":
		w = walk{hidden: opts.has("-a"), follow: opts.has("-l")}
	case "diff":
		if !opts.has("-r", "--recursive") {
			return nil
		}
		w = walk{content: true, hidden: true, follow: !opts.has("--no-dereference")}
	default:
		return nil
	}
	var out []walk
	for _, r := range reads {
		w.root = r
		out = append(out, w)
	}
	return out
}

// appendPaths adds operands that name files ("-" is standard input).
func appendPaths(dst, operands []word) []word {
	for _, o := range operands {
		if o.text == "-" && o.static() {
			continue
		}
		dst = append(dst, o)
	}
	return dst
}

// optPath is the file an option names, or an unknown path when its value
// is missing.
func optPath(o option) word {
	if !o.has {
		return unknownPath()
	}
	return o.value
}

// optIn reports whether the option name is in list. Long options also match
// by prefix, as getopt_long, git and curl accept any unambiguous
// abbreviation: `--o` counts as `--output`. An ambiguous prefix makes the
// program fail, so counting it as every option it abbreviates is safe.
func optIn(name string, list []string) bool {
	for _, l := range list {
		if name == l || abbreviates(name, l) {
			return true
		}
	}
	return false
}

// abbreviates reports whether name ("--x…") is a shortened form of the long
// option full ("--x…yz").
func abbreviates(name, full string) bool {
	return len(name) > 2 && strings.HasPrefix(name, "--") && strings.HasPrefix(full, name)
}

// scanArgs splits arguments GNU style: options may come after operands
// until "--"; short options in argShort and long ones in argLong take a
// value, attached or as the next word. A word only known at run time is an
// operand.
func scanArgs(args []word, argShort string, argLong []string) (options, []word) {
	var opts options
	var operands []word
	for i := 0; i < len(args); i++ {
		a, static := args[i].lit()
		switch {
		case !static || a == "-" || !strings.HasPrefix(a, "-"):
			operands = append(operands, args[i])
		case a == "--":
			return opts, append(operands, args[i+1:]...)
		case strings.HasPrefix(a, "--"):
			name, val, eq := strings.Cut(a, "=")
			opt := option{name: name}
			full, takesValue := matchLong(name, argLong)
			if takesValue {
				opt.name, opt.abbrev = "--"+full, full != name[2:]
			}
			if eq {
				opt.value, opt.has = plainWord(val), true
			} else if takesValue && i+1 < len(args) {
				i++
				opt.value, opt.has = args[i], true
			}
			opts = append(opts, opt)
		default:
			for j := 1; j < len(a); j++ {
				opt := option{name: "-" + a[j:j+1]}
				if strings.IndexByte(argShort, a[j]) >= 0 {
					if j+1 < len(a) {
						opt.value, opt.has = plainWord(a[j+1:]), true
					} else if i+1 < len(args) {
						i++
						opt.value, opt.has = args[i], true
					}
					opts = append(opts, opt)
					break
				}
				opts = append(opts, opt)
			}
		}
	}
	return opts, operands
}

// envEffect: env and printenv only print unless given a command.
func envEffect(args []word) effect {
	i, opts, ok := scanOpts(args, "uCS", []string{"unset", "chdir", "split-string"})
	if !ok {
		return notReadOnly("`env` has an argument only known at run time")
	}
	if opts.has("-S", "--split-string", "-C", "--chdir") {
		return notReadOnly("`env` runs a command")
	}
	rest, ok := skipAssignments(args[i:])
	if !ok || len(rest) > 0 {
		return notReadOnly("`env` runs a command")
	}
	return effect{readOnly: true}
}

// findEffect: find is read-only without its actions that run programs,
// delete or write files. It lists the trees under its starting points; with
// -exec and friends the commands it runs read what it finds.
func findEffect(args []word) effect {
	e := effect{readOnly: true}
	follow := false
	i := 0
	// Leading options -H -L -P -D opts -Olevel, then the starting points.
lead:
	for ; i < len(args); i++ {
		a, static := args[i].lit()
		if !static {
			break
		}
		switch {
		case a == "-L":
			follow = true
		case a == "-H" || a == "-P" || strings.HasPrefix(a, "-O"):
		case a == "-D":
			i++
		default:
			break lead
		}
	}
	for ; i < len(args); i++ {
		a, static := args[i].lit()
		if static && (strings.HasPrefix(a, "-") || a == "(" || a == "!" || a == ")" || a == ",") {
			break
		}
		if !static && !args[i].glob && e.readOnly {
			e = e.demote("`find` has an argument only known at run time")
		}
		e.reads = append(e.reads, args[i])
	}
	if len(e.reads) == 0 {
		e.reads = append(e.reads, plainWord("."))
	}
	content := false
	for ; i < len(args); i++ {
		a, static := args[i].lit()
		if !static {
			if e.readOnly {
				e = e.demote("`find` has an argument only known at run time or a glob")
			}
			continue
		}
		switch a {
		case "-follow":
			follow = true
		case "-exec", "-execdir", "-ok", "-okdir":
			content = true
			if e.readOnly {
				e = e.demote("`find %s` runs a command", a)
			}
		case "-delete":
			e = e.demote("`find -delete` deletes files")
			e.deletes = append(e.deletes, e.reads...)
		case "-fprint", "-fprint0", "-fprintf", "-fls":
			e = e.demote("`find %s` writes a file", a)
			if i+1 < len(args) {
				e.writes = append(e.writes, args[i+1])
			} else {
				e.writes = append(e.writes, unknownPath())
			}
		}
	}
	for _, r := range e.reads {
		e.walks = append(e.walks, walk{root: r, content: content, follow: follow, hidden: true})
	}
	return e
}

// jqEffect: jq cannot run programs; its filter comes first, then files.
func jqEffect(args []word) effect {
	e := effect{readOnly: true}
	filterGiven := false
	positionalAreArgs := false
	var operands []word
	for i := 0; i < len(args); i++ {
		a, static := args[i].lit()
		if !static {
			if args[i].dynamic && e.readOnly {
				e = e.demote("`jq` has an argument only known at run time")
			}
			operands = append(operands, args[i])
			continue
		}
		if positionalAreArgs && !strings.HasPrefix(a, "-") {
			if !filterGiven {
				filterGiven = true
			}
			continue
		}
		switch {
		case a == "--":
			operands = append(operands, args[i+1:]...)
			i = len(args)
		case a == "--arg" || a == "--argjson":
			i += 2
		case a == "--slurpfile" || a == "--rawfile":
			if i+2 < len(args) {
				e.reads = append(e.reads, args[i+2])
			}
			i += 2
		case a == "-f" || a == "--from-file":
			if i+1 < len(args) {
				e.reads = append(e.reads, args[i+1])
			}
			filterGiven = true
			i++
		case a == "-L" || a == "--indent":
			if a == "-L" && i+1 < len(args) {
				e.reads = append(e.reads, args[i+1])
			}
			i++
		case strings.HasPrefix(a, "-L"):
			e.reads = append(e.reads, plainWord(a[2:]))
		case a == "--args" || a == "--jsonargs":
			positionalAreArgs = true
		case strings.HasPrefix(a, "-") && a != "-":
		default:
			operands = append(operands, args[i])
		}
	}
	if !filterGiven && len(operands) > 0 {
		operands = operands[1:]
	}
	e.reads = appendPaths(e.reads, operands)
	return e
}

// teeEffect: tee writes its operands.
func teeEffect(args []word) effect {
	opts, operands := scanArgs(args, "", nil)
	_ = opts
	files := appendPaths(nil, operands)
	if len(files) == 0 {
		return effect{readOnly: true}
	}
	e := effect{fileOp: true, writes: files, why: "`tee` writes files"}
	for _, f := range files {
		if !f.static() && !f.glob {
			e.fileOp = false
		}
	}
	return e
}

// ddEffect: dd reads if= and writes of=.
func ddEffect(args []word) effect {
	e := effect{readOnly: true}
	for _, a := range args {
		s := a.text
		switch {
		case strings.HasPrefix(s, "if="):
			e.reads = append(e.reads, word{text: s[3:], dynamic: a.dynamic, glob: a.glob})
		case strings.HasPrefix(s, "of="):
			e.readOnly = false
			e.why = "`dd of=` writes a file"
			e.writes = append(e.writes, word{text: s[3:], dynamic: a.dynamic, glob: a.glob})
		case a.dynamic:
			e = e.demote("`dd` has an argument only known at run time")
			e.reads = append(e.reads, unknownPath())
			e.writes = append(e.writes, unknownPath())
		}
	}
	return e
}

// fileOpEffect: mkdir, touch, rm, rmdir, mv, cp and ln.
func fileOpEffect(name string, args []word) effect {
	var argShort string
	var argLong []string
	switch name {
	case "mkdir":
		argShort, argLong = "m", []string{"mode", "context"}
	case "touch":
		argShort, argLong = "dtr", []string{"date", "reference", "time"}
	case "mv", "cp", "ln":
		argShort, argLong = "tS", []string{"target-directory", "suffix"}
	}
	e := effect{fileOp: true, why: fmt.Sprintf("`%s` changes files", name)}
	opts, operands := scanArgs(args, argShort, argLong)
	for _, a := range args {
		if a.dynamic && !a.procSubst {
			e.fileOp = false // where it writes is only known at run time
		}
	}
	var target *word
	for _, o := range opts {
		switch o.name {
		case "-t", "--target-directory":
			v := optPath(o)
			target = &v
		case "-r", "--reference":
			if name == "touch" {
				e.reads = append(e.reads, optPath(o))
			}
		}
	}
	if len(operands) == 0 && target == nil {
		e.fileOp = false
		return e
	}
	switch name {
	case "mkdir", "touch":
		e.writes = operands
	case "rm", "rmdir":
		e.writes, e.deletes = operands, operands
	case "mv", "cp", "ln":
		sources := operands
		var dest word
		switch {
		case target != nil:
			dest = *target
		case len(operands) == 1 && name == "ln":
			// ln TARGET makes a link named like TARGET in the directory.
			dest = plainWord(".")
		case len(operands) >= 2:
			dest, sources = operands[len(operands)-1], operands[:len(operands)-1]
		default:
			e.fileOp = false
			return e
		}
		e.writes = append(e.writes, dest)
		if dest.static() && !harmlessWrite(dest.text) {
			// The destination may be a directory: the files land inside.
			for _, s := range sources {
				if s.static() && s.text != "" {
					e.writes = append(e.writes, plainWord(strings.TrimSuffix(dest.text, "/")+"/"+pathBase(s.text)))
				}
			}
		}
		switch name {
		case "mv":
			e.writes = append(e.writes, sources...)
			e.deletes = sources
		case "cp":
			e.reads = sources
			if opts.has("-r", "-R", "-a", "--recursive", "--archive") {
				for _, src := range sources {
					e.walks = append(e.walks, walk{root: src, content: true, hidden: true, follow: opts.has("-L", "--dereference")})
				}
			}
		case "ln":
			// A symlink's target is read through it later: it must not
			// point outside; a relative one with ".." is resolved from the
			// link's directory, which is not checked, so refuse it.
			for _, s := range sources {
				if strings.Contains(s.text, "..") && !strings.HasPrefix(s.text, "/") {
					e.fileOp = false
				}
			}
			e.reads = sources
			if !opts.has("-s", "--symbolic") {
				e.hardLinks = sources
			}
		}
	}
	return e
}

// downloadEffect: curl and wget are never read-only (they reach the
// network), but the files they write are still checked.
func downloadEffect(name string, args []word) effect {
	e := effect{why: fmt.Sprintf("`%s` reaches the network", name)}
	var opts options
	if name == "curl" {
		opts, _ = scanArgs(args, "AbcCdDeEFHhKmoPQrtTuUwxXyYz", []string{"output", "dump-header", "cookie-jar", "trace", "trace-ascii",
			"stderr", "etag-save", "libcurl", "hsts", "alt-svc", "output-dir", "upload-file", "config", "data", "data-binary",
			"header", "user-agent", "cookie", "referer", "form", "request", "url", "user", "proxy", "max-time", "connect-timeout", "write-out"})
		for _, o := range opts {
			switch {
			case optIn(o.name, []string{"-o", "--output", "-D", "--dump-header", "-c", "--cookie-jar", "--trace", "--trace-ascii",
				"--stderr", "--etag-save", "--libcurl", "--hsts", "--alt-svc", "--output-dir"}):
				if v := optPath(o); v.text != "-" {
					e.writes = append(e.writes, v)
				}
			case o.name == "-O" || o.name == "--remote-name" || o.name == "--remote-name-all":
				e.writes = append(e.writes, plainWord("."))
			case optIn(o.name, []string{"-T", "--upload-file", "-K", "--config"}):
				e.reads = append(e.reads, optPath(o))
			}
		}
		return e
	}
	opts, _ = scanArgs(args, "OoaPiDeUtTwQ", []string{"output-document", "output-file", "append-output", "directory-prefix",
		"input-file", "save-cookies", "load-cookies", "post-file", "body-file", "user-agent", "tries", "timeout", "wait", "quota", "header"})
	hasOut := false
	for _, o := range opts {
		switch {
		case optIn(o.name, []string{"-O", "--output-document", "-o", "--output-file", "-a", "--append-output",
			"-P", "--directory-prefix", "--save-cookies"}):
			hasOut = hasOut || optIn(o.name, []string{"-O", "--output-document", "-P", "--directory-prefix"})
			if v := optPath(o); v.text != "-" {
				e.writes = append(e.writes, v)
			}
		case optIn(o.name, []string{"-i", "--input-file", "--post-file", "--body-file", "--load-cookies"}):
			e.reads = append(e.reads, optPath(o))
		}
	}
	if !hasOut {
		e.writes = append(e.writes, plainWord("."))
	}
	return e
}

// testEffect: test and [ only test, except that -v and -R evaluate an
// array subscript in their operand (`[ -v 'a[$(rm x)]' ]` runs rm). A word
// only known at run time is accepted only where it cannot be an operator:
// quoted, right after a unary test or next to a binary one.
func testEffect(name string, args []word) effect {
	if name == "[" && len(args) > 0 {
		if s, ok := args[len(args)-1].lit(); ok && s == "]" {
			args = args[:len(args)-1]
		}
	}
	static := func(i int) string {
		if i < 0 || i >= len(args) {
			return ""
		}
		s, _ := args[i].lit()
		return s
	}
	for i, a := range args {
		if s, ok := a.lit(); ok {
			if s == "-v" || s == "-R" {
				return notReadOnly("`%s %s` evaluates a variable name", name, s)
			}
			continue
		}
		if a.split || a.glob {
			return notReadOnly("`%s` has an unquoted expansion that could become an operator", name)
		}
		if len(args) == 1 || testUnary(static(i-1)) || testBinary(static(i-1)) || testBinary(static(i+1)) {
			continue
		}
		return notReadOnly("`%s` has an expansion where an operator could be", name)
	}
	return effect{readOnly: true}
}

func testUnary(op string) bool {
	switch op {
	case "-n", "-z", "-e", "-f", "-d", "-r", "-w", "-x", "-s", "-L", "-h", "-b", "-c", "-p", "-S", "-t",
		"-g", "-u", "-k", "-O", "-G", "-N", "-a", "!":
		return true
	}
	return false
}

func testBinary(op string) bool {
	switch op {
	case "=", "==", "!=", "<", ">", "-eq", "-ne", "-lt", "-le", "-gt", "-ge", "-nt", "-ot", "-ef":
		return true
	}
	return false
}

// pathBase is the last element of a path as written.
func pathBase(p string) string {
	p = strings.TrimRight(p, "/")
	if i := strings.LastIndexByte(p, '/'); i >= 0 {
		return p[i+1:]
	}
	return p
}
