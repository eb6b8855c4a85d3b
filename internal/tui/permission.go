package tui

import (
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"

	"charm.land/bubbles/v2/textinput"
	tea "charm.land/bubbletea/v2"

	"github.com/tackcode/tack/agent"
	"github.com/tackcode/tack/internal/diff"
)

// permDialog asks whether a tool call may run.
type permDialog struct {
	req      *permRequest
	rule     string   // what "allow always" adds; "" when there is none
	choices  []choice // in the order shown
	sel      int
	denying  bool // typing the message that goes with a denial
	feedback textinput.Model
}

type choice int

const (
	choiceAllow choice = iota
	choiceAlways
	choiceDeny
)

// deniedPrompt is what the model is told when the user says no;
// deniedFeedback adds what the user said instead, deniedStop that the turn
// ends there when the user said nothing more.
var (
	//go:embed prompts/denied.md
	deniedPrompt string
	//go:embed prompts/denied-feedback.md
	deniedFeedback string
	//go:embed prompts/denied-stop.md
	deniedStop string
)

func (m *Model) openDialog(req *permRequest) {
	m.flushStream()
	fb := textinput.New()
	fb.Placeholder = "tell tack what to do instead (Enter to send)"
	fb.SetWidth(max(10, m.width-8))
	fs := fb.Styles()
	fs.Cursor.Blink = false
	fb.SetStyles(fs)
	d := &permDialog{req: req, rule: suggestRule(req.tool, req.input, m.cfg.cwd), feedback: fb}
	d.choices = []choice{choiceAllow}
	if d.rule != "" {
		d.choices = append(d.choices, choiceAlways)
	}
	d.choices = append(d.choices, choiceDeny)
	m.dialog = d
}

func (d *permDialog) label(c choice) string {
	switch c {
	case choiceAllow:
		return "Yes"
	case choiceAlways:
		return "Yes, and don't ask again for " + d.rule + " in this project"
	}
	if d.req.tool == exitPlanMode {
		return "No, keep planning (esc)"
	}
	return "No, and tell tack what to do differently (esc)"
}

func (d *permDialog) paste(s string) tea.Cmd {
	if !d.denying {
		return nil
	}
	var cmd tea.Cmd
	d.feedback, cmd = d.feedback.Update(tea.PasteMsg{Content: s})
	return cmd
}

// dialogKey handles a key while the dialog is open.
func (m *Model) dialogKey(k tea.KeyPressMsg) tea.Cmd {
	d := m.dialog
	if d.denying {
		switch k.String() {
		case "enter":
			m.answer(choiceDeny, strings.TrimSpace(d.feedback.Value()))
			return nil
		case "esc":
			d.denying = false
			d.feedback.Blur()
			return nil
		}
		var cmd tea.Cmd
		d.feedback, cmd = d.feedback.Update(k)
		return cmd
	}
	n := len(d.choices)
	switch ks := k.String(); ks {
	case "up", "k", "shift+tab":
		d.sel = (d.sel + n - 1) % n
	case "down", "j", "tab":
		d.sel = (d.sel + 1) % n
	case "y":
		m.answer(choiceAllow, "")
	case "n":
		return m.chooseDeny()
	case "esc":
		m.answer(choiceDeny, "")
	case "enter":
		if d.choices[d.sel] == choiceDeny {
			return m.chooseDeny()
		}
		m.answer(d.choices[d.sel], "")
	default:
		if i := int(ks[0] - '1'); len(ks) == 1 && i >= 0 && i < n {
			d.sel = i
			if d.choices[i] == choiceDeny {
				return m.chooseDeny()
			}
			m.answer(d.choices[i], "")
		}
	}
	return nil
}

// chooseDeny asks for the message that goes with a denial.
func (m *Model) chooseDeny() tea.Cmd {
	d := m.dialog
	d.sel = len(d.choices) - 1
	d.denying = true
	return d.feedback.Focus()
}

// answer replies to the request and closes the dialog.
func (m *Model) answer(c choice, feedback string) {
	d := m.dialog
	m.dialog = nil
	title := toolTitle(d.req.tool, d.req.input, m.cfg.cwd)
	switch c {
	case choiceAllow:
		d.req.reply <- permAnswer{allow: true}
	case choiceAlways:
		d.req.reply <- permAnswer{allow: true}
		if err := m.be.AllowRule(d.rule); err != nil {
			m.printError(fmt.Sprintf("could not save the rule %s: %v", d.rule, err))
		} else {
			m.print(m.st.dim.Render(fmt.Sprintf("  ✓ Added %s to .claude/settings.local.json", d.rule)))
		}
	default:
		// A plain "No" ends the turn and gives the prompt back; a "No" with
		// a message lets the model go on with what the user said.
		msg := strings.TrimSpace(deniedPrompt)
		if feedback != "" {
			msg += " " + strings.TrimSpace(fmt.Sprintf(deniedFeedback, feedback))
		} else {
			msg += " " + strings.TrimSpace(deniedStop)
		}
		d.req.reply <- permAnswer{allow: false, message: msg, interrupt: feedback == ""}
		note := "  ✗ Denied " + title
		if feedback != "" {
			note += ": " + feedback
		}
		m.print(m.st.warn.Render(note))
		return
	}
	if d.req.tool == exitPlanMode {
		// The tool leaves plan mode once it runs.
		m.mode = agent.PermissionDefault
	}
}

// renderDialog draws the dialog: what will run, and the choices.
func (m *Model) renderDialog() string {
	d := m.dialog
	st := m.st
	w := max(20, m.width-4)
	var b strings.Builder
	in := decodeInput(d.req.input)
	switch d.req.tool {
	case "Bash":
		b.WriteString(st.bold.Render("Bash command") + "\n\n")
		b.WriteString("  " + strings.ReplaceAll(wrap(in.Command, w-4), "\n", "\n  ") + "\n")
		if in.Description != "" {
			b.WriteString("  " + st.dim.Render(truncate(in.Description, w-4)) + "\n")
		}
	case "Edit", "MultiEdit", "Write":
		verb := "Edit file"
		if d.req.tool == "Write" {
			verb = "Write file"
			if _, err := os.Stat(in.FilePath); errors.Is(err, fs.ErrNotExist) {
				verb = "Create file"
			}
		}
		b.WriteString(st.bold.Render(verb+" "+relPath(in.FilePath, m.cfg.cwd)) + "\n\n")
		for _, l := range st.renderHunks(proposedDiff(d.req.tool, in), w-2, max(6, m.height-14)) {
			b.WriteString(l + "\n")
		}
	case exitPlanMode:
		var in struct {
			Plan string `json:"plan"`
		}
		_ = json.Unmarshal(d.req.input, &in)
		b.WriteString(st.bold.Render("Ready to leave plan mode. The plan:") + "\n\n")
		lines, more := fold(m.md.render(in.Plan, w-2), max(6, m.height-14))
		b.WriteString(strings.Join(lines, "\n") + "\n")
		if more > 0 {
			b.WriteString(st.dim.Render(fmt.Sprintf("  … +%d lines", more)) + "\n")
		}
	default:
		b.WriteString(st.bold.Render(truncate(toolTitle(d.req.tool, d.req.input, m.cfg.cwd), w)) + "\n\n")
		pretty, err := json.MarshalIndent(json.RawMessage(d.req.input), "  ", "  ")
		if err == nil {
			lines, more := fold(string(pretty), 12)
			for _, l := range lines {
				b.WriteString("  " + truncate(l, w-4) + "\n")
			}
			if more > 0 {
				b.WriteString(st.dim.Render(fmt.Sprintf("  … +%d lines", more)) + "\n")
			}
		}
	}
	if d.req.info.Reason != "" {
		b.WriteString(st.dim.Render(truncate(d.req.info.Reason, w)) + "\n")
	}
	b.WriteString("\nDo you want to proceed?\n")
	for i, c := range d.choices {
		line := fmt.Sprintf("%d. %s", i+1, d.label(c))
		if i == d.sel {
			b.WriteString(st.selected.Render("❯ "+truncate(line, w-2)) + "\n")
		} else {
			b.WriteString("  " + truncate(line, w-2) + "\n")
		}
	}
	if d.denying {
		b.WriteString("\n" + d.feedback.View() + "\n")
	}
	return st.dialog.Width(m.width).Render(strings.TrimRight(b.String(), "\n"))
}

// proposedDiff is the change an Edit or Write call would make.
func proposedDiff(tool string, in toolInput) []diff.Hunk {
	old, err := os.ReadFile(in.FilePath)
	if err != nil {
		old = nil
	}
	switch tool {
	case "Write":
		return diff.Patch(string(old), in.Content)
	default:
		cur := string(old)
		var next string
		switch {
		case in.ReplaceAll:
			next = strings.ReplaceAll(cur, in.OldString, in.NewString)
		case strings.Contains(cur, in.OldString) && in.OldString != "":
			next = strings.Replace(cur, in.OldString, in.NewString, 1)
		default:
			// The file does not hold the text (yet): show the edit itself.
			return diff.Patch(in.OldString, in.NewString)
		}
		return diff.Patch(cur, next)
	}
}

// exitPlanMode is the tool a model calls to leave plan mode with a plan.
const exitPlanMode = "ExitPlanMode"

// suggestRule is the rule "allow always" adds for a call; "" when there
// is none to make.
func suggestRule(tool string, input json.RawMessage, cwd string) string {
	return agent.SuggestRule(tool, input, cwd)
}

// nextMode is the mode Shift+Tab moves to: default, acceptEdits, plan, and
// auto after plan when the user opted in to it (withAuto).
func nextMode(m agent.PermissionMode, withAuto bool) agent.PermissionMode {
	switch m {
	case agent.PermissionDefault, "":
		return agent.PermissionAcceptEdits
	case agent.PermissionAcceptEdits:
		return agent.PermissionPlan
	case agent.PermissionPlan:
		if withAuto {
			return agent.PermissionAuto
		}
	}
	return agent.PermissionDefault
}
