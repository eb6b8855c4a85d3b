package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/tackcode/tack/internal/engine"
	"github.com/tackcode/tack/internal/hook"
	"github.com/tackcode/tack/internal/llm"
	"github.com/tackcode/tack/internal/mcp/mcpconfig"
	"github.com/tackcode/tack/internal/permission"
	"github.com/tackcode/tack/internal/prompt"
	"github.com/tackcode/tack/internal/protocol"
	"github.com/tackcode/tack/internal/session"
	"github.com/tackcode/tack/internal/shell"
	"github.com/tackcode/tack/internal/tool"
	"github.com/tackcode/tack/internal/tool/agenttool"
	"github.com/tackcode/tack/internal/version"
	"github.com/tackcode/tack/internal/worktree"
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
	// Hooks run only for this agent's events.
	Hooks map[HookEvent][]HookMatcher
	// Source says where the definition came from (a file, "built-in"…).
	Source string

	// What a definition read from a file also brings: its hooks (in the
	// settings format), the skills preloaded into its context, and a bound
	// on its turns.
	fileHooks hook.Config
	skills    []string
	maxTurns  int
	// mcpDefs are MCP servers the definition defines inline (started for a
	// main-thread agent).
	mcpDefs []*mcpconfig.Server
}

// subagents runs the subagents of one session.
type subagents struct {
	s    *agentSession
	defs map[string]AgentDefinition

	mu sync.Mutex
	bg map[string]*background
	// cancel stops background subagents when the session closes.
	ctx    context.Context
	cancel context.CancelFunc
}

// background is a subagent started with run_in_background.
type background struct {
	done   chan struct{}
	result tool.SubagentResult
	err    error
}

func newSubagents(s *agentSession, defs map[string]AgentDefinition) *subagents {
	ctx, cancel := context.WithCancel(context.Background())
	return &subagents{s: s, defs: defs, bg: map[string]*background{}, ctx: ctx, cancel: cancel}
}

// infos lists the agents for the Agent tool's description, by name.
func (sa *subagents) infos() []agenttool.Info {
	names := make([]string, 0, len(sa.defs))
	for n := range sa.defs {
		names = append(names, n)
	}
	slices.Sort(names)
	out := make([]agenttool.Info, len(names))
	for i, n := range names {
		out[i] = agenttool.Info{Name: n, Description: sa.defs[n].Description}
	}
	return out
}

// Run runs one subagent, or starts it in the background.
func (sa *subagents) Run(ctx context.Context, req tool.SubagentRequest) (tool.SubagentResult, error) {
	def, ok := sa.defs[req.Type]
	if !ok {
		var names []string
		for _, a := range sa.infos() {
			names = append(names, a.Name)
		}
		return tool.SubagentResult{}, tool.BadInput(agenttool.Name, "no agent %q (available: %s)", req.Type, strings.Join(names, ", "))
	}
	id := "agent_" + strings.ReplaceAll(uuid.NewString(), "-", "")[:16]
	if !req.Background {
		return sa.run(ctx, req.Type, def, req, id)
	}
	bg := &background{done: make(chan struct{})}
	sa.mu.Lock()
	sa.bg[id] = bg
	sa.mu.Unlock()
	go func() {
		defer close(bg.done)
		bg.result, bg.err = sa.run(sa.ctx, req.Type, def, req, id)
	}()
	return tool.SubagentResult{AgentID: id, AgentType: req.Type, Status: "running", Background: true}, nil
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

// close stops background subagents.
func (sa *subagents) close() { sa.cancel() }

// run runs a subagent to the end: its own session (system prompt, tools,
// model, permission mode, transcript), sharing the parent's hooks, approver
// and spend.
func (sa *subagents) run(ctx context.Context, name string, def AgentDefinition, req tool.SubagentRequest, id string) (tool.SubagentResult, error) {
	s := sa.s
	start := time.Now()
	out := s.currentOutbox()
	emit := func(m protocol.Message) {
		if out != nil {
			out.emit(m)
		}
	}
	parentID := s.engine.SessionID()
	emit(&protocol.System{Subtype: "task_started", SessionID: parentID, UUID: uuid.NewString(), Fields: map[string]any{
		"task_id": id, "tool_use_id": req.ToolUseID, "description": req.Description, "subagent_type": name}})

	// The subagent's own working directory: the session's, or a worktree.
	cwd := s.env.Cwd()
	var wt *worktree.Worktree
	if req.Isolation == "worktree" || def.Isolation == "worktree" {
		var err error
		root := worktree.DefaultRoot()
		if x := s.getenv("XDG_CACHE_HOME"); x != "" {
			root = filepath.Join(x, "tack", "worktrees")
		}
		if wt, err = worktree.CreateWith(ctx, cwd, name, worktree.Options{Root: root}); err != nil {
			return tool.SubagentResult{}, fmt.Errorf("worktree for agent %s: %w", name, err)
		}
		cwd = wt.Dir
	}

	model := s.engine.Model()
	switch alias := firstNonEmpty(req.Model, def.Model); alias {
	case "", "inherit":
	default:
		model = s.catalog().Resolve(alias, s.getenv)
	}

	mode := permission.Mode(firstNonEmpty(string(def.PermissionMode), string(s.checker.Mode())))
	// A worktree agent works only in its worktree, not the main tree.
	dirs := s.checker.Dirs()
	if wt == nil {
		dirs = append(dirs, s.cwd)
	}
	checker, err := permission.NewChecker(permission.Config{Rules: s.rules, Mode: mode, Cwd: cwd,
		Dirs: dirs, Home: homeDir(s.getenv)})
	if err != nil {
		return tool.SubagentResult{}, fmt.Errorf("agent %s: %w", name, err)
	}
	registry := tool.NewRegistry(childTools(s.registry.Tools(), def)...)
	// The servers the agent defines inline run while it does.
	if len(def.mcpDefs) > 0 {
		m := s.startAgentMCP(ctx, name, def.mcpDefs, registry, cwd)
		defer m.Close()
	}
	env := &tool.Env{SessionID: parentID, ProjectDir: cwd, Shell: shell.New(cwd, s.procEnv), Files: tool.NewFileState(),
		Model:      tool.ModelCaller{Provider: s.env.Model.Provider, Small: s.env.Model.Small, Main: model.ID},
		ScratchDir: filepath.Join(s.env.ScratchDir, id), Modes: modes{checker}, Tools: registry,
		ReadDenied: s.env.ReadDenied, NestedMemory: s.env.NestedMemory}
	if s.sandbox != nil {
		// The agent's own directories (a worktree) are the writable ones.
		env.Shell.SetWrapper(s.sandbox.For(checker.Dirs))
	}
	defer env.Shell.Close()

	var recorder engine.Recorder
	transcript := ""
	if s.projectDir != "" {
		dir := filepath.Join(s.projectDir, parentID, "subagents")
		transcript = filepath.Join(dir, "agent-"+id+".jsonl")
		w := session.NewWriter(transcript, session.Meta{SessionID: parentID, Cwd: cwd, Version: version.Version, Entrypoint: "subagent", Sidechain: true}, "")
		defer w.Close()
		recorder = w
		if err := writeAgentMeta(filepath.Join(dir, "agent-"+id+".meta.json"), req.ToolUseID, name); err != nil {
			notify(s.opts, "subagent record: "+err.Error())
		}
	}
	base := func() hook.Base {
		b := s.hookBase()
		b.Cwd, b.PermissionMode, b.AgentID, b.AgentType = env.Cwd(), string(checker.Mode()), id, name
		return b
	}
	// An agent with hooks of its own runs with the session's and its own.
	hooks := s.hooks
	if cfg := agentHooks(s.hookOpts.Hooks, def); cfg != nil {
		o := s.hookOpts
		o.Hooks = cfg
		r, err := hook.New(o)
		if err != nil {
			return tool.SubagentResult{}, fmt.Errorf("hooks of agent %s: %w", name, err)
		}
		defer r.Close()
		hooks = r
	}
	startOut := hooks.Run(ctx, &hook.SubagentStartInput{Base: base(), AgentID: id, AgentType: name})
	var extra []llm.Block
	if len(startOut.AdditionalContext) > 0 {
		extra = append(extra, hook.ContextBlock("SubagentStart", startOut.AdditionalContext))
	}
	// The skills the definition names are in its context from the start.
	for _, sk := range def.skills {
		if s.skills == nil {
			notify(s.opts, fmt.Sprintf("agent %s: no skill %q", name, sk))
			continue
		}
		inv, err := s.skills.Preload(ctx, sk)
		if err != nil {
			notify(s.opts, fmt.Sprintf("agent %s: %v", name, err))
			continue
		}
		extra = append(extra, llm.Reminder("", fmt.Sprintf("The skill %s is loaded for you; follow its instructions when they apply:\n\n%s", inv.Name, inv.Content)))
	}

	penv := prompt.DetectEnv(cwd, time.Now(), s.getenv)
	penv.Model = model.ID
	system := prompt.System(prompt.Options{Replace: def.Prompt, ReplaceSet: true, Append: penv.Describe()})
	eng, err := engine.New(engine.Config{
		SessionID: parentID, Provider: s.env.Model.Provider, Catalog: s.catalog(), Model: model,
		System: system, Context: extra, Tools: registry, Env: env,
		Gate:  sessionGate{s: s, checker: checker, env: env},
		Hooks: hooks, HookBase: base, MaxTurns: def.maxTurns, HookLog: s.hookLog, IncludeHookEvents: s.opts.IncludeHookEvents,
		Notify: s.opts.Notify, Recorder: recorder, TranscriptPath: transcript, ParentToolUseID: req.ToolUseID,
		Compaction: engine.Compaction{Threshold: s.compactThreshold},
		CacheTTL:   cacheTTL(s.getenv), DisableCache: s.getenv("DISABLE_PROMPT_CACHING") == "1",
	})
	if err != nil {
		return tool.SubagentResult{}, err
	}
	var toolUses int
	res := eng.Run(ctx, []llm.Block{llm.Text(req.Prompt)}, func(m protocol.Message) {
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

	result := tool.SubagentResult{AgentID: id, AgentType: name, Status: "completed", Report: res.Text(),
		TotalTokens:   res.Usage.InputTokens + res.Usage.OutputTokens + res.Usage.CacheReadInputTokens + res.Usage.CacheCreationInputTokens,
		TotalToolUses: toolUses, TotalDurationMS: time.Since(start).Milliseconds(), CostUSD: res.TotalCostUSD}
	if res.IsError {
		result.Status, result.IsError = "failed", true
		result.Report = fmt.Sprintf("The %s agent did not finish: %s", name, strings.Join(res.Errors, "; "))
	}
	if strings.TrimSpace(result.Report) == "" {
		result.Report = "(the agent ended without a report)"
	}
	if wt != nil {
		// Not ctx: a cancelled run must still clean up (or keep) its worktree.
		kept, err := wt.Close(context.WithoutCancel(ctx))
		switch {
		case err != nil:
			result.Report += "\n\n(Its worktree could not be cleaned up: " + err.Error() + ")"
		case kept:
			result.Worktree, result.WorktreeBranch = wt.Path, wt.Branch
			result.Report += fmt.Sprintf("\n\n(It worked in the git worktree %s on branch %s, kept because it changed files there.)", wt.Path, wt.Branch)
		}
	}
	status := result.Status
	emit(&protocol.System{Subtype: "task_notification", SessionID: parentID, UUID: uuid.NewString(), Fields: map[string]any{
		"task_id": id, "tool_use_id": req.ToolUseID, "status": status, "summary": firstLine(result.Report),
		"usage": map[string]any{"total_tokens": result.TotalTokens, "tool_uses": result.TotalToolUses, "duration_ms": result.TotalDurationMS}}})
	return result, nil
}

// childTools are a subagent's tools: the session's, without Agent (no
// nesting), narrowed to the definition's.
func childTools(all []tool.Tool, def AgentDefinition) []tool.Tool {
	return agentTools(slices.DeleteFunc(slices.Clone(all), func(t tool.Tool) bool { return t.Name() == agenttool.Name }), def)
}

// agentTools narrows tools to a definition's list (nil: all of them) and
// removes its disallowed ones. A tool of an MCP server the definition names
// in MCPServers is kept even when the list leaves it out.
func agentTools(all []tool.Tool, def AgentDefinition) []tool.Tool {
	var out []tool.Tool
	for _, t := range all {
		name := t.Name()
		listed := def.Tools == nil || slices.ContainsFunc(def.Tools, func(r string) bool { return ruleTool(r) == name || r == "*" }) ||
			slices.ContainsFunc(def.MCPServers, func(srv string) bool { return strings.HasPrefix(name, "mcp__"+srv+"__") })
		if !listed || slices.ContainsFunc(def.DisallowedTools, func(r string) bool { return ruleTool(r) == name }) {
			continue
		}
		out = append(out, t)
	}
	return out
}

// spawnRights says whether an agent running the session may use Agent, and
// which agents it may start: "Agent(worker, researcher)" in its tools
// limits it to those; plain "Agent" (or no list) allows any.
func spawnRights(def AgentDefinition, offered bool) (bool, []string) {
	if !offered || slices.Contains(def.DisallowedTools, agenttool.Name) {
		return false, nil
	}
	if def.Tools == nil {
		return true, nil
	}
	for _, r := range def.Tools {
		if r == "*" || r == agenttool.Name || r == "Task" {
			return true, nil
		}
		if ruleTool(r) == agenttool.Name || ruleTool(r) == "Task" {
			inner := strings.TrimSuffix(r[strings.IndexByte(r, '(')+1:], ")")
			var names []string
			for _, n := range strings.Split(inner, ",") {
				if n = strings.TrimSpace(n); n != "" {
					names = append(names, n)
				}
			}
			return true, names
		}
	}
	return false, nil
}

// ruleTool is the tool a tools entry names ("Bash(git *)" → "Bash").
func ruleTool(r string) string {
	r = strings.TrimSpace(r)
	if i := strings.IndexByte(r, '('); i > 0 {
		return r[:i]
	}
	return r
}

func writeAgentMeta(path, toolUseID, agentType string) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	b, _ := json.Marshal(map[string]any{"toolUseId": toolUseID, "agentType": agentType, "parentAgentId": nil})
	return os.WriteFile(path, b, 0o600)
}

func firstNonEmpty(vals ...string) string {
	for _, v := range vals {
		if v != "" {
			return v
		}
	}
	return ""
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(strings.TrimSpace(s), "\n")
	if r := []rune(line); len(r) > 200 {
		return string(r[:199]) + "…"
	}
	return line
}
