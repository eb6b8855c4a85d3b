package tui

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/tackcode/tack/agent"

	"github.com/tackcode/tack/internal/lazyregexp"
)

// key handles a key press.
func (m *Model) key(k tea.KeyPressMsg) tea.Cmd {
	ks := k.String()
	if ks == "ctrl+c" {
		return m.ctrlC()
	}
	if m.ctrlCArmed {
		m.ctrlCArmed = false
		if m.notice == ctrlCHint {
			m.notice = ""
		}
	}
	if m.dialog != nil {
		return m.dialogKey(k)
	}
	if m.question != nil {
		return m.questionKey(k)
	}
	if m.picker != nil {
		return m.pickerKey(k)
	}
	if m.prompts != nil {
		return m.promptPickerKey(k)
	}
	if m.search != nil {
		return m.searchKey(k)
	}
	if cmd, ok := m.vimKey(k); ok {
		return cmd
	}
	switch ks {
	case "ctrl+d":
		if m.input.Value() == "" {
			m.leave()
			return nil
		}
	case "shift+tab":
		return m.cycleMode()
	case "ctrl+z":
		return tea.Suspend
	case "esc":
		switch {
		case m.compl.open():
			m.compl.dismiss(m.input.Value())
		case m.busy():
			m.be.Interrupt()
			m.runNotice("Interrupting…")
		case m.input.Value() == "":
			m.escOnEmpty()
		}
		return nil
	case "tab":
		if m.compl.open() {
			m.acceptCompletion()
			return nil
		}
	case "up":
		if m.compl.open() {
			m.compl.move(-1)
			return nil
		}
		if m.input.Line() == 0 {
			if s, ok := m.history.prev(m.input.Value()); ok {
				m.setInput(s)
			}
			return nil
		}
	case "down":
		if m.compl.open() {
			m.compl.move(1)
			return nil
		}
		if m.input.Line() == m.input.LineCount()-1 {
			if s, ok := m.history.next(); ok {
				m.setInput(s)
			}
			return nil
		}
	case "ctrl+r":
		m.search = &historySearch{saved: m.input.Value()}
		return nil
	case "ctrl+v":
		// An image in the clipboard is attached; otherwise its text pastes.
		return m.pasteClipboard(k)
	case "enter":
		if m.compl.open() {
			mention := m.compl.mention
			m.acceptCompletion()
			if mention {
				return nil
			}
		}
		v := m.input.Value()
		// A line ending in a backslash continues on the next one.
		if strings.HasSuffix(v, `\`) && m.input.Line() == m.input.LineCount()-1 {
			m.input.SetValue(strings.TrimSuffix(v, `\`) + "\n")
			return nil
		}
		m.input.Reset()
		m.compl = completion{}
		return m.submit(v)
	}
	var cmd tea.Cmd
	m.input, cmd = m.input.Update(k)
	m.updateCompletion()
	return cmd
}

func (m *Model) setInput(s string) {
	m.input.SetValue(s)
	m.input.MoveToEnd()
	m.updateCompletion()
}

// ctrlC clears the input or interrupts the run; twice in a row, it exits.
func (m *Model) ctrlC() tea.Cmd {
	if m.ctrlCArmed {
		m.leave()
		return nil
	}
	if m.dialog != nil {
		m.answer(choiceDeny, "")
		m.be.Interrupt()
	}
	if m.question != nil {
		m.declineQuestions()
	}
	m.search = nil
	m.input.Reset()
	m.compl = completion{}
	if m.busy() {
		m.be.Interrupt()
	}
	m.ctrlCArmed = true
	m.notice = ctrlCHint
	if m.cfg.noTimers {
		return nil
	}
	return tea.Tick(2*time.Second, func(time.Time) tea.Msg { return ctrlCExpiredMsg{} })
}

// cycleMode moves to the next permission mode (Shift+Tab).
func (m *Model) cycleMode() tea.Cmd {
	next := nextMode(m.mode, m.autoCycle)
	if err := m.be.SetPermissionMode(next); err != nil {
		m.printError(err.Error())
		return nil
	}
	m.mode = next
	return m.refreshStatusLine()
}

func (m *Model) searchKey(k tea.KeyPressMsg) tea.Cmd {
	s := m.search
	switch k.String() {
	case "ctrl+r":
		s.skip++
		if _, ok := s.match(m.history); !ok {
			s.skip--
		}
	case "esc", "ctrl+g":
		m.search = nil
		m.setInput(s.saved)
	case "enter", "tab", "right", "left":
		found, _ := s.match(m.history)
		m.search = nil
		m.setInput(found)
	case "backspace":
		if s.query != "" {
			r := []rune(s.query)
			s.query = string(r[:len(r)-1])
			s.skip = 0
		}
	default:
		if k.Text != "" {
			s.query += k.Text
			s.skip = 0
		}
	}
	return nil
}

// A paste of more than pasteLines lines or pasteBytes bytes is shown as a
// placeholder.
const (
	pasteLines = 8
	pasteBytes = 2000
)

// paste inserts pasted text, or a placeholder for a large one or for an
// image file's path.
func (m *Model) paste(content string) tea.Cmd {
	if path := pastedImagePath(m.cfg.cwd, content); path != "" {
		m.pasteImage(path)
		return nil
	}
	content = strings.ReplaceAll(content, "\r\n", "\n")
	content = strings.ReplaceAll(content, "\r", "\n")
	lines := strings.Count(content, "\n") + 1
	if lines <= pasteLines && len(content) <= pasteBytes {
		var cmd tea.Cmd
		m.input, cmd = m.input.Update(tea.PasteMsg{Content: content})
		m.updateCompletion()
		return cmd
	}
	m.pastes = append(m.pastes, content)
	m.input.InsertString(pastePlaceholder(len(m.pastes), lines))
	return nil
}

func pastePlaceholder(n, lines int) string {
	return fmt.Sprintf("[Pasted text #%d +%d lines]", n, lines)
}

// expandPastes puts the pasted texts back in place of their placeholders.
func (m *Model) expandPastes(text string) string {
	for i, p := range m.pastes {
		text = strings.Replace(text, pastePlaceholder(i+1, strings.Count(p, "\n")+1), p, 1)
	}
	m.pastes = nil
	return text
}

// submit acts on what the user entered.
func (m *Model) submit(text string) tea.Cmd {
	shown := strings.TrimSpace(text)
	prompt := strings.TrimSpace(m.expandPastes(text))
	if prompt == "" {
		return nil
	}
	if err := m.history.add(shown); err != nil {
		m.printError(err.Error())
	}
	switch {
	case strings.HasPrefix(prompt, "!"):
		return m.runShell(strings.TrimSpace(prompt[1:]))
	case strings.HasPrefix(prompt, "#"):
		m.remember(strings.TrimSpace(prompt[1:]))
		return nil
	case strings.HasPrefix(prompt, "/"):
		if cmd, ok := m.slashCommand(prompt); ok {
			return cmd
		}
	}
	images := m.takeImages(prompt)
	return m.sendPrompt(shown, m.attachMentions(prompt), images...)
}

// maxMention bounds the size of a file an @mention attaches.
const maxMention = 256 << 10

var mentionRE = lazyregexp.New(`(?:^|\s)@(\S+)`)

// attachMentions adds the files the prompt @mentions after it, so the
// model has them without reading them first.
func (m *Model) attachMentions(prompt string) string {
	var b strings.Builder
	seen := map[string]bool{}
	for _, match := range mentionRE().FindAllStringSubmatch(prompt, -1) {
		rel := strings.TrimRight(match[1], ".,;:!?)")
		path := rel
		if !filepath.IsAbs(path) {
			path = filepath.Join(m.cfg.cwd, path)
		}
		if seen[path] || imageType(path) != "" { // images go as image blocks
			continue
		}
		seen[path] = true
		fi, err := os.Stat(path)
		if err != nil || !fi.Mode().IsRegular() || fi.Size() > maxMention {
			continue
		}
		data, err := os.ReadFile(path)
		if err != nil {
			continue
		}
		b.WriteString("\n\n")
		fmt.Fprintf(&b, mentionTemplate, rel, strings.TrimRight(string(data), "\n"))
	}
	if b.Len() == 0 {
		return prompt
	}
	return prompt + strings.TrimRight(b.String(), "\n")
}

// sendPrompt echoes shown and sends prompt to the session, with images.
func (m *Model) sendPrompt(shown, prompt string, images ...agent.ContentBlock) tea.Cmd {
	m.print(m.st.user.Render(indentBlock(shown, "> ", "  ")))
	if len(m.bashNotes) > 0 {
		prompt = strings.Join(m.bashNotes, "\n") + "\n\n" + prompt
		m.bashNotes = nil
	}
	// Each prompt carries its id: Esc Esc can rewind to before it.
	p := agent.Prompt{Text: prompt, ID: m.newTurn(shown)}
	if len(images) > 0 {
		p.Content = append([]agent.ContentBlock{agent.TextBlock(prompt)}, images...)
	}
	if err := m.be.SendPrompt(p); err != nil {
		m.turns = m.turns[:len(m.turns)-1]
		m.printError(err.Error())
		return nil
	}
	if m.runs == 0 {
		m.runStart = m.now()
		m.outTokens, m.msgBase = 0, 0
	}
	m.runs++
	return m.startTicking()
}

// shellDoneMsg is the end of a `!` command.
type shellDoneMsg struct {
	command string
	output  string
	code    int
	err     error
}

// runShell runs a `!` command in the working directory; its output is
// shown, and given to the model with the next prompt.
func (m *Model) runShell(command string) tea.Cmd {
	if command == "" {
		return nil
	}
	m.print(m.st.warn.Render(indentBlock(command, "! ", "  ")))
	shell := m.cfg.getenv("SHELL")
	if shell == "" {
		shell = "/bin/sh"
	}
	cwd := m.cfg.cwd
	return func() tea.Msg {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		c := exec.CommandContext(ctx, shell, "-c", command)
		c.Dir = cwd
		c.Stdin = nil
		var out bytes.Buffer
		c.Stdout, c.Stderr = &out, &out
		err := c.Run()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code, err = ee.ExitCode(), nil
		}
		return shellDoneMsg{command: command, output: out.String(), code: code, err: err}
	}
}

func (m *Model) shellDone(r shellDoneMsg) {
	if r.err != nil {
		m.printError(fmt.Sprintf("%s: %v", r.command, r.err))
		return
	}
	output := strings.TrimRight(r.output, "\n")
	lines, more := fold(output, 20)
	body := make([]string, 0, len(lines)+2)
	for _, l := range lines {
		body = append(body, truncate(expandTabs(l), m.width-6))
	}
	if more > 0 {
		body = append(body, m.st.dim.Render(fmt.Sprintf("… +%d lines", more)))
	}
	if r.code == 0 {
		body = append(body, m.st.dim.Render("exit 0"))
	} else {
		body = append(body, m.st.bad.Render(fmt.Sprintf("exit %d", r.code)))
	}
	m.print(indentBlock(strings.Join(body, "\n"), "  ⎿  ", "     "))
	const limit = 30_000
	if len(output) > limit {
		output = output[len(output)-limit:]
	}
	m.bashNotes = append(m.bashNotes, fmt.Sprintf("<bash-input>%s</bash-input>\n<bash-stdout>%s</bash-stdout>\n<bash-exit-code>%d</bash-exit-code>", r.command, output, r.code))
}

// remember appends a line to the project's CLAUDE.md (`#` input).
func (m *Model) remember(note string) {
	if note == "" {
		return
	}
	path := filepath.Join(m.cfg.cwd, "CLAUDE.md")
	if err := appendMemory(path, note); err != nil {
		m.printError(err.Error())
		return
	}
	m.print(m.st.dim.Render(fmt.Sprintf("  ✓ Noted in %s: %s", relPath(path, m.cfg.cwd), note)))
}

func appendMemory(path, note string) error {
	old, err := os.ReadFile(path)
	if err != nil && !os.IsNotExist(err) {
		return fmt.Errorf("memory: %w", err)
	}
	var b strings.Builder
	if len(old) > 0 && !bytes.HasSuffix(old, []byte("\n")) {
		b.WriteByte('\n')
	}
	b.WriteString("- " + strings.ReplaceAll(note, "\n", " ") + "\n")
	f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return fmt.Errorf("memory: %w", err)
	}
	_, werr := f.WriteString(b.String())
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	if werr != nil {
		return fmt.Errorf("memory: %w", werr)
	}
	return nil
}
