package extension

import (
	"embed"
	"fmt"
	"strconv"
	"strings"
	"sync"

	"github.com/tackcode/tack/internal/config"
	"github.com/tackcode/tack/internal/hook"
	"github.com/tackcode/tack/internal/lazyregexp"
	"github.com/tackcode/tack/internal/mcp/mcpconfig"
	"github.com/tackcode/tack/internal/permission"
)

// Scope says where a definition comes from.
type Scope string

// The scopes of definitions.
const (
	ScopeBuiltin Scope = "built-in" // compiled into tack
	ScopeFlag    Scope = "--agents" // the --agents flag (agents only)
	ScopeManaged Scope = "managed"  // the administrator's directory
	ScopeUser    Scope = "user"     // <config dir> (~/.claude)
	ScopeProject Scope = "project"  // .claude/ in the project
	ScopePlugin  Scope = "plugin"   // a plugin's folder
)

// Source says where one definition was read.
type Source struct {
	Scope Scope
	// Path is the file; "" for built-in definitions and --agents.
	Path string
	// Plugin names the plugin of a ScopePlugin definition.
	Plugin string
}

// String renders the source for listings: "project /repo/.claude/agents/x.md",
// "plugin lint (/p/agents/x.md)", "built-in", "--agents".
func (s Source) String() string {
	switch {
	case s.Scope == ScopePlugin:
		return "plugin " + s.Plugin + " (" + s.Path + ")"
	case s.Path != "":
		return string(s.Scope) + " " + s.Path
	}
	return string(s.Scope)
}

// Agent is a custom agent (subagent type): a system prompt and the tools,
// model and permissions it runs with.
type Agent struct {
	// Name is the subagent_type the Agent tool is called with; plugin agents
	// are "plugin:name".
	Name        string
	Description string
	// Prompt is the agent's system prompt: the body of its file.
	Prompt string
	// Tools are the tools the agent may use, as rules ("Read",
	// "Bash(git *)"); nil means every tool of the parent session.
	Tools []string
	// AgentTypes are the subagent types an "Agent(worker, researcher)"
	// entry of tools lets it spawn; nil means no such restriction.
	AgentTypes []string
	// DisallowedTools are removed from the agent's tools.
	DisallowedTools []string
	// Model is "", "inherit", an alias (sonnet, opus, haiku) or a model id.
	Model string
	// PermissionMode, when set, is the agent's permission mode.
	PermissionMode string
	// Isolation is "worktree" to run the agent in a temporary git worktree.
	Isolation string
	// Hooks apply while the agent runs (Source "agent:NAME").
	Hooks hook.Config
	// MCPServerNames are configured servers the agent uses, by name;
	// MCPServers are servers defined inline in the agent (scope agent:NAME).
	MCPServerNames []string
	MCPServers     []*mcpconfig.Server
	// Skills are skills preloaded into the agent's context.
	Skills   []string
	Color    string
	Effort   string
	MaxTurns int
	Source   Source
	// ShadowedBy is set on a definition that another of the same name
	// overrides (see Set.ShadowedAgents).
	ShadowedBy *Agent
}

var agentKeys = []string{"name", "description", "tools", "disallowedTools", "model", "permissionMode",
	"isolation", "hooks", "mcpServers", "skills", "color", "effort", "maxTurns", "background",
	"initialPrompt", "memory", "prompt"}

// validName is what an agent, skill or plugin name may be: no blanks, no
// ':' (the namespace separator) and no '/'.
var validName = lazyregexp.New(`^[A-Za-z0-9][A-Za-z0-9_.-]*$`)

// agentParser reads agent definitions.
type agentParser struct {
	known  func(string) bool
	lookup func(string) (string, bool) // ${VAR} in inline MCP servers
	// pluginRoot is the folder of the plugin being read, "" outside one.
	pluginRoot string
}

// parseAgentFile reads an agent from a Markdown file with frontmatter.
// prefix namespaces a plugin's agents ("plugin:").
func (ap agentParser) parseAgentFile(src []byte, path string, source Source, prefix string) (*Agent, []*config.Error, *config.Error) {
	fm, err := parseFrontmatter(src, path)
	if err != nil {
		return nil, nil, err
	}
	if !fm.present {
		return nil, nil, &config.Error{Source: config.Source{Path: path, Line: 1}, Msg: "no frontmatter: an agent file starts with a --- block holding at least name and description"}
	}
	a, err := ap.fromFields(fm.fields, path, source, prefix)
	if err != nil {
		return nil, nil, err
	}
	a.Prompt = strings.TrimSpace(fm.body)
	return a, unknownKeys(fm.fields, agentKeys, path), nil
}

// fromFields builds an agent from frontmatter fields or a --agents entry.
func (ap agentParser) fromFields(fields *node, path string, source Source, prefix string) (*Agent, *config.Error) {
	f := field{path: path}
	a := &Agent{Source: source}
	var err *config.Error
	nameNode := fields.get("name")
	if a.Name, err = f.str(nameNode, "name"); err != nil {
		return nil, err
	}
	if a.Name == "" {
		return nil, errAt(path, fields, "name", `missing "name" (the agent's identifier, such as code-reviewer)`, nil)
	}
	if !validName().MatchString(a.Name) {
		return nil, errAt(path, nameNode, "name", fmt.Sprintf("invalid agent name %q: use letters, digits, '-', '_' and '.'", a.Name), nil)
	}
	a.Name = prefix + a.Name
	descNode := fields.get("description")
	if a.Description, err = f.str(descNode, "description"); err != nil {
		return nil, err
	}
	if strings.TrimSpace(a.Description) == "" {
		return nil, errAt(path, fields, "description", `missing "description" (when the agent should be used: the model reads it to choose)`, nil)
	}
	if n := fields.get("tools"); n != nil && n.kind != kindNull {
		items, err := f.list(n, "tools")
		if err != nil {
			return nil, err
		}
		refs, err := f.parseTools(items, n, "tools", ap.known)
		if err != nil {
			return nil, err
		}
		a.Tools = ruleStrings(refs)
		for _, r := range refs {
			a.AgentTypes = append(a.AgentTypes, r.Agents...)
		}
		if a.Tools == nil {
			a.Tools = []string{} // "tools:" given but empty: no tools
		}
	}
	if n := fields.get("disallowedTools"); n != nil {
		items, err := f.list(n, "disallowedTools")
		if err != nil {
			return nil, err
		}
		refs, err := f.parseTools(items, n, "disallowedTools", ap.known)
		if err != nil {
			return nil, err
		}
		a.DisallowedTools = ruleStrings(refs)
	}
	modelNode := fields.get("model")
	if a.Model, err = f.str(modelNode, "model"); err != nil {
		return nil, err
	}
	if err := f.checkModel(modelNode, "model", a.Model); err != nil {
		return nil, err
	}
	pmNode := fields.get("permissionMode")
	if a.PermissionMode, err = f.str(pmNode, "permissionMode"); err != nil {
		return nil, err
	}
	if a.PermissionMode != "" {
		if _, perr := permission.ParseMode(a.PermissionMode); perr != nil {
			return nil, errAt(path, pmNode, "permissionMode", fmt.Sprintf("unknown permission mode %q (want default, acceptEdits, plan, auto, bypassPermissions or dontAsk)", a.PermissionMode), nil)
		}
	}
	isoNode := fields.get("isolation")
	if a.Isolation, err = f.str(isoNode, "isolation"); err != nil {
		return nil, err
	}
	if a.Isolation != "" && a.Isolation != "worktree" && a.Isolation != "remote" {
		return nil, errAt(path, isoNode, "isolation", fmt.Sprintf("unknown isolation %q (want worktree)", a.Isolation), nil)
	}
	if a.Hooks, err = parseHooks(fields.get("hooks"), path, "hooks", hookContext{source: "agent:" + a.Name, pluginRoot: ap.pluginRoot}); err != nil {
		return nil, err
	}
	if err := ap.mcpServers(a, fields.get("mcpServers"), path); err != nil {
		return nil, err
	}
	if a.Skills, err = f.list(fields.get("skills"), "skills"); err != nil {
		return nil, err
	}
	if a.Color, err = f.str(fields.get("color"), "color"); err != nil {
		return nil, err
	}
	effNode := fields.get("effort")
	if a.Effort, err = f.str(effNode, "effort"); err != nil {
		return nil, err
	}
	if err := f.checkEffort(effNode, "effort", a.Effort); err != nil {
		return nil, err
	}
	if n := fields.get("maxTurns"); n != nil && n.kind != kindNull {
		v, perr := strconv.Atoi(n.str)
		if n.kind != kindNumber || perr != nil || v <= 0 {
			return nil, errAt(path, n, "maxTurns", fmt.Sprintf("expected a positive whole number, got %s", describe(n)), nil)
		}
		a.MaxTurns = v
	}
	return a, nil
}

// mcpServers reads an agent's mcpServers: a list whose items are server
// names or {name: entry} mappings, or a mapping of name to entry.
func (ap agentParser) mcpServers(a *Agent, n *node, path string) *config.Error {
	if n == nil || n.kind == kindNull {
		return nil
	}
	f := field{path: path}
	inline := func(m member, key string) *config.Error {
		src := mcpconfig.Source{Path: path, Line: m.line, Col: m.col}
		srv := mcpconfig.ParseEntry(m.key, m.val.json(), mcpconfig.AgentScope(a.Name), src, ap.lookup)
		if srv.Err != nil {
			return &config.Error{Source: config.Source{Path: path, Line: m.line, Col: m.col}, Key: key, Msg: "invalid MCP server", Err: srv.Err}
		}
		a.MCPServers = append(a.MCPServers, srv)
		return nil
	}
	switch n.kind {
	case kindMap:
		for _, m := range n.mems {
			if err := inline(m, "mcpServers."+m.key); err != nil {
				return err
			}
		}
	case kindSeq:
		for i, e := range n.elems {
			key := fmt.Sprintf("mcpServers[%d]", i)
			switch e.kind {
			case kindString:
				a.MCPServerNames = append(a.MCPServerNames, e.str)
			case kindMap:
				for _, m := range e.mems {
					if err := inline(m, key+"."+m.key); err != nil {
						return err
					}
				}
			default:
				return f.typeErr(e, key, "a server name or {name: {command: ...}}")
			}
		}
	case kindString:
		a.MCPServerNames = splitList(n.str)
	default:
		return f.typeErr(n, "mcpServers", "a list of server names or inline servers")
	}
	return nil
}

// FlagPath is the Error.Path of problems in the --agents JSON.
const FlagPath = "--agents"

// parseAgentsFlag reads the --agents JSON: {"name": {"description": …,
// "prompt": …, "tools": […], …}}, the Agent SDK's AgentDefinition map.
func (ap agentParser) parseAgentsFlag(src string) ([]*Agent, *config.Error) {
	root, err := parseJSONFile([]byte(src), FlagPath)
	if err != nil {
		return nil, err
	}
	if root == nil {
		return nil, nil
	}
	if root.kind != kindMap {
		return nil, errAt(FlagPath, root, "", `expected a JSON object {"name": {"description": "...", "prompt": "..."}}`, nil)
	}
	var out []*Agent
	for _, m := range root.mems {
		def := m.val
		if def.kind != kindMap {
			return nil, field{FlagPath}.typeErr(def, m.key, "an agent definition object")
		}
		// The name is the key; the definition has no name field of its own.
		withName := &node{kind: kindMap, line: def.line, col: def.col,
			mems: append([]member{{key: "name", line: m.line, col: m.col, val: &node{kind: kindString, str: m.key, line: m.line, col: m.col}}}, def.mems...)}
		a, err := ap.fromFields(withName, FlagPath, Source{Scope: ScopeFlag}, "")
		if err != nil {
			if err.Key != "" {
				err.Key = m.key + "." + err.Key
			}
			return nil, err
		}
		p := def.get("prompt")
		if p == nil || p.kind != kindString || strings.TrimSpace(p.str) == "" {
			return nil, errAt(FlagPath, def, m.key+".prompt", `missing "prompt" (the agent's system prompt)`, nil)
		}
		a.Prompt = p.str
		out = append(out, a)
	}
	return out, nil
}

//go:embed builtin/*.md
var builtinFS embed.FS

// builtinAgents are general-purpose, Explore and Plan, read from the
// embedded Markdown files beside this one, in the format users write. Each
// call gets copies of its own, which a Load may mark as shadowed.
func builtinAgents() []*Agent {
	parsed := parsedBuiltins()
	out := make([]*Agent, len(parsed))
	for i, a := range parsed {
		c := *a
		out[i] = &c
	}
	return out
}

// parsedBuiltins parses the built-in agents once per process: the same
// files give the same agents, and parsing their YAML costs more than the
// rest of a Load in a project with few agents of its own.
var parsedBuiltins = sync.OnceValue(func() []*Agent {
	names := []string{"general-purpose", "Explore", "Plan"}
	out := make([]*Agent, 0, len(names))
	for _, n := range names {
		src, err := builtinFS.ReadFile("builtin/" + n + ".md")
		if err != nil {
			panic(fmt.Sprintf("built-in agent %s: %v", n, err)) // embedded: cannot happen
		}
		a, _, perr := agentParser{}.parseAgentFile(src, "builtin/"+n+".md", Source{Scope: ScopeBuiltin}, "")
		if perr != nil {
			panic(fmt.Sprintf("built-in agent %s: %v", n, perr)) // tested
		}
		out = append(out, a)
	}
	return out
})

// Prepare parses what every Load needs whatever the project holds (the
// built-in agents), so that a caller can have it done beside its other
// start-up work.
func Prepare() { parsedBuiltins() }
