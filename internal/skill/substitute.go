package skill

import (
	"sort"
	"strconv"
	"strings"
)

// Vars are the ${…} values a body may use.
type Vars struct {
	SessionID  string // ${CLAUDE_SESSION_ID}
	SkillDir   string // ${CLAUDE_SKILL_DIR}
	Effort     string // ${CLAUDE_EFFORT}
	PluginRoot string // ${CLAUDE_PLUGIN_ROOT}
}

// span is a byte range of a substituted text that came from outside the
// body (an argument, a variable): it is data, never a placeholder or a
// dynamic injection.
type span struct{ from, to int }

// text is a body being prepared: its text and the spans filled in.
type text struct {
	s     string
	spans []span
}

func (t text) protected(i int) bool {
	for _, sp := range t.spans {
		if i >= sp.from && i < sp.to {
			return true
		}
	}
	return false
}

// Substitute fills a skill or command body with its arguments, as Claude
// Code does:
//
//   - $name, for each declared argument (names[i] is the i-th positional
//     argument, "" when not given);
//   - $ARGUMENTS[N] and $N, the N-th argument counting from 0, left as
//     written when there is no such argument;
//   - $ARGUMENTS, the whole argument string;
//   - ${CLAUDE_SESSION_ID}, ${CLAUDE_SKILL_DIR}, ${CLAUDE_EFFORT} and
//     ${CLAUDE_PLUGIN_ROOT};
//   - a backslash before a placeholder keeps it literal (\$ARGUMENTS).
//
// Arguments are split like shell words (quotes group, backslashes
// escape), or at blanks when the quotes do not pair up. When no argument
// placeholder was filled and args is not empty, "\n\nARGUMENTS: args" is
// appended, so the model still sees what the user typed. Values filled in
// are not scanned again: an argument holding "$1" or "!`cmd`" stays text.
func Substitute(body, args string, names []string, vars Vars) string {
	return substitute(body, args, names, vars).s
}

func substitute(body, args string, names []string, vars Vars) text {
	pos := SplitArgs(args)
	arg := func(i int) (string, bool) {
		if i < 0 || i >= len(pos) {
			return "", false
		}
		return pos[i], true
	}
	type named struct {
		name string
		i    int
	}
	var decl []named
	for i, n := range names {
		if n != "" {
			decl = append(decl, named{n, i})
		}
	}
	// Longest first, so that $file_name is not read as $file.
	sort.SliceStable(decl, func(a, b int) bool { return len(decl[a].name) > len(decl[b].name) })
	varsByName := map[string]string{
		"CLAUDE_SESSION_ID":  vars.SessionID,
		"CLAUDE_SKILL_DIR":   vars.SkillDir,
		"CLAUDE_EFFORT":      vars.Effort,
		"CLAUDE_PLUGIN_ROOT": vars.PluginRoot,
	}

	var b strings.Builder
	var spans []span
	used := false
	fill := func(v string) {
		spans = append(spans, span{b.Len(), b.Len() + len(v)})
		b.WriteString(v)
	}
	// placeholder reports the length of an argument placeholder at
	// body[i] ('$'), and its value; ok is false for none.
	placeholder := func(i int) (n int, val string, filled bool, ok bool) {
		rest := body[i+1:]
		for _, d := range decl {
			if strings.HasPrefix(rest, d.name) && !nameGoesOn(rest, len(d.name)) {
				v, _ := arg(d.i)
				return 1 + len(d.name), v, true, true
			}
		}
		if r, found := strings.CutPrefix(rest, "ARGUMENTS["); found {
			j := 0
			for j < len(r) && r[j] >= '0' && r[j] <= '9' {
				j++
			}
			if j > 0 && j < len(r) && r[j] == ']' {
				k, _ := strconv.Atoi(r[:j])
				v, has := arg(k)
				return 1 + len("ARGUMENTS[") + j + 1, v, has, true
			}
		}
		if strings.HasPrefix(rest, "ARGUMENTS") {
			return 1 + len("ARGUMENTS"), args, true, true
		}
		j := 0
		for j < len(rest) && rest[j] >= '0' && rest[j] <= '9' {
			j++
		}
		if j > 0 && !isWordByte(rest, j) {
			k, _ := strconv.Atoi(rest[:j])
			v, has := arg(k)
			return 1 + j, v, has, true
		}
		return 0, "", false, false
	}
	for i := 0; i < len(body); {
		c := body[i]
		if c == '\\' && i+1 < len(body) && body[i+1] == '$' {
			if n, _, _, ok := placeholder(i + 1); ok {
				b.WriteString(body[i+1 : i+1+n]) // the placeholder, literally
				i += 1 + n
				continue
			}
		}
		if c != '$' {
			b.WriteByte(c)
			i++
			continue
		}
		if strings.HasPrefix(body[i:], "${") {
			if end := strings.IndexByte(body[i:], '}'); end > 0 {
				if v, ok := varsByName[body[i+2:i+end]]; ok {
					fill(v)
					i += end + 1
					continue
				}
			}
		}
		n, val, filled, ok := placeholder(i)
		if !ok {
			b.WriteByte(c)
			i++
			continue
		}
		if !filled { // an argument that was not given: keep the text
			b.WriteString(body[i : i+n])
			i += n
			continue
		}
		used = true
		fill(val)
		i += n
	}
	if !used && strings.TrimSpace(args) != "" {
		b.WriteString("\n\nARGUMENTS: ")
		fill(args)
	}
	return text{s: b.String(), spans: spans}
}

// nameGoesOn reports whether the name of length n at the start of s is
// followed by more name or an index ($file[…], $filename), so that it is
// not this name.
func nameGoesOn(s string, n int) bool {
	if n >= len(s) {
		return false
	}
	return s[n] == '[' || isWordByte(s, n)
}

func isWordByte(s string, i int) bool {
	if i >= len(s) {
		return false
	}
	c := s[i]
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

// SplitArgs splits an argument string like a shell: blanks separate words,
// single quotes keep everything, double quotes keep everything but \" and
// \\, a backslash escapes the next character. When the quotes do not pair
// up, it splits at blanks instead.
func SplitArgs(s string) []string {
	var out []string
	var cur strings.Builder
	inWord := false
	var quote byte
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case quote == '\'':
			if c == '\'' {
				quote = 0
			} else {
				cur.WriteByte(c)
			}
		case quote == '"':
			switch {
			case c == '"':
				quote = 0
			case c == '\\' && i+1 < len(s) && (s[i+1] == '"' || s[i+1] == '\\'):
				i++
				cur.WriteByte(s[i])
			default:
				cur.WriteByte(c)
			}
		case c == '\'' || c == '"':
			quote, inWord = c, true
		case c == '\\' && i+1 < len(s):
			i++
			cur.WriteByte(s[i])
			inWord = true
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			if inWord {
				out = append(out, cur.String())
				cur.Reset()
				inWord = false
			}
		default:
			cur.WriteByte(c)
			inWord = true
		}
	}
	if quote != 0 {
		return strings.Fields(s)
	}
	if inWord {
		out = append(out, cur.String())
	}
	return out
}
