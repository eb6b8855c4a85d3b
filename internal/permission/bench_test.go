package permission

import (
	"path/filepath"
	"testing"
)

func BenchmarkCheckBash(b *testing.B) {
	c, err := NewChecker(Config{Cwd: "/work/proj", Home: "/home/u", LexicalPaths: true,
		Rules: RuleSet{
			Allow: rules("Bash(npm test *)", "Bash(git status *)", "Edit(src/**)"),
			Deny:  rules("Bash(rm *)", "Read(./.env)", "Bash(curl *)"),
		}})
	if err != nil {
		b.Fatal(err)
	}
	for _, cmd := range []string{
		"git status",
		"git log --oneline -20 | head -5 && grep -rn TODO src | wc -l",
		"cd src && for f in *.go; do echo $f; done > /dev/null 2>&1",
	} {
		call := bashCall(cmd)
		b.Run(cmd[:min(len(cmd), 20)], func(b *testing.B) {
			for b.Loop() {
				c.Check(call)
			}
		})
	}
}

func BenchmarkCheckRead(b *testing.B) {
	c, err := NewChecker(Config{Cwd: "/work/proj", Home: "/home/u", Rules: RuleSet{Deny: rules("Read(./.env)", "Read(~/.ssh/**)")}})
	if err != nil {
		b.Fatal(err)
	}
	call := call("Read", map[string]any{"file_path": "/work/proj/src/main.go"})
	for b.Loop() {
		c.Check(call)
	}
}

// BenchmarkCheckBashOnDisk checks commands in this repository with the
// file system consulted: links resolved, globs expanded, trees walked
// where a deny rule might match, git's repository looked at, copies of
// denied programs looked for.
func BenchmarkCheckBashOnDisk(b *testing.B) {
	root, err := filepath.Abs("../..")
	if err != nil {
		b.Fatal(err)
	}
	c, err := NewChecker(Config{Cwd: root, Rules: RuleSet{
		Allow: rules("Bash(go test *)"),
		Deny:  rules("Bash(rm *)", "Read(./.env)", "Read(./secrets/**)"),
	}})
	if err != nil {
		b.Fatal(err)
	}
	for _, cmd := range []string{
		"git status",
		"cd internal && git log --oneline -3",
		"cat internal/permission/*.go | wc -l",
		"grep -rn TODO internal/permission",
		"go test ./internal/permission",
	} {
		call := bashCall(cmd)
		b.Run(cmd[:min(len(cmd), 24)], func(b *testing.B) {
			for b.Loop() {
				c.Check(call)
			}
		})
	}
}
