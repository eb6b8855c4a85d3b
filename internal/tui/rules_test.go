package tui

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
)

func TestAddAllowRule(t *testing.T) {
	tests := []struct {
		name, before, want string
	}{
		{"no file", "", "{\n  \"permissions\": {\n    \"allow\": [\"Bash(ls *)\"]\n  }\n}\n"},
		{"other keys kept", "{\n    \"model\": \"opus\"\n}\n",
			"{\n    \"model\": \"opus\",\n    \"permissions\": {\n        \"allow\": [\"Bash(ls *)\"]\n    }\n}\n"},
		{"permissions without allow", "{\n  \"permissions\": {\n    \"deny\": [\"Read(./.env)\"]\n  }\n}\n",
			"{\n  \"permissions\": {\n    \"deny\": [\"Read(./.env)\"],\n    \"allow\": [\"Bash(ls *)\"]\n  }\n}\n"},
		{"appended", "{\"permissions\": {\"allow\": [\"Read\"]}}", "{\"permissions\": {\"allow\": [\"Read\", \"Bash(ls *)\"]}}"},
		{"empty list", "{\"permissions\": {\"allow\": []}}", "{\"permissions\": {\"allow\": [\"Bash(ls *)\"]}}"},
		{"already there", "{\"permissions\": {\"allow\": [\"Bash(ls *)\"]}}", "{\"permissions\": {\"allow\": [\"Bash(ls *)\"]}}"},
		{"crlf", "{\r\n  \"a\": 1\r\n}\r\n", "{\r\n  \"a\": 1,\r\n  \"permissions\": {\r\n    \"allow\": [\"Bash(ls *)\"]\r\n  }\r\n}\r\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), ".claude", "settings.local.json")
			if tt.before != "" {
				if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(path, []byte(tt.before), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			if err := addAllowRule(path, "Bash(ls *)"); err != nil {
				t.Fatal(err)
			}
			got, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tt.want {
				t.Errorf("got\n%q\nwant\n%q", got, tt.want)
			}
			if !json.Valid(got) {
				t.Error("invalid JSON")
			}
			if tt.before != "" {
				if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o600 {
					t.Errorf("mode %v", fi.Mode().Perm())
				}
			}
		})
	}
}

func TestAddAllowRuleRefusesNonObjects(t *testing.T) {
	for _, content := range []string{`[]`, `{"permissions": []}`, `{"permissions": {"allow": "x"}}`, `{bad`} {
		path := filepath.Join(t.TempDir(), "s.json")
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := addAllowRule(path, "Read"); err == nil {
			t.Errorf("%s: no error", content)
		}
		if got, _ := os.ReadFile(path); string(got) != content {
			t.Errorf("%s: file changed to %s", content, got)
		}
	}
}

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
		if got := suggestRule(tt.tool, json.RawMessage(tt.input), cwd); got != tt.want {
			t.Errorf("%s %s: got %q, want %q", tt.tool, tt.input, got, tt.want)
		}
	}
}

func TestTextStreamCutsAtParagraphsOutsideFences(t *testing.T) {
	var s textStream
	feed := func(text string) int {
		s.buf.WriteString(text)
		return s.advance()
	}
	if cut := feed("a\nb"); cut != -1 {
		t.Errorf("cut %d without a blank line", cut)
	}
	if cut := feed("\n\n"); cut != 5 {
		t.Errorf("cut %d, want 5", cut)
	}
	if cut := feed("```\nx\n\ny\n"); cut != -1 {
		t.Errorf("cut %d inside a fence", cut)
	}
	if cut := feed("```\n\nz"); cut != len("a\nb\n\n```\nx\n\ny\n```\n\n") {
		t.Errorf("cut %d after the fence", cut)
	}
}

func TestHistoryFileIsCompacted(t *testing.T) {
	path := filepath.Join(t.TempDir(), "h.jsonl")
	var b []byte
	for i := range 3*maxHistory + 7 {
		line, _ := json.Marshal(historyRecord{Display: "p" + strconv.Itoa(i)})
		b = append(append(b, line...), '\n')
	}
	b = append(b, `{"display": "torn`...)
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	h := loadHistory(path)
	if len(h.entries) != maxHistory || h.entries[maxHistory-1] != "p"+strconv.Itoa(3*maxHistory+6) {
		t.Fatalf("%d entries, last %q", len(h.entries), h.entries[len(h.entries)-1])
	}
	again := loadHistory(path)
	if !slices.Equal(again.entries, h.entries) {
		t.Error("the compacted file does not hold the same history")
	}
	if data, _ := os.ReadFile(path); bytes.Count(data, []byte("\n")) != maxHistory {
		t.Errorf("the file keeps %d lines", bytes.Count(data, []byte("\n")))
	}
}
