package permission

import (
	"encoding/json"
	"os"
	"strings"
	"testing"
)

// FuzzCheck runs arbitrary commands and rules through the checker in every
// mode: no panic, always a behavior and a reason; and whatever an allow
// rule lets through, adding a denied command after it is denied.
func FuzzCheck(f *testing.F) {
	for _, file := range []string{"testdata/bypass.txt", "testdata/deny.txt"} {
		data, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		for _, line := range strings.Split(string(data), "\n") {
			if _, cmd, ok := strings.Cut(line, "\t"); ok && !strings.HasPrefix(line, "#") {
				f.Add(cmd, "Bash(rm *)")
			}
		}
	}
	f.Add("echo $'\\x", "Read(./.env)")
	f.Add("cat <<EOF\n$(", "Bash(git *)")
	modes := Modes()
	f.Fuzz(func(t *testing.T, cmd, rule string) {
		r, err := ParseRule(rule)
		var rs RuleSet
		if err == nil {
			rs.Deny = []Rule{r}
		}
		for _, m := range modes {
			c, err := NewChecker(Config{Cwd: "/w/p", Home: "/h", Mode: m, LexicalPaths: true, Rules: rs})
			if err != nil {
				continue // a rule valid in syntax but not here (none expected)
			}
			for _, tool := range []string{"Bash", "Read", "Edit", "Glob", "WebFetch", "Agent", "Skill"} {
				in, _ := json.Marshal(map[string]string{"command": cmd, "file_path": cmd, "pattern": cmd, "url": cmd, "subagent_type": cmd, "skill": cmd})
				d := c.Check(Call{Tool: tool, Input: in})
				if d.Reason == "" || d.Behavior < Allow || d.Behavior > Deny {
					t.Fatalf("%s %q in %s: bad decision %+v", tool, cmd, m, d)
				}
			}
		}
		_, _ = MatchRule(rule, bashCall(cmd), "/w")

		c, err := NewChecker(Config{Cwd: "/w/p", Home: "/h", LexicalPaths: true,
			Rules: RuleSet{Allow: rules("Bash(echo *)", "Bash(ls *)"), Deny: rules("Bash(rm *)")}})
		if err != nil {
			t.Fatal(err)
		}
		if c.Check(bashCall(cmd)).Behavior != Allow || strings.HasSuffix(cmd, "\\") || strings.Contains(cmd, "<<") {
			return
		}
		// Only a newline is sure to end what came before (a comment, say).
		for _, tail := range []string{"\nrm -rf /", "\n\tx=1 rm -rf /"} {
			if d := c.Check(bashCall(cmd + tail)); d.Behavior == Allow {
				t.Fatalf("%q is allowed but %q is too: %s", cmd, cmd+tail, d.Reason)
			}
		}
	})
}

// FuzzParseRule checks that ParseRule never panics and that what it
// accepts round-trips through String.
func FuzzParseRule(f *testing.F) {
	for _, s := range []string{"Bash(npm run *)", "Read(//a/**)", "WebFetch(domain:x.com)", `Bash(a \) b)`, "mcp__a__*", "Skill(x *)"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		r, err := ParseRule(s)
		if err != nil {
			return
		}
		back, err := ParseRule(r.String())
		if err != nil || back != r {
			t.Fatalf("%q -> %q does not round-trip: %+v %v", s, r.String(), back, err)
		}
	})
}
