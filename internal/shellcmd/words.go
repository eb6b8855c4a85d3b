package shellcmd

import (
	"errors"
	"io/fs"
	"strconv"
	"strings"
	"unicode/utf8"

	"mvdan.cc/sh/v3/expand"
	"mvdan.cc/sh/v3/syntax"
)

// RunTime marks, in a word's text, a part only known when the command runs
// (a parameter, a substitution, a glob character). No text a user writes
// holds it (a line with a NUL byte does not parse), so a pattern matched
// against a word can only meet it with a wildcard.
const RunTime = "\x00"

// Word is one argument of a simple command, as far as it is known before
// the command runs.
type Word struct {
	// Text is the argument with quotes removed and each part the shell
	// expands at run time replaced by the RunTime mark.
	Text string
	// Dynamic: the argument holds a parameter, command, arithmetic or
	// process substitution, or something else whose value is unknown.
	Dynamic bool
	// Glob: the argument holds unquoted pathname-expansion characters.
	Glob bool
	// Tilde: the argument starts with an unquoted "~" or "~/", which the
	// shell replaces with the home directory.
	Tilde bool
	// ProcSubst: the argument is exactly one process substitution, which
	// the command sees as a /dev/fd path.
	ProcSubst bool
	// Unsafe names a construct whose effect cannot be told from the words:
	// extended globs, which zsh reads as glob qualifiers able to run code,
	// and zsh's $~x.
	Unsafe string
	// Equals: the argument starts with an unquoted '=', which zsh replaces
	// with the path of the command named after it.
	Equals bool
	// Split: an unquoted expansion, which may become several words or
	// none.
	Split bool
	// pattern is the parsed word of a glob without run-time parts, which
	// ExpandGlob expands against the file system.
	pattern *syntax.Word
	// Found: the word stands for each path a walk of the same command
	// finds (find's {}), so the walk tells what it names, not the word.
	Found bool
	// Values are the words a for-loop variable takes ("$f" in
	// `for f in *.go`), when the loop does not change it.
	Values []Word
}

// loopPaths reports whether a run-time argument is a for-loop variable
// whose values are all known and none an option.
func (w Word) loopPaths() bool {
	if w.Values == nil {
		return false
	}
	for _, v := range w.Values {
		if v.Dynamic || strings.HasPrefix(v.Text, "-") {
			return false
		}
	}
	return true
}

// Static reports whether the argument is known exactly: Text is its value.
func (w Word) Static() bool { return !w.Dynamic && !w.Glob }

// Lit returns the argument's value and whether it is known exactly.
func (w Word) Lit() (string, bool) { return w.Text, w.Static() }

// prefix is the text before the first run-time part.
func (w Word) prefix() string {
	if i := strings.Index(w.Text, RunTime); i >= 0 {
		return w.Text[:i]
	}
	return w.Text
}

// Expandable reports whether the word is a glob the file system can
// expand: nothing in it but its wildcards is only known at run time.
func (w Word) Expandable() bool { return w.pattern != nil && !w.Dynamic }

// ExpandGlob expands an expandable word as bash would in dir, with home as
// ~: pathname expansion with bash's default options (no dotglob, no
// globstar, no nullglob), listing directories with readDir.
func (w Word) ExpandGlob(dir, home string, readDir func(string) ([]fs.DirEntry, error)) ([]string, error) {
	if !w.Expandable() {
		return nil, errors.New("not a glob known before the command runs")
	}
	cfg := &expand.Config{Env: expand.ListEnviron("PWD="+dir, "HOME="+home), ReadDir2: readDir}
	return expand.Fields(cfg, w.pattern)
}

// plainWord makes a word from a known string.
func plainWord(s string) Word { return Word{Text: s} }

// convertWord turns a parsed word into a word.
func convertWord(w *syntax.Word) Word {
	var out Word
	var b strings.Builder
	for i, part := range w.Parts {
		switch p := part.(type) {
		case *syntax.Lit:
			v := p.Value
			if i == 0 && strings.HasPrefix(v, "~") {
				end := strings.IndexByte(v, '/')
				if end < 0 {
					end = len(v)
				}
				if end == 1 && (len(w.Parts) == 1 || end < len(v)) {
					out.Tilde = true
				} else {
					out.Dynamic = true // ~user, ~+, ~-: resolved at run time
				}
			}
			if i == 0 && len(v) > 1 && v[0] == '=' {
				out.Equals = true
			}
			unquoteLit(v, &b, &out)
		case *syntax.SglQuoted:
			if !p.Dollar {
				b.WriteString(p.Value)
				continue
			}
			s, ok := decodeANSIC(p.Value)
			if !ok {
				out.Dynamic = true
				b.WriteString(RunTime)
				continue
			}
			b.WriteString(s)
		case *syntax.DblQuoted:
			for _, dp := range p.Parts {
				if lit, ok := dp.(*syntax.Lit); ok {
					unquoteDouble(lit.Value, &b)
					continue
				}
				out.Dynamic = true
				b.WriteString(RunTime)
			}
		case *syntax.ProcSubst:
			out.Dynamic = true
			out.ProcSubst = len(w.Parts) == 1
			b.WriteString(RunTime)
		case *syntax.ExtGlob:
			out.Glob, out.Unsafe = true, "uses an extended glob (a glob qualifier able to run code in zsh)"
			b.WriteString(RunTime)
		default: // ParamExp, CmdSubst, ArithmExp, BraceExp
			out.Dynamic, out.Split = true, true
			b.WriteString(RunTime)
		}
	}
	out.Text = b.String()
	if out.Glob && !out.Dynamic && out.Unsafe == "" {
		out.pattern = w
	}
	if !out.Dynamic && hasBraceExpansion(out.Text) {
		// Brace expansion was done before; braces left over that still
		// look expandable are not trusted to be literal.
		out.Dynamic = true
	}
	return out
}

// unquoteLit appends an unquoted literal: a backslash escapes the next
// character; unescaped glob characters become RunTime marks.
func unquoteLit(v string, b *strings.Builder, out *Word) {
	for i := 0; i < len(v); i++ {
		c := v[i]
		switch c {
		case '\\':
			if i+1 < len(v) {
				i++
				b.WriteByte(v[i])
			} else {
				b.WriteByte('\\')
			}
		case '*', '?':
			out.Glob = true
			b.WriteString(RunTime)
		case '$':
			// A '$' left literal by the parser may start an expansion in
			// zsh ($~x, $=x, $^x, $+x; $~x globs the value, qualifiers
			// included). The parser may also split it from what follows:
			// the analyzer checks whole words for that.
			if i+1 < len(v) && strings.IndexByte("~=^+", v[i+1]) >= 0 {
				out.Dynamic, out.Split = true, true
				out.Unsafe = "uses a zsh expansion ($~, $=, $^ or $+)"
				b.WriteString(RunTime)
				continue
			}
			b.WriteByte(c)
		case '[':
			if strings.IndexByte(v[i+1:], ']') >= 0 {
				out.Glob = true
				b.WriteString(RunTime)
			} else {
				b.WriteByte(c)
			}
		default:
			b.WriteByte(c)
		}
	}
}

// unquoteDouble appends a literal from inside double quotes, where a
// backslash only escapes $ ` " \ and newline.
func unquoteDouble(v string, b *strings.Builder) {
	for i := 0; i < len(v); i++ {
		c := v[i]
		if c == '\\' && i+1 < len(v) {
			switch v[i+1] {
			case '$', '`', '"', '\\':
				i++
				b.WriteByte(v[i])
				continue
			case '\n':
				i++
				continue
			}
		}
		b.WriteByte(c)
	}
}

// hasBraceExpansion reports whether s has a {…,…} or {…..…} group.
func hasBraceExpansion(s string) bool {
	open := strings.IndexByte(s, '{')
	if open < 0 {
		return false
	}
	rest := s[open+1:]
	end := strings.LastIndexByte(rest, '}')
	if end < 0 {
		return false
	}
	inner := rest[:end]
	return strings.Contains(inner, ",") || strings.Contains(inner, "..")
}

// decodeANSIC decodes the body of a $'…' string. It reports false for an
// escape it does not know, so that the word is treated as unknown rather
// than misread.
func decodeANSIC(s string) (string, bool) {
	if !strings.Contains(s, `\`) {
		return s, true
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '\\' || i+1 >= len(s) {
			b.WriteByte(c)
			continue
		}
		i++
		switch e := s[i]; e {
		case 'a':
			b.WriteByte('\a')
		case 'b':
			b.WriteByte('\b')
		case 'e', 'E':
			b.WriteByte(0x1b)
		case 'f':
			b.WriteByte('\f')
		case 'n':
			b.WriteByte('\n')
		case 'r':
			b.WriteByte('\r')
		case 't':
			b.WriteByte('\t')
		case 'v':
			b.WriteByte('\v')
		case '\\', '\'', '"', '?':
			b.WriteByte(e)
		case 'c':
			if i+1 >= len(s) {
				return "", false
			}
			i++
			b.WriteByte(s[i] & 0x1f)
		case 'x', 'u', 'U':
			max := 2
			switch e {
			case 'u':
				max = 4
			case 'U':
				max = 8
			}
			j := i + 1
			for j < len(s) && j-i-1 < max && isHex(s[j]) {
				j++
			}
			if j == i+1 {
				return "", false
			}
			n, err := strconv.ParseUint(s[i+1:j], 16, 32)
			if err != nil {
				return "", false
			}
			if e == 'x' {
				b.WriteByte(byte(n))
			} else {
				if !utf8.ValidRune(rune(n)) {
					return "", false
				}
				b.WriteRune(rune(n))
			}
			i = j - 1
		case '0', '1', '2', '3', '4', '5', '6', '7':
			j := i
			for j < len(s) && j-i < 3 && s[j] >= '0' && s[j] <= '7' {
				j++
			}
			n, _ := strconv.ParseUint(s[i:j], 8, 16)
			b.WriteByte(byte(n))
			i = j - 1
		default:
			b.WriteByte('\\')
			b.WriteByte(e)
		}
	}
	out := b.String()
	if strings.IndexByte(out, 0) >= 0 {
		// bash truncates at a NUL; do not guess.
		return "", false
	}
	return out, true
}

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}
