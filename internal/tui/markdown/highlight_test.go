package markdown

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

func TestLexerTables(t *testing.T) {
	seen := map[string]bool{}
	for _, lx := range lexers {
		if !slices.IsSorted(lx.keywords) {
			t.Errorf("%s: keywords not sorted", lx.names[0])
		}
		if len(slices.Compact(slices.Clone(lx.keywords))) != len(lx.keywords) {
			t.Errorf("%s: a keyword is repeated", lx.names[0])
		}
		for _, n := range lx.names {
			if seen[n] || n != strings.ToLower(n) {
				t.Errorf("name %q repeated or not lower case", n)
			}
			seen[n] = true
		}
	}
}

// styled lists the styled tokens of src as "class:text".
func styled(lang, src string) []string {
	var out []string
	for _, sp := range lookupLexer(lang).tokens(src) {
		var class string
		switch sp.a {
		case 0:
			continue
		case aKeyword:
			class = "k"
		case aString:
			class = "s"
		case aNumber:
			class = "n"
		case aComment:
			class = "c"
		default:
			class = fmt.Sprint(sp.a)
		}
		out = append(out, class+":"+src[sp.start:sp.end])
	}
	return out
}

func TestTokens(t *testing.T) {
	tests := []struct {
		lang, src string
		want      []string
	}{
		{"go", "func f() int {\n\t/* a\n b */ return 0x1F + len(\"a\\\"b\") // end\n}\nvar r = `raw\n` + 'x' + 1.5e-3",
			[]string{"k:func", "c:/* a\n b */", "k:return", "n:0x1F", `s:"a\"b"`, "c:// end", "k:var", "s:`raw\n`", "s:'x'", "n:1.5e-3"}},
		{"Python", "def f(x):\n    '''doc\n    '''\n    return x2 + 10 # note\ns = f'{x}' if x is None else \"a#b\"",
			[]string{"k:def", "s:'''doc\n    '''", "k:return", "n:10", "c:# note", "s:'{x}'", "k:if", "k:is", "k:None", "k:else", `s:"a#b"`}},
		{"ts", "const $el: string = `a ${b}\nc`; // x\nlet n = 42;",
			[]string{"k:const", "s:`a ${b}\nc`", "c:// x", "k:let", "n:42"}},
		{"bash", "if [ $# -gt 1 ]; then\n  echo 'it''s' \"$HOME\" # comment\nfi",
			[]string{"k:if", "n:1", "k:then", "s:'it'", "s:'s'", `s:"$HOME"`, "c:# comment", "k:fi"}},
		{"json", `{"a": [1, -2.5, true, null], "b": "x"}`,
			[]string{`s:"a"`, "n:1", "n:2.5", "k:true", "k:null", `s:"b"`, `s:"x"`}},
		{"yaml", "key: value # c\nurl: http://x#y\nflag: true\nn: 3\ns: 'q'",
			[]string{"c:# c", "k:true", "n:3", "s:'q'"}},
		{"rust", "fn f<'a>(s: &'a str) -> char { let c = '\\n'; 'x' } // c",
			[]string{"k:fn", "k:let", "s:'\\n'", "s:'x'", "c:// c"}},
		{"cpp", "#include <stdio.h>\nint main() { return 0; } /* c */",
			[]string{"k:#include", "k:int", "k:return", "n:0", "c:/* c */"}},
		{"java", "public class A { String s = \"x\"; }",
			[]string{"k:public", "k:class", `s:"x"`}},
	}
	for _, tt := range tests {
		if got := styled(tt.lang, tt.src); !slices.Equal(got, tt.want) {
			t.Errorf("%s %q:\n got %q\nwant %q", tt.lang, tt.src, got, tt.want)
		}
	}
}

func TestTokensCoverTheSource(t *testing.T) {
	src := "x := \"unterminated\nnext /* open"
	for _, lx := range lexers {
		var sb strings.Builder
		end := 0
		for _, sp := range lx.tokens(src) {
			if sp.start != end {
				t.Errorf("%s: gap before %d", lx.names[0], sp.start)
			}
			sb.WriteString(src[sp.start:sp.end])
			end = sp.end
		}
		if sb.String() != src {
			t.Errorf("%s: tokens make %q", lx.names[0], sb.String())
		}
	}
}

func TestCodeBlockHighlighted(t *testing.T) {
	src := "```go\nfunc main() {\n\ts := \"hi\" // greet\n}\n```"
	out := New(Options{Color: true}).Render(src, 40)
	for _, want := range []string{
		style(aKeyword).Render("func"),
		style(aString).Render(`"hi"`),
		style(aComment).Render("// greet"),
	} {
		if !strings.Contains(out, want) {
			t.Errorf("%q lacks %q", out, want)
		}
	}
	// An unknown language is left plain, and so is everything without colour.
	if out := New(Options{Color: true}).Render("```cobol\nfunc\n```", 40); out != "  func" {
		t.Errorf("unknown language: %q", out)
	}
	if out := New(Options{}).Render(src, 40); strings.Contains(out, "\x1b") {
		t.Errorf("colour off: %q", out)
	}
}
