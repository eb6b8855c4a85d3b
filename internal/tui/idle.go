package tui

import (
	"time"

	tea "charm.land/bubbletea/v2"
)

// idleAfter is how long the prompt waits for its user, after a run ended,
// before the Notification hooks hear of it (Claude Code's idle_prompt):
// a desktop notifier can then say that tack waits.
const idleAfter = 60 * time.Second

// idleMsg is the end of a wait started by armIdle; seq tells stale ones.
type idleMsg struct{ seq int }

// armIdle starts waiting for the user (after a run ended). Any key
// cancels the wait (disarmIdle).
func (m *Model) armIdle() tea.Cmd {
	m.idleSeq++
	if m.cfg.noTimers {
		return nil
	}
	seq := m.idleSeq
	return tea.Tick(idleAfter, func(time.Time) tea.Msg { return idleMsg{seq: seq} })
}

func (m *Model) disarmIdle() { m.idleSeq++ }

// idle fires the Notification hooks when the wait ended untouched, with
// nothing running; what they ask to show is shown.
func (m *Model) idle(msg idleMsg) tea.Cmd {
	if msg.seq != m.idleSeq || m.busy() || m.dialog != nil || m.question != nil {
		return nil
	}
	m.idleSeq++ // once per wait
	be := m.be
	return func() tea.Msg {
		return noticesMsg(be.Notify("idle_prompt", "tack", "tack is waiting for your input"))
	}
}

// noticesMsg are messages the hooks asked to show.
type noticesMsg []string
