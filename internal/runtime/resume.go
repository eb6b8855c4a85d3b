package runtime

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/tackcode/tack/internal/session"
)

// loadRecords loads the workflow, launch and prefix records of the stored session
// id. A record that is not valid (edited by hand) is reported and left out:
// the conversation still resumes from the transcript.
func (r *resumed) loadRecords(cfg Config, projectDir, id string) {
	var err error
	if r.workflow, err = session.LoadWorkflow(projectDir, id); err != nil {
		r.workflow = nil
		if !errors.Is(err, session.ErrNotFound) {
			notify(cfg, fmt.Sprintf("resuming without the workflow record: %v", err))
		}
	}
	if r.launch, err = session.LoadLaunch(projectDir, id); err != nil {
		r.launch = nil
		if !errors.Is(err, session.ErrNotFound) {
			notify(cfg, fmt.Sprintf("resuming without the launch options: %v", err))
		}
	}
	if r.prefix, err = session.LoadPrefix(projectDir, id); err != nil {
		r.prefix = nil
		if !errors.Is(err, session.ErrNotFound) {
			notify(cfg, fmt.Sprintf("resuming with a new system prompt and tools (the prompt cache starts over): %v", err))
		}
	}
}

// unrestoredModes are the permission modes a resume does not bring back:
// they must be asked for again (seed 001).
var unrestoredModes = map[string]bool{"bypassPermissions": true, "plan": true}

// restore fills the options this launch leaves unset with what the session
// recorded: its name, its permission mode (but bypassPermissions and plan),
// and its launch options. What is restored that Claude Code would not
// restore, and a mode left behind, are told in a notice.
func (r *resumed) restore(cfg Config, o Launch) Launch {
	fill(&o.Name, r.transcript.Meta.Name)
	if w := r.workflow; w != nil && o.PermissionMode == "" {
		if unrestoredModes[w.PermissionMode] {
			notify(cfg, fmt.Sprintf("the session ran in %s mode, which a resume does not restore: it goes on in the default mode (or the settings' defaultMode); pass --permission-mode %s to use it again", w.PermissionMode, w.PermissionMode))
		} else {
			o.PermissionMode = w.PermissionMode
		}
	}
	l := r.launch
	if l == nil {
		if r.prefix != nil && !samePrompt(o, session.Launch{}) {
			r.prefix = nil // prompt options given now, unknown then
		}
		return o
	}
	var told []string
	if o.AddDirs == nil && len(l.AddDirs) > 0 {
		told = append(told, "--add-dir "+strings.Join(l.AddDirs, " "))
	}
	if o.MCPConfig == nil && len(l.MCPConfig) > 0 {
		told = append(told, "--mcp-config "+strings.Join(l.MCPConfig, " "))
	}
	r.agentRestored = o.Agent == "" && l.Agent != ""
	o = restoreLaunch(o, *l)
	if r.prefix != nil && !samePrompt(o, *l) {
		// The recorded prompt is not the one this launch asks for.
		r.prefix = nil
	}
	if len(told) > 0 {
		notify(cfg, "restored "+strings.Join(told, ", ")+" from the session")
	}
	return o
}

// samePrompt reports whether the options o (restored) shape the system
// prompt as the session's launch l did: the same prompt options, agent and
// extra directories (which the prompt names).
func samePrompt(o Launch, l session.Launch) bool {
	same := func(a, b *string) bool { return (a == nil) == (b == nil) && (a == nil || *a == *b) }
	return same(o.SystemPrompt, l.SystemPrompt) && o.AppendSystemPrompt == l.AppendSystemPrompt &&
		o.Agent == l.Agent && slices.Equal(o.AddDirs, l.AddDirs)
}

// restoreLaunch fills the options this launch leaves unset with the values
// the session was launched with.
func restoreLaunch(o Launch, l session.Launch) Launch {
	fill(&o.Model, l.Model)
	fill(&o.FallbackModel, l.FallbackModel)
	fill(&o.Settings, l.Settings)
	fillNil(&o.SettingSources, l.SettingSources)
	fillNil(&o.MCPConfig, l.MCPConfig)
	fill(&o.StrictMCPConfig, l.StrictMCPConfig)
	fillNil(&o.AddDirs, l.AddDirs)
	fill(&o.Agent, l.Agent)
	fillNil(&o.PluginDirs, l.PluginDirs)
	fill(&o.AgentsJSON, l.Agents)
	fillNil(&o.Tools, l.Tools)
	fillNil(&o.AllowedTools, l.AllowedTools)
	fillNil(&o.DisallowedTools, l.DisallowedTools)
	fill(&o.PermissionPromptTool, l.PermissionPromptTool)
	fill(&o.MaxThinkingTokens, l.MaxThinkingTokens)
	fill(&o.Thinking, l.Thinking)
	fill(&o.ThinkingDisplay, l.ThinkingDisplay)
	fill(&o.Effort, l.Effort)
	fill(&o.TaskBudget, l.TaskBudget)
	fill(&o.SystemPrompt, l.SystemPrompt)
	fill(&o.AppendSystemPrompt, l.AppendSystemPrompt)
	return o
}
