package shellcmd

import "strings"

// Options as programs read them: getopt's short clusters and values,
// GNU's long options and their abbreviations.

// options are the options scanOpts saw, in order.
type options []option

type option struct {
	name  string // "-x" or "--long" (an abbreviation is given its full name)
	value Word
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
	s, static := w.Lit()
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

func (o options) value(names ...string) (Word, bool) {
	for _, opt := range o {
		for _, n := range names {
			if opt.name == n && opt.has {
				return opt.value, true
			}
		}
	}
	return Word{}, false
}

// scanOpts reads leading options, stopping at the first operand or "--",
// and returns the operand's index. Short options listed in argShort and
// long options listed in argLong take a value (attached or as the next
// word). ok is false when a dynamic word stands where an option may be.
func scanOpts(args []Word, argShort string, argLong []string) (int, options, bool) {
	var opts options
	for i := 0; i < len(args); i++ {
		a, static := args[i].Lit()
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
				if !args[i].Static() {
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
						if !args[i].Static() {
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
func scanArgs(args []Word, argShort string, argLong []string) (options, []Word) {
	var opts options
	var operands []Word
	for i := 0; i < len(args); i++ {
		a, static := args[i].Lit()
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
