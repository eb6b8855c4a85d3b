package tui

import "strings"

// lineTally counts the lines the session's edits added and removed, from
// the diffs of the Write and Edit results.
type lineTally struct{ added, removed int }

// add counts a tool's structured result: its patch's + and - lines, or a
// new file's lines when it has no patch.
func (t *lineTally) add(result any) {
	s, ok := decodeStructured(result)
	if !ok {
		return
	}
	if len(s.StructuredPatch) == 0 {
		if s.Type == "create" && s.Content != "" {
			t.added += strings.Count(strings.TrimSuffix(s.Content, "\n"), "\n") + 1
		}
		return
	}
	for _, h := range s.StructuredPatch {
		for _, l := range h.Lines {
			switch {
			case strings.HasPrefix(l, "+"):
				t.added++
			case strings.HasPrefix(l, "-"):
				t.removed++
			}
		}
	}
}
