package tui

import (
	"bytes"
	"context"
	"encoding/json"
	"os/exec"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/tackcode/tack/agent"
)

// statusDebounce gathers the refreshes that come close together (a burst of
// messages) into one run of the command, as Claude Code does.
const statusDebounce = 300 * time.Millisecond

// statusLineCommand is the session's statusLine command, or "". An
// untrusted folder's own settings never bring one: the session leaves them
// out.
func (m *Model) statusLineCommand() string {
	sl := m.be.Settings().StatusLine
	if sl == nil || sl.Type != "" && sl.Type != "command" {
		return ""
	}
	return sl.Command
}

type statusLineMsg struct {
	text string
	err  error
}

// statusDueMsg ends the debounce: the command runs with the state of now.
type statusDueMsg struct{}

// statusState is the UI's side of the status line: whether a run is
// scheduled or running, and whether the state changed since it started.
type statusState struct {
	text    string // the command's output
	busy    bool   // scheduled or running
	pending bool   // a refresh came while busy
}

// refreshStatusLine asks for the status line to be run again. Refreshes
// that come while one is scheduled or running are folded into one more
// run after it, so the last state is always shown.
func (m *Model) refreshStatusLine() tea.Cmd {
	if m.statusLineCommand() == "" {
		return nil
	}
	if m.status.busy {
		m.status.pending = true
		return nil
	}
	m.status.busy = true
	if m.cfg.noTimers {
		return m.runStatusLine()
	}
	return tea.Tick(statusDebounce, func(time.Time) tea.Msg { return statusDueMsg{} })
}

// statusDone takes the command's output, and runs it again when the state
// changed meanwhile.
func (m *Model) statusDone(msg statusLineMsg) tea.Cmd {
	m.status.busy = false
	if msg.err == nil {
		m.status.text = msg.text
	}
	if !m.status.pending {
		return nil
	}
	m.status.pending = false
	return m.refreshStatusLine()
}

// runStatusLine runs the command on the session JSON of now.
func (m *Model) runStatusLine() tea.Cmd {
	command := m.statusLineCommand()
	if command == "" {
		m.status.busy = false
		return nil
	}
	data, _ := json.Marshal(m.statusInput())
	cwd := m.cfg.cwd
	return func() tea.Msg {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		c := exec.CommandContext(ctx, "/bin/sh", "-c", command)
		c.Dir = cwd
		c.Stdin = bytes.NewReader(data)
		out, err := c.Output()
		if err != nil {
			return statusLineMsg{err: err}
		}
		return statusLineMsg{text: strings.TrimRight(string(out), "\n")}
	}
}

// statusLines is the command's output as shown: every line, each moved
// right by the setting's padding and cut to the width.
func (m *Model) statusLines(w int) []string {
	if m.status.text == "" {
		return nil
	}
	pad := 0
	if sl := m.be.Settings().StatusLine; sl != nil && sl.Padding > 0 {
		pad = sl.Padding
	}
	indent := strings.Repeat(" ", pad)
	var out []string
	for _, l := range strings.Split(m.status.text, "\n") {
		out = append(out, truncate(indent+strings.TrimRight(l, "\r"), w))
	}
	return out
}

// modelDisplayName is a model's short name as Claude Code shows it ("Opus
// 5.5": the catalogue's without "Claude"), or the id when the catalogue does
// not know it; window is its context window.
func modelDisplayName(id string) (name string, window int) {
	for _, mi := range agent.Models() {
		if mi.ID == id || strings.HasPrefix(id, mi.ID+"-") || strings.HasPrefix(id, mi.ID+"[") {
			return strings.TrimPrefix(mi.DisplayName, "Claude "), mi.ContextWindow
		}
	}
	return id, 200_000
}
