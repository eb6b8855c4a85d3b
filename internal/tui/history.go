package tui

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/tackcode/tack/internal/atomicfile"
)

// maxHistory bounds the prompts kept (in memory and on disk).
const maxHistory = 500

// history is the project's prompt history, oldest first, with the browsing
// position of ↑/↓. It is appended to one JSON line per prompt; a line that
// cannot be read (a torn write) is skipped.
type history struct {
	path string
	// inMemory keeps new prompts for this session's ↑ only, writing
	// nothing (CLAUDE_CODE_SKIP_PROMPT_HISTORY).
	inMemory bool
	entries  []string
	pos      int    // len(entries) when not browsing
	draft    string // what was typed before browsing began
}

type historyRecord struct {
	Display string `json:"display"`
}

func loadHistory(path string) *history {
	h := &history{path: path}
	if path == "" {
		return h
	}
	f, err := os.Open(path)
	if err != nil {
		return h
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	lines := 0
	for sc.Scan() {
		lines++
		var r historyRecord
		if json.Unmarshal(sc.Bytes(), &r) == nil && r.Display != "" {
			h.entries = append(h.entries, r.Display)
		}
	}
	if len(h.entries) > maxHistory {
		h.entries = append([]string(nil), h.entries[len(h.entries)-maxHistory:]...)
	}
	h.pos = len(h.entries)
	if lines > 2*maxHistory {
		h.rewrite() // keep the file from growing without bound
	}
	return h
}

// rewrite replaces the file by the entries kept; a failure leaves it as it
// was.
func (h *history) rewrite() {
	var b []byte
	for _, e := range h.entries {
		line, err := json.Marshal(historyRecord{Display: e})
		if err != nil {
			return
		}
		b = append(append(b, line...), '\n')
	}
	_ = atomicfile.Write(h.path, b, 0o600)
}

// add records a prompt (not twice in a row) and ends browsing.
func (h *history) add(prompt string) error {
	h.pos = len(h.entries)
	h.draft = ""
	if prompt == "" || len(h.entries) > 0 && h.entries[len(h.entries)-1] == prompt {
		return nil
	}
	h.entries = append(h.entries, prompt)
	if len(h.entries) > maxHistory {
		h.entries = append([]string(nil), h.entries[len(h.entries)-maxHistory:]...)
	}
	h.pos = len(h.entries)
	if h.path == "" || h.inMemory {
		return nil
	}
	line, err := json.Marshal(historyRecord{Display: prompt})
	if err != nil {
		return fmt.Errorf("history: %w", err)
	}
	if err := os.MkdirAll(filepath.Dir(h.path), 0o700); err != nil {
		return fmt.Errorf("history: %w", err)
	}
	f, err := os.OpenFile(h.path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
	if err != nil {
		return fmt.Errorf("history: %w", err)
	}
	_, werr := f.Write(append(line, '\n'))
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	if werr != nil {
		return fmt.Errorf("history: %w", werr)
	}
	return nil
}

// prev moves to the previous prompt; current is what the input holds.
func (h *history) prev(current string) (string, bool) {
	if h.pos == 0 {
		return "", false
	}
	if h.pos == len(h.entries) {
		h.draft = current
	}
	h.pos--
	return h.entries[h.pos], true
}

// next moves to the following prompt, or back to the draft.
func (h *history) next() (string, bool) {
	if h.pos >= len(h.entries) {
		return "", false
	}
	h.pos++
	if h.pos == len(h.entries) {
		return h.draft, true
	}
	return h.entries[h.pos], true
}

// historySearch is a Ctrl-R search: the newest prompt containing the query,
// older matches with each further Ctrl-R.
type historySearch struct {
	query string
	skip  int // matches passed over
	saved string
}

// match returns the prompt the search lands on.
func (s *historySearch) match(h *history) (string, bool) {
	if s.query == "" {
		return "", false
	}
	seen := 0
	q := strings.ToLower(s.query)
	for i := len(h.entries) - 1; i >= 0; i-- {
		if strings.Contains(strings.ToLower(h.entries[i]), q) {
			if seen == s.skip {
				return h.entries[i], true
			}
			seen++
		}
	}
	return "", false
}

// skipHistoryEnv, when truthy, keeps the prompts typed out of the history
// file, as Claude Code's variable of that name does.
const skipHistoryEnv = "CLAUDE_CODE_SKIP_PROMPT_HISTORY"

func truthy(v string) bool {
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "1", "true", "yes", "on":
		return true
	}
	return false
}
