package runtime

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/tackcode/tack/internal/shell"
	"github.com/tackcode/tack/internal/skill"
	"github.com/tackcode/tack/internal/skill/skilltool"
	"github.com/tackcode/tack/internal/tool"
	"github.com/tackcode/tack/internal/tool/agenttool"
	"github.com/tackcode/tack/internal/tool/builtin"
	"github.com/tackcode/tack/internal/tool/lsptool"
	"github.com/tackcode/tack/internal/tool/structured"
)

// offerTools makes the thread's tool registry and the environment its tools
// run in. The main thread offers the options' tools (with the Agent,
// Skill and StructuredOutput tools as the session calls for them); a
// subagent offers the main thread's, narrowed to its definition's, without
// Agent.
func (t *thread) offerTools(context.Context) error {
	s := t.s
	if t.parent == nil {
		s.watching = &watching{s: s}
	}
	var tools []tool.Tool
	if t.parent != nil {
		tools = childTools(t.parent.registry.Tools(), *t.spec.def)
	} else {
		var err error
		if tools, err = t.mainTools(); err != nil {
			return err
		}
	}
	t.registry = tool.NewRegistry(tools...)
	t.env = &tool.Env{
		SessionID:  s.sessionID,
		ProjectDir: t.cwd,
		Shell:      shell.New(t.cwd, s.sessionEnv()),
		Files:      tool.NewFileState(),
		TextFiles:  s.cfg.TextFiles,
		Writes:     &s.watching.writes,
		Model:      tool.ModelCaller{Provider: t.provider(), Small: s.small, Main: t.model.ID},
		ScratchDir: t.scratchDir(),
		Modes:      modes{t.checker},
		Tools:      t.registry,
		ReadDenied: t.readDenied(),
		// The hooks are configured after the tools; the approver reads
		// them when a tool asks.
		TaskApprover: taskHooks{t},
	}
	if t.wrap != nil {
		t.env.Shell.SetWrapper(t.wrap)
	}
	if s.cfg.Terminal != nil {
		t.env.Shell.SetRunner(s.cfg.Terminal)
	}
	if t.parent == nil {
		t.env.Subagents = s.subagents
	}
	return nil
}

// readDenied is the file filter of tools that list or search many files:
// set when a deny rule forbids reading some (the main thread's checker
// decides, for subagents too).
func (t *thread) readDenied() func(string) bool {
	if t.parent != nil {
		return t.parent.env.ReadDenied
	}
	for _, r := range t.s.rules.Deny {
		if r.Tool == "Read" && r.Specifier != "" {
			return t.checker.ReadDenied
		}
	}
	return nil
}

// mainTools are the tools the main thread offers: the options' built-in
// tools and extra tools, less those a deny rule removes, narrowed to the
// main agent's; then the session's own tools; each file tool keeping
// checkpoints when asked.
func (t *thread) mainTools() ([]tool.Tool, error) {
	s, def := t.s, t.spec.def
	offered, err := builtin.Select(s.cfg.Tools)
	if err != nil {
		return nil, err
	}
	removed := removedTools(s.rules)
	var tools []tool.Tool
	for _, tl := range offered {
		if !removed[tl.Name()] {
			tools = append(tools, tl)
		}
	}
	if def != nil {
		tools = agentTools(tools, *def)
	}
	own, err := t.sessionTools(func(name string) bool {
		return !removed[name] && (s.cfg.Tools == nil || slices.Contains(s.cfg.Tools, name) || slices.Contains(s.cfg.Tools, "default"))
	})
	if err != nil {
		return nil, err
	}
	tools = append(tools, own...)
	if s.lsp != nil && !removed[lsptool.Name] && (s.cfg.Tools == nil || slices.Contains(s.cfg.Tools, lsptool.Name) || slices.Contains(s.cfg.Tools, "default")) {
		tools = append(tools, lsptool.New(s.lsp))
	}
	if s.lsp != nil {
		tools = withDiagnostics(tools, s.lsp, s.notify)
	}
	if s.cfg.FileCheckpointing || truthy(s.getenv("CLAUDE_CODE_ENABLE_SDK_FILE_CHECKPOINTING")) {
		s.checkpoints = &checkpoints{writes: &s.watching.writes}
		tools = withCheckpoints(tools, s.checkpoints)
	}
	return tools, s.checkApprover()
}

// sessionTools are the tools the session makes for the main thread, as it
// calls for them and the options (offered) and the main agent let it: the
// StructuredOutput tool of a JSON schema, the Agent tool, the Skill tool.
func (t *thread) sessionTools(offered func(name string) bool) ([]tool.Tool, error) {
	s, def := t.s, t.spec.def
	var tools []tool.Tool
	// Structured output: the caller's schema is a tool's input schema.
	if len(s.cfg.JSONSchema) > 0 {
		st, err := structured.New(s.cfg.JSONSchema, s.setStructured)
		if err != nil {
			return nil, fmt.Errorf("--json-schema: %w", err)
		}
		tools = append(tools, st)
	}
	offerAgent := offered(agenttool.Name)
	var spawnable []string // nil: any agent
	if def != nil {
		offerAgent, spawnable = spawnRights(*def, offerAgent)
	}
	if offerAgent {
		tools = append(tools, agenttool.New(s.subagents.infos(), spawnable))
	}
	s.skillToolOK = offered(skilltool.Name) && (def == nil || def.allows(skilltool.Name))
	if s.startSkills(t) && s.skillToolOK {
		tools = append(tools, skilltool.New(skilltool.Options{Runtime: s.skills, Forker: s.subagents}))
	}
	return tools, nil
}

// startSkills makes the session's skill runtime, when there are skills,
// and reports whether the model may invoke any of them.
func (s *Session) startSkills(t *thread) bool {
	// The runtime is made even without skills: ReloadSkills may bring some.
	all := s.ext.Skills()
	s.skills = skill.New(skill.Options{Skills: s.trust.skills(all), SessionID: s.sessionID, Cwd: s.cwd,
		Run: skill.ShellRunnerWith(s.cwd, s.procEnv, t.wrap), Check: injectionCheck(t.checker, s.sandbox), Untrusted: s.trust.skillGuard(),
		OnLoad: s.skillLoaded})
	return len(s.skills.ModelInvocable()) > 0
}

// checkApprover makes the registry of tools PermissionPromptTool may name
// (every tool, offered or not) and checks that it names one, or an MCP
// tool.
func (s *Session) checkApprover() error {
	s.approvers = tool.NewRegistry(builtin.All()...)
	name := s.cfg.PermissionPromptTool
	if name == "" || s.cfg.Approve != nil || strings.HasPrefix(name, "mcp__") {
		return nil
	}
	if _, ok := s.approvers.Get(name); !ok {
		return fmt.Errorf("--permission-prompt-tool: no tool named %q (it must be an MCP tool, mcp__server__tool)", name)
	}
	return nil
}

// childTools are a subagent's tools: the session's, without Agent (no
// nesting), narrowed to the definition's.
func childTools(all []tool.Tool, def AgentDef) []tool.Tool {
	return agentTools(slices.DeleteFunc(slices.Clone(all), func(t tool.Tool) bool { return t.Name() == agenttool.Name }), def)
}

// agentTools narrows tools to a definition's list (nil: all of them) and
// removes its disallowed ones. A tool of an MCP server the definition names
// in MCPServers is kept even when the list leaves it out.
func agentTools(all []tool.Tool, def AgentDef) []tool.Tool {
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
func spawnRights(def AgentDef, offered bool) (bool, []string) {
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

// setStructured keeps the StructuredOutput value of the running prompt.
func (s *Session) setStructured(v json.RawMessage) {
	s.structuredMu.Lock()
	s.structured = v
	s.structuredMu.Unlock()
}

func (s *Session) structuredValue() json.RawMessage {
	s.structuredMu.Lock()
	defer s.structuredMu.Unlock()
	return s.structured
}
