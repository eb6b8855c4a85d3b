package tui

import (
	_ "embed"
	"fmt"
	"slices"
	"strings"

	"charm.land/bubbles/v2/textinput"
	tea "charm.land/bubbletea/v2"

	"github.com/tackcode/tack/agent"
)

// questionsDeclined is what the model is told when the user closes the
// questions without answering.
//
//go:embed prompts/questions-declined.md
var questionsDeclined string

// questionDialog puts the model's AskUserQuestion questions to the user,
// one at a time; the answers go back as the call's updated input.
type questionDialog struct {
	req     *permRequest
	qs      []agent.Question
	cur     int               // the question shown
	sel     int               // the highlighted row: the options, "Other", then (multi-select) "Next"
	picked  [][]bool          // the options ticked, per question (multi-select)
	answers map[string]string // by question text
	typing  bool              // writing an answer of one's own
	other   textinput.Model
}

// openQuestions shows the questions of an AskUserQuestion call. Input it
// cannot read is put to the user as an ordinary permission request.
func (m *Model) openQuestions(req *permRequest) {
	qs, err := agent.ParseQuestions(req.input)
	if err != nil || len(qs.Questions) == 0 {
		m.openDialog(req)
		return
	}
	m.flushStream()
	in := textinput.New()
	in.Placeholder = "type your answer (Enter to send, Esc to go back)"
	in.SetWidth(max(10, m.width-8))
	st := in.Styles()
	st.Cursor.Blink = false
	in.SetStyles(st)
	d := &questionDialog{req: req, qs: qs.Questions, answers: map[string]string{}, other: in}
	for _, q := range qs.Questions {
		d.picked = append(d.picked, make([]bool, len(q.Options)))
	}
	m.question = d
}

// q is the question shown.
func (d *questionDialog) q() agent.Question { return d.qs[d.cur] }

// otherRow and nextRow are the rows after the options; nextRow is -1 for
// a question with one answer.
func (d *questionDialog) otherRow() int { return len(d.q().Options) }
func (d *questionDialog) nextRow() int {
	if d.q().MultiSelect {
		return len(d.q().Options) + 1
	}
	return -1
}
func (d *questionDialog) rows() int { return max(d.otherRow(), d.nextRow()) + 1 }

func (d *questionDialog) paste(s string) tea.Cmd {
	if !d.typing {
		return nil
	}
	var cmd tea.Cmd
	d.other, cmd = d.other.Update(tea.PasteMsg{Content: s})
	return cmd
}

// questionKey handles a key while the questions are shown.
func (m *Model) questionKey(k tea.KeyPressMsg) tea.Cmd {
	d := m.question
	if d.typing {
		return m.typingKey(k)
	}
	n := d.rows()
	switch ks := k.String(); ks {
	case "up", "k", "shift+tab":
		d.sel = (d.sel + n - 1) % n
	case "down", "j", "tab":
		d.sel = (d.sel + 1) % n
	case "left":
		if d.cur > 0 {
			d.cur, d.sel = d.cur-1, 0
		}
	case "esc":
		m.declineQuestions()
	case "enter", "space":
		return m.chooseRow(d.sel)
	default:
		if i := int(ks[0] - '1'); len(ks) == 1 && i >= 0 && i < n {
			d.sel = i
			return m.chooseRow(i)
		}
	}
	return nil
}

// typingKey handles a key while the user writes an answer of their own.
func (m *Model) typingKey(k tea.KeyPressMsg) tea.Cmd {
	d := m.question
	switch k.String() {
	case "enter":
		text := strings.TrimSpace(d.other.Value())
		d.typing = false
		d.other.Blur()
		if text == "" {
			return nil
		}
		if d.q().MultiSelect {
			// What was ticked, and what was typed.
			m.answerQuestion(strings.Join(append(d.tickedLabels(), text), ", "))
			return nil
		}
		m.answerQuestion(text)
		return nil
	case "esc":
		d.typing = false
		d.other.Blur()
		return nil
	}
	var cmd tea.Cmd
	d.other, cmd = d.other.Update(k)
	return cmd
}

// chooseRow acts on a row: an option is the answer (or is ticked),
// "Other" opens the text field, "Next" takes the ticked options.
func (m *Model) chooseRow(row int) tea.Cmd {
	d := m.question
	q := d.q()
	switch {
	case row == d.otherRow():
		d.typing = true
		d.other.Reset()
		return d.other.Focus()
	case row == d.nextRow():
		if labels := d.tickedLabels(); len(labels) > 0 {
			m.answerQuestion(strings.Join(labels, ", "))
		}
	case q.MultiSelect:
		d.picked[d.cur][row] = !d.picked[d.cur][row]
	default:
		m.answerQuestion(q.Options[row].Label)
	}
	return nil
}

// tickedLabels are the labels of the options ticked in the question shown.
func (d *questionDialog) tickedLabels() []string {
	var out []string
	for i, o := range d.q().Options {
		if d.picked[d.cur][i] {
			out = append(out, o.Label)
		}
	}
	return out
}

// answerQuestion records the answer to the question shown and moves to
// the next one; after the last, the answers go back to the session.
func (m *Model) answerQuestion(answer string) {
	d := m.question
	d.answers[d.q().Question] = answer
	for d.cur++; d.cur < len(d.qs); d.cur++ {
		if _, done := d.answers[d.qs[d.cur].Question]; !done {
			d.sel = 0
			return
		}
	}
	m.question = nil
	updated, err := agent.AnswerQuestions(d.req.input, d.answers)
	if err != nil {
		d.req.reply <- permAnswer{allow: false, message: err.Error()}
		m.printError(err.Error())
		return
	}
	d.req.reply <- permAnswer{allow: true, input: updated}
	for _, q := range d.qs {
		m.print(m.st.dim.Render(fmt.Sprintf("  ⎿ %s %s", q.Header+":", d.answers[q.Question])))
	}
}

// declineQuestions closes the questions unanswered: the call is refused
// and the turn ends, giving the prompt back.
func (m *Model) declineQuestions() {
	d := m.question
	m.question = nil
	d.req.reply <- permAnswer{allow: false, message: strings.TrimSpace(questionsDeclined), interrupt: true}
	m.print(m.st.warn.Render("  ✗ Declined to answer the questions"))
}

// renderQuestions draws the question shown: the headers of all of them,
// the question, its options, the text field.
func (m *Model) renderQuestions() string {
	d := m.question
	st := m.st
	w := max(20, m.width-4)
	q := d.q()
	var b strings.Builder
	var tabs []string
	for i, qq := range d.qs {
		mark := "☐"
		if _, done := d.answers[qq.Question]; done {
			mark = "✔"
		}
		tab := mark + " " + qq.Header
		if i == d.cur {
			tab = st.selected.Render(tab)
		}
		tabs = append(tabs, tab)
	}
	b.WriteString(strings.Join(tabs, "  ") + "\n\n")
	b.WriteString(st.bold.Render(wrap(q.Question, w)) + "\n\n")
	for i := range d.rows() {
		b.WriteString(d.renderRow(st, i, w))
	}
	if d.sel < len(q.Options) && q.Options[d.sel].Preview != "" {
		lines, more := fold(m.md.render(q.Options[d.sel].Preview, w-2), max(4, m.height-20))
		b.WriteString("\n" + strings.Join(lines, "\n") + "\n")
		if more > 0 {
			b.WriteString(st.dim.Render(fmt.Sprintf("  … +%d lines", more)) + "\n")
		}
	}
	if d.typing {
		b.WriteString("\n" + d.other.View() + "\n")
	}
	hint := "Enter to select · ↑/↓ to move · Esc to decline"
	if q.MultiSelect {
		hint = "Enter or Space to tick · ↑/↓ to move · Esc to decline"
	}
	if d.cur > 0 {
		hint += " · ← previous question"
	}
	b.WriteString("\n" + st.dim.Render(truncate(hint, w)))
	return st.dialog.Width(m.width).Render(b.String())
}

// renderRow draws one row of the question shown, with its description.
func (d *questionDialog) renderRow(st styles, i, w int) string {
	q := d.q()
	var label, desc string
	switch {
	case i == d.otherRow():
		label = "Type something else"
	case i == d.nextRow():
		label = "Next"
		if !slices.Contains(d.picked[d.cur], true) {
			desc = "tick at least one option first"
		}
	default:
		label, desc = q.Options[i].Label, q.Options[i].Description
		if q.MultiSelect {
			box := "[ ] "
			if d.picked[d.cur][i] {
				box = "[x] "
			}
			label = box + label
		}
	}
	line := fmt.Sprintf("%d. %s", i+1, label)
	var out string
	if i == d.sel {
		out = st.selected.Render("❯ "+truncate(line, w-2)) + "\n"
	} else {
		out = "  " + truncate(line, w-2) + "\n"
	}
	if desc != "" {
		out += "     " + st.dim.Render(truncate(desc, w-5)) + "\n"
	}
	return out
}
