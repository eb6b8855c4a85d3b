package runtime

import (
	"context"
	"slices"
	"time"

	"github.com/tackcode/tack/internal/prompt"
)

// buildPrompt assembles the thread's system prompt. The main thread's is
// tack's (or the options' replacement, or its agent's prompt) with the
// environment, the auto memory and the git status; a subagent's is its definition's prompt
// with the environment. A resumed session re-sends the system prompt and
// tools of its earlier requests byte for byte, so the prompt cache still
// holds.
func (t *thread) buildPrompt(ctx context.Context) error {
	s, def := t.s, t.spec.def
	penv := prompt.DetectEnv(t.cwd, time.Now(), s.getenv)
	penv.Model = t.model.ID
	if t.parent != nil {
		t.system = prompt.System(prompt.Options{Replace: def.Prompt, ReplaceSet: true, Append: penv.Describe()})
		return nil
	}
	// The checker's directories include the working directory itself,
	// which the prompt names already.
	penv.ExtraDirs = slices.DeleteFunc(t.checker.Dirs(), func(d string) bool { return d == t.cwd })
	popts := prompt.Options{Append: s.cfg.AppendSystemPrompt, Env: penv, AutoMemory: t.autoMemory}
	r := s.resumed
	recorded := r != nil && r.prefix != nil && r.prefix.Model == t.model.ID
	if r != nil && r.prefix != nil && !recorded {
		// The session goes on with another model: its prompt is made
		// anew, git status included, which the prefetch left out.
		r.prefix = nil
		t.gitStatus = s.prefetchGitStatus(ctx, t.cwd)
	}
	if t.gitStatus != nil {
		popts.GitStatus = <-t.gitStatus
	}
	switch {
	case s.cfg.SystemPrompt != nil:
		popts.Replace, popts.ReplaceSet = *s.cfg.SystemPrompt, true
	case def != nil:
		popts.Replace, popts.ReplaceSet = def.Prompt+"\n\n"+penv.Describe(), true
	}
	if recorded {
		if blocks, err := r.prefix.SystemBlocks(); err == nil {
			t.system = blocks
			if specs, err := r.prefix.ToolSpecs(); err == nil {
				t.recordedTools = specs
			}
			return nil
		}
		r.prefix = nil // the new prompt goes, and replaces the record
	}
	t.system = prompt.System(popts)
	return nil
}

// prefetchGitStatus starts the git status snapshot of the main thread's
// prompt, so that its git commands run beside the start-up steps before
// the prompt's (hooks, MCP servers, memory). It is taken once: the prompt,
// and so the cached prefix, stays the same for the whole session. nil when
// the prompt gets none: outside a repository, on a resume that re-sends
// its recorded prompt, or with the git instructions turned off
// (CLAUDE_CODE_DISABLE_GIT_INSTRUCTIONS, includeGitInstructions: false).
func (s *Session) prefetchGitStatus(ctx context.Context, dir string) <-chan string {
	if !s.gitInstructions() || (s.resumed != nil && s.resumed.prefix != nil) || !prompt.InGitRepo(dir) {
		return nil
	}
	ch := make(chan string, 1)
	go func() { ch <- prompt.GitStatus(ctx, dir) }()
	return ch
}

// gitInstructions says whether the system prompt carries the git status:
// the environment variable decides when set, else the setting (default
// true), as in Claude Code.
func (s *Session) gitInstructions() bool {
	if v := s.getenv("CLAUDE_CODE_DISABLE_GIT_INSTRUCTIONS"); v != "" {
		return !truthy(v)
	}
	if b := s.settings.IncludeGitInstructions; b != nil {
		return *b
	}
	return true
}
