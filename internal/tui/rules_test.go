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
