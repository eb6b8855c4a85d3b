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
