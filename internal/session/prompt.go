package session

import (
	"strings"
	"unicode"

	"github.com/tackcode/tack/internal/llm"
)

// maxPromptUnits is where the SDK cuts a prompt shown in a listing, in
// UTF-16 code units.
const maxPromptUnits = 200

// firstPromptOf applies the SDK's rule for a listing's first prompt to one
// record. ok is false when the record is not a prompt; fallback is a
// <command-name> the SDK shows when no record is a prompt.
func firstPromptOf(ln *line) (prompt, fallback string, ok bool) {
	if ln.typ != TypeUser || ln.metaTrue || ln.compact || !ln.hasMessage {
		return "", "", false
	}
	var texts []string
	for i := range ln.content {
		b := &ln.content[i]
		switch b.Type {
		case llm.TypeToolResult:
			return "", "", false
		case llm.TypeText:
			texts = append(texts, b.Text)
		}
	}
	for _, t := range texts {
		c := jsTrim(strings.ReplaceAll(t, "\n", " "))
		if c == "" {
			continue
		}
		if name, found := commandName(c); found {
			if fallback == "" {
				fallback = name
			}
			continue
		}
		if cmd, found := between(c, "<bash-input>", "</bash-input>"); found {
			return "! " + jsTrim(cmd), fallback, true
		}
		if skippedPrompt(c) {
			continue
		}
		return cutPrompt(c), fallback, true
	}
	return "", fallback, false
}

// promptOf is the text of a prompt record (firstPromptOf's rule), used for
// a session's last prompt.
func promptOf(ln *line) (string, bool) {
	p, _, ok := firstPromptOf(ln)
	return p, ok
}

// promptText is the prompt shown for a user message the Writer records.
func promptText(content []llm.Block) (string, bool) {
	ln := line{typ: TypeUser, hasMessage: true, content: content}
	return promptOf(&ln)
}

// cutPrompt cuts s to 200 UTF-16 units, never inside a surrogate pair, and
// marks the cut with an ellipsis.
func cutPrompt(s string) string {
	units := 0
	for i, r := range s {
		n := 1
		if r >= 0x10000 {
			n = 2
		}
		if units+n > maxPromptUnits {
			return jsTrim(s[:i]) + "…"
		}
		units += n
	}
	return s
}

// skippedPrompt: text starting with a tag (<system-reminder>…) or an
// interruption note is not a prompt.
func skippedPrompt(c string) bool {
	if rest, ok := strings.CutPrefix(c, "[Request interrupted by user"); ok {
		return strings.Contains(rest, "]")
	}
	if len(c) < 3 || c[0] != '<' || c[1] < 'a' || c[1] > 'z' {
		return false
	}
	for _, r := range c[2:] {
		switch {
		case r == '-' || r == '_' || r < 128 && (unicode.IsLetter(r) || unicode.IsDigit(r)):
			continue
		case r == '>' || isJSSpace(r):
			return true
		}
		return false
	}
	return false
}

// commandName finds <command-name>X</command-name> with no line break in X.
func commandName(c string) (string, bool) {
	inner, ok := between(c, "<command-name>", "</command-name>")
	if !ok || strings.ContainsAny(inner, "\r\n\u2028\u2029") {
		return "", false
	}
	return inner, true
}

func between(s, open, close string) (string, bool) {
	i := strings.Index(s, open)
	if i < 0 {
		return "", false
	}
	rest := s[i+len(open):]
	j := strings.Index(rest, close)
	if j < 0 {
		return "", false
	}
	return rest[:j], true
}

// jsTrim is JavaScript's String.prototype.trim.
func jsTrim(s string) string { return strings.TrimFunc(s, isJSSpace) }

func isJSSpace(r rune) bool {
	switch r {
	case '\t', '\n', '\v', '\f', '\r', ' ', 0xA0, 0x1680, 0x2028, 0x2029, 0x202F, 0x205F, 0x3000, 0xFEFF:
		return true
	}
	return r >= 0x2000 && r <= 0x200A
}
