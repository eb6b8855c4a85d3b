package runtime

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/tackcode/tack/internal/engine"
	"github.com/tackcode/tack/internal/llm"
	"github.com/tackcode/tack/internal/protocol"
	"github.com/tackcode/tack/internal/tool"
	"github.com/tackcode/tack/internal/tool/agenttool"
)

// subagents runs the subagents of one session.
type subagents struct {
	s *Session

	mu sync.Mutex
	bg map[string]*background
}

// background is a subagent started with run_in_background.
type background struct {
	done   chan struct{}
	cancel context.CancelFunc // stops it (StopTask)
	result tool.SubagentResult
	err    error
}

func newSubagents(s *Session) *subagents {
	return &subagents{s: s, bg: map[string]*background{}}
}

// infos lists the agents for the Agent tool's description, by name.
func (sa *subagents) infos() []agenttool.Info {
	defs := sa.s.agents
	names := slices.Sorted(maps.Keys(defs))
	out := make([]agenttool.Info, len(names))
	for i, n := range names {
		out[i] = agenttool.Info{Name: n, Description: defs[n].Description}
	}
	return out
}

// Run runs one subagent, or starts it in the background.
func (sa *subagents) Run(ctx context.Context, req tool.SubagentRequest) (tool.SubagentResult, error) {
	def, ok := sa.s.agents[req.Type]
	if !ok {
		var names []string
		for _, a := range sa.infos() {
			names = append(names, a.Name)
		}
		return tool.SubagentResult{}, tool.BadInput(agenttool.Name, "no agent %q (available: %s)", req.Type, strings.Join(names, ", "))
	}
	id := newAgentID()
	if !req.Background {
		return sa.run(ctx, req.Type, def, req, id)
	}
	// A background subagent outlives the call; it ends with the session,
	// or when stopped.
	bgCtx, cancel := context.WithCancel(sa.s.ctx)
	bg := &background{done: make(chan struct{}), cancel: cancel}
	sa.mu.Lock()
	sa.bg[id] = bg
	sa.mu.Unlock()
	go func() {
		defer close(bg.done)
		defer cancel()
		bg.result, bg.err = sa.run(bgCtx, req.Type, def, req, id)
	}()
	return tool.SubagentResult{AgentID: id, AgentType: req.Type, Status: "running", Prompt: req.Prompt, Background: true}, nil
}

// stop stops the background subagent id, if it still runs, and reports
// whether there is one of that id.
func (sa *subagents) stop(id string) bool {
	sa.mu.Lock()
	bg, ok := sa.bg[id]
	sa.mu.Unlock()
	if !ok {
		return false
	}
	bg.cancel()
	<-bg.done
	return true
}

// newAgentID names a subagent: "agent_" and 16 hex digits.
func newAgentID() string {
	return "agent_" + strings.ReplaceAll(uuid.NewString(), "-", "")[:16]
}

// Output returns a background subagent's report once it is done.
func (sa *subagents) Output(ctx context.Context, id string, wait time.Duration) (string, bool, error) {
	sa.mu.Lock()
	bg, ok := sa.bg[id]
	sa.mu.Unlock()
	if !ok {
		return "", false, fmt.Errorf("no background agent %s", id)
	}
	select {
	case <-bg.done:
	default:
		t := time.NewTimer(wait)
		defer t.Stop()
		select {
		case <-bg.done:
		case <-t.C:
			return "", false, nil
		case <-ctx.Done():
			return "", false, ctx.Err()
		}
	}
	if bg.err != nil {
		return "", true, bg.err
	}
	return bg.result.Report, true, nil
}

// run runs a subagent to the end: a thread of the session, built by the
// same steps as the main thread with the agent's overrides, sharing the
// session's hooks, approver and spend.
func (sa *subagents) run(ctx context.Context, name string, def AgentDef, req tool.SubagentRequest, id string) (tool.SubagentResult, error) {
	s := sa.s
	start := time.Now()
	emit := s.emitter()
	emit(&protocol.System{Subtype: protocol.SubtypeTaskStarted, SessionID: s.sessionID, UUID: uuid.NewString(), Fields: map[string]any{
		"task_id": id, "tool_use_id": req.ToolUseID, "description": req.Description, "subagent_type": name}})
	t, err := s.buildThread(ctx, spec{def: &def, agentID: id, agentType: name, model: req.Model,
		worktree: req.Isolation == "worktree" || def.Isolation == "worktree", toolUseID: req.ToolUseID})
	if err != nil {
		return tool.SubagentResult{}, err
	}
	defer t.close()
	var toolUses int
	// Its hooks' payloads carry the prompt id of the prompt it works for.
	res := t.engine.RunPrompt(ctx, engine.Prompt{Content: []llm.Block{llm.Text(req.Prompt)}, PromptID: s.currentPromptID()}, func(m protocol.Message) {
		switch m := m.(type) {
		case *protocol.Result:
			return // the parent gets the report and a task_notification instead
		case *protocol.User:
			if len(m.Message.Content) > 0 && m.Message.Content[0].Type == llm.TypeToolResult {
				toolUses++
			}
		}
		emit(m)
	})
	result := tool.SubagentResult{AgentID: id, AgentType: name, Status: "completed", Prompt: req.Prompt, Model: t.model.ID, Report: res.Text(),
		TotalTokens:   res.Usage.InputTokens + res.Usage.OutputTokens + res.Usage.CacheReadInputTokens + res.Usage.CacheCreationInputTokens,
		TotalToolUses: toolUses, Usage: &llm.Usage{InputTokens: res.Usage.InputTokens, OutputTokens: res.Usage.OutputTokens,
			CacheCreationInputTokens: res.Usage.CacheCreationInputTokens, CacheReadInputTokens: res.Usage.CacheReadInputTokens}, TotalDurationMS: time.Since(start).Milliseconds(), CostUSD: res.TotalCostUSD}
	if res.IsError {
		result.Status, result.IsError = "failed", true
		result.Report = fmt.Sprintf("The %s agent did not finish: %s", name, strings.Join(res.Errors, "; "))
	}
	if strings.TrimSpace(result.Report) == "" {
		result.Report = "(the agent ended without a report)"
	}
	t.closeWorktree(ctx, &result)
	emit(&protocol.System{Subtype: protocol.SubtypeTaskNotification, SessionID: s.sessionID, UUID: uuid.NewString(), Fields: map[string]any{
		"task_id": id, "tool_use_id": req.ToolUseID, "status": result.Status, "summary": firstLine(result.Report),
		"usage": map[string]any{"total_tokens": result.TotalTokens, "tool_uses": result.TotalToolUses, "duration_ms": result.TotalDurationMS}}})
	return result, nil
}

// closeWorktree removes a subagent's worktree, or keeps it (when the agent
// changed files in git's, or no hook removes a hook's), and says so in its
// report.
func (t *thread) closeWorktree(ctx context.Context, result *tool.SubagentResult) {
	w := t.worktree
	if w == nil {
		return
	}
	kept, err := t.releaseWorktree(ctx)
	switch {
	case err != nil:
		result.Report += "\n\n(Its worktree could not be cleaned up: " + err.Error() + ")"
	case kept && w.git != nil:
		result.Worktree, result.WorktreeBranch = w.path, w.git.Branch
		result.Report += fmt.Sprintf("\n\n(It worked in the git worktree %s on branch %s, kept because it changed files there.)", w.path, w.git.Branch)
	case kept:
		result.Worktree = w.path
		result.Report += fmt.Sprintf("\n\n(It worked in %s, which a WorktreeCreate hook made; it is still there, as no WorktreeRemove hook is configured.)", w.path)
	}
}

// Fork runs a skill with context: fork in a subagent and returns its
// report (skilltool.Forker).
func (sa *subagents) Fork(ctx context.Context, agentType, prompt, model string) (string, error) {
	if agentType == "" {
		agentType = "general-purpose"
	}
	res, err := sa.Run(ctx, tool.SubagentRequest{Type: agentType, Prompt: prompt, Model: model,
		Description: "skill", ToolUseID: tool.ToolUseID(ctx)})
	if err != nil {
		return "", err
	}
	return res.Report, nil
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(strings.TrimSpace(s), "\n")
	if r := []rune(line); len(r) > 200 {
		return string(r[:199]) + "…"
	}
	return line
}
