package tui

import (
	"fmt"
	"strings"
	"time"

	"github.com/tackcode/tack/agent"
)

var spinnerFrames = [...]string{"·", "✢", "✳", "✶", "✻", "✽", "✻", "✶", "✳", "✢"}

// render draws the live region: what is still streaming, the running
// tools, the spinner, the dialog or the prompt, and the status.
func (m *Model) render() string {
	var parts []string
	w := m.width
	st := m.st

	// The paragraph being streamed, as it comes, its last lines only. While
	// the model works the area keeps the tallest height it has had, so that
	// what is below it does not move (moving it would redraw it all).
	streamLines := 0
	var stream string
	if pending := m.stream.pending(); strings.TrimSpace(pending) != "" {
		bullet := "  "
		if !m.stream.printed {
			bullet = st.accent.Render("⏺") + " "
		}
		text := wrap(strings.TrimRight(pending, "\n"), max(10, w-2))
		stream = indentBlock(lastLines(text, max(3, m.height/2)), bullet, "  ")
		streamLines = strings.Count(stream, "\n") + 1
	}
	if m.busy() {
		m.streamFloor = max(m.streamFloor, streamLines)
		if pad := m.streamFloor - streamLines; pad > 0 {
			if stream != "" {
				stream += "\n"
			}
			stream += strings.Repeat("\n", pad-1)
		}
	} else {
		m.streamFloor = 0
	}
	if m.streamFloor > 0 || stream != "" {
		parts = append(parts, stream)
	}
	for _, tc := range m.tools {
		line := st.dim.Render(spinnerFrames[m.frame%len(spinnerFrames)]) + " " + st.bold.Render(truncate(toolTitle(tc.name, tc.input, m.cfg.cwd), w-2))
		if tc.subUses > 0 {
			line += "\n" + st.dim.Render(truncate(fmt.Sprintf("  ⎿  %s · %s", plural(tc.subUses, "tool use"), tc.subLast), w))
		}
		parts = append(parts, line)
	}
	if m.busy() {
		label := "Working…"
		switch {
		case len(m.hookStatus) > 0:
			// The latest hook that said what it does, while it runs.
			label = m.hookStatus[len(m.hookStatus)-1].text
		case m.thinking:
			label = "Thinking…"
		}
		elapsed := m.now().Sub(m.runStart).Round(time.Second)
		info := fmt.Sprintf("(%s · ↓ %s tokens · esc to interrupt)", elapsed, tokens(m.outTokens))
		if m.runs > 1 {
			info = fmt.Sprintf("(%s · ↓ %s tokens · %d queued · esc to interrupt)", elapsed, tokens(m.outTokens), m.runs-1)
		}
		parts = append(parts, st.accent.Render(spinnerFrames[m.frame%len(spinnerFrames)]+" "+label)+" "+st.dim.Render(info))
	}
	switch {
	case m.dialog != nil:
		parts = append(parts, m.renderDialog())
	case m.question != nil:
		parts = append(parts, m.renderQuestions())
	case m.picker != nil:
		parts = append(parts, m.renderPicker())
	case m.prompts != nil:
		parts = append(parts, m.renderPromptPicker())
	default:
		if m.search != nil {
			found, ok := m.search.match(m.history)
			if !ok && m.search.query != "" {
				found = "(no match)"
			}
			parts = append(parts, st.dim.Render("search history: ")+m.search.query+"▏ "+st.dim.Render(truncate(firstLine(found), max(10, w-len(m.search.query)-20))))
		}
		parts = append(parts, st.box.Width(w).Render(m.input.View()))
		if m.compl.open() {
			parts = append(parts, m.renderCompletion())
		}
	}
	parts = append(parts, m.statusBar())
	parts = append(parts, m.statusLines(w)...)
	return strings.Join(parts, "\n")
}

// statusBar is the line under the prompt: the mode, a hint, the model and
// the cost so far.
func (m *Model) statusBar() string {
	st := m.st
	var left string
	switch m.mode {
	case agent.PermissionAcceptEdits:
		left = st.modeEdits.Render("⏵⏵ accept edits on") + st.dim.Render(" (shift+tab to cycle)")
	case agent.PermissionPlan:
		left = st.modePlan.Render("⏸ plan mode on") + st.dim.Render(" (shift+tab to cycle)")
	case agent.PermissionBypass:
		left = st.modeBypass.Render("⏵⏵ bypass permissions on") + st.dim.Render(" (shift+tab to cycle)")
	case agent.PermissionAuto:
		left = st.modeEdits.Render("⏵⏵ auto mode on") + st.dim.Render(" (shift+tab to cycle)")
	case agent.PermissionDontAsk:
		left = st.modeBypass.Render("don't ask mode on")
	default:
		left = st.dim.Render("? /help for commands · shift+tab to cycle modes")
	}
	if m.notice != "" {
		left = st.warn.Render(m.notice)
	}
	if v := m.vimLabel(); v != "" {
		left = st.bold.Render(v) + " " + left
	}
	right := st.dim.Render(fmt.Sprintf("%s · $%.4f", shortModel(m.modelID), m.cost.usd))
	gap := m.width - visibleWidth(left) - visibleWidth(right)
	if gap < 1 {
		return truncate(left, m.width)
	}
	return left + strings.Repeat(" ", gap) + right
}

func shortModel(id string) string {
	return strings.TrimPrefix(id, "claude-")
}
