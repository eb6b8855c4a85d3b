package permission

import (
	"bufio"
	"encoding/json"
	"os"
	"strconv"
	"strings"
	"testing"
)

// corpusLine is one command of a corpus file and its expected verdict.
type corpusLine struct {
	line    int
	want    Behavior
	command string
}

// readCorpus reads "verdict<TAB>command" lines; q:"…" commands are Go
// strings.
func readCorpus(t *testing.T, path string) []corpusLine {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []corpusLine
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		text := sc.Text()
		if strings.TrimSpace(text) == "" || strings.HasPrefix(text, "#") {
			continue
		}
		verdict, cmd, ok := strings.Cut(text, "\t")
		if !ok {
			t.Fatalf("%s:%d: want verdict<TAB>command", path, n)
		}
		if q, isQuoted := strings.CutPrefix(cmd, "q:"); isQuoted {
			if cmd, err = strconv.Unquote(q); err != nil {
				t.Fatalf("%s:%d: %v", path, n, err)
			}
		}
		var want Behavior
		switch verdict {
		case "allow":
			want = Allow
		case "ask":
			want = Ask
		case "deny":
			want = Deny
		default:
			t.Fatalf("%s:%d: unknown verdict %q", path, n, verdict)
		}
		out = append(out, corpusLine{line: n, want: want, command: cmd})
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

func bashCall(cmd string) Call {
	in, _ := json.Marshal(map[string]string{"command": cmd})
	return Call{Tool: "Bash", Input: in}
}

func rules(specs ...string) []Rule {
	var out []Rule
	for _, s := range specs {
		out = append(out, MustParseRule(s))
	}
	return out
}

// TestBypassCorpus checks that no command meant to ask is allowed by the
// allow rules, and that the legitimate ones still are.
func TestBypassCorpus(t *testing.T) {
	c, err := NewChecker(Config{
		Cwd: "/work/proj", Dirs: []string{"/work/lib"}, Home: "/home/u", LexicalPaths: true,
		Rules: RuleSet{Allow: rules("Bash(git status *)", "Bash(npm test *)", "Bash(ls *)", "Bash(echo *)")},
	})
	if err != nil {
		t.Fatal(err)
	}
	lines := readCorpus(t, "testdata/bypass.txt")
	if len(lines) < 200 {
		t.Fatalf("the bypass corpus has %d commands, want at least 200", len(lines))
	}
	counts := map[Behavior]int{}
	for _, l := range lines {
		d := c.Check(bashCall(l.command))
		counts[d.Behavior]++
		switch {
		case l.want != Allow && d.Behavior == Allow:
			t.Errorf("line %d: ALLOWED WRONGLY %q: %s", l.line, l.command, d.Reason)
		case l.want == Allow && d.Behavior != Allow:
			t.Errorf("line %d: %q should be allowed, got %s: %s", l.line, l.command, d.Behavior, d.Reason)
		case d.Behavior != l.want:
			t.Errorf("line %d: %q: got %s, want %s: %s", l.line, l.command, d.Behavior, l.want, d.Reason)
		}
		if d.Reason == "" {
			t.Errorf("line %d: %q: empty reason", l.line, l.command)
		}
	}
	t.Logf("bypass corpus: %d commands: %d allowed, %d ask, %d denied", len(lines), counts[Allow], counts[Ask], counts[Deny])
}

// TestDenyCorpus checks that deny rules see through wrappers, shell
// strings, substitutions and quoting, even in bypassPermissions mode.
func TestDenyCorpus(t *testing.T) {
	c, err := NewChecker(Config{
		Cwd: "/work/proj", Home: "/home/u", Mode: ModeBypass, LexicalPaths: true,
		Rules: RuleSet{Deny: rules("Bash(rm *)", "Bash(git push *)", "Bash(curl *)")},
	})
	if err != nil {
		t.Fatal(err)
	}
	lines := readCorpus(t, "testdata/deny.txt")
	counts := map[Behavior]int{}
	for _, l := range lines {
		d := c.Check(bashCall(l.command))
		counts[d.Behavior]++
		if d.Behavior != l.want {
			t.Errorf("line %d: %q: got %s, want %s: %s", l.line, l.command, d.Behavior, l.want, d.Reason)
		}
		if d.Behavior != Allow && d.Rule == nil {
			t.Errorf("line %d: %q: %s without the rule: %s", l.line, l.command, d.Behavior, d.Reason)
		}
	}
	t.Logf("deny corpus: %d commands: %d denied, %d ask, %d allowed", len(lines), counts[Deny], counts[Ask], counts[Allow])
}
