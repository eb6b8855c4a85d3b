package agent

import (
	"github.com/tackcode/tack/internal/runtime"
)

// AgentDefinition describes a subagent the model may start (the Agent
// SDK's AgentDefinition, and the frontmatter of .claude/agents/*.md).
type AgentDefinition struct {
	Description string
	// Prompt is the subagent's system prompt.
	Prompt string
	// Tools it may use (names); nil means every tool of the session but
	// Agent. DisallowedTools are removed from them.
	Tools           []string
	DisallowedTools []string
	// Model is an alias, an id, or "inherit" / "" for the session's model.
	Model string
	// PermissionMode for its tool calls; "" means the session's.
	PermissionMode PermissionMode
	// Isolation "worktree" runs it in a temporary git worktree.
	Isolation string
	// MCPServers names servers of the session whose tools the agent gets
	// even when Tools leaves them out.
	MCPServers []string
	// Hooks run only for this agent's events (its Stop hooks as
	// SubagentStop); like Options.Hooks, they are code the settings' hook
	// guards leave running.
	Hooks map[HookEvent][]HookMatcher
	// Source says where the definition came from (a file, "built-in"…).
	Source string
}

// agentDefs are the caller's definitions as the runtime takes them.
func agentDefs(defs map[string]AgentDefinition) map[string]runtime.AgentDef {
	if defs == nil {
		return nil
	}
	out := make(map[string]runtime.AgentDef, len(defs))
	for name, d := range defs {
		out[name] = runtime.AgentDef{Description: d.Description, Prompt: d.Prompt, Tools: d.Tools, DisallowedTools: d.DisallowedTools,
			Model: d.Model, PermissionMode: string(d.PermissionMode), Isolation: d.Isolation, MCPServers: d.MCPServers,
			Hooks: callbackHooks(d.Hooks), Source: d.Source}
	}
	return out
}
