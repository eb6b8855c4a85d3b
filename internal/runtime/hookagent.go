package runtime

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"strings"

	"github.com/tackcode/tack/internal/hook"
	"github.com/tackcode/tack/internal/llm"
	"github.com/tackcode/tack/internal/permission"
)

// hookAgentPrompt is the system prompt of an agent hook's subagent.
//
//go:embed hookagent.md
var hookAgentPrompt string

// hookAgentTurns bounds the turns of an agent hook's subagent, as Claude
// Code does.
const hookAgentTurns = 50

// hookAgentType is the agent_type of an agent hook's subagent, in its
// transcript.
const hookAgentType = "hook-agent"

// hookAgentTools are the tools of an agent hook's subagent: it looks, it
// changes nothing.
var hookAgentTools = []string{"Read", "Grep", "Glob"}

// hookAgents runs a session's agent hooks (hook.AgentRunner).
//
// The subagent is a thread of the session built by the same steps as any
// subagent, in the session's working directory, under the session's
// permission rules, with Read, Grep and Glob only, in dontAsk mode: what
// the rules do not allow is denied, nobody is asked. It runs on the
// handler's model or the session's small model, for at most
// hookAgentTurns turns and the handler's timeout, and its final text is
// the verdict. Its spending counts in the session's.
//
// It runs no hooks, neither the session's nor any other: a hook that fires
// on every tool call would otherwise judge the hook agent's own reads, and
// an agent hook on them would start an agent without end. Claude Code runs
// hook agents without the user's hooks too, as far as is known. What it
// does is not shown among the session's messages; its transcript is a
// sidechain file like any subagent's.
type hookAgents struct{ s *Session }

func (h hookAgents) RunHookAgent(ctx context.Context, handler hook.Handler, _ hook.Input, prompt string) (string, error) {
	s := h.s
	if s.main == nil || s.main.engine == nil {
		return "", errors.New("the session is still starting, and agent hooks run in it: they cannot run on SessionStart or Setup")
	}
	def := AgentDef{
		Description:    "judges an event for an agent hook",
		Prompt:         hookAgentPrompt,
		Tools:          hookAgentTools,
		PermissionMode: string(permission.ModeDontAsk),
		MaxTurns:       hookAgentTurns,
		Source:         handler.Source,
	}
	t, err := s.buildThread(ctx, spec{def: &def, agentID: newAgentID(), agentType: hookAgentType,
		model: firstNonEmpty(handler.Model, s.small), hookAgent: true})
	if err != nil {
		return "", err
	}
	defer t.close()
	res := t.engine.Run(ctx, []llm.Block{llm.Text(prompt)}, nil)
	if res.IsError {
		return "", fmt.Errorf("its agent did not finish: %s", strings.Join(res.Errors, "; "))
	}
	return res.Text(), nil
}
