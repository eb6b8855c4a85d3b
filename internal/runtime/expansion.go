package runtime

import (
	"context"
	"fmt"
	"strings"

	"github.com/tackcode/tack/internal/engine"
	"github.com/tackcode/tack/internal/extension"
	"github.com/tackcode/tack/internal/hook"
	"github.com/tackcode/tack/internal/llm"
	"github.com/tackcode/tack/internal/mcp"
)

// A prompt that starts with a command the user may type ("/commit fix the
// typo", "/mcp__github__review 12") is expanded into what the command says
// before it reaches the model, here and only here. Its UserPromptExpansion
// hooks run first, before anything of the command runs (a skill's injected
// commands, an MCP server's prompt): they may refuse it or add context to
// it. UserPromptSubmit hooks run after them, in the engine, on the prompt
// as typed.

// command is a command a prompt names: a user-invocable skill or custom
// command, or an MCP server's prompt.
type command struct {
	name, args string
	// expansion is slash_command or mcp_prompt, and source where the
	// command is defined, as UserPromptExpansion hooks are told.
	expansion, source string
	skill             *extension.Skill
	mcpPrompt         *mcp.PromptInfo
}

// refusal is why hooks refused a prompt: the terminal reason of its result
// and the message the user is shown.
type refusal struct{ terminal, message string }

// userPrompt is p as the engine runs it, under the session's current
// prompt id: its content, or its text — expanded when it names a command,
// with the context the command's UserPromptExpansion hooks gave. A refusal
// says the hooks refused it: it does not run. An error is a command that
// could not be expanded.
func (s *Session) userPrompt(ctx context.Context, p Prompt) (engine.Prompt, *refusal, error) {
	run := engine.Prompt{Content: p.Content, ID: p.ID, PromptID: s.currentPromptID()}
	if len(p.Content) > 0 {
		return run, nil, nil
	}
	cmd, ok, err := s.typedCommand(p.Text)
	switch {
	case err != nil:
		return run, nil, err
	case !ok:
		run.Content = []llm.Block{llm.Text(p.Text)}
		return run, nil, nil
	}
	out := s.main.fire(ctx, &hook.UserPromptExpansionInput{Base: s.main.hookBase(), ExpansionType: cmd.expansion,
		CommandName: cmd.name, CommandArgs: cmd.args, CommandSource: cmd.source, Prompt: p.Text})
	switch {
	case out.Block:
		msg := fmt.Sprintf("%s hook blocked /%s: %s", out.HookName, cmd.name, out.Reason)
		if !out.SuppressOriginalPrompt {
			msg += "\n\nOriginal prompt: " + p.Text
		}
		return run, &refusal{"prompt_blocked", msg}, nil
	case out.Stop:
		msg := fmt.Sprintf("%s hook stopped the session", out.HookName)
		if out.StopReason != "" {
			msg += ": " + out.StopReason
		}
		return run, &refusal{"hook_stopped", msg}, nil
	}
	if cmd.skill != nil {
		run.Content, err = s.expandSkill(ctx, cmd.skill, cmd.args)
	} else {
		run.Content, err = s.expandMCPPrompt(ctx, cmd.mcpPrompt, cmd.args)
	}
	if err != nil {
		return run, nil, err
	}
	if len(out.AdditionalContext) > 0 {
		run.Content = append(run.Content, hook.ContextBlock("UserPromptExpansion", out.AdditionalContext))
	}
	run.Text = p.Text
	return run, nil, nil
}

// typedCommand is the command prompt starts with ("/name args…"). ok is
// false when it names none: the prompt goes to the model as it is. An MCP
// prompt's command that names no prompt of a connected server is an error.
func (s *Session) typedCommand(prompt string) (cmd command, ok bool, err error) {
	p := strings.TrimLeft(prompt, " \t\r\n")
	if !strings.HasPrefix(p, "/") {
		return command{}, false, nil
	}
	name, args, _ := strings.Cut(p[1:], " ")
	if i := strings.IndexAny(name, "\t\r\n"); i >= 0 {
		name, args = name[:i], name[i:]+" "+args
	}
	args = strings.TrimSpace(args)
	if s.skills != nil {
		if sk, found := s.skills.Skill(name); found && sk.UserInvocable {
			return command{name: sk.Name, args: args, expansion: "slash_command", source: commandSource(sk.Source), skill: sk}, true, nil
		}
	}
	info, isMCP := s.mcpPromptInfo(name)
	switch {
	case info != nil:
		return command{name: name, args: args, expansion: "mcp_prompt", source: "mcp", mcpPrompt: info}, true, nil
	case isMCP:
		return command{}, true, fmt.Errorf("no MCP prompt /%s (the server may not be connected)", name)
	}
	return command{}, false, nil
}

// commandSource names where a skill or command is defined as Claude Code
// does in UserPromptExpansion payloads: by the settings scope of its
// folder, "plugin" for a plugin's, "bundled" for tack's own.
func commandSource(src extension.Source) string {
	switch src.Scope {
	case extension.ScopeProject:
		return "projectSettings"
	case extension.ScopeUser:
		return "userSettings"
	case extension.ScopeManaged:
		return "policySettings"
	case extension.ScopePlugin:
		return "plugin"
	case extension.ScopeBuiltin:
		return "bundled"
	}
	return string(src.Scope)
}
