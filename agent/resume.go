package agent

import (
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/google/uuid"

	"github.com/tackcode/tack/internal/llm"
	"github.com/tackcode/tack/internal/session"
)

// resumed is what a continued, resumed or forked session brings back.
type resumed struct {
	// id is the session the new turns are written to: the original, or
	// the fork's new id.
	id         string
	transcript *session.Transcript
	workflow   *session.Workflow
	prefix     *session.Prefix
}

// findResumed locates the session opts asks to continue, resume or fork,
// loads it, and returns opts with the launch options the session recorded
// filled in wherever this launch gives none (a flag given now wins).
func findResumed(opts Options, projectDir string) (*resumed, Options, error) {
	if !opts.Continue && opts.Resume == "" {
		if opts.ForkSession || opts.ResumeSessionAt != "" {
			return nil, opts, errors.New("--fork-session and --resume-session-at need --resume or --continue")
		}
		return nil, opts, nil
	}
	var info session.Info
	var err error
	if opts.Resume != "" {
		info, err = session.Resolve(projectDir, opts.Resume)
	} else {
		info, err = session.Latest(projectDir)
	}
	if err != nil {
		if errors.Is(err, session.ErrNotFound) {
			if opts.Resume != "" {
				return nil, opts, fmt.Errorf("no session %q in this project (tack sessions lists them)", opts.Resume)
			}
			return nil, opts, errors.New("no session to continue in this project")
		}
		return nil, opts, err
	}
	r := &resumed{id: info.ID}
	if r.workflow, err = session.LoadWorkflow(projectDir, info.ID); err != nil && !errors.Is(err, session.ErrNotFound) {
		return nil, opts, err
	}
	if r.prefix, err = session.LoadPrefix(projectDir, info.ID); err != nil && !errors.Is(err, session.ErrNotFound) {
		return nil, opts, err
	}
	if opts.ForkSession {
		newID := opts.SessionID
		if newID == "" {
			newID = uuid.NewString()
		}
		r.transcript, err = session.Fork(projectDir, info.ID, newID, opts.ResumeSessionAt)
		r.id = newID
	} else {
		if opts.SessionID != "" && opts.SessionID != info.ID {
			return nil, opts, fmt.Errorf("--session-id %s differs from the resumed session %s (add --fork-session to continue under a new id)", opts.SessionID, info.ID)
		}
		r.transcript, err = session.LoadSession(projectDir, info.ID)
		if err == nil && opts.ResumeSessionAt != "" {
			r.transcript, err = r.transcript.At(opts.ResumeSessionAt)
		}
	}
	if err != nil {
		return nil, opts, err
	}
	opts.SessionID = r.id
	if r.workflow != nil {
		opts = restoreOptions(opts, *r.workflow)
	}
	return r, opts, nil
}

// restoreOptions fills the options this launch leaves unset with the
// values the session was launched with.
func restoreOptions(o Options, w session.Workflow) Options {
	if o.Model == "" {
		o.Model = w.Model
	}
	if o.FallbackModel == "" {
		o.FallbackModel = w.FallbackModel
	}
	if o.PermissionMode == "" {
		o.PermissionMode = PermissionMode(w.PermissionMode)
	}
	if o.Settings == "" {
		o.Settings = w.Settings
	}
	if o.SettingSources == nil && w.SettingSources != nil {
		o.SettingSources = w.SettingSources
	}
	if o.MCPConfig == nil {
		o.MCPConfig = w.MCPConfig
	}
	if !o.StrictMCPConfig {
		o.StrictMCPConfig = w.StrictMCPConfig
	}
	if o.AddDirs == nil {
		o.AddDirs = w.AddDirs
	}
	if o.Agent == "" {
		o.Agent = w.Agent
	}
	if o.PluginDirs == nil {
		o.PluginDirs = w.PluginDirs
	}
	if o.AgentsJSON == "" {
		o.AgentsJSON = w.Agents
	}
	if o.Tools == nil && w.Tools != nil {
		o.Tools = w.Tools
	}
	if o.AllowedTools == nil {
		o.AllowedTools = w.AllowedTools
	}
	if o.DisallowedTools == nil {
		o.DisallowedTools = w.DisallowedTools
	}
	if o.PermissionPromptTool == "" {
		o.PermissionPromptTool = w.PermissionPromptTool
	}
	if o.MaxThinkingTokens == 0 {
		o.MaxThinkingTokens = w.MaxThinkingTokens
	}
	if o.SystemPrompt == nil {
		o.SystemPrompt = w.SystemPrompt
	}
	if o.AppendSystemPrompt == "" {
		o.AppendSystemPrompt = w.AppendSystemPrompt
	}
	if o.Name == "" {
		o.Name = w.Name
	}
	return o
}

// workflowOf is the record of the options a session runs with.
func workflowOf(s *agentSession) session.Workflow {
	s.metaMu.Lock()
	o := s.opts
	s.metaMu.Unlock()
	w := session.Workflow{
		SessionID: s.engine.SessionID(), Name: o.Name, Cwd: s.cwd,
		Model: s.engine.Model().ID, FallbackModel: o.FallbackModel, PermissionMode: string(s.checker.Mode()),
		Settings: o.Settings, SettingSources: o.SettingSources, MCPConfig: nonNil(o.MCPConfig), StrictMCPConfig: o.StrictMCPConfig,
		AddDirs: nonNil(o.AddDirs), Agent: o.Agent, Agents: o.AgentsJSON, PluginDirs: nonNil(o.PluginDirs), Tools: o.Tools,
		AllowedTools: nonNil(o.AllowedTools), DisallowedTools: nonNil(o.DisallowedTools), PermissionPromptTool: o.PermissionPromptTool,
		MaxThinkingTokens: o.MaxThinkingTokens, SystemPrompt: o.SystemPrompt, AppendSystemPrompt: o.AppendSystemPrompt,
		CostUSD: s.costBase + s.engine.Cost(),
	}
	return w
}

// saveRecord writes the workflow record (and, for a new session, the
// request prefix) after a run, so that a resume restores both.
func (s *agentSession) saveRecord(lastTool *session.LastTool) error {
	if s.projectDir == "" {
		return nil
	}
	id := s.engine.SessionID()
	w := workflowOf(s)
	w.LastTool = lastTool
	now := time.Now().UTC()
	prev, err := session.LoadWorkflow(s.projectDir, id)
	switch {
	case err == nil:
		w.CreatedAt = prev.CreatedAt
		if w.LastTool == nil {
			w.LastTool = prev.LastTool
		}
	case errors.Is(err, session.ErrNotFound):
		w.CreatedAt = now
	default:
		return err
	}
	w.UpdatedAt = now
	if err := session.SaveWorkflow(s.projectDir, id, w); err != nil {
		return err
	}
	if _, err := session.LoadPrefix(s.projectDir, id); errors.Is(err, session.ErrNotFound) {
		p, err := session.PrefixOf(id, &llm.Request{Model: s.engine.Model().ID, MaxTokens: 1,
			System: s.system, Tools: s.toolSpecs,
			Messages: []llm.Message{{Role: llm.RoleUser, Content: []llm.Block{llm.Text(".")}}}})
		if err != nil {
			return err
		}
		return session.SavePrefix(s.projectDir, id, p)
	}
	return nil
}

// sameTools reports whether the recorded tools array offers exactly the
// tools offered now, so that it can be re-sent as it was.
func sameTools(recorded, now []llm.ToolSpec) bool {
	if len(recorded) != len(now) {
		return false
	}
	names := make([]string, len(now))
	for i, t := range now {
		names[i] = t.Name
	}
	for _, t := range recorded {
		if !slices.Contains(names, t.Name) {
			return false
		}
	}
	return true
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// lastTool is the session's last tool call, for the workflow record.
func (s *agentSession) lastTool() *session.LastTool {
	name, decision := s.engine.LastTool()
	if name == "" {
		return nil
	}
	return &session.LastTool{Name: name, Decision: decision}
}
