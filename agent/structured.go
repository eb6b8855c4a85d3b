package agent

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/tackcode/tack/internal/engine"
	"github.com/tackcode/tack/internal/llm"
	"github.com/tackcode/tack/internal/protocol"
	"github.com/tackcode/tack/internal/tool/structured"
)

// maxStructuredRetries is how many times a model that ends its turn
// without giving the structured output is asked again.
const maxStructuredRetries = 5

// run runs prompt content. When the caller asked for structured output
// (Options.JSONSchema), a run that ends without it is followed by a
// reminder, up to maxStructuredRetries times, and the one result message
// emitted carries the value (or says it never came).
func (s *agentSession) run(ctx context.Context, id string, content []llm.Block, emit engine.Emit) {
	if len(s.opts.JSONSchema) == 0 {
		s.engine.RunAs(ctx, id, content, emit)
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
	s.engine.RunAs(ctx, id, content, hold)
	for retry := 0; held != nil; retry++ {
		if v := s.structuredValue(); v != nil {
			held.StructuredOutput = v
			break
		}
		if held.IsError || ctx.Err() != nil {
			break
		}
		if retry == maxStructuredRetries {
			held.Subtype, held.IsError, held.Result = "error_max_structured_output_retries", true, nil
			held.Errors = append(held.Errors, fmt.Sprintf("The model did not give the structured output after %d reminders", maxStructuredRetries))
			break
		}
		prev := held
		held = nil
		s.engine.Run(ctx, []llm.Block{llm.Text(structured.Reminder)}, hold)
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

func (s *agentSession) setStructured(v json.RawMessage) {
	s.structuredMu.Lock()
	s.structured = v
	s.structuredMu.Unlock()
}

func (s *agentSession) structuredValue() json.RawMessage {
	s.structuredMu.Lock()
	defer s.structuredMu.Unlock()
	return s.structured
}
