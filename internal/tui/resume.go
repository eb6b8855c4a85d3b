package tui

import (
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/tackcode/tack/agent"
)

// sessionPicker lists the directory's saved sessions for /resume.
type sessionPicker struct {
	sessions []agent.SessionInfo
	sel      int
}

// maxPicker bounds the sessions listed.
const maxPicker = 50

func (m *Model) cmdResume(args string) tea.Cmd {
	if args != "" {
		return m.resume(args)
	}
	m.openPicker("")
	return nil
}

// openPicker lists the other sessions of the directory to pick from; with
// search, only those whose name or prompts contain it (any case).
func (m *Model) openPicker(search string) {
	all, err := m.be.Sessions()
	if err != nil {
		m.printError(err.Error())
		return
	}
	var list []agent.SessionInfo
	for _, s := range all {
		if s.ID != m.sessionID && matchesSearch(s, search) {
			list = append(list, s)
		}
		if len(list) == maxPicker {
			break
		}
	}
	switch {
	case len(list) == 0 && search != "":
		m.out(fmt.Sprintf("No conversation of this directory matches %q.", search))
	case len(list) == 0:
		m.out("No other conversation to resume in this directory.")
	default:
		m.picker = &sessionPicker{sessions: list}
	}
}

func matchesSearch(s agent.SessionInfo, search string) bool {
	search = strings.ToLower(search)
	for _, field := range []string{s.Name, s.Summary, s.FirstPrompt, s.LastPrompt} {
		if strings.Contains(strings.ToLower(field), search) {
			return true
		}
	}
	return false
}

type resumedMsg struct {
	id  string
	err error
}

func (m *Model) resume(idOrName string) tea.Cmd {
	if m.busy() {
		m.be.Interrupt()
	}
	be := m.be
	return func() tea.Msg { return resumedMsg{id: idOrName, err: be.Resume(idOrName)} }
}

func (m *Model) resumed(r resumedMsg) tea.Cmd {
	m.resetRun()
	if r.err != nil {
		m.printError(r.err.Error())
		return nil
	}
	m.print(m.st.dim.Render("  ⎿  Resumed the conversation " + r.id))
	return tea.Batch(m.replay(), m.refreshStatusLine())
}

// resetRun forgets the state of the session that was replaced.
func (m *Model) resetRun() {
	m.runs = 0
	m.tools = nil
	m.stream.reset()
	m.streamedTexts = 0
	m.cost = costTally{}
	m.lastContext, m.lastUsage = 0, nil
	m.cache = promptCache{}
	info := m.be.Info()
	m.sessionID, m.modelID, m.commands = info.SessionID, info.Model, info.Commands
	if info.PermissionMode != "" {
		m.mode = info.PermissionMode
	}
}

func (m *Model) pickerKey(k tea.KeyPressMsg) tea.Cmd {
	p := m.picker
	switch k.String() {
	case "up", "k":
		p.sel = (p.sel + len(p.sessions) - 1) % len(p.sessions)
	case "down", "j":
		p.sel = (p.sel + 1) % len(p.sessions)
	case "esc", "q":
		m.picker = nil
	case "enter":
		id := p.sessions[p.sel].ID
		m.picker = nil
		return m.resume(id)
	}
	return nil
}

func (m *Model) renderPicker() string {
	p := m.picker
	st := m.st
	var b strings.Builder
	b.WriteString(st.bold.Render("Resume a conversation") + st.dim.Render("  ↑/↓ choose · Enter resume · Esc cancel") + "\n\n")
	n := min(len(p.sessions), max(3, m.height-10))
	start := 0
	if p.sel >= n {
		start = p.sel - n + 1
	}
	now := m.now()
	for i := start; i < start+n; i++ {
		s := p.sessions[i]
		title := s.Summary
		if s.Name != "" {
			title = s.Name
		}
		line := fmt.Sprintf("%-8s %4d msgs  %s", ago(now.Sub(s.Modified)), s.Messages, firstLine(title))
		if i == p.sel {
			b.WriteString(st.selected.Render("❯ "+truncate(line, m.width-6)) + "\n")
		} else {
			b.WriteString("  " + truncate(line, m.width-6) + "\n")
		}
	}
	return st.dialog.Width(m.width).Render(strings.TrimRight(b.String(), "\n"))
}

// ago writes a duration the way a listing does: 5m, 3h, 2d.
func ago(d time.Duration) string {
	switch {
	case d < time.Minute:
		return "now"
	case d < time.Hour:
		return fmt.Sprintf("%dm ago", int(d.Minutes()))
	case d < 48*time.Hour:
		return fmt.Sprintf("%dh ago", int(d.Hours()))
	}
	return fmt.Sprintf("%dd ago", int(d.Hours()/24))
}

// maxReplay is how many messages of a resumed conversation are shown.
const maxReplay = 12

type replayMsg struct {
	msgs []agent.MessageParam
	err  error
}

// replay loads the transcript of the session now running, to show the end
// of a resumed conversation.
func (m *Model) replay() tea.Cmd {
	be, id := m.be, m.be.Info().SessionID
	return func() tea.Msg { return loadReplay(be, id) }
}

func loadReplay(be backend, id string) replayMsg {
	if id == "" {
		return replayMsg{}
	}
	msgs, err := be.SessionMessages(id)
	if errors.Is(err, fs.ErrNotExist) {
		return replayMsg{} // nothing written yet (a fork)
	}
	if err != nil {
		return replayMsg{err: err}
	}
	if len(msgs) > maxReplay {
		msgs = msgs[len(msgs)-maxReplay:]
	}
	return replayMsg{msgs: msgs}
}

// replayed prints the end of the resumed conversation: the prompts, the
// answers and the tool calls (without their results).
func (m *Model) replayed(r replayMsg) {
	if r.err != nil {
		m.printNotice("could not show the resumed conversation: " + r.err.Error())
		return
	}
	if len(r.msgs) == 0 {
		return
	}
	header := false
	show := func(text string) {
		if !header {
			m.print(m.st.dim.Render("  ⎿  The end of the resumed conversation:"))
			header = true
		}
		m.print(text)
	}
	for _, msg := range r.msgs {
		for _, b := range msg.Content {
			switch {
			case b.Type == agent.BlockText && msg.Role == agent.RoleUser:
				// Not the text tack adds (summaries, reminders, notes).
				if t := strings.TrimSpace(b.Text); t != "" && !strings.HasPrefix(t, "<") {
					show(m.st.user.Render(indentBlock(firstLines(t, 6), "> ", "  ")))
				}
			case b.Type == agent.BlockText:
				if md := m.md.render(b.Text, m.width); md != "" {
					show(m.st.accent.Render("⏺") + " " + strings.TrimPrefix(md, "  "))
				}
			case b.Type == agent.BlockToolUse:
				show(m.st.dim.Render("⏺ " + toolTitle(b.Name, b.Input, m.cfg.cwd)))
			}
		}
	}
	if !header {
		m.print(m.st.dim.Render("  ⎿  Resumed the conversation (its history is with the model; nothing to show)"))
	}
}

// firstLines keeps the first n lines of s, marking that there was more.
func firstLines(s string, n int) string {
	lines, more := fold(s, n)
	if more > 0 {
		lines = append(lines, fmt.Sprintf("… +%d lines", more))
	}
	return strings.Join(lines, "\n")
}
