package shellcmd

import (
	"fmt"
	"strings"
)

// sedEffect: sed is read-only, and `sed -i` a file operation, when its
// script only edits text: no e (run a command), w/W (write a file) or
// r/R (read a file), and no s///e or s///w flags.
func sedEffect(args []Word) Effect {
	var scripts []Word
	var files []Word
	inPlace := false
	scriptFromFile := false
	why := ""
	notRO := func(format string, a ...any) {
		if why == "" {
			why = fmt.Sprintf(format, a...)
		}
	}
	for i := 0; i < len(args); i++ {
		a, static := args[i].Lit()
		if !static {
			if !args[i].Glob || args[i].Dynamic {
				notRO("`sed` has an argument only known at run time")
			}
			if len(scripts) > 0 || scriptFromFile {
				files = append(files, args[i])
			} else {
				scripts = append(scripts, args[i])
			}
			continue
		}
		switch {
		case a == "--":
			files = append(files, args[i+1:]...)
			i = len(args)
		case strings.HasPrefix(a, "--"):
			name, val, eq := strings.Cut(a, "=")
			switch {
			case optIn(name, []string{"--expression"}):
				if eq {
					scripts = append(scripts, plainWord(val))
				} else if i+1 < len(args) {
					i++
					scripts = append(scripts, args[i])
				}
			case optIn(name, []string{"--file"}):
				scriptFromFile = true
				if !eq {
					i++
				}
			case optIn(name, []string{"--in-place"}):
				inPlace = true
			case optIn(name, []string{"--line-length"}):
				if !eq {
					i++
				}
			case optIn(name, []string{"--quiet", "--silent", "--regexp-extended", "--separate", "--null-data",
				"--zero-terminated", "--unbuffered", "--posix", "--sandbox", "--debug", "--follow-symlinks", "--binary"}):
			default:
				notRO("`sed %s` is not known to be read-only", name)
			}
		case strings.HasPrefix(a, "-") && a != "-":
		cluster:
			for j := 1; j < len(a); j++ {
				switch a[j] {
				case 'n', 's', 'E', 'r', 'z', 'u', 'b':
				case 'i':
					inPlace = true // the rest of the cluster is a backup suffix
					break cluster
				case 'e', 'f', 'l':
					var v Word
					if j+1 < len(a) {
						v = plainWord(a[j+1:])
					} else if i+1 < len(args) {
						i++
						v = args[i]
					}
					switch a[j] {
					case 'e':
						scripts = append(scripts, v)
					case 'f':
						scriptFromFile = true
					}
					break cluster
				default:
					notRO("`sed -%c` is not known to be read-only", a[j])
				}
			}
		default:
			if len(scripts) == 0 && !scriptFromFile {
				scripts = append(scripts, args[i])
				continue
			}
			files = append(files, args[i])
		}
	}
	if scriptFromFile {
		notRO("`sed -f` runs a script file")
	}
	for _, s := range scripts {
		src, ok := s.Lit()
		if !ok || !sedScriptSafe(src) {
			notRO("the `sed` script can run commands or write files")
		}
	}
	files = appendPaths(nil, files)
	e := Effect{ReadOnly: true, Reads: files}
	if inPlace {
		e = Effect{FileOp: len(files) > 0, Reads: files, Writes: files, Why: "`sed -i` edits files"}
		for _, f := range files {
			if f.Dynamic {
				e.FileOp = false
			}
		}
	}
	if why != "" {
		e = e.Demote("%s", why)
	}
	return e
}

// sedScriptSafe parses a GNU sed script and reports whether it only
// transforms text. Anything it does not understand is unsafe.
func sedScriptSafe(s string) bool {
	p := sedParser{s: s}
	for {
		p.skip(" \t\n;")
		if p.eof() {
			return true
		}
		if !p.address() {
			return false
		}
		p.skip(" \t")
		for p.peek() == '!' {
			p.i++
			p.skip(" \t")
		}
		if p.eof() {
			return false
		}
		c := p.next()
		switch c {
		case '{', '}', '=', 'd', 'D', 'g', 'G', 'h', 'H', 'n', 'N', 'p', 'P', 'x', 'z', 'F':
		case 'l', 'q', 'Q', 'L':
			p.skip(" \t")
			p.skip("0123456789")
		case ':', 'b', 't', 'T':
			p.skip(" \t")
			p.untilAny(";\n")
		case 'a', 'i', 'c':
			p.text()
		case '#':
			p.untilAny("\n")
		case 's':
			if !p.delimited(2) {
				return false
			}
			for !p.eof() && strings.IndexByte(";\n} \t", p.peek()) < 0 {
				switch f := p.next(); {
				case f == 'g' || f == 'p' || f == 'i' || f == 'I' || f == 'm' || f == 'M' || f >= '0' && f <= '9':
				default: // e runs the pattern space, w writes a file
					return false
				}
			}
		case 'y':
			if !p.delimited(2) {
				return false
			}
		default: // e, w, W, r, R, v and anything unknown
			return false
		}
	}
}

type sedParser struct {
	s string
	i int
}

func (p *sedParser) eof() bool { return p.i >= len(p.s) }

func (p *sedParser) peek() byte {
	if p.eof() {
		return 0
	}
	return p.s[p.i]
}

func (p *sedParser) next() byte {
	c := p.peek()
	p.i++
	return c
}

func (p *sedParser) skip(set string) {
	for !p.eof() && strings.IndexByte(set, p.s[p.i]) >= 0 {
		p.i++
	}
}

func (p *sedParser) untilAny(set string) {
	for !p.eof() && strings.IndexByte(set, p.s[p.i]) < 0 {
		p.i++
	}
}

// text skips the text of a, i or c: to the end of the line, going on
// after a line that ends with a backslash.
func (p *sedParser) text() {
	for !p.eof() {
		c := p.next()
		if c == '\\' && !p.eof() {
			p.i++
			continue
		}
		if c == '\n' {
			return
		}
	}
}

// address skips an optional address or address range.
func (p *sedParser) address() bool {
	if !p.addr1() {
		return false
	}
	p.skip(" \t")
	if p.peek() == ',' {
		p.i++
		p.skip(" \t")
		if p.peek() == '+' || p.peek() == '~' {
			p.i++
			p.skip("0123456789")
			return true
		}
		return p.addr1()
	}
	return true
}

func (p *sedParser) addr1() bool {
	switch c := p.peek(); {
	case c >= '0' && c <= '9':
		p.skip("0123456789")
		if p.peek() == '~' {
			p.i++
			p.skip("0123456789")
		}
	case c == '$':
		p.i++
	case c == '/':
		if !p.delimited(1) {
			return false
		}
		p.skip("IM")
	case c == '\\':
		p.i++
		if !p.delimited(1) {
			return false
		}
		p.skip("IM")
	}
	return true
}

// delimited reads a delimiter and n parts ending with it, with backslash
// escapes; the delimiter is the character at the current position.
func (p *sedParser) delimited(n int) bool {
	if p.eof() {
		return false
	}
	d := p.next()
	if d == '\n' || d == '\\' {
		return false
	}
	for k := 0; k < n; k++ {
		for {
			if p.eof() {
				return false
			}
			c := p.next()
			if c == '\\' {
				if p.eof() {
					return false
				}
				p.i++
				continue
			}
			if c == d {
				break
			}
		}
	}
	return true
}
