package runtime

import (
	"context"
	"fmt"

	"github.com/tackcode/tack/internal/llm"
)

// chooseModel picks the thread's model — the one asked for, the agent
// definition's, else the main thread's default (or, in a subagent, the
// model its parent runs now) — and what goes with it: the fallback model,
// thinking and betas, which a subagent carries over from its parent.
func (t *thread) chooseModel(context.Context) error {
	s := t.s
	name := t.spec.model
	if d := t.spec.def; name == "" && d != nil && d.Model != "inherit" {
		name = d.Model
	}
	if t.parent != nil {
		t.model = t.parent.engine.Model()
		if name != "" && name != "inherit" {
			t.model = s.catalog.Resolve(name, s.getenv)
		}
		t.thinking, t.betas = t.parent.engine.Thinking(), t.parent.betas
		if t.parent.fallback.ID != t.model.ID {
			t.fallback = t.parent.fallback
		}
		return nil
	}
	t.model = s.catalog.Resolve(firstNonEmpty(name, s.getenv("ANTHROPIC_MODEL"), s.settings.Model), s.getenv)
	if s.cfg.FallbackModel != "" {
		t.fallback = s.catalog.Resolve(s.cfg.FallbackModel, s.getenv)
		if t.fallback.ID == t.model.ID {
			return fmt.Errorf("the fallback model %s is the main model", t.fallback.ID)
		}
	}
	if n := s.cfg.MaxThinkingTokens; n > 0 {
		t.thinking = &llm.Thinking{Type: "enabled", BudgetTokens: n}
	}
	t.betas = s.cfg.Betas
	return nil
}
