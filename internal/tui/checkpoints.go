package tui

import (
	"fmt"

	tea "charm.land/bubbletea/v2"
	"github.com/google/uuid"

	"github.com/tackcode/tack/agent"
)

// Rewind (Esc Esc on an empty prompt, when this session has prompts): the
// chosen prompt is undone — the files its turn and the later ones changed
// go back as they were (the session keeps file checkpoints), the
// conversation resumes at the message before it — and its text comes back
// into the input, to edit and send again.

// turnMark is one prompt sent in this session.
type turnMark struct {
	id     string // its user message's uuid
	text   string
	before string // the uuid of the message before it; "" for the first
}

// newTurn records a prompt about to be sent and returns its id.
func (m *Model) newTurn(text string) string {
	id := uuid.NewString()
	m.turns = append(m.turns, turnMark{id: id, text: text, before: m.lastUUID})
	return id
}

// seen notes the uuid of a message of the conversation (not a subagent's).
func (m *Model) seen(msg agent.Message) {
	switch msg := msg.(type) {
	case *agent.AssistantMessage:
		if msg.ParentToolUseID == nil {
			m.lastUUID = msg.UUID
		}
	case *agent.UserMessage:
		if msg.ParentToolUseID == nil {
			m.lastUUID = msg.UUID
		}
	}
}

// rewoundMsg is the end of a rewind.
type rewoundMsg struct {
	turn  int
	files agent.RewindResult
	err   error
}

// rewindTo undoes turn i and the ones after it.
func (m *Model) rewindTo(i int) tea.Cmd {
	if m.busy() {
		m.printError("wait until the model has finished (or press Esc), then rewind")
		return nil
	}
	t := m.turns[i]
	be := m.be
	return func() tea.Msg {
		files := be.RewindFiles(t.id)
		var err error
		if t.before == "" {
			err = be.Clear()
		} else {
			err = be.Reopen(func(o *agent.Options) { o.ResumeSessionAt = t.before })
		}
		return rewoundMsg{turn: i, files: files, err: err}
	}
}

func (m *Model) rewound(r rewoundMsg) tea.Cmd {
	t := m.turns[r.turn]
	m.turns = m.turns[:r.turn]
	m.lastUUID = t.before
	m.cache.expectDrop() // the conversation the cache held is cut
	info := m.be.Info()
	m.sessionID, m.modelID, m.commands = info.SessionID, info.Model, info.Commands
	if r.err != nil {
		m.printError("rewind the conversation: " + r.err.Error())
	}
	note := fmt.Sprintf("Rewound to before “%s”", truncate(firstLine(t.text), 60))
	switch {
	case r.files.Error != "":
		note += "; files: " + r.files.Error
	case len(r.files.FilesChanged) > 0:
		note += fmt.Sprintf("; %d file(s) restored (+%d −%d lines)", len(r.files.FilesChanged), r.files.Insertions, r.files.Deletions)
	default:
		note += "; no file to restore"
	}
	m.out(note)
	m.setInput(t.text)
	return m.refreshStatusLine()
}
