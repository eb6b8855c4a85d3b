package config

import (
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"
)

// largeSettings is a settings file of about size bytes: permission rules
// with a non-ASCII character in each (so that columns must be counted, not
// computed) and environment variables, on one line or indented as
// JSON.stringify(…, null, 2) writes them. It returns the text and the rule
// count.
func largeSettings(size int, indented bool) (string, int) {
	nl, ind, sp := "", "", ""
	if indented {
		nl, ind, sp = "\n", "  ", " "
	}
	var b strings.Builder
	b.WriteString("{" + nl + ind + `"permissions":` + sp + "{" + nl + ind + ind + `"allow":` + sp + "[")
	rules := 0
	for b.Len() < size*9/10 {
		if rules > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, "%s%s%s%s\"Bash(npm run tâche-%07d *)\"", nl, ind, ind, ind, rules)
		rules++
	}
	b.WriteString(nl + ind + ind + "]" + nl + ind + "}," + nl + ind + `"env":` + sp + "{")
	for i := 0; b.Len() < size; i++ {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `%s%s%s"VAR_%d":%s"valeur-%d"`, nl, ind, ind, i, sp, i)
	}
	b.WriteString(nl + ind + "}" + nl + "}" + nl)
	return b.String(), rules
}

// TestLargeSettingsFiles loads a 2.3 MB settings file on one line and
// indented, and checks that every rule is read with its exact position.
// On one line this took over 30 seconds while positions were counted from
// the start of the line (jsontree's TestLinesWorkIsLinear holds the work
// linear; BenchmarkLoadLargeSettings gives the figures).
func TestLargeSettingsFiles(t *testing.T) {
	for _, indented := range []bool{false, true} {
		t.Run(map[bool]string{false: "one line", true: "indented"}[indented], func(t *testing.T) {
			text, rules := largeSettings(2300<<10, indented)
			e := newEnv(t)
			path := e.write(ScopeProject, text)
			m := e.load(nil)
			allow := m.Permissions.Allow
			if len(allow) != rules {
				t.Fatalf("read %d rules, want %d", len(allow), rules)
			}
			last := allow[len(allow)-1]
			off := strings.LastIndex(text, `"Bash(`)
			want := Source{Scope: ScopeProject, Path: path, Line: 1, Col: utf8.RuneCountInString(text[:off]) + 1}
			if indented {
				want.Line, want.Col = strings.Count(text[:off], "\n")+1, 7
			}
			if last.Source != want {
				t.Errorf("last rule at %+v, want %+v", last.Source, want)
			}
			if len(m.Env) < 1000 {
				t.Errorf("read %d environment variables", len(m.Env))
			}
		})
	}
}

// BenchmarkLoadLargeSettings loads a 2.3 MB settings file:
//
//	go test -run '^$' -bench LoadLargeSettings ./internal/config/
func BenchmarkLoadLargeSettings(b *testing.B) {
	for _, indented := range []bool{false, true} {
		b.Run(map[bool]string{false: "one-line", true: "indented"}[indented], func(b *testing.B) {
			text, _ := largeSettings(2300<<10, indented)
			src := []byte(text)
			b.SetBytes(int64(len(src)))
			for b.Loop() {
				if _, err := parseDocument(src, Source{Scope: ScopeProject}, &LoadOptions{}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
