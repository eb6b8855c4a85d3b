package runtime

import (
	"context"
	"fmt"
	"strings"

	"github.com/google/uuid"

	"github.com/tackcode/tack/internal/engine"
	"github.com/tackcode/tack/internal/llm"
	"github.com/tackcode/tack/internal/protocol"
	"github.com/tackcode/tack/internal/tool/structured"
	"github.com/tackcode/tack/internal/version"
)

// RunPrompt runs one prompt on the main thread, sending what it produces —
// an init message first, then the loop's messages and its subagents', then
// a result — to emit. The user message is recorded under p.ID ("" for a
// new uuid). A prompt that names a command is expanded first
// (expansion.go); one its hooks refuse ends with an error result, as one
// UserPromptSubmit hooks refuse does. An error is a prompt that could not
// start (a slash command that failed): no result follows it.
func (s *Session) RunPrompt(ctx context.Context, p Prompt, emit engine.Emit) error {
	// The prompt's transcript is durable when it returns, whichever way.
	defer func() {
		if err := s.mainSync.wait(); err != nil {
			s.notify("transcript: " + err.Error())
		}
	}()
	s.setEmitter(emit)
	defer s.setEmitter(nil)
	s.prepareMCP(ctx)
	emit(s.initMessage())
	// What the start hooks did, then what the command's hooks do.
	s.main.engine.EmitHookRecords(emit)
	if s.skills != nil {
		s.turnSeq.Store(int64(s.skills.Seq()))
		// A skill's model holds until the end of the prompt that ran it.
		defer s.restoreModel()
	}
	promptID := uuid.NewString()
	s.promptID.Store(&promptID)
	if instructions, ok := compactCommand(p.Text); ok {
		s.main.engine.Compact(ctx, instructions, emit)
	} else {
		run, refused, err := s.userPrompt(ctx, p)
		s.main.engine.EmitHookRecords(emit)
		switch {
		case err != nil:
			return err
		case refused != nil:
			s.main.engine.Refuse(refused.terminal, refused.message, emit)
			return nil
		}
		if run.ID == "" {
			run.ID = uuid.NewString()
		}
		if s.checkpoints != nil {
			s.checkpoints.begin(run.ID)
		}
		recorded := s.recordEarly()
		s.run(ctx, run, emit)
		recorded()
	}
	// The record keeps the session's model, not a skill's.
	s.restoreModel()
	if err := s.saveRecord(s.lastTool()); err != nil {
		s.notify("session record: " + err.Error())
	}
	return nil
}

// compactCommand recognises "/compact [instructions]".
func compactCommand(prompt string) (instructions string, ok bool) {
	p := strings.TrimSpace(prompt)
	if p != "/compact" && !strings.HasPrefix(p, "/compact ") && !strings.HasPrefix(p, "/compact\n") {
		return "", false
	}
	return strings.TrimSpace(strings.TrimPrefix(p, "/compact")), true
}

// MaxStructuredRetries is how many times a model that ends its turn
// without giving the structured output is asked again.
const MaxStructuredRetries = 5

// run runs a prompt. When the caller asked for structured output
// (Config.JSONSchema), a run that ends without it is followed by a
// reminder, up to MaxStructuredRetries times, under the same prompt id,
// and the one result message emitted carries the value (or says it never
// came).
func (s *Session) run(ctx context.Context, p engine.Prompt, emit engine.Emit) {
	eng := s.main.engine
	if len(s.cfg.JSONSchema) == 0 {
		eng.RunPrompt(ctx, p, emit)
		return
	}
	s.setStructured(nil)
	var held *protocol.Result
	hold := func(m protocol.Message) {
		if r, ok := m.(*protocol.Result); ok {
			held = r
			return
		}
		emit(m)
	}
	eng.RunPrompt(ctx, p, hold)
	for retry := 0; held != nil; retry++ {
		if v := s.structuredValue(); v != nil {
			held.StructuredOutput = v
			break
		}
		// A deferred call waits for the host: reminding the model would
		// decide it now.
		if held.IsError || held.DeferredToolUse != nil || ctx.Err() != nil {
			break
		}
		if retry == MaxStructuredRetries {
			held.Subtype, held.IsError, held.Result = "error_max_structured_output_retries", true, nil
			held.Errors = append(held.Errors, fmt.Sprintf("The model did not give the structured output after %d reminders", MaxStructuredRetries))
			break
		}
		prev := held
		held = nil
		eng.RunPrompt(ctx, engine.Prompt{Content: []llm.Block{llm.Text(structured.Reminder)}, PromptID: p.PromptID}, hold)
		if held != nil {
			held.NumTurns += prev.NumTurns
			held.DurationMS += prev.DurationMS
			held.DurationAPIMS += prev.DurationAPIMS
		}
	}
	if held != nil {
		emit(held)
	}
}

// initMessage describes the session, first in every prompt's messages.
func (s *Session) initMessage() *protocol.System {
	commands, skills := s.skillNames()
	main := s.main
	return &protocol.System{
		Subtype:   protocol.SubtypeInit,
		SessionID: s.sessionID,
		UUID:      uuid.NewString(),
		Init: &protocol.Init{
			Cwd:               s.cwd,
			SessionID:         s.sessionID,
			Tools:             main.registry.Names(),
			MCPServers:        s.initMCPStatuses(),
			Model:             main.engine.Model().ID,
			PermissionMode:    string(main.checker.Mode()),
			SlashCommands:     commands,
			APIKeySource:      s.apiKeySource,
			ClaudeCodeVersion: version.Version,
			OutputStyle:       "default",
			Agents:            s.agentNames(),
			Skills:            skills,
			Plugins:           s.pluginList(),
			AdditionalDirs:    main.checker.Dirs(),
		},
	}
}

// agentNames are the agents the model may start, for the init message.
func (s *Session) agentNames() []string {
	out := []string{}
	for _, a := range s.subagents.infos() {
		out = append(out, a.Name)
	}
	return out
}
