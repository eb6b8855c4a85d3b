package shellcmd

import (
	"strings"
	"testing"
)

// names lists the command names of an analysis, with "=" for a statement
// without a command.
func names(an *Line) string {
	var out []string
	for _, c := range an.Commands {
		if len(c.Args) == 0 {
			out = append(out, "=")
			continue
		}
		out = append(out, strings.ReplaceAll(c.Args[0].Text, RunTime, "$"))
	}
	return strings.Join(out, " ")
}

func TestParseFindsEveryCommand(t *testing.T) {
	tests := []struct{ src, want string }{
		{"a; b && c || d | e |& f & g", "a b c d e f g"},
		{"(a; b) && { c; }", "a b c"},
		{"a $(b) `c` <(d) >(e)", "b c d e a"},
		{"if a; then b; elif c; then d; else e; fi", "a b c d e"},
		{"while a; do b; done; until c; do d; done", "a b c d"},
		{"for x in $(a); do b; done", "a b"},
		{"for ((i=$(a); i<1; i++)); do b; done", "a b"},
		{"case $(a) in x) b;; y) c;; esac", "a b c"},
		{"f() { a; }; f", "a f"},
		{"function g { a; }", "a"},
		{"x=$(a) y=`b` c", "a b c"},
		{"x=$(a)", "a ="},
		{"echo ${x:-$(a)} \"$(b)\"", "a b echo"},
		{"cat <<EOF\n$(a)\nEOF", "a cat"},
		{"cat <<< $(a)", "a cat"},
		{"time a | b", "a b"},
		{"! a", "a"},
		{"coproc a", "a"},
		{"[[ $(a) == x ]] && b", "a b"},
		{"(( $(a) )) ; b", "a b"},
		{"let x=$(a)", "a"},
		{"declare x=$(a)", "a declare"},
		{"> out", "="},
		{"{ a; } > out", "a ="},
		{"a # b; c", "a"},
		{"a \\\n b", "a"},
	}
	for _, tt := range tests {
		an := Parse(tt.src)
		if an.Err != nil {
			t.Errorf("%q: %v", tt.src, an.Err)
			continue
		}
		if got := names(an); got != tt.want {
			t.Errorf("%q: commands %q, want %q", tt.src, got, tt.want)
		}
	}
}

func TestParseWords(t *testing.T) {
	tests := []struct {
		src  string
		want []string // word texts, runtime marks shown as $
	}{
		{`'git' "st"a\tus`, []string{"git", "status"}},
		{`$'\x72m' $'a\tb' $'\101\u00e9'`, []string{"rm", "a\tb", "Aé"}},
		{`echo "a\"b\$c\\d\e"`, []string{"echo", `a"b$c\d\e`}},
		{`echo {a,b}c x{1..3}`, []string{"echo", "ac", "bc", "x1", "x2", "x3"}},
		{`echo *.go a?c [ab]x [`, []string{"echo", "$.go", "a$c", "$ab]x", "["}},
		{`echo $x "$y" ${z}w $(a) $((1))`, []string{"echo", "$", "$", "$w", "$", "$"}},
		{`echo ~ ~/x ~root`, []string{"echo", "~", "~/x", "~root"}},
	}
	for _, tt := range tests {
		an := Parse(tt.src)
		if an.Err != nil {
			t.Fatalf("%q: %v", tt.src, an.Err)
		}
		c := an.Commands[len(an.Commands)-1]
		var got []string
		for _, w := range c.Args {
			got = append(got, strings.ReplaceAll(w.Text, RunTime, "$"))
		}
		if strings.Join(got, "|") != strings.Join(tt.want, "|") {
			t.Errorf("%q: words %q, want %q", tt.src, got, tt.want)
		}
	}
	an := Parse(`cat ~/x ~root/y "~/z"`)
	args := an.Commands[0].Args
	if !args[1].Tilde || args[2].Tilde || !args[2].Dynamic || args[3].Tilde {
		t.Errorf("tilde flags wrong: %+v", args)
	}
}

func TestParseProblems(t *testing.T) {
	tests := []struct{ src, problem string }{
		{"f() { :; }", "defines a shell function"},
		{"PATH=/x", "sets the shell variable PATH"},
		{"for IFS in a; do :; done", "sets the shell variable IFS"},
		{"echo ${HOME:=x}", "sets the shell variable HOME"},
		{"echo $((x))", "evaluates a variable"},
		{"echo ${!x}", "evaluates a variable"},
		{"echo ${a[i]}", "evaluates a variable"},
		{"echo ${s:n}", "evaluates a variable"},
		{"[[ $a -gt 1 ]]", "evaluates a variable"},
		{"[[ -v a[i] ]]", "evaluates a variable"},
		{"echo ${x@P}", "prompt"},
		{"ls !(x)", "extended glob"},
		{"{PATH}>x :", "sets the shell variable PATH"},
		{"path=(/x)", "sets the shell variable path"},
	}
	for _, tt := range tests {
		an := Parse(tt.src)
		if an.Err != nil {
			t.Errorf("%q: %v", tt.src, an.Err)
			continue
		}
		if !strings.Contains(strings.Join(an.Problems, "; "), tt.problem) {
			t.Errorf("%q: problems %q, want %q", tt.src, an.Problems, tt.problem)
		}
	}
	for _, ok := range []string{"x=1; echo $x", "echo $((1+2)) ${#x} ${a[@]} ${!a[@]} ${s:1:2}", "[[ ${#x} -gt 1 ]]", "for f in a; do echo $f; done"} {
		if an := Parse(ok); an.Err != nil || len(an.Problems) > 0 {
			t.Errorf("%q: unexpected problems %q (%v)", ok, an.Problems, an.Err)
		}
	}
}

func TestParseCd(t *testing.T) {
	an := Parse("cat a; cd src && cat b; cd ../lib; cat c; cd $X; cat d")
	want := []struct {
		dirs    string
		unknown bool
	}{
		{"", false},
		{"", false},     // cd src: runs from the start
		{" src", false}, // cat b
		{" src", false}, // cd ../lib
		{" src ../lib src/../lib", false},
		{" src ../lib src/../lib", false}, // cd $X
		{" src ../lib src/../lib", true},
	}
	if len(an.Commands) != len(want) {
		t.Fatalf("%d commands", len(an.Commands))
	}
	for i, w := range want {
		c := an.Commands[i]
		if got := strings.Join(c.Dirs, " "); got != w.dirs || c.DirsUnknown != w.unknown {
			t.Errorf("command %d (%s): dirs %q unknown %v, want %q %v", i, c.Src, got, c.DirsUnknown, w.dirs, w.unknown)
		}
	}
}

func TestParseRedirects(t *testing.T) {
	an := Parse("a >x 2>&1 >>y <z &>w >&v 3<>u <&0 >&- <<<s >|t")
	var writes, reads []string
	for _, r := range an.Commands[0].Redirs {
		if r.Write {
			writes = append(writes, r.Target.Text)
		}
		if r.Read {
			reads = append(reads, r.Target.Text)
		}
	}
	if got := strings.Join(writes, " "); got != "x y w v u t" {
		t.Errorf("writes %q", got)
	}
	if got := strings.Join(reads, " "); got != "z u" {
		t.Errorf("reads %q", got)
	}
}

func TestParseErrors(t *testing.T) {
	for _, src := range []string{"echo 'x", "if a; then", "a |", "echo $(", "a\x00b"} {
		if an := Parse(src); an.Err == nil {
			t.Errorf("%q parsed", src)
		}
	}
}

func TestSedScriptSafe(t *testing.T) {
	safe := []string{"s/a/b/", "s/a/b/g;s|x|y|2", "1,10p", "$d", "/re/d", "/a/,/b/!d", "y/abc/xyz/", "10q", "s/w/e/g", "s/a\\/b/c/",
		"1~2d", "/x/I p", "{p;d}", ":a;N;ba", "a hello", "i\\\nline", "=", "/start/,+3d", "\\,x,d"}
	unsafe := []string{"e rm -rf /", "s/a/b/e", "s/a/b/w out", "w /etc/passwd", "1r /etc/shadow", "R x", "W x", "s/a/b/;e ls",
		"1e ls", "$!{e ls\n}", "y/a/b/e", "s/a", "v", "F;e x", "/x/ w y"}
	for _, s := range safe {
		if !sedScriptSafe(s) {
			t.Errorf("%q reported unsafe", s)
		}
	}
	for _, s := range unsafe {
		if sedScriptSafe(s) {
			t.Errorf("%q reported safe", s)
		}
	}
}

func TestDecodeANSIC(t *testing.T) {
	tests := []struct {
		in, want string
		ok       bool
	}{
		{`a\nb`, "a\nb", true},
		{`\x41\x4`, "A\x04", true},
		{`\101`, "A", true},
		{`\u00e9`, "é", true},
		{`\cA`, "\x01", true},
		{`\q`, `\q`, true},
		{`\x00`, "", false},
		{`\x`, "", false},
	}
	for _, tt := range tests {
		got, ok := decodeANSIC(tt.in)
		if got != tt.want || ok != tt.ok {
			t.Errorf("decodeANSIC(%q) = %q, %v; want %q, %v", tt.in, got, ok, tt.want, tt.ok)
		}
	}
}
