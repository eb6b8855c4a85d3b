package agent

import (
	"encoding/json"
	"testing"
)

func TestSuggestRule(t *testing.T) {
	cwd := "/work/p"
	tests := []struct{ tool, input, want string }{
		{"Bash", `{"command":"go test ./..."}`, "Bash(go test *)"},
		{"Bash", `{"command":"ls -la"}`, "Bash(ls *)"},
		{"Bash", `{"command":"make"}`, "Bash(make *)"},
		{"Bash", `{"command":"cd x && make"}`, "Bash(cd x && make)"},
		{"Bash", `{"command":"echo $(date)"}`, ""},
		{"Write", `{"file_path":"/work/p/src/a.go"}`, "Edit(./src/**)"},
		{"Edit", `{"file_path":"/work/p/a.go"}`, "Edit(./*)"},
		{"Edit", `{"file_path":"/etc/hosts"}`, "Edit(//etc/**)"},
		{"WebFetch", `{"url":"https://go.dev/doc"}`, "WebFetch(domain:go.dev)"},
		{"Read", `{"file_path":"/home/u/notes/a.md"}`, "Read(//home/u/notes/**)"},
		{"Grep", `{"pattern":"x","path":"/opt/lib"}`, "Read(//opt/lib/**)"},
		{"mcp__gh__create_issue", `{}`, "mcp__gh__create_issue"},
	}
	for _, tt := range tests {
		if got := SuggestRule(tt.tool, json.RawMessage(tt.input), cwd); got != tt.want {
			t.Errorf("%s %s: got %q, want %q", tt.tool, tt.input, got, tt.want)
		}
	}
}
