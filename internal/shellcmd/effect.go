package shellcmd

import (
	"fmt"
	"strings"
)

// Effect is what one simple command does to files, as far as its words
// tell. Paths are words as written: the caller resolves them against the
// command's directories.
type Effect struct {
	// ReadOnly: the command only reads (the files in Reads, MetaReads and
	// Walks) and prints. A command is read-only only when that is proven:
	// a program the analysis does not know is not.
	ReadOnly bool
	// FileOp: a common file-changing command (mkdir, touch, rm, rmdir, mv,
	// cp, ln, sed -i, tee) whose words name every file it changes, each in
	// Writes.
	FileOp bool
	// Reads are the files and directories it reads, known or not: they are
	// collected even when the command is not read-only.
	Reads []Word
	// MetaReads are paths whose names and metadata it reads, not their
	// contents (ls, stat, du, tree, readlink, realpath); MetaNoFollow: a
	// symbolic link named there is looked at itself, not followed.
	MetaReads    []Word
	MetaNoFollow bool
	// Writes are the files it creates or changes: `sort -o F`, `tee F`,
	// `dd of=F`, `cp A F` (and F/A, should F be a directory), …
	Writes []Word
	// Deletes are paths removed or moved away (rm, rmdir, mv sources).
	Deletes []Word
	// Maybe are words that may name files a program the analysis does not
	// know reads or writes (its operands, the values of NAME=VALUE and
	// --opt=VALUE words, git's paths and REV:path operands).
	Maybe []Word
	// Walks are the trees it descends into.
	Walks []Walk
	// HardLinks are files given a second name (ln without -s): writing the
	// new name writes them.
	HardLinks []Word
	// Git: the command is git, which runs in the repository it finds from
	// the command's directory, moved by the -C operands in GitCd.
	Git   bool
	GitCd []Word
	// GitNamed is the option naming a repository on the command line
	// (--git-dir, --work-tree, --bare), if any.
	GitNamed string
	// Why says why the command is not read-only.
	Why string
}

// Walk is a directory tree a command descends into.
type Walk struct {
	Root Word
	// Content: it reads the files it finds (grep -r), rather than only
	// listing them (ls -R, du, find without -exec).
	Content bool
	// Follow: it follows the symbolic links it meets (grep -R, find -L).
	Follow bool
	// Hidden: it also reads hidden files (rg skips them by default).
	Hidden bool
}

func notReadOnly(format string, args ...any) Effect {
	return Effect{Why: fmt.Sprintf(format, args...)}
}

// Demote marks e as neither read-only nor a file operation, for the reason
// given, keeping what it reads and writes.
func (e Effect) Demote(format string, args ...any) Effect {
	e.ReadOnly, e.FileOp = false, false
	e.Why = fmt.Sprintf(format, args...)
	return e
}

// unknownPath stands for a path only known at run time.
func unknownPath() Word { return Word{Text: RunTime, Dynamic: true} }

// Effect is what the command does to files (see EffectOf); a declaration
// (declare, export, local…) sets shell variables.
func (sc *Command) Effect() Effect {
	if sc.Decl {
		return notReadOnly("`%s` sets shell variables", sc.Args[0].Text)
	}
	return EffectOf(sc.Args)
}

// EffectOf classifies the command args run through its harmless wrappers
// (see HarmlessLayers): what the innermost command does, plus what the
// wrappers write (time -o F). A statement without words (assignments or
// redirections alone) is read-only: what its redirections do is in
// Command.Redirs.
func EffectOf(args []Word) Effect {
	layers, writes := HarmlessLayers(args)
	eff := Effect{ReadOnly: true}
	if len(args) > 0 {
		eff = commandEffect(layers[len(layers)-1])
	}
	eff.Writes = append(writes, eff.Writes...)
	return eff
}

// commandEffect classifies one simple command (wrappers already peeled).
func commandEffect(args []Word) Effect {
	name, ok := args[0].Lit()
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
		return Effect{ReadOnly: true, Reads: []Word{{Text: target, Tilde: target == "~" || strings.HasPrefix(target, "~/")}}}
	case "popd", "dirs":
		return Effect{ReadOnly: true}
	case "env":
		return envEffect(rest)
	case "command":
		_, opts, ok := scanOpts(rest, "", nil)
		if ok && opts.has("-v", "-V") {
			return Effect{ReadOnly: true}
		}
		return notReadOnly("`command` runs another command")
	case "printf":
		if len(rest) > 0 {
			first, static := rest[0].Lit()
			if !static || strings.HasPrefix(first, "-") && first != "--" {
				return notReadOnly("`printf` with an option (-v assigns a variable)")
			}
		}
		return Effect{ReadOnly: true}
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
			e.Reads = rest[:1]
		}
		return e
	}
	spec, ok := roSpecFor(name)
	if !ok {
		e := notReadOnly("`%s` is not a read-only command", name)
		e.Maybe = operandWords(rest)
		if follow, isArchiver := archivers[name]; isArchiver {
			// Archivers and copiers read the trees they are given.
			for _, w := range e.Maybe {
				e.Walks = append(e.Walks, Walk{Root: w, Content: true, Hidden: true, Follow: follow})
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
func operandWords(args []Word) []Word {
	var out []Word
	for _, a := range args {
		if !a.Static() {
			continue
		}
		if _, val, ok := strings.Cut(a.Text, "="); ok {
			out = append(out, plainWord(val))
			if !strings.HasPrefix(a.Text, "-") {
				out = append(out, a)
			}
			continue
		}
		if !strings.HasPrefix(a.Text, "-") {
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
	// their contents (ls, stat, du): they are Effect.MetaReads.
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
func (s roSpec) apply(name string, args []Word) Effect {
	e := Effect{ReadOnly: true}
	for _, a := range args {
		if a.ProcSubst {
			continue
		}
		if a.Dynamic && !s.dynOK && !a.loopPaths() && e.ReadOnly {
			e = e.Demote("`%s` has an argument only known at run time", name)
		}
		if a.Glob && s.strict && e.ReadOnly {
			e = e.Demote("`%s` has a glob that could expand to an option", name)
		}
	}
	opts, operands := scanArgs(args, s.argShort, s.argLong)
	patternGiven := false
	for _, o := range opts {
		switch {
		case optIn(o.name, s.forbid), s.allowOnly != nil && !optIn(o.name, s.allowOnly):
			e = e.Demote("`%s %s` is not read-only", name, o.name)
		case optIn(o.name, s.writeOpts):
			e = e.Demote("`%s %s` writes a file", name, o.name)
			e.Writes = append(e.Writes, optPath(o))
		}
		if optIn(o.name, s.readOpts) {
			e.Reads = append(e.Reads, optPath(o))
		}
		if optIn(o.name, s.listOpts) {
			e.Reads = append(e.Reads, unknownPath()) // the files it lists
		}
		if optIn(o.name, s.patternOpts) {
			patternGiven = true
		}
		if o.abbrev && o.has {
			// A value taken by an abbreviation the program may read
			// differently: it could be a file operand.
			e.Maybe = append(e.Maybe, o.value)
		}
	}
	if s.maxOperands >= 0 && len(operands) > s.maxOperands {
		if name == "uniq" {
			e = e.Demote("`uniq` with a second operand writes it")
			e.Writes = append(e.Writes, operands[1:]...)
			e.Reads = append(e.Reads, operands[0])
			return e
		}
		e = e.Demote("`%s` takes no operand here", name)
	}
	var paths []Word
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
		e.MetaReads = paths
		e.MetaNoFollow = metaNoFollow(name, opts)
	} else {
		e.Reads = append(e.Reads, paths...)
	}
	e.Walks = walksOf(name, opts, paths)
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
func walksOf(name string, opts options, reads []Word) []Walk {
	var w Walk
	switch name {
	case "grep", "egrep", "fgrep":
		if !recursiveGrep(opts) {
			return nil
		}
		w = Walk{Content: true, Hidden: true, Follow: opts.has("-R", "--dereference-recursive")}
	case "rg":
		w = Walk{Content: true, Follow: opts.has("-L", "--follow"),
			Hidden: opts.has("--hidden", "-.") || opts.count("-u") >= 2}
	case "ls", "dir", "vdir":
		if !opts.has("-R", "--recursive") {
			return nil
		}
		w = Walk{Hidden: true, Follow: opts.has("-L", "--dereference")}
	case "du":
		w = Walk{Hidden: true, Follow: opts.has("-L", "--dereference")}
	case "tree":
		w = Walk{Hidden: opts.has("-a"), Follow: opts.has("-l")}
	case "diff":
		if !opts.has("-r", "--recursive") {
			return nil
		}
		w = Walk{Content: true, Hidden: true, Follow: !opts.has("--no-dereference")}
	default:
		return nil
	}
	var out []Walk
	for _, r := range reads {
		w.Root = r
		out = append(out, w)
	}
	return out
}

// appendPaths adds operands that name files ("-" is standard input).
func appendPaths(dst, operands []Word) []Word {
	for _, o := range operands {
		if o.Text == "-" && o.Static() {
			continue
		}
		dst = append(dst, o)
	}
	return dst
}

// optPath is the file an option names, or an unknown path when its value
// is missing.
func optPath(o option) Word {
	if !o.has {
		return unknownPath()
	}
	return o.value
}

// envEffect: env and printenv only print unless given a command.
func envEffect(args []Word) Effect {
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
	return Effect{ReadOnly: true}
}

// findEffect: find is read-only without its actions that run programs,
// delete or write files. It lists the trees under its starting points; with
// -exec and friends the commands it runs read what it finds.
func findEffect(args []Word) Effect {
	e := Effect{ReadOnly: true}
	follow := false
	i := 0
	// Leading options -H -L -P -D opts -Olevel, then the starting points.
lead:
	for ; i < len(args); i++ {
		a, static := args[i].Lit()
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
		a, static := args[i].Lit()
		if static && (strings.HasPrefix(a, "-") || a == "(" || a == "!" || a == ")" || a == ",") {
			break
		}
		if !static && !args[i].Glob && e.ReadOnly {
			e = e.Demote("`find` has an argument only known at run time")
		}
		e.Reads = append(e.Reads, args[i])
	}
	if len(e.Reads) == 0 {
		e.Reads = append(e.Reads, plainWord("."))
	}
	content := false
	for ; i < len(args); i++ {
		a, static := args[i].Lit()
		if !static {
			if e.ReadOnly {
				e = e.Demote("`find` has an argument only known at run time or a glob")
			}
			continue
		}
		switch a {
		case "-follow":
			follow = true
		case "-exec", "-execdir", "-ok", "-okdir":
			content = true
			if e.ReadOnly {
				e = e.Demote("`find %s` runs a command", a)
			}
		case "-delete":
			e = e.Demote("`find -delete` deletes files")
			e.Deletes = append(e.Deletes, e.Reads...)
		case "-fprint", "-fprint0", "-fprintf", "-fls":
			e = e.Demote("`find %s` writes a file", a)
			if i+1 < len(args) {
				e.Writes = append(e.Writes, args[i+1])
			} else {
				e.Writes = append(e.Writes, unknownPath())
			}
		}
	}
	for _, r := range e.Reads {
		e.Walks = append(e.Walks, Walk{Root: r, Content: content, Follow: follow, Hidden: true})
	}
	return e
}

// jqEffect: jq cannot run programs; its filter comes first, then files.
func jqEffect(args []Word) Effect {
	e := Effect{ReadOnly: true}
	filterGiven := false
	positionalAreArgs := false
	var operands []Word
	for i := 0; i < len(args); i++ {
		a, static := args[i].Lit()
		if !static {
			if args[i].Dynamic && e.ReadOnly {
				e = e.Demote("`jq` has an argument only known at run time")
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
				e.Reads = append(e.Reads, args[i+2])
			}
			i += 2
		case a == "-f" || a == "--from-file":
			if i+1 < len(args) {
				e.Reads = append(e.Reads, args[i+1])
			}
			filterGiven = true
			i++
		case a == "-L" || a == "--indent":
			if a == "-L" && i+1 < len(args) {
				e.Reads = append(e.Reads, args[i+1])
			}
			i++
		case strings.HasPrefix(a, "-L"):
			e.Reads = append(e.Reads, plainWord(a[2:]))
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
	e.Reads = appendPaths(e.Reads, operands)
	return e
}

// teeEffect: tee writes its operands.
func teeEffect(args []Word) Effect {
	opts, operands := scanArgs(args, "", nil)
	_ = opts
	files := appendPaths(nil, operands)
	if len(files) == 0 {
		return Effect{ReadOnly: true}
	}
	e := Effect{FileOp: true, Writes: files, Why: "`tee` writes files"}
	for _, f := range files {
		if !f.Static() && !f.Glob {
			e.FileOp = false
		}
	}
	return e
}

// ddEffect: dd reads if= and writes of=.
func ddEffect(args []Word) Effect {
	e := Effect{ReadOnly: true}
	for _, a := range args {
		s := a.Text
		switch {
		case strings.HasPrefix(s, "if="):
			e.Reads = append(e.Reads, Word{Text: s[3:], Dynamic: a.Dynamic, Glob: a.Glob})
		case strings.HasPrefix(s, "of="):
			e.ReadOnly = false
			e.Why = "`dd of=` writes a file"
			e.Writes = append(e.Writes, Word{Text: s[3:], Dynamic: a.Dynamic, Glob: a.Glob})
		case a.Dynamic:
			e = e.Demote("`dd` has an argument only known at run time")
			e.Reads = append(e.Reads, unknownPath())
			e.Writes = append(e.Writes, unknownPath())
		}
	}
	return e
}

// fileOpEffect: mkdir, touch, rm, rmdir, mv, cp and ln.
func fileOpEffect(name string, args []Word) Effect {
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
	e := Effect{FileOp: true, Why: fmt.Sprintf("`%s` changes files", name)}
	opts, operands := scanArgs(args, argShort, argLong)
	for _, a := range args {
		if a.Dynamic && !a.ProcSubst {
			e.FileOp = false // where it writes is only known at run time
		}
	}
	var target *Word
	for _, o := range opts {
		switch o.name {
		case "-t", "--target-directory":
			v := optPath(o)
			target = &v
		case "-r", "--reference":
			if name == "touch" {
				e.Reads = append(e.Reads, optPath(o))
			}
		}
	}
	if len(operands) == 0 && target == nil {
		e.FileOp = false
		return e
	}
	switch name {
	case "mkdir", "touch":
		e.Writes = operands
	case "rm", "rmdir":
		e.Writes, e.Deletes = operands, operands
	case "mv", "cp", "ln":
		sources := operands
		var dest Word
		switch {
		case target != nil:
			dest = *target
		case len(operands) == 1 && name == "ln":
			// ln TARGET makes a link named like TARGET in the directory.
			dest = plainWord(".")
		case len(operands) >= 2:
			dest, sources = operands[len(operands)-1], operands[:len(operands)-1]
		default:
			e.FileOp = false
			return e
		}
		e.Writes = append(e.Writes, dest)
		if dest.Static() && !HarmlessWrite(dest.Text) {
			// The destination may be a directory: the files land inside.
			for _, s := range sources {
				if s.Static() && s.Text != "" {
					e.Writes = append(e.Writes, plainWord(strings.TrimSuffix(dest.Text, "/")+"/"+pathBase(s.Text)))
				}
			}
		}
		switch name {
		case "mv":
			e.Writes = append(e.Writes, sources...)
			e.Deletes = sources
		case "cp":
			e.Reads = sources
			if opts.has("-r", "-R", "-a", "--recursive", "--archive") {
				for _, src := range sources {
					e.Walks = append(e.Walks, Walk{Root: src, Content: true, Hidden: true, Follow: opts.has("-L", "--dereference")})
				}
			}
		case "ln":
			// A symlink's target is read through it later: it must not
			// point outside; a relative one with ".." is resolved from the
			// link's directory, which is not checked, so refuse it.
			for _, s := range sources {
				if strings.Contains(s.Text, "..") && !strings.HasPrefix(s.Text, "/") {
					e.FileOp = false
				}
			}
			e.Reads = sources
			if !opts.has("-s", "--symbolic") {
				e.HardLinks = sources
			}
		}
	}
	return e
}

// downloadEffect: curl and wget are never read-only (they reach the
// network), but the files they read and write are told.
func downloadEffect(name string, args []Word) Effect {
	e := Effect{Why: fmt.Sprintf("`%s` reaches the network", name)}
	var opts options
	if name == "curl" {
		opts, _ = scanArgs(args, "AbcCdDeEFHhKmoPQrtTuUwxXyYz", []string{"output", "dump-header", "cookie-jar", "trace", "trace-ascii",
			"stderr", "etag-save", "libcurl", "hsts", "alt-svc", "output-dir", "upload-file", "config", "data", "data-binary",
			"header", "user-agent", "cookie", "referer", "form", "request", "url", "user", "proxy", "max-time", "connect-timeout", "write-out"})
		for _, o := range opts {
			switch {
			case optIn(o.name, []string{"-o", "--output", "-D", "--dump-header", "-c", "--cookie-jar", "--trace", "--trace-ascii",
				"--stderr", "--etag-save", "--libcurl", "--hsts", "--alt-svc", "--output-dir"}):
				if v := optPath(o); v.Text != "-" {
					e.Writes = append(e.Writes, v)
				}
			case o.name == "-O" || o.name == "--remote-name" || o.name == "--remote-name-all":
				e.Writes = append(e.Writes, plainWord("."))
			case optIn(o.name, []string{"-T", "--upload-file", "-K", "--config"}):
				e.Reads = append(e.Reads, optPath(o))
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
			if v := optPath(o); v.Text != "-" {
				e.Writes = append(e.Writes, v)
			}
		case optIn(o.name, []string{"-i", "--input-file", "--post-file", "--body-file", "--load-cookies"}):
			e.Reads = append(e.Reads, optPath(o))
		}
	}
	if !hasOut {
		e.Writes = append(e.Writes, plainWord("."))
	}
	return e
}

// testEffect: test and [ only test, except that -v and -R evaluate an
// array subscript in their operand (`[ -v 'a[$(rm x)]' ]` runs rm). A word
// only known at run time is accepted only where it cannot be an operator:
// quoted, right after a unary test or next to a binary one.
func testEffect(name string, args []Word) Effect {
	if name == "[" && len(args) > 0 {
		if s, ok := args[len(args)-1].Lit(); ok && s == "]" {
			args = args[:len(args)-1]
		}
	}
	static := func(i int) string {
		if i < 0 || i >= len(args) {
			return ""
		}
		s, _ := args[i].Lit()
		return s
	}
	for i, a := range args {
		if s, ok := a.Lit(); ok {
			if s == "-v" || s == "-R" {
				return notReadOnly("`%s %s` evaluates a variable name", name, s)
			}
			continue
		}
		if a.Split || a.Glob {
			return notReadOnly("`%s` has an unquoted expansion that could become an operator", name)
		}
		if len(args) == 1 || testUnary(static(i-1)) || testBinary(static(i-1)) || testBinary(static(i+1)) {
			continue
		}
		return notReadOnly("`%s` has an expansion where an operator could be", name)
	}
	return Effect{ReadOnly: true}
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

// HarmlessWrite reports whether writing p (clean and absolute, or as
// written) has no effect on files: /dev/null and the standard streams.
func HarmlessWrite(p string) bool {
	switch p {
	case "/dev/null", "/dev/stdout", "/dev/stderr", "/dev/tty", "/dev/fd/1", "/dev/fd/2":
		return true
	}
	return false
}

// HarmlessRead reports whether reading p (clean and absolute, or as
// written) reveals nothing from files: /dev/null, the standard input and
// the random and zero devices.
func HarmlessRead(p string) bool {
	switch p {
	case "/dev/null", "/dev/stdin", "/dev/zero", "/dev/urandom", "/dev/random", "/dev/fd/0", "/dev/tty":
		return true
	}
	return false
}
