package permission

import (
	"encoding/json"
	"testing"
)

// TestReadOnlyCommands checks the read-only list: plan mode runs exactly
// the commands that only read inside the working directories.
func TestReadOnlyCommands(t *testing.T) {
	plan := newTestChecker(t, ModePlan, RuleSet{})
	readOnly := func(cmd string) bool { return plan.Check(bashCall(cmd)).Behavior == Allow }
	yes := []string{
		"ls -la", "cat a b | sort | uniq -c", "git status", "git log --oneline -5", "git diff HEAD~1 -- src",
		"grep -rn foo .", "rg -n foo src", "find . -name '*.go' -type f", "head -n 5 a", "tail -f log", "wc -l a",
		"echo hi", "printf '%s\\n' a", "pwd", "whoami", "id", "date -u", "uname -a", "hostname", "which go", "type ls",
		"file a", "stat a", "du -sh .", "df -h", "tree -L 2", "basename a/b", "dirname a/b", "realpath a", "readlink -f a",
		"true", "false", "test -f a", "[ -d a ]", "sort -n a", "uniq a", "cut -d, -f1 a", "tr a b", "diff a b", "cmp a b",
		"comm a b", "jq .x a.json", "sha256sum a", "md5sum a", "env", "printenv HOME", "git branch -a", "git tag -l",
		"git rev-parse HEAD", "git ls-files", "git ls-tree HEAD", "git remote -v", "git remote show origin",
		"git config --get user.email", "git config --list", "git describe", "git shortlog -s", "git reflog",
		"git reflog show", "git show HEAD", "git blame a", "sed -n 1p a", "ls 2>/dev/null", "ls >/dev/null 2>&1",
		"LANG=C ls", "time ls", "nice ls", "timeout 5 ls", "command -v git", "cd src", "x=1",
	}
	no := []string{
		"", "rm a", "ls > out", "echo x >> a", "git commit", "git push", "git -c a=b status", "git --exec-path=x log",
		"git diff --output=x", "git log --ext-diff", "git branch -D x", "git branch new", "git tag v1", "git remote add a b",
		"git config a.b c", "git reflog expire", "find . -delete", "find . -exec ls \\;", "find . -fprint x", "sort -o x a",
		"sort --output=x a", "sort --compress-program=gzip a", "uniq a b", "printf -v x y", "date -s now", "hostname x",
		"rg --pre cat x", "tree -o x", "sed -i s/a/b/ a", "sed s/a/b/w a", "env ls", "env -S ls", "sudo ls", "xargs ls",
		"sh -c ls", "eval ls", "ls; rm a", "PAGER=x git log", "tee a", "dd of=a", "npm test", "f() { ls; }", "PATH=x",
		"echo $((x))", "/bin/ls", "awk 1 a", "cat $(rm a)", "test -v x", "file -C x", "command ls",
	}
	for _, c := range yes {
		if !readOnly(c) {
			t.Errorf("%q is not read-only: %s", c, plan.Check(bashCall(c)).Reason)
		}
	}
	for _, c := range no {
		if readOnly(c) && c != "" {
			t.Errorf("%q is read-only", c)
		}
	}
}

func TestMatchRule(t *testing.T) {
	tests := []struct {
		rule string
		call Call
		want bool
	}{
		{"Bash(rm *)", bashCall("sudo rm -rf /"), true},
		{"Bash(rm *)", bashCall("ls && rm x"), true},
		{"Bash(rm *)", bashCall("bash -c 'rm x'"), true},
		{"Bash(rm *)", bashCall("$CMD x"), true},
		{"Bash(rm *)", bashCall("ls -la"), false},
		{"Bash(rm *)", bashCall("rmdir x"), false},
		{"Bash(rm *)", bashCall("rm -rf / ("), true},
		{"Bash", bashCall("ls"), true},
		{"Bash(npm test *)", bashCall("npm test --watch"), true},
		{"Edit(*.ts)", call("Write", map[string]any{"file_path": "/w/src/a.ts"}), true},
		{"Edit(*.ts)", call("Edit", map[string]any{"file_path": "/w/src/a.go"}), false},
		{"Edit(*.ts)", call("Read", map[string]any{"file_path": "/w/src/a.ts"}), false},
		{"Read(./.env)", call("Read", map[string]any{"file_path": ".env"}), true},
		{"Read", call("Grep", map[string]any{"pattern": "x"}), true},
		{"Read", call("Edit", map[string]any{"file_path": "a"}), false},
		{"WebFetch(domain:example.com)", call("WebFetch", map[string]any{"url": "https://example.com/"}), true},
		{"WebFetch(domain:example.com)", call("WebFetch", map[string]any{"url": "https://a.example.com/"}), false},
		{"mcp__github", call("mcp__github__x", nil), true},
		{"mcp__github", call("mcp__gitlab__x", nil), false},
		{"Agent(Explore)", call("Task", map[string]any{"subagent_type": "Explore"}), true},
		{"Skill(commit)", call("Skill", map[string]any{"skill": "commit"}), true},
	}
	for _, tt := range tests {
		got, err := MatchRule(tt.rule, tt.call, "/w")
		if err != nil {
			t.Fatalf("MatchRule(%q): %v", tt.rule, err)
		}
		if got != tt.want {
			t.Errorf("MatchRule(%q, %s %s) = %v, want %v", tt.rule, tt.call.Tool, tt.call.Input, got, tt.want)
		}
	}
	if _, err := MatchRule("Bash(", bashCall("ls"), "/w"); err == nil {
		t.Error("bad rule accepted")
	}
	if _, err := MatchRule("Bash", bashCall("ls"), "w"); err == nil {
		t.Error("relative cwd accepted")
	}
	m, err := NewMatcher("Bash(rm *)", "/w")
	if err != nil {
		t.Fatal(err)
	}
	if m.Match(Call{Tool: "Bash", Input: json.RawMessage(`{"command":1}`)}) {
		t.Error("bad input matched")
	}
}
