package runtime

import (
	"context"
	"path/filepath"
	"slices"

	"github.com/tackcode/tack/internal/compact"
	"github.com/tackcode/tack/internal/config"
	"github.com/tackcode/tack/internal/engine"
	"github.com/tackcode/tack/internal/llm"
	"github.com/tackcode/tack/internal/memory"
	"github.com/tackcode/tack/internal/session"
)

// loadMemory reads the project memory (CLAUDE.md and friends), which opens
// the main thread's first message, and the auto memory, which goes into its
// system prompt. Every thread is told of nested memory as its tools read
// files below the working directory; a subagent shares the main thread's
// tracker, so a file is brought in once per session, and the
// InstructionsLoaded hooks of the thread that read it fire for it. The
// subagent of an agent hook gets none: what it reads to judge must not use
// up the session's nested memory, which its conversation would then never
// see.
func (t *thread) loadMemory(context.Context) error {
	s := t.s
	if t.parent != nil {
		if !t.spec.hookAgent {
			t.env.NestedMemory = t.nestedMemory
		}
		return nil
	}
	memOpts := memory.DefaultOptions(s.cwd, s.getenv)
	memOpts.Excludes = config.Texts(s.settings.ClaudeMdExcludes)
	memOpts.NoUser, memOpts.NoProject = s.memorySources()
	if !memOpts.NoProject {
		memOpts.AutoMemoryPath = filepath.Join(session.ProjectDir(session.ConfigDir(s.getenv), s.cwd, s.getenv), "memory", "MEMORY.md")
	}
	mem, err := memory.Load(memOpts)
	if err != nil {
		return err
	}
	for _, p := range mem.Problems {
		s.notify("memory: " + p)
	}
	s.memory = mem
	t.env.NestedMemory = t.nestedMemory
	t.context = mem.Blocks()
	if b, ok := mem.AutoBlock(); ok {
		t.autoMemory = b.Text
	}
	return nil
}

// memorySources says which memory the session leaves out: the user's
// (~/.claude/CLAUDE.md and rules) when it reads no user settings, the
// project's (CLAUDE.md of the folders, the auto memory) when it reads no
// project settings — the SDK's settingSources decide CLAUDE.md as they
// decide the settings — and both with Bare. The administrator's memory
// always loads.
func (s *Session) memorySources() (noUser, noProject bool) {
	if s.cfg.Bare {
		return true, true
	}
	scopes, err := config.SourceList(s.cfg.SettingSources)
	if err != nil || scopes == nil {
		return false, false // a bad list was reported when the settings loaded
	}
	return !slices.Contains(scopes, config.ScopeUser), !slices.Contains(scopes, config.ScopeProject)
}

// nestedMemory is what reading path brings into the thread's context
// (tool.Env.NestedMemory): the memory it makes relevant, which its
// InstructionsLoaded hooks are told of, and the skills meant for files like
// it. The hooks run under the session's context: the read that loads the
// memory has none to give.
func (t *thread) nestedMemory(path string) []llm.Block {
	s := t.s
	files := s.memory.Tracker().OnRead(path)
	t.instructionsLoaded(s.ctx, files)
	var out []llm.Block
	for _, f := range files {
		out = append(out, memory.Render(f))
	}
	return append(out, s.activateSkills(path)...)
}

// compaction says when the thread's conversation is compacted: past the
// session's threshold; the main thread keeps its latest messages and gets
// its root memory and the skills it ran back.
func (t *thread) compaction() engine.Compaction {
	s := t.s
	if t.parent != nil {
		return engine.Compaction{Threshold: s.compactThreshold}
	}
	threshold, err := compact.Threshold(s.getenv, 0)
	if err != nil {
		s.notify("compaction: " + err.Error())
	}
	if s.getenv("DISABLE_AUTO_COMPACT") == "1" {
		threshold = -1
	}
	s.compactThreshold = threshold
	return engine.Compaction{Threshold: threshold, KeepMessages: 4, Memory: s.compactedMemory}
}

// compactedMemory is what a compacted conversation starts with: the root
// memory re-read from disk (edits made during the session count; nested
// memory is not brought back) and the latest invocation of each skill.
func (s *Session) compactedMemory() []llm.Block {
	fresh, err := s.memory.Reload()
	if err != nil {
		s.notify("memory: " + err.Error())
		return append(s.memory.Blocks(), s.retainedSkills()...)
	}
	s.main.instructionsLoaded(s.ctx, fresh.Files)
	return append(fresh.Blocks(), s.retainedSkills()...)
}
