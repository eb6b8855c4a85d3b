package permission

import (
	"strings"
	"testing"
)

func TestParseRuleValid(t *testing.T) {
	tests := []struct {
		in         string
		tool, spec string
		str        string // String(), when it differs from in
	}{
		{"Bash", "Bash", "", ""},
		{"Bash()", "Bash", "", "Bash"},
		{"Bash(*)", "Bash", "", "Bash"},
		{"  Bash( ls -la )  ", "Bash", "ls -la", "Bash(ls -la)"},
		{"Bash(npm run test *)", "Bash", "npm run test *", ""},
		{"Bash(npm:*)", "Bash", "npm:*", ""},
		{"Bash(ls*)", "Bash", "ls*", ""},
		{"Bash(git commit -m \"wip\")", "Bash", "git commit -m \"wip\"", ""},
		{`Bash(python -c "print(1)")`, "Bash", `python -c "print(1)"`, ""},
		{`Bash(echo \))`, "Bash", "echo )", ""},
		{`Bash(find . \( -name x \))`, "Bash", "find . ( -name x )", "Bash(find . ( -name x ))"},
		{"Read", "Read", "", ""},
		{"Read(./.env)", "Read", "./.env", ""},
		{"Read(//etc/**)", "Read", "//etc/**", ""},
		{"Read(~/.ssh/**)", "Read", "~/.ssh/**", ""},
		{"Edit(/src/**/*.ts)", "Edit", "/src/**/*.ts", ""},
		{"Write(*.md)", "Write", "*.md", ""},
		{"NotebookEdit(nb/*.ipynb)", "NotebookEdit", "nb/*.ipynb", ""},
		{"Glob(src/**)", "Glob", "src/**", ""},
		{"Grep(//etc)", "Grep", "//etc", ""},
		{"WebFetch(domain:example.com)", "WebFetch", "domain:example.com", ""},
		{"WebFetch(domain:*.example.com)", "WebFetch", "domain:*.example.com", ""},
		{"WebFetch(domain:[::1])", "WebFetch", "domain:[::1]", ""},
		{"WebFetch(domain:*)", "WebFetch", "domain:*", ""},
		{"WebSearch", "WebSearch", "", ""},
		{"mcp__github", "mcp__github", "", ""},
		{"mcp__github__create_issue", "mcp__github__create_issue", "", ""},
		{"mcp__github__*", "mcp__github__*", "", ""},
		{"mcp__my-server__do.it", "mcp__my-server__do.it", "", ""},
		{"Agent(Explore)", "Agent", "Explore", ""},
		{"Task(Explore)", "Task", "Explore", ""},
		{"Skill(commit)", "Skill", "commit", ""},
		{"Skill(review-pr *)", "Skill", "review-pr *", ""},
		{"MyCustomTool", "MyCustomTool", "", ""},
	}
	for _, tt := range tests {
		r, err := ParseRule(tt.in)
		if err != nil {
			t.Errorf("ParseRule(%q): %v", tt.in, err)
			continue
		}
		if r.Tool != tt.tool || r.Specifier != tt.spec {
			t.Errorf("ParseRule(%q) = {%q, %q}, want {%q, %q}", tt.in, r.Tool, r.Specifier, tt.tool, tt.spec)
		}
		want := tt.str
		if want == "" {
			want = tt.in
		}
		if got := r.String(); got != want {
			t.Errorf("ParseRule(%q).String() = %q, want %q", tt.in, got, want)
		}
		back, err := ParseRule(r.String())
		if err != nil || back != r {
			t.Errorf("ParseRule(%q) does not round-trip: %+v, %v", r.String(), back, err)
		}
	}
}

func TestParseRuleInvalid(t *testing.T) {
	tests := []struct{ in, err string }{
		{"", "empty rule"},
		{"   ", "empty rule"},
		{"(ls)", "empty tool name"},
		{"Bash(ls", `missing closing ")"`},
		{"Bash ls)", `")" without "("`},
		{"Bash(ls))", "unbalanced parentheses"},
		{"Bash((ls)", "unbalanced parentheses"},
		{"Bash(ls)x", "text after the closing"},
		{"Ba sh", "bad tool name"},
		{"Bash$", "bad tool name"},
		{"9Tool", "bad tool name"},
		{"*", "wildcards are only allowed in MCP"},
		{"Ba*sh", "wildcards are only allowed in MCP"},
		{"mcp__", "missing the MCP server name"},
		{"mcp___x", "missing the MCP server name"},
		{"WebSearch(foo)", "takes no specifier"},
		{"TodoWrite(x)", "takes no specifier"},
		{"MyCustomTool(x)", "takes no specifier"},
		{"mcp__github(x)", "MCP tool rules take no specifier"},
		{"Bash(:*)", "empty command"},
		{`Bash(echo "unterminated)`, "unterminated"},
		{`Bash(echo 'x)`, "unterminated"},
		{"Bash(a\x00b)", "NUL"},
		{"WebFetch(example.com)", "want domain:HOST"},
		{"WebFetch(domain:)", "empty"},
		{"WebFetch(domain:https://x.com)", "without a scheme"},
		{"WebFetch(domain:x.com/path)", "without a path"},
		{"WebFetch(domain:x.com:8080)", "drop the port"},
		{"WebFetch(domain:u@x.com)", "user info"},
		{"WebFetch(domain:a*.com)", `leading "*." label`},
		{"WebFetch(domain:x..com)", "empty label"},
		{"WebFetch(domain:ex ample.com)", "unexpected characters"},
		{"WebFetch(domain:-x.com)", "start or end"},
		{"WebFetch(domain:[zz])", "IPv6"},
		{"Read(~bob/.ssh)", "~user is not supported"},
		{"Read(src/[a)", "bad path pattern"},
		{"Edit(src/{a,b)", "bad path pattern"},
		{"Agent(a b)", "no blanks"},
		{"Skill( *)", ""}, // "*" alone is the whole tool: valid
		{"Skill(a b)", "bad skill name"},
	}
	for _, tt := range tests {
		_, err := ParseRule(tt.in)
		if tt.err == "" {
			if err != nil {
				t.Errorf("ParseRule(%q): unexpected error %v", tt.in, err)
			}
			continue
		}
		if err == nil {
			t.Errorf("ParseRule(%q): no error, want one containing %q", tt.in, tt.err)
			continue
		}
		if !strings.Contains(err.Error(), tt.err) {
			t.Errorf("ParseRule(%q) error %q does not contain %q", tt.in, err, tt.err)
		}
		if !strings.Contains(err.Error(), "permission rule") {
			t.Errorf("ParseRule(%q) error %q does not say what it is about", tt.in, err)
		}
	}
}

func TestParseMode(t *testing.T) {
	for _, m := range Modes() {
		got, err := ParseMode(string(m))
		if err != nil || got != m || !m.Valid() {
			t.Errorf("ParseMode(%q) = %q, %v", m, got, err)
		}
	}
	if m, err := ParseMode(""); err != nil || m != ModeDefault {
		t.Errorf(`ParseMode("") = %q, %v`, m, err)
	}
	if _, err := ParseMode("yolo"); err == nil || !strings.Contains(err.Error(), "yolo") {
		t.Errorf(`ParseMode("yolo") error = %v`, err)
	}
	if Mode("yolo").Valid() || Mode("").Valid() {
		t.Error("invalid modes reported valid")
	}
	if Allow.String() != "allow" || Ask.String() != "ask" || Deny.String() != "deny" {
		t.Error("Behavior.String")
	}
}

// TestCmdPattern checks Bash specifiers against rendered commands.
func TestCmdPattern(t *testing.T) {
	tests := []struct {
		pattern string
		cmd     string
		want    bool
	}{
		{"ls *", "ls", true},
		{"ls *", "ls -la", true},
		{"ls *", "lsof", false},
		{"ls*", "lsof", true},
		{"ls*", "ls -la", true},
		{"ls", "ls", true},
		{"ls", "ls -la", false},
		{"npm:*", "npm", true},
		{"npm:*", "npm install", true},
		{"npm:*", "npmx", false},
		{"npm run test *", "npm run test", true},
		{"npm run test *", "npm run test --watch", true},
		{"npm run test *", "npm run testing", false},
		{"git log --format=*", "git log --format=%H", true},
		{"git * main", "git push origin main", true},
		{"git * main", "git push origin main2", false},
		{"* --version", "go --version", true},
		{`git commit -m "wip"`, "git commit -m wip", true},
		{`git commit -m "fix bug"`, "git commit -m 'fix bug'", true},
		{`git commit -m "fix bug"`, "git commit -m fix bug", false},
		{"git commit -m *", "git commit -m 'fix bug'", true},
		{`echo "*"`, "echo *", true},
		{`echo "*"`, "echo x", false},
		{"git status *", "git 'status x'", false},
		{"rm -rf *", "rm -rf \x00", true},
		{"rm -rf build", "rm -rf buil\x00", false},
	}
	for _, tt := range tests {
		p, err := compileCmdPattern(tt.pattern)
		if err != nil {
			t.Fatalf("compile %q: %v", tt.pattern, err)
		}
		if got := p.match(tt.cmd); got != tt.want {
			t.Errorf("%q matches %q = %v, want %v", tt.pattern, tt.cmd, got, tt.want)
		}
	}
}

// TestCmdPatternMayMatch checks matching commands whose run-time parts
// (NUL here) are unknown.
func TestCmdPatternMayMatch(t *testing.T) {
	tests := []struct {
		pattern, cmd string
		want         bool
	}{
		{"rm *", "\x00 -rf /", true},
		{"rm *", "r\x00 x", true},
		{"rm *", "ls \x00", false},
		{"rm -rf /", "rm -rf \x00", true},
		{"rm -rf /", "rm -rf \x00.o", false},
		{"* --force", "echo \x00", true},
		{"* --force", "echo hi", false},
		{"git push *", "git \x00 origin", true},
		{"git push *", "gi \x00", false},
	}
	for _, tt := range tests {
		p, err := compileCmdPattern(tt.pattern)
		if err != nil {
			t.Fatal(err)
		}
		if got := p.mayMatch(tt.cmd); got != tt.want {
			t.Errorf("%q may match %q = %v, want %v", tt.pattern, tt.cmd, got, tt.want)
		}
	}
}

func TestWildcardIntersects(t *testing.T) {
	tests := []struct {
		pattern, s string
		want       bool
	}{
		{"abc", "abc", true},
		{"abc", "abd", false},
		{"a*c", "a\x00", true},
		{"a*c", "\x00d", false},
		{"*", "", true},
		{"", "\x00", true},
		{"ab", "\x00\x00c", false},
		{"a*b*c", "\x00b\x00", true},
	}
	for _, tt := range tests {
		if got := compileWildcard(tt.pattern).intersects(tt.s); got != tt.want {
			t.Errorf("intersects(%q, %q) = %v, want %v", tt.pattern, tt.s, got, tt.want)
		}
	}
}
