package runtime

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/tackcode/tack/internal/config"
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
			t.model = s.allowedOr(name, t.model, "agent "+t.spec.agentType)
		}
		t.thinking, t.effort, t.betas = t.parent.engine.Thinking(), t.parent.effort, t.parent.betas
		if t.parent.fallback.ID != t.model.ID {
			t.fallback = t.parent.fallback
		}
		return nil
	}
	var err error
	if t.model, err = s.mainModel(name); err != nil {
		return err
	}
	if s.cfg.FallbackModel != "" {
		if t.fallback, err = s.checkModel(s.cfg.FallbackModel, "--fallback-model"); err != nil {
			return err
		}
		if t.fallback.ID == t.model.ID {
			return fmt.Errorf("the fallback model %s is the main model", t.fallback.ID)
		}
	}
	t.thinking = s.thinking()
	t.effort = firstNonEmpty(s.cfg.Effort, s.settings.EffortLevel)
	t.betas = s.cfg.Betas
	return nil
}

// thinking is the main thread's extended thinking (nil: off): a fixed
// budget (--max-thinking-tokens), else the mode asked for, else the
// settings' alwaysThinkingEnabled. "enabled" without a budget is adaptive
// thinking, as in Claude Code.
func (s *Session) thinking() *llm.Thinking {
	var t *llm.Thinking
	switch mode := s.cfg.Thinking; {
	case s.cfg.MaxThinkingTokens > 0 && mode != "disabled":
		t = &llm.Thinking{Type: "enabled", BudgetTokens: s.cfg.MaxThinkingTokens}
	case mode == "adaptive" || mode == "enabled":
		t = &llm.Thinking{Type: "adaptive"}
	case mode == "" && s.settings.AlwaysThinkingEnabled != nil && *s.settings.AlwaysThinkingEnabled:
		t = &llm.Thinking{Type: "adaptive"}
	}
	if t != nil {
		t.Display = s.cfg.ThinkingDisplay
	}
	return t
}

// mainModel is the main thread's model: the one asked for (name, else
// $ANTHROPIC_MODEL, else the settings'), checked to be a model and to be
// allowed by availableModels. A resumed session's recorded model that the
// list blocks now gives way to the default, with a warning: the resume is
// not refused for a choice the user did not make now.
func (s *Session) mainModel(name string) (llm.Model, error) {
	source := "--model"
	if name != s.askedModel {
		source = "the agent's model"
	}
	switch {
	case s.resumed != nil && s.askedModel == "" && name != "" && name == s.cfg.Model:
		m := s.catalog.Resolve(name, s.getenv)
		if s.catalog.Allowed(m, config.Texts(s.settings.AvailableModels), s.getenv) {
			return s.checkModel(name, "the resumed session's model")
		}
		d := s.catalog.Resolve("", s.getenv)
		s.notify(fmt.Sprintf("the resumed session's model %s is not in availableModels: %s is used instead", m.ID, d.ID))
		return d, nil
	case name == "" && s.getenv("ANTHROPIC_MODEL") != "":
		name, source = s.getenv("ANTHROPIC_MODEL"), "ANTHROPIC_MODEL"
	case name == "" && s.settings.Model != "":
		name, source = s.settings.Model, `the settings' "model"`
	}
	return s.checkModel(name, source)
}

// allowedOr resolves the model name that who (a subagent, a skill) asks
// for, or keeps current, with a notice, when availableModels does not
// allow it: the policy holds without failing the agent or the skill.
func (s *Session) allowedOr(name string, current llm.Model, who string) llm.Model {
	m := s.catalog.Resolve(name, s.getenv)
	if list := config.Texts(s.settings.AvailableModels); !s.catalog.Allowed(m, list, s.getenv) {
		s.notify(fmt.Sprintf("%s asks for model %s, which availableModels does not allow: it runs on %s", who, m.ID, current.ID))
		return current
	}
	return m
}

// checkModel resolves a model name given by source, refusing a name that
// is no model and a model availableModels does not list, and warning of a
// model whose price tack does not know.
func (s *Session) checkModel(name, source string) (llm.Model, error) {
	m, err := s.catalog.Check(name, s.getenv)
	if err != nil {
		return m, fmt.Errorf("%s: %w", source, err)
	}
	if list := config.Texts(s.settings.AvailableModels); !s.catalog.Allowed(m, list, s.getenv) {
		return m, fmt.Errorf("%s: model %s is not allowed by the availableModels setting (allowed: %s, or the default)",
			source, m.ID, strings.Join(slices.Compact(list), ", "))
	}
	if !m.Known {
		s.notify(fmt.Sprintf("model %s is not in tack's catalogue: its cost is unknown (reported as 0)", m.ID))
	}
	return m, nil
}
