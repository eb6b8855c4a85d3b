package runtime

import (
	"context"
	"path/filepath"

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
// tracker, so a file is brought in once per session. The subagent of an
// agent hook gets none: what it reads to judge must not use up the
// session's nested memory, which its conversation would then never see.
func (t *thread) loadMemory(context.Context) error {
	s := t.s
	if t.parent != nil {
		if !t.spec.hookAgent {
			t.env.NestedMemory = t.parent.env.NestedMemory
		}
		return nil
	}
	memOpts := memory.DefaultOptions(s.cwd, s.getenv)
	memOpts.Excludes = config.Texts(s.settings.ClaudeMdExcludes)
	memOpts.AutoMemoryPath = filepath.Join(session.ProjectDir(session.ConfigDir(s.getenv), s.cwd, s.getenv), "memory", "MEMORY.md")
	mem, err := memory.Load(memOpts)
	if err != nil {
		return err
	}
	for _, p := range mem.Problems {
		s.notify("memory: " + p)
	}
	s.memory = mem
	tracker := mem.Tracker()
	t.env.NestedMemory = func(path string) []llm.Block {
		var out []llm.Block
		for _, f := range tracker.OnRead(path) {
			out = append(out, memory.Render(f))
		}
		// Skills meant for files like this one are announced now.
		return append(out, s.activateSkills(path)...)
	}
	t.context = mem.Blocks()
	if b, ok := mem.AutoBlock(); ok {
		t.autoMemory = b.Text
	}
	return nil
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
	return append(fresh.Blocks(), s.retainedSkills()...)
}
