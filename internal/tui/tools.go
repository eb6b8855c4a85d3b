package tui

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/tackcode/tack/agent"
	"github.com/tackcode/tack/internal/diff"
)

// toolInput holds the input fields the UI shows.
type toolInput struct {
	Command      string `json:"command"`
	Description  string `json:"description"`
	FilePath     string `json:"file_path"`
	NotebookPath string `json:"notebook_path"`
	Path         string `json:"path"`
	Pattern      string `json:"pattern"`
	URL          string `json:"url"`
	Query        string `json:"query"`
	Prompt       string `json:"prompt"`
	SubagentType string `json:"subagent_type"`
	Skill        string `json:"skill"`
	Content      string `json:"content"`
	OldString    string `json:"old_string"`
	NewString    string `json:"new_string"`
	ReplaceAll   bool   `json:"replace_all"`
}

func decodeInput(raw json.RawMessage) toolInput {
	var in toolInput
	_ = json.Unmarshal(raw, &in)
	return in
}

// relPath shows path relative to cwd when it is inside it.
func relPath(path, cwd string) string {
	if path == "" || cwd == "" {
		return path
	}
	if rel, err := filepath.Rel(cwd, path); err == nil && !strings.HasPrefix(rel, "..") {
		return rel
	}
	return path
}

// toolTitle is the one-line form of a call: Bash(go test ./...).
func toolTitle(name string, raw json.RawMessage, cwd string) string {
	in := decodeInput(raw)
	arg := ""
	switch name {
	case "Bash":
		arg = firstLine(in.Command)
	case "Read", "Write", "Edit", "MultiEdit":
		arg = relPath(in.FilePath, cwd)
		if name == "Edit" || name == "MultiEdit" {
			name = "Update"
		}
	case "NotebookEdit":
		arg = relPath(in.NotebookPath, cwd)
	case "Glob", "Grep":
		arg = fmt.Sprintf("pattern: %q", in.Pattern)
		if in.Path != "" {
			arg += ", path: " + relPath(in.Path, cwd)
		}
		name = "Search"
	case "WebFetch":
		arg = in.URL
	case "WebSearch":
		arg = in.Query
	case "Agent", "Task":
		arg = in.Description
		if in.SubagentType != "" {
			name = in.SubagentType
		}
	case "Skill":
		arg = in.Skill
	default:
		arg = firstArg(raw)
	}
	if len(arg) > 160 {
		arg = arg[:160] + "…"
	}
	return name + "(" + arg + ")"
}

// firstArg is the first string value of an input object, for tools the UI
// does not know.
func firstArg(raw json.RawMessage) string {
	var m map[string]any
	if json.Unmarshal(raw, &m) != nil {
		return ""
	}
	var parts []string
	for k, v := range m {
		if s, ok := v.(string); ok {
			parts = append(parts, k+": "+firstLine(s))
		}
	}
	if len(parts) == 0 {
		return ""
	}
	// map order is random: show the shortest for stability
	best := parts[0]
	for _, p := range parts[1:] {
		if len(p) < len(best) || len(p) == len(best) && p < best {
			best = p
		}
	}
	return best
}

// structured is the part of a tool's structured result the UI reads.
type structured struct {
	Stdout          string      `json:"stdout"`
	Stderr          string      `json:"stderr"`
	Interrupted     bool        `json:"interrupted"`
	StructuredPatch []diff.Hunk `json:"structuredPatch"`
	Type            string      `json:"type"`
	Content         string      `json:"content"`
	FilePath        string      `json:"filePath"`
}

func decodeStructured(v any) (structured, bool) {
	var s structured
	if v == nil {
		return s, false
	}
	raw, err := json.Marshal(v)
	if err != nil {
		return s, false
	}
	return s, json.Unmarshal(raw, &s) == nil
}

const foldLines = 4

// renderToolCall renders a finished call and its result for the scrollback.
func (m *Model) renderToolCall(tc *toolCall, res agent.ContentBlock, result any) string {
	st := m.st
	text := resultText(res)
	head := st.accent.Render("⏺") + " " + st.bold.Render(truncate(toolTitle(tc.name, tc.input, m.cfg.cwd), m.width-2))
	body := m.toolBody(tc, res, text, result)
	if len(body) == 0 {
		return head
	}
	var b strings.Builder
	b.WriteString(head)
	for i, l := range body {
		b.WriteByte('\n')
		if i == 0 {
			b.WriteString("  ⎿  ")
		} else {
			b.WriteString("     ")
		}
		b.WriteString(l)
	}
	return b.String()
}

func resultText(b agent.ContentBlock) string {
	var parts []string
	for _, c := range b.Content {
		if c.Type == agent.BlockText {
			parts = append(parts, c.Text)
		}
	}
	return strings.Join(parts, "\n")
}

// toolBody is the lines under a call's title.
func (m *Model) toolBody(tc *toolCall, res agent.ContentBlock, text string, result any) []string {
	st := m.st
	w := max(20, m.width-6)
	sr, hasStructured := decodeStructured(result)
	if res.IsError && tc.name != "Bash" {
		lines, more := fold(text, foldLines)
		out := make([]string, 0, len(lines)+1)
		for _, l := range lines {
			out = append(out, st.bad.Render(truncate(l, w)))
		}
		if more > 0 {
			out = append(out, st.dim.Render(fmt.Sprintf("… +%d lines", more)))
		}
		return out
	}
	switch tc.name {
	case "Bash":
		return m.bashBody(res, text, sr, hasStructured, w)
	case "Edit", "MultiEdit", "Write", "NotebookEdit":
		hunks := sr.StructuredPatch
		in := decodeInput(tc.input)
		if len(hunks) == 0 && tc.name == "Write" {
			hunks = diff.Patch("", in.Content)
		}
		added, removed := diff.Count(hunks)
		var summary string
		switch {
		case tc.name == "Write" && sr.Type == "create" || tc.name == "Write" && !hasStructured:
			n := strings.Count(in.Content, "\n") + boolInt(!strings.HasSuffix(in.Content, "\n") && in.Content != "")
			summary = fmt.Sprintf("Wrote %s to %s", plural(n, "line"), relPath(in.FilePath, m.cfg.cwd))
		default:
			summary = fmt.Sprintf("Updated %s with %s and %s", relPath(in.FilePath, m.cfg.cwd), plural(added, "addition"), plural(removed, "removal"))
		}
		out := []string{summary}
		return append(out, st.renderHunks(hunks, w, 40)...)
	case "Read":
		return []string{fmt.Sprintf("Read %s", plural(strings.Count(text, "\n")+1, "line"))}
	case "Agent", "Task":
		out := []string{}
		if tc.subUses > 0 {
			out = append(out, st.dim.Render(fmt.Sprintf("Done (%s)", plural(tc.subUses, "tool use"))))
		}
		lines, more := fold(text, foldLines)
		out = append(out, lines...)
		if more > 0 {
			out = append(out, st.dim.Render(fmt.Sprintf("… +%d lines", more)))
		}
		return out
	}
	lines, more := fold(text, foldLines)
	out := make([]string, 0, len(lines)+1)
	for _, l := range lines {
		out = append(out, truncate(expandTabs(l), w))
	}
	if more > 0 {
		out = append(out, st.dim.Render(fmt.Sprintf("… +%d lines", more)))
	}
	return out
}

// bashBody shows a command's output, folded, and its exit code.
func (m *Model) bashBody(res agent.ContentBlock, text string, sr structured, hasStructured bool, w int) []string {
	st := m.st
	code := 0
	output := text
	if res.IsError {
		code = 1
		if rest, ok := strings.CutPrefix(text, "Exit code "); ok {
			num, after, _ := strings.Cut(rest, "\n")
			if n, err := strconv.Atoi(strings.TrimSpace(num)); err == nil {
				code = n
				output = after
			}
		}
	}
	if hasStructured && !res.IsError {
		output = strings.TrimRight(strings.Join(nonEmpty(sr.Stdout, sr.Stderr), "\n"), "\n")
	}
	var out []string
	lines, more := fold(output, foldLines)
	for _, l := range lines {
		out = append(out, truncate(expandTabs(l), w))
	}
	if more > 0 {
		out = append(out, st.dim.Render(fmt.Sprintf("… +%d lines", more)))
	}
	switch {
	case sr.Interrupted:
		out = append(out, st.warn.Render("interrupted"))
	case code == 0:
		out = append(out, st.dim.Render("exit 0"))
	default:
		out = append(out, st.bad.Render(fmt.Sprintf("exit %d", code)))
	}
	return out
}

func nonEmpty(ss ...string) []string {
	var out []string
	for _, s := range ss {
		if strings.TrimSpace(s) != "" {
			out = append(out, s)
		}
	}
	return out
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return fmt.Sprintf("%d %ss", n, word)
}
