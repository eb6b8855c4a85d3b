package agent

import (
	"github.com/google/uuid"

	"github.com/tackcode/tack/internal/llm"
	"github.com/tackcode/tack/internal/protocol"
)

// replayEmit returns the emit of a prompt whose user message is echoed
// back (Options.ReplayUserMessages): right after the run's system init,
// the prompt comes out as a user message with its own uuid and isReplay,
// which tells the host that this prompt is the one now running. p.ID is
// set when the host gave none, so that the echo and the transcript agree.
func replayEmit(p *Prompt, sessionID string, emit func(protocol.Message)) func(protocol.Message) {
	echo := replayEcho(p, sessionID)
	done := false
	return func(m protocol.Message) {
		emit(m)
		if sys, ok := m.(*protocol.System); ok && sys.Subtype == "init" && !done {
			done = true
			emit(echo)
		}
	}
}

// replayEcho is the echo of a prompt: its content as a user message with
// the prompt's uuid (one is given to a prompt without) and isReplay.
func replayEcho(p *Prompt, sessionID string) *protocol.User {
	if p.ID == "" {
		p.ID = uuid.NewString()
	}
	content := llmBlocks(p.Content)
	if content == nil {
		content = []llm.Block{llm.Text(p.Text)}
	}
	return &protocol.User{Type: "user", Message: llm.Message{Role: llm.RoleUser, Content: content},
		SessionID: sessionID, UUID: p.ID, IsReplay: true}
}
