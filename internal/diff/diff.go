// Package diff computes line diffs between two texts: hunks with context in
// the shape of Claude Code's structuredPatch (what Edit and Write report in
// stream-json and to hooks), and the unified-diff text the terminal renders.
//
// Lines are compared with their line terminator, so a missing newline at the
// end of a file is a change, marked as unified diffs mark it.
package diff

import (
	"fmt"
	"strings"
)

// DefaultContext is the number of unchanged lines shown around each change.
const DefaultContext = 3

// NoNewline is the line a hunk carries after a line that has no terminator.
const NoNewline = `\ No newline at end of file`

// Hunk is one region of change. Lines start with '-' (removed), '+' (added),
// ' ' (unchanged context) or '\' (the NoNewline marker), without terminators.
// Starts are 1-based; a side with no lines starts at the line before the hunk,
// as in unified diffs.
type Hunk struct {
	OldStart int      `json:"oldStart"`
	OldLines int      `json:"oldLines"`
	NewStart int      `json:"newStart"`
	NewLines int      `json:"newLines"`
	Lines    []string `json:"lines"`
}

// Patch returns the hunks turning old into new with DefaultContext lines of
// context. It never returns nil, so an unchanged text encodes as [].
func Patch(old, new string) []Hunk { return Hunks(old, new, DefaultContext) }

// Hunks returns the hunks turning old into new with the given number of
// context lines. It never returns nil.
func Hunks(old, new string, context int) []Hunk {
	if context < 0 {
		context = 0
	}
	a, b := SplitLines(old), SplitLines(new)
	return group(script(a, b), a, b, context)
}

// Count returns how many lines the hunks add and remove.
func Count(hunks []Hunk) (added, removed int) {
	for _, h := range hunks {
		for _, l := range h.Lines {
			switch {
			case strings.HasPrefix(l, "+"):
				added++
			case strings.HasPrefix(l, "-"):
				removed++
			}
		}
	}
	return added, removed
}

// Unified renders hunks as a unified diff with ---/+++ headers naming the two
// sides. It returns "" when there are no hunks.
func Unified(oldName, newName string, hunks []Hunk) string {
	if len(hunks) == 0 {
		return ""
	}
	var sb strings.Builder
	fmt.Fprintf(&sb, "--- %s\n+++ %s\n", oldName, newName)
	for _, h := range hunks {
		fmt.Fprintf(&sb, "@@ -%d,%d +%d,%d @@\n", h.OldStart, h.OldLines, h.NewStart, h.NewLines)
		for _, l := range h.Lines {
			sb.WriteString(l)
			sb.WriteByte('\n')
		}
	}
	return sb.String()
}

// SplitLines splits s into lines that keep their "\n"; only the last line
// may lack it. An empty string has no lines.
func SplitLines(s string) []string {
	if s == "" {
		return nil
	}
	lines := make([]string, 0, strings.Count(s, "\n")+1)
	for s != "" {
		i := strings.IndexByte(s, '\n')
		if i < 0 {
			lines = append(lines, s)
			break
		}
		lines = append(lines, s[:i+1])
		s = s[i+1:]
	}
	return lines
}

// op is one step of an edit script.
type op struct {
	kind byte // ' ', '-' or '+'
	a, b int  // index of the line in a (for ' ' and '-') and in b (for ' ' and '+')
}

// script returns the edit script from a to b: for each position, removed
// lines of a before added lines of b, in order.
func script(a, b []string) []op {
	removed, added := compare(a, b)
	ops := make([]op, 0, max(len(a), len(b)))
	i, j := 0, 0
	for i < len(a) || j < len(b) {
		switch {
		case i < len(a) && removed[i]:
			ops = append(ops, op{'-', i, j})
			i++
		case j < len(b) && added[j]:
			ops = append(ops, op{'+', i, j})
			j++
		default:
			ops = append(ops, op{' ', i, j})
			i++
			j++
		}
	}
	return ops
}

// group cuts the edit script into hunks: changes closer than 2*context
// unchanged lines share a hunk.
func group(ops []op, a, b []string, context int) []Hunk {
	hunks := []Hunk{}
	for i := 0; i < len(ops); {
		if ops[i].kind == ' ' {
			i++
			continue
		}
		// ops[i] is the first change of a new hunk; find where the hunk ends.
		start := max(i-context, 0)
		end := i
		for end < len(ops) {
			if ops[end].kind != ' ' {
				end++
				continue
			}
			run := end
			for run < len(ops) && ops[run].kind == ' ' {
				run++
			}
			if run == len(ops) || run-end > 2*context {
				end = min(end+context, run)
				break
			}
			end = run
		}
		hunks = append(hunks, makeHunk(ops[start:end], a, b))
		i = end
	}
	return hunks
}

func makeHunk(ops []op, a, b []string) Hunk {
	h := Hunk{OldStart: ops[0].a + 1, NewStart: ops[0].b + 1, Lines: make([]string, 0, len(ops))}
	for _, o := range ops {
		var line string
		switch o.kind {
		case ' ':
			line = a[o.a]
			h.OldLines++
			h.NewLines++
		case '-':
			line = a[o.a]
			h.OldLines++
		case '+':
			line = b[o.b]
			h.NewLines++
		}
		text, terminated := strings.CutSuffix(line, "\n")
		h.Lines = append(h.Lines, string(o.kind)+text)
		if !terminated {
			h.Lines = append(h.Lines, NoNewline)
		}
	}
	// An empty side is located at the line before the hunk.
	if h.OldLines == 0 {
		h.OldStart--
	}
	if h.NewLines == 0 {
		h.NewStart--
	}
	return h
}
