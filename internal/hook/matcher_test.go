package hook

import "testing"

func TestPattern(t *testing.T) {
	cases := []struct {
		pattern string
		value   string
		want    bool
	}{
		{"", "Bash", true},
		{"*", "mcp__x__y", true},
		{"Bash", "Bash", true},
		{"Bash", "bash", false},
		{"Bash", "BashOutput", false}, // a plain name is exact, not a prefix
		{"Edit|Write", "Write", true},
		{"Edit|Write", "Edit", true},
		{"Edit|Write", "MultiEdit", false},
		{"Edit, Write", "Write", true}, // Claude Code also splits on commas
		{"Edit |Write", "Edit", true},  // and trims
		{"general-purpose", "general-purpose", true},
		{"general-purpose", "general", false},
		{"startup|resume", "resume", true},
		{"^Notebook", "NotebookEdit", true},
		{"^Notebook", "MyNotebook", false},
		{"mcp__memory__.*", "mcp__memory__create_entities", true},
		{"mcp__memory__.*", "mcp__github__push", false},
		{"Notebook.*", "NotebookEdit", true},
		// Not anchored, like JavaScript's RegExp.test in Claude Code.
		{"Edit.*", "MultiEdit", true},
		{"^Write$", "Write", true},
		{"^Write$", "WriteFile", false},
		{"Write|Edit.*", "Write", true},
		{".*", "", true},
	}
	for _, c := range cases {
		p, err := CompilePattern(c.pattern)
		if err != nil {
			t.Fatalf("CompilePattern(%q): %v", c.pattern, err)
		}
		if got := p.Match(c.value); got != c.want {
			t.Errorf("%q matching %q = %v, want %v", c.pattern, c.value, got, c.want)
		}
		if p.String() != c.pattern {
			t.Errorf("String() = %q, want %q", p.String(), c.pattern)
		}
	}
}

func TestPatternRejectsBadRegexp(t *testing.T) {
	for _, bad := range []string{"Bash(", "[a-", "*Edit"} {
		if _, err := CompilePattern(bad); err == nil {
			t.Errorf("CompilePattern(%q) should fail", bad)
		}
	}
}
